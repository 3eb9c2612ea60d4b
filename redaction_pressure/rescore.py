"""`redaction-pressure rescore RUN_DIR`: does this build reproduce a run's rewards?

vf-replay re-scores a run but prints no result, and `audit verify` wants a sealed
archive. This reads a run's traces.jsonl (of `eval` or `vf-eval`, or an archive's) as
plain JSON, rebuilds each task from the split, index and parameters its trace records,
scores the recorded reply through the public path (`load_task`, `score_completion`),
and says "64/64 rewards reproduced, mean 0.267" or what differs, trace by trace.

The run is untrusted data. Nothing it names is imported or run (vf-replay imports the
judges and plugged functions a run's saved config names; this reads no config at
all); a line that is not JSON, too long, or not an Episode is a difference, not a
crash; task parameters go through the builder's own checks; and every scan has a time
budget: the one the trace records, refused above ``max_budget`` (a run cannot ask for
minutes per reply). The budget is a time budget, so a scan that runs out of time here
but not in the recording is retried once with the budget extended 4x (within the cap)
before it counts as a difference, as `audit verify` does for machines up to 4x slower.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .boundary.files import MAX_TRACES_BYTES, InputFileError, open_regular
from .build.identity import build_identity
from .results.stats import estimates
from .scoring.reward import WEIGHTS
from .scoring.score import Score, score_completion
from .task.splits import PrivateSeedError
from .task.tasks import RedactionTask, load_task

TRACES = "traces.jsonl"
MAX_LINE_BYTES = 64 << 20      # an Episode line of a 24-rule reply is ~100 KB
DEFAULT_MAX_BUDGET_S = 8.0     # 4x the standard 2.0 s: the machine-speed margin `audit verify` allows
BUDGET_EXTENSION = 4.0
TIME_CODES = frozenset({"timeout", "budget_exhausted"})
MAX_LISTED = 100               # differences printed one by one; the count covers all


def mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _obj(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a hostile trace may put anything anywhere)."""
    return value if isinstance(value, dict) else {}


class RescoreError(Exception):
    """The path is not a run (one clear line)."""


@dataclass
class Outcome:
    traces: int = 0
    reproduced: int = 0
    failed_rollouts: int = 0       # no reward recorded: nothing to reproduce
    differences: list[str] = field(default_factory=list)
    not_rescored: list[str] = field(default_factory=list)
    recorded: list[float] = field(default_factory=list)
    recomputed: list[float] = field(default_factory=list)
    tasks: list[tuple[int, int]] = field(default_factory=list)  # (index, level) of each rescored trace
    other_builds: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences and not self.not_rescored

    def headline(self) -> str:
        scored = self.traces - self.failed_rollouts
        text = f"{self.reproduced}/{scored} rewards reproduced"
        if self.differences or self.not_rescored:
            text += f", mean {mean(self.recorded):.3f} recorded, {mean(self.recomputed):.3f} recomputed"
            n = len(self.differences)
            parts = [f"{n} differ{'s' if n == 1 else ''}" if n else "",
                     f"{len(self.not_rescored)} not rescored" if self.not_rescored else ""]
            text += "; " + ", ".join(p for p in parts if p)
        else:
            text += f", mean {mean(self.recorded):.3f}{self._se(self.recorded)}"
        if self.failed_rollouts:
            text += f" ({self.failed_rollouts} failed rollout{'s' if self.failed_rollouts != 1 else ''} "
            text += "recorded no reward)"
        return text

    def _se(self, rewards: list[float]) -> str:
        """`` ± 0.015``: the mean's standard error, clustered by task (`results.stats`)."""
        clusters: dict[tuple[int, int], list[list[float]]] = {}
        for key, reward in zip(self.tasks, rewards, strict=True):
            clusters.setdefault(key, []).append([reward])
        se = estimates(clusters, ("reward",))["reward"].se
        return "" if se is None else f" ± {se:.3f}"

    def as_dict(self) -> dict[str, Any]:
        return {"traces": self.traces, "reproduced": self.reproduced, "failed_rollouts": self.failed_rollouts,
                "differences": self.differences, "not_rescored": self.not_rescored,
                "recorded_rewards": self.recorded, "recomputed_rewards": self.recomputed,
                "other_builds": self.other_builds, "ok": self.ok, "headline": self.headline()}


def traces_file(path: Path) -> Path:
    if path.is_dir():
        path = path / TRACES
        if not path.is_file():
            raise RescoreError(f"{path.parent} holds no {TRACES}: give a run directory of `redaction-pressure eval` "
                               f"or `vf-eval`, a sealed archive, or the traces file itself")
    elif not path.is_file():
        raise RescoreError(f"{path} does not exist" if not path.exists() else f"{path} is not a file or directory")
    return path


