"""What a trace recorded, read defensively: its scores, and the fields a comparison of
runs relies on.

A run someone hands over is hostile data: any field may be missing, of another type, or
absurd (``1e308``, an integer of 4,300 digits, a list where a string belongs). A
recorded score is a number in [0, 1], a count a whole number up to `MAX_COUNT`; anything
else is not read as a number at all, so no sum overflows and no figure is printed from
it. A trace records its scores twice: verifiers' ``rewards.*`` (the reward is their sum
weighted by reward-v1's weights) and the scorer's ``info.redaction.*``. `score_copies`
reads both; a trace whose copies disagree, or hold a value no scorer writes, has no
score anyone should trust (`Copies.distrust`). `recorded` takes out only what a
comparison reads (the task's index and level, split, commitment and seed, the shared
task parameters, the build, the four scores and the class tallies) and returns None for
a trace without a trusted score (a failed rollout, or a mangled one), with the reason
(`unusable_reason`), which the caller counts instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..boundary.episodes import failed
from ..scoring.reward import WEIGHTS
from .classes import DECOY_CLASSES, SECRET_CLASSES, trace_tallies
from .labels import disagreement

BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")
METRICS = ("reward", *WEIGHTS)  # reward, recall, precision, clean


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


MAX_COUNT = 1 << 53  # a recorded count (spans, characters, matches): far above any real one, exact as a float
_SCALARS = (str, int, float, type(None))  # bool is an int


def number_in(value: object, lo: float, hi: float) -> int | float | None:
    """``value`` if it is a JSON number (not a boolean) in [lo, hi], else None. Compares
    without converting: an integer of thousands of digits is out of range, never an
    OverflowError, and NaN is in no range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if lo <= value <= hi else None


def score_of(value: object) -> float | None:
    """A recorded score (reward, recall, precision, clean): a number in [0, 1]."""
    found = number_in(value, 0.0, 1.0)
    return None if found is None else float(found)


def count_of(value: object) -> int | float | None:
    """A recorded count: a number in [0, MAX_COUNT] (verifiers' metrics record counts as floats)."""
    return number_in(value, 0, MAX_COUNT)


def _scalar(value: object) -> object:
    """A recorded identity value (split, commitment, seed, task parameter, build key) as a
    comparison can hold it: a string, a number or null; anything else is a problem."""
    if isinstance(value, _SCALARS) and not (isinstance(value, float) and value != value):
        return value
    raise ValueError(type(value).__name__)


@dataclass(frozen=True)
class Copies:
    """The two recorded copies of a trace's scores (METRICS: reward, recall, precision,
    clean). ``rewards``: from verifiers' ``rewards.*``, the reward their weighted sum, or
    None when the trace recorded no rewards (a failed rollout); ``redaction``: those the
    scorer's ``info.redaction`` holds; ``problems``: recorded values that are not scores."""

    rewards: dict[str, float] | None
    redaction: dict[str, float]
    problems: tuple[str, ...] = ()

    def disagreement(self) -> str | None:
        """How the two copies differ, or None (also when one is missing)."""
        if self.rewards is None:
            return None
        rewards = self.rewards
        differ = [k for k in METRICS if k in self.redaction and self.redaction[k] != rewards[k]]
        if not differ:
            return None
        return "its two recorded copies of the scores disagree (" + ", ".join(
            f"{k} {rewards[k]:.4f} in rewards, {self.redaction[k]:.4f} in info.redaction" for k in differ) + ")"

    def distrust(self) -> str | None:
        """Why neither copy can be trusted (malformed values, copies that disagree, or
        scores in info.redaction without the rewards every scored trace records), or None."""
        if self.problems:
            return "its recorded scores are malformed: " + "; ".join(self.problems)
        if self.rewards is None and self.redaction:
            return "it records scores in info.redaction but no rewards (a scored trace records both)"
        return self.disagreement()

    def best(self) -> dict[str, float | None]:
        """Each score, from info.redaction where recorded, else from rewards (None: neither)."""
        rewards = self.rewards or {}
        return {k: self.redaction.get(k, rewards.get(k)) for k in METRICS}


