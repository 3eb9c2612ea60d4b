"""A task: one seed's stream cut into shown and held-out records, with its identity."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from ..build.identity import build_identity
from ..build.versions import CORPUS_VERSION, LEVELS_VERSION
from ..corpus.levels import LEVELS
from ..corpus.stream import Record, build_stream
from ..scoring.scanner import DEFAULT_BUDGET_S
from .prompt import render_prompt, system_prompt
from .splits import PUBLIC, SPLITS, private_commitment, private_seed, read_private_secret

DEFAULT_N_SHOWN = 8
DEFAULT_N_EVAL = 16
DEFAULT_LEVEL = 1


@dataclass(frozen=True)
class RedactionTask:
    id: str
    split: str
    index: int
    n_shown: int
    n_eval: int
    budget_s: float
    level: int
    shown: tuple[Record, ...]
    heldout: tuple[Record, ...]
    secret_families: tuple[str, ...]
    decoy_families: tuple[str, ...]
    templates: tuple[str, ...]
    oracle_rules: tuple[str, ...]  # generator knowledge: the stream's exact oracle, in order
    prompt: str
    system_prompt: str
    identity: dict[str, Any]
    seed: int = field(repr=False)  # private splits: never put this in task data
    # What the stream drew of its level's attributes (counts; some describe held-out
    # records, so never shown for a private task).
    attributes: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def params(self) -> dict[str, Any]:
        return {"n_shown": self.n_shown, "n_eval": self.n_eval, "budget_s": self.budget_s, "level": self.level}

    def task_data(self) -> dict[str, Any]:
        """What a task publishes before it is scored. The seed of a private task is
        absent: it is revealed only by the scored trace."""
        data: dict[str, Any] = {"id": self.id, "identity": dict(self.identity)}
        if self.split != "private_eval":
            data["identity"]["task_seed"] = self.seed
        return data


def check_params(split: str, n_shown: int, n_eval: int, budget_s: float, level: int = DEFAULT_LEVEL) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if not (isinstance(budget_s, (int, float)) and not isinstance(budget_s, bool) and 0 < budget_s <= 60):
        raise ValueError("budget_s must be in (0, 60] seconds")
    for name, value, top in (("n_shown", n_shown, 64), ("n_eval", n_eval, 256)):
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= top):
            raise ValueError(f"{name} must be an integer in 1..{top}, got {value!r}")
    if not (isinstance(level, int) and not isinstance(level, bool) and level in LEVELS):
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, got {level!r}")


def task_params(n_shown: int, n_eval: int, budget_s: float, level: int) -> dict[str, Any]:
    """The parameters a task is built and scored with, as identities record them."""
    return {"n_shown": n_shown, "n_eval": n_eval, "budget_s": float(budget_s), "level": level}


def task_identity(split: str, index: int, commitment: str, n_shown: int, n_eval: int,
                  budget_s: float, level: int = DEFAULT_LEVEL) -> dict[str, Any]:
    """The identity of a task, known without building it (cheap rows carry it)."""
    return build_identity() | {
        "split": split, "split_commitment": commitment, "task_index": index,
        "task_params": task_params(n_shown, n_eval, budget_s, level),
    }


def durable_key(split: str, index: int, n_shown: int, n_eval: int, budget_s: float,
                level: int = DEFAULT_LEVEL) -> str:
    """A task's `Task.key` (SPEC §7): split, index, corpus version and task parameters
    (the level among them; above level 1 also the levels version), nothing about the
    build, so a code edit or a dependency upgrade that leaves the task alone keeps it,
    and a change of a level's tasks changes its keys. Trainers key curricula and resume on it."""
    fields: dict[str, Any] = {"split": split, "index": index, "corpus_version": CORPUS_VERSION,
                              **task_params(n_shown, n_eval, budget_s, level)}
    if level != 1:
        fields["levels_version"] = LEVELS_VERSION
    blob = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def task_hash(data: Mapping[str, Any]) -> str:
    """The `Task.hash` verifiers records (``task.hash``) for a row whose task data, as a
    trace records it (``task.data``), is ``data``: verifiers' content hash (``task_key``:
    SHA-256 of ``json.dumps(wire, sort_keys=True)``) of the row's wire form
    (`RedactionRow.wire_data`): the data without its prompt, without the system prompt
    when it is the default one, and without null values (pydantic's ``exclude_none``).
    It covers everything the row holds, ``idx`` (its position in the run) and the build
    identity included, so it changes with the build; `durable_key` does not."""
    wire = {k: v for k, v in data.items()
            if k != "prompt" and not (k == "system_prompt" and v == system_prompt(DEFAULT_BUDGET_S))}
    return hashlib.sha256(json.dumps(_without_nulls(wire), sort_keys=True).encode()).hexdigest()