def episode_traces(path: Path, problem: Callable[[str], None]) -> Iterator[tuple[int, int, Any]]:
    """(line number, position in the line, trace) of every trace, streamed; a line
    that is not an Episode is a problem."""
    try:
        f = open_regular(path, follow_links=True, max_bytes=MAX_TRACES_BYTES)
    except InputFileError as exc:
        raise RescoreError(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise RescoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    with f:
        number = 0
        while raw := f.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := f.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass
                problem(f"line {number}: longer than {MAX_LINE_BYTES >> 20} MiB, not read")
                continue
            if not raw.strip():
                continue
            try:
                episode = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                problem(f"line {number}: not JSON ({str(exc)[:120]})")
                continue
            traces = episode.get("traces") if isinstance(episode, dict) else None
            if not isinstance(traces, list):
                problem(f"line {number}: not an Episode with a list of traces")
                continue
            for k, trace in enumerate(traces):
                yield number, k, trace


def _reply(trace: dict[str, Any]) -> str:
    """The last sampled node's content, as the taskset adapter reads it."""
    replies = [n.get("message") for n in trace.get("nodes") or [] if isinstance(n, dict) and n.get("sampled") is True]
    content = replies[-1].get("content") if replies and isinstance(replies[-1], dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def _recorded(trace: dict[str, Any]) -> dict[str, float] | None:
    """The recorded reward-v1 components, or None when the rollout recorded no reward."""
    rewards = trace.get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        return None
    out = {}
    for name, weight in WEIGHTS.items():
        entry = rewards.get(name)
        if not (isinstance(entry, dict) and entry.get("weight") == weight
                and isinstance(entry.get("score"), (int, float)) and not isinstance(entry.get("score"), bool)):
            raise ValueError(f"its rewards are not reward-v1's recall/precision/clean with weights "
                             f"{', '.join(f'{w:g}' for w in WEIGHTS.values())}")
        out[name] = float(entry["score"])
    out["reward"] = sum(out[k] * w for k, w in WEIGHTS.items())  # in WEIGHTS order, as the reward sums them
    return out


def _task(trace: dict[str, Any]) -> RedactionTask:
    data = trace["task"]["data"]
    if not isinstance(data, dict):
        raise ValueError("it records no task data")
    split, index = data.get("split"), data.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"task index {index!r} is not a non-negative integer")
    task = load_task(str(split), index, data.get("n_shown"), data.get("n_eval"),  # type: ignore[arg-type]
                     data.get("budget_s"), level=data.get("level", 1))  # type: ignore[arg-type]
    if data.get("prompt") != task.prompt:
        raise LookupError(f"the recorded prompt is not {task.id}'s (another corpus, or another private secret?)")
    return task


def _score(task: RedactionTask, reply: str, recorded_codes: set[str], cap: float) -> Score:
    score = score_completion(task, reply, budget_s=task.budget_s)
    timed_out = bool(TIME_CODES.intersection(e.code for e in score.errors))
    if timed_out and not TIME_CODES.intersection(recorded_codes) and task.budget_s < cap:
        score = score_completion(task, reply, budget_s=min(task.budget_s * BUDGET_EXTENSION, cap))
    return score


def _compare(name: str, recorded: dict[str, float], score: Score) -> str | None:
    pairs = [(k, recorded[k], float(getattr(score, k))) for k in ("reward", *WEIGHTS)]
    if all(a == b for _, a, b in pairs):
        return None
    detail = ", ".join(f"{k} {a:.4f} -> {b:.4f}" for k, a, b in pairs[1:] if a != b)
    codes = [e.code for e in score.errors]
    why = f"; errors now {codes}" if codes else ""
    return f"{name}: reward recorded {recorded['reward']:.4f}, recomputed {score.reward:.4f} ({detail}{why})"


def rescore(path: Path, max_budget_s: float = DEFAULT_MAX_BUDGET_S,
            on_trace: Callable[[], None] = lambda: None) -> Outcome:
    out = Outcome()
    here = build_identity()["source_digest"]
    traces = traces_file(Path(path))
    for number, k, trace in episode_traces(traces, out.differences.append):
        out.traces += 1
        where = f"line {number}" + (f" trace {k}" if k else "")
        try:
            if not isinstance(trace, dict) or not isinstance(trace.get("task"), dict):
                raise ValueError("not a trace object with a task")
            recorded = _recorded(trace)
            if recorded is None:
                out.failed_rollouts += 1
                continue
            info = _obj(trace.get("info"))
            if _obj(info.get("environment")).get("source_digest") not in (None, here):
                out.other_builds += 1
            budget = _obj(trace["task"].get("data")).get("budget_s")
            if isinstance(budget, (int, float)) and budget > max_budget_s:
                out.not_rescored.append(f"{where}: its budget {budget:g} s is above --max-budget {max_budget_s:g} s")
                continue
            task = _task(trace)
            where = f"{task.id} ({where})"
            errors = info.get("redaction_errors")
            codes = {str(e.get("code")) for e in errors if isinstance(e, dict)} if isinstance(errors, list) else set()
            score = _score(task, _reply(trace), codes, max_budget_s)
        except PrivateSeedError as exc:
            out.not_rescored.append(f"{where}: {exc}")
            continue
        except (ValueError, TypeError, KeyError, IndexError, LookupError) as exc:
            out.differences.append(f"{where}: cannot be rescored: {exc}")
            continue
        finally:
            on_trace()
        out.recorded.append(recorded["reward"])
        out.recomputed.append(score.reward)
        out.tasks.append((task.index, task.level))
        difference = _compare(where, recorded, score)
        if difference is None:
            out.reproduced += 1
        else:
            out.differences.append(difference)
    if out.traces == 0 and not out.differences:
        raise RescoreError(f"{traces} holds no traces")
    return out