def score_copies(trace: object) -> Copies:
    t = _dict(trace)
    problems: list[str] = []
    rewards: dict[str, float] | None = None
    raw = t.get("rewards")
    if isinstance(raw, dict) and raw:
        parts: dict[str, float] = {}
        for k, weight in WEIGHTS.items():
            entry = _dict(raw.get(k))
            score, recorded_weight = score_of(entry.get("score")), entry.get("weight")
            if score is None:
                problems.append(f"rewards.{k}.score is missing or not a number in [0, 1]")
            elif isinstance(recorded_weight, bool) or recorded_weight != weight:
                problems.append(f"rewards.{k}.weight is not reward-v1's {weight:g}")
            else:
                parts[k] = score
        if len(parts) == len(WEIGHTS):
            reward = sum(parts[k] * w for k, w in WEIGHTS.items())  # in WEIGHTS order, as the reward sums them
            rewards = {"reward": reward, **parts}
    elif raw is not None and not isinstance(raw, dict):
        problems.append("rewards is not an object")
    redaction: dict[str, float] = {}
    red = _dict(t.get("info")).get("redaction")
    for k in METRICS:
        if isinstance(red, dict) and k in red:
            value = score_of(red[k])
            if value is None:
                problems.append(f"info.redaction.{k} is not a number in [0, 1]")
            else:
                redaction[k] = value
    return Copies(rewards, redaction, tuple(problems))


@dataclass(frozen=True)
class Recorded:
    index: int
    level: int
    split: object
    commitment: object
    seed: object
    params: tuple[object, object, object]  # n_shown, n_eval, budget_s
    build: tuple[object, ...]               # BUILD_KEYS' values
    values: tuple[float, float, float, float]  # METRICS' values
    secret_classes: dict[str, tuple[int, int]]
    decoy_classes: dict[str, tuple[int, int]]


def _identity(env: dict[str, Any]) -> tuple[object, object, object, tuple[object, ...], tuple[object, ...]]:
    params = _dict(env.get("task_params"))
    return (_scalar(env.get("split")), _scalar(env.get("split_commitment")), _scalar(env.get("task_seed")),
            tuple(_scalar(params.get(k)) for k in ("n_shown", "n_eval", "budget_s")),
            tuple(_scalar(env.get(k)) for k in BUILD_KEYS))


def read_recorded(trace: object) -> tuple[Recorded | None, str | None]:
    """(the trace's record, None), or (None, why it has none): no trusted score (a
    failed rollout, malformed scores, copies that disagree), labels that do not describe
    the task its data rebuilds (`labels`), no task index or level, or an identity value
    that is not a string or number."""
    t = _dict(trace)
    copies = score_copies(t)
    why = copies.distrust()
    if why is not None:
        return None, why
    if copies.rewards is None:
        return None, "it recorded no rewards (a failed rollout)"
    if failed(t):
        return None, "its rollout failed (ok: false, or errors recorded)"
    mislabelled = disagreement(t)
    if mislabelled is not None:
        return None, mislabelled
    env = _dict(_dict(t.get("info")).get("environment"))
    index, level = _int(env.get("task_index")), _int(_dict(env.get("task_params")).get("level", 1))
    if index is None or level is None:
        return None, "it records no task index or level"
    try:
        split, commitment, seed, params, build = _identity(env)
    except ValueError as exc:
        return None, (f"it records a {exc} where a string or number belongs (split, commitment, seed, task "
                      f"parameters or build)")
    r = copies.rewards
    return Recorded(index, level, split, commitment, seed, (params[0], params[1], params[2]), build,
                    (r["reward"], r["recall"], r["precision"], r["clean"]),
                    trace_tallies(t, SECRET_CLASSES), trace_tallies(t, DECOY_CLASSES)), None


def recorded(trace: object) -> Recorded | None:
    """The trace's record, or None (`read_recorded` says why)."""
    return read_recorded(trace)[0]