def check_level_mix(mix: Mapping[int, float] | None) -> tuple[tuple[int, float], ...] | None:
    """A level mix as sorted (level, weight) pairs; raises ValueError for an unknown
    level or a weight that is negative, not finite, or all zero."""
    if mix is None:
        return None
    pairs = []
    for level, weight in mix.items():
        check_params("dev", DEFAULT_N_SHOWN, DEFAULT_N_EVAL, DEFAULT_BUDGET_S, level)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < math.inf:
            raise ValueError(f"level_mix weights must be finite numbers >= 0, got {weight!r} for level {level}")
        pairs.append((level, float(weight)))
    if not pairs or not weights_total((w for _, w in pairs), "level_mix weights") > 0:
        raise ValueError("level_mix needs at least one level with a positive weight")
    return tuple(sorted(pairs))


def weights_total(weights: Iterable[float], what: str) -> float:
    """The sum of finite weights; ValueError naming ``what``, not OverflowError, when it
    is past the largest float (review of 2026-12-04: 1=1e308,2=1e308 was a traceback)."""
    try:
        total = math.fsum(weights)
    except OverflowError:
        total = math.inf
    if total == math.inf:
        raise ValueError(f"{what} sum past the largest float; they are relative: scale them down")
    return total


def level_for(split: str, index: int, mix: tuple[tuple[int, float], ...]) -> int:
    """The level a weighted mix gives task ``index`` of ``split``: a function of the split,
    the index and the mix alone (SHA-256, no random state), so a task keeps its level in
    every process and on resume."""
    total = math.fsum(w for _, w in mix)
    digest = hashlib.sha256(f"redaction-pressure/level-mix/v1\x00{split}\x00{index}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64 * total
    acc = 0.0
    for level, weight in mix:
        acc += weight
        if point < acc:
            return level
    return next(level for level, weight in reversed(mix) if weight > 0)


def task_id(split: str, index: int) -> str:
    return f"{split}-{index:06d}"


def load_task(split: str, index: int, n_shown: int = DEFAULT_N_SHOWN, n_eval: int = DEFAULT_N_EVAL,
              budget_s: float = DEFAULT_BUDGET_S, *, level: int = DEFAULT_LEVEL,
              private_secret: bytes | None = None) -> RedactionTask:
    """Builds task ``index`` of ``split`` at difficulty ``level`` (1, the standard
    benchmark, up to 5). ``private_eval`` reads its secret from
    REDACTION_PRESSURE_PRIVATE_SEED unless ``private_secret`` is given."""
    check_params(split, n_shown, n_eval, budget_s, level)
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError("index must be an int")
    if split == "private_eval":
        secret = private_secret if private_secret is not None else read_private_secret()
        seed, commitment = private_seed(secret, index), private_commitment(secret)
    else:
        seed, commitment = PUBLIC[split].seed(index), PUBLIC[split].commitment
    return task_from_seed(split, index, seed, commitment, n_shown, n_eval, budget_s, level)


def task_from_seed(split: str, index: int, seed: int, commitment: str, n_shown: int = DEFAULT_N_SHOWN,
                   n_eval: int = DEFAULT_N_EVAL, budget_s: float = DEFAULT_BUDGET_S,
                   level: int = DEFAULT_LEVEL) -> RedactionTask:
    """Rebuilds a task from a seed a scored trace revealed: how an auditor without the
    private secret regenerates a private episode. It does not check that the seed
    belongs to the split; the audit does that separately."""
    built = _built(split, index, seed, commitment, n_shown, n_eval, budget_s, level)
    # Its two dicts are the caller's own: an edit never reaches the next caller's task.
    return replace(built, identity=copy.deepcopy(built.identity), attributes=copy.deepcopy(built.attributes))


# A task is a pure function of these arguments (typed: 2 and 2.0 are different calls),
# and its records are frozen (its dicts are copied per caller), so the last few are kept: a reader that shows a trace
# and judges it (`report`: its marks, then `rescore`'s verdict), or an env server scoring
# several rollouts of one task, builds it once.
@lru_cache(maxsize=64, typed=True)
def _built(split: str, index: int, seed: int, commitment: str, n_shown: int, n_eval: int, budget_s: float,
           level: int) -> RedactionTask:
    stream = build_stream(seed, n_shown, n_eval, level)
    identity = task_identity(split, index, commitment, n_shown, n_eval, budget_s, level)
    return RedactionTask(
        id=task_id(split, index), split=split, index=index, n_shown=n_shown, n_eval=n_eval,
        budget_s=float(budget_s), level=level, shown=stream.shown, heldout=stream.heldout,
        secret_families=stream.secret_families, decoy_families=stream.decoy_families,
        templates=stream.templates, oracle_rules=stream.oracle,
        prompt=render_prompt(stream.shown, n_eval, stream.world.policy.describe()),
        system_prompt=system_prompt(float(budget_s)), identity=identity, seed=seed, attributes=stream.attributes())
