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
minutes per reply), and all rescoring together gets at most ``max_cpu`` of scan CPU
(`scoring.allowance`, as the report's): a trace it does not grant is NOT CHECKED, never
a pass. The budget is a time budget, so a scan that runs out of time here but not in the
recording is retried once with the budget extended 4x (within the cap) before it counts
as a difference, as `audit verify` does for machines up to 4x slower.

A trace records its scores twice, verifiers' ``rewards.*`` and the scorer's
``info.redaction.*`` (which the report's headline reads): both are compared with the
recomputation, and so are its errors (``info.redaction_errors``) as `audit verify`
compares them, so "reproduced" never vouches for the same reward from another verdict.
What a file can make this spend is bounded by its bytes (`boundary.episodes`), and the
differences kept for listing are capped (`MAX_KEPT`; the counts cover all).

A private task needs the secret to be rebuilt from its index. Without it, the task is
rebuilt from the seed its trace reveals, as `audit verify` does: a reward that does not
reproduce is still found, but that the seed is the split's is NOT CHECKED (exit 3).
"""

from __future__ import annotations

import signal
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any

from .boundary.episodes import EpisodeReader, failed
from .boundary.files import MAX_TRACES_BYTES, InputFileError, open_regular
from .boundary.launch import fork_context, scrub_environment
from .build.identity import build_identity
from .results.labels import disagreement
from .results.recorded import METRICS, Copies, score_copies
from .results.stats import Estimate, estimates, task_mean
from .scoring.allowance import DEFAULT_MAX_CPU_S, Allowance
from .scoring.scan_pool import available_cpus
from .scoring.score import Score, score_completion
from .scoring.summary import MEAN_OVER_TASKS
from .task.splits import (
    PRIVATE_COMMITMENT_PREFIX,
    PRIVATE_SEED_ENV,
    PRIVATE_SIZE,
    PrivateSeedError,
    is_private_seed,
    prove_split,
)
from .task.tasks import RedactionTask, check_params, load_task, task_from_seed

TRACES = "traces.jsonl"
DEFAULT_MAX_BUDGET_S = 8.0     # 4x the standard 2.0 s: the machine-speed margin `audit verify` allows
BUDGET_EXTENSION = 4.0
TIME_CODES = frozenset({"timeout", "budget_exhausted"})
MAX_LISTED = 100               # differences printed one by one; the count covers all
MAX_KEPT = 1000                # differences (and traces not rescored) kept for --json; the counts cover all


def _obj(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a hostile trace may put anything anywhere)."""
    return value if isinstance(value, dict) else {}


class RescoreError(Exception):
    """The path is not a run (one clear line)."""


@dataclass
class Outcome:
    traces: int = 0
    reproduced: int = 0
    failed_rollouts: int = 0       # marked failed, or no reward recorded: not counted
    differences: list[str] = field(default_factory=list)  # the first MAX_KEPT
    not_rescored: list[str] = field(default_factory=list)  # the first MAX_KEPT
    recorded: list[float] = field(default_factory=list)
    recomputed: list[float] = field(default_factory=list)
    tasks: list[tuple[int, int]] = field(default_factory=list)  # (index, level) of each rescored trace
    other_builds: int = 0
    difference_count: int = 0
    not_rescored_count: int = 0
    # Private traces rescored on the task their revealed seed builds, the secret not at
    # hand: that each seed is the split's is NOT CHECKED (and why not).
    unproven_seeds: int = 0
    unproven_why: str = ""
    # What the run's labels, commitments and seeds say of its split when they do not
    # establish the split it is labelled (`splits.prove_split`): each trace may reproduce
    # on the split it names, but the run is not one split's (e.g. dev traces in a private run).
    split_problem: str = ""
    # One per trace, in order: reproduced, differs, not_checked or failed (no reward
    # recorded); a trace that reproduced on an unproven private seed says "unproven".
    statuses: list[str] = field(default_factory=list)
    # (label, commitment, index, seed) of each scored trace: what `split_problem` is of
    claims: list[tuple[object, object, object, object]] = field(default_factory=list, repr=False)

    def differ(self, line: str) -> None:
        self.difference_count += 1
        if len(self.differences) < MAX_KEPT:
            self.differences.append(line)

    def not_checked(self, line: str) -> None:
        self.not_rescored_count += 1
        if len(self.not_rescored) < MAX_KEPT:
            self.not_rescored.append(line)

    @property
    def ok(self) -> bool:
        return (not self.difference_count and not self.not_rescored_count and not self.unproven_seeds
                and not self.split_problem)

    @property
    def exit_code(self) -> int:
        """0: every reward reproduced; 1: one differs (or could not be rescored); 3: none
        differs, but some were NOT CHECKED (beyond the reader's limits, or a private
        trace without a seed it reveals), private seeds were not proven the split's (the
        secret was not at hand), the run is not one split's, or no rollout recorded a reward at all (every one
        failed): none is a pass."""
        if self.difference_count:
            return 1
        return 3 if self.not_rescored_count or self.unproven_seeds or self.split_problem or not self.reproduced else 0

    def headline(self) -> str:
        scored = self.traces - self.failed_rollouts
        text = f"{self.reproduced}/{scored} rewards reproduced"
        if self.difference_count or self.not_rescored_count:
            # Means of the traces rescored only, said so when others were not (the
            # recorded mean of none is no figure: review of 2026-12-04 printed 0.000).
            rescored = len(self.recorded)
            if rescored:
                text += (f", mean {task_mean(list(self._by_task(self.recorded).values())):.3f} recorded, "
                         f"{task_mean(list(self._by_task(self.recomputed).values())):.3f} recomputed{self._uneven()}")
                if rescored < scored:
                    text += f" over the {rescored} rescored"
            n = self.difference_count
            parts = [f"{n} differ{'s' if n == 1 else ''}" if n else "",
                     f"{self.not_rescored_count} not rescored (NOT CHECKED)" if self.not_rescored_count else ""]
            text += "; " + ", ".join(p for p in parts if p)
        else:
            text += f", mean {self._estimate(self.recorded).pm()}{self._uneven()}"
        if self.failed_rollouts:
            text += f" ({self.failed_rollouts} failed rollout{'s' if self.failed_rollouts != 1 else ''}, "
            text += "not counted)"
        if not self.reproduced and not self.difference_count and not self.not_rescored_count:
            text += ": nothing was checked (NOT CHECKED)"
        if self.split_problem:
            text += f"; the run's split: {self.split_problem} (NOT CHECKED)"
        if self.unproven_seeds:
            n = self.unproven_seeds
            text += (f"; {n} private task{'s' if n != 1 else ''} rebuilt from the seed{'s' if n != 1 else ''} "
                     f"{'their traces reveal' if n != 1 else 'its trace reveals'}, not proven the split's (NOT "
                     f"CHECKED: {self.unproven_why.rstrip('.')})")
        return text

    def _by_task(self, rewards: list[float]) -> dict[tuple[int, int], list[float]]:
        """``rewards`` grouped by their traces' tasks, for means over tasks (each task
        weighs the same, whatever its rollouts: `results.stats.task_mean`)."""
        groups: dict[tuple[int, int], list[float]] = {}
        for key, reward in zip(self.tasks, rewards, strict=True):
            groups.setdefault(key, []).append(reward)
        return groups

    def _estimate(self, rewards: list[float]) -> Estimate:
        """The mean over tasks with its standard error, clustered by task (`estimates`
        draws the bootstrap too: only where the error is shown)."""
        return estimates({k: [[r] for r in g] for k, g in self._by_task(rewards).items()}, ("reward",))["reward"]

    def _uneven(self) -> str:
        return f" ({MEAN_OVER_TASKS})" if len(set(Counter(self.tasks).values())) > 1 else ""

    def as_dict(self) -> dict[str, Any]:
        return {"traces": self.traces, "reproduced": self.reproduced, "failed_rollouts": self.failed_rollouts,
                "differences": self.differences, "difference_count": self.difference_count,
                "not_rescored": self.not_rescored, "not_rescored_count": self.not_rescored_count,
                "recorded_rewards": self.recorded, "recomputed_rewards": self.recomputed,
                "other_builds": self.other_builds, "unproven_private_seeds": self.unproven_seeds,
                "split_problem": self.split_problem or None, "ok": self.ok,
                "headline": self.headline()}


def traces_file(path: Path) -> tuple[Path, bool]:
    """(the traces file of ``path``, whether a link may be followed to it): a run
    directory's member is someone else's and is never followed (as the report and compare
    read it); a file the user names may be a link they made."""
    if path.is_dir():
        return path / TRACES, False
    if not path.exists() and not path.is_symlink():
        raise RescoreError(f"{path} does not exist")
    return path, True


def episode_traces(path: Path, problem: Callable[[str], None], follow_links: bool = True,
                   ) -> Iterator[tuple[int, int, Any]]:
    """(line number, position in the line, trace) of every trace, streamed
    (`boundary.episodes`); a line that is not an Episode, or entries that are not traces,
    are problems."""
    try:
        f = open_regular(path, follow_links=follow_links, max_bytes=MAX_TRACES_BYTES)
    except InputFileError as exc:
        if exc.missing and not follow_links:
            raise RescoreError(f"{path.parent} holds no {TRACES}: give a run directory of `redaction-pressure eval` "
                               f"or `vf-eval`, a sealed archive, or the traces file itself") from None
        raise RescoreError(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise RescoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    with f:
        for number, k, trace, _run in EpisodeReader(problem).read(f):
            yield number, k, trace


def _reply(trace: dict[str, Any]) -> str:
    """The last sampled node's content, as the taskset adapter reads it."""
    nodes = trace.get("nodes")
    replies = [n.get("message") for n in nodes if isinstance(n, dict) and n.get("sampled") is True] \
        if isinstance(nodes, list) else []
    content = replies[-1].get("content") if replies and isinstance(replies[-1], dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _recorded(trace: dict[str, Any]) -> Copies | None:
    """Both recorded copies of the scores, or None for a failed rollout (none recorded,
    or marked failed: what it may record is not counted, as `audit seal` leaves it out
    and verifiers' resume runs it again). Raises ValueError for scores no scorer writes (not a number in
    [0, 1], other weights than reward-v1's, info.redaction's without rewards). Copies
    that disagree are compared with the recomputation, each (`_compare`)."""
    if failed(trace):
        return None
    copies = score_copies(trace)
    if copies.problems or (copies.rewards is None and copies.redaction):
        raise ValueError(copies.distrust())
    if copies.rewards is not None and len(copies.redaction) < len(METRICS):
        # The scorer writes both copies of every scored trace; one with a copy missing
        # (red team, 2026-12-03: info.redaction null) was edited, and "reproduced"
        # would vouch for a copy that is not there.
        missing = ", ".join(f"info.redaction.{k}" for k in METRICS if k not in copies.redaction)
        raise ValueError(f"it records rewards but not {missing}, which the scorer writes beside them")
    return None if copies.rewards is None else copies


def _task(trace: dict[str, Any], use_secret: bool = True) -> tuple[RedactionTask, str | None]:
    """The task the trace was scored on, and, for a private task rebuilt from the seed
    its trace reveals because the secret is not at hand (or not to be read), why that
    seed is unproven."""
    data = trace["task"]["data"]
    if not isinstance(data, dict):
        raise ValueError("it records no task data")
    split, index = data.get("split"), data.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"task index {str(index)[:40]} is not a non-negative integer")
    params = (data.get("n_shown"), data.get("n_eval"), data.get("budget_s"))
    unproven = None
    try:
        if not use_secret and split == "private_eval":
            raise PrivateSeedError("this reader never reads the private secret, so no private seed is proven the "
                                   "split's here")
        task = load_task(str(split)[:40], index, *params, level=data.get("level", 1))  # type: ignore[arg-type]
    except PrivateSeedError as exc:
        task, unproven = _revealed_task(trace, index, params, data.get("level", 1), exc), str(exc)
    if data.get("prompt") != task.prompt:
        raise LookupError(f"the recorded prompt is not {task.id}'s (another corpus, or another private secret?)")
    return task, unproven


def _revealed_task(trace: dict[str, Any], index: int, params: tuple[Any, ...], level: Any,
                   missing: PrivateSeedError) -> RedactionTask:
    """A private task rebuilt from the seed and commitment its scored trace reveals, as
    `audit verify` and the report rebuild it: the recorded reply is then rescored on the
    task it was scored on. Whether that seed is the split's is what only the secret
    proves (HMAC-SHA256(secret, index)): the caller says so, NOT CHECKED. A trace that
    reveals no private seed is not rescored (``missing`` is raised again)."""
    env = _obj(_obj(trace.get("info")).get("environment"))
    seed, commitment = env.get("task_seed"), env.get("split_commitment")
    if not is_private_seed(seed):
        raise PrivateSeedError(f"{str(missing).rstrip('.')}, and the trace reveals no private seed to rebuild its "
                               f"task from (task_seed {str(seed)[:40]}, not an integer in 2^63..2^64)")
    if not (isinstance(commitment, str) and commitment.startswith(PRIVATE_COMMITMENT_PREFIX)):
        raise ValueError(f"it is labelled private_eval but commits to {str(commitment)[:80]}, not to a private split")
    n_shown, n_eval, budget_s = params
    check_params("private_eval", n_shown, n_eval, budget_s, level)
    if not 0 <= index < PRIVATE_SIZE:
        raise IndexError(f"private_eval has tasks 0..{PRIVATE_SIZE - 1}; got index {index}")
    return task_from_seed("private_eval", index, seed, commitment[:200], n_shown, n_eval, budget_s, level)


def _check_revealed(trace: dict[str, Any], task: RedactionTask) -> None:
    """The commitment and seed the trace's labels name are the rebuilt task's (a label
    may only name the task that was scored)."""
    env = _obj(_obj(trace.get("info")).get("environment"))
    for key, rebuilt in (("split_commitment", task.identity.get("split_commitment")), ("task_seed", task.seed)):
        if key in env and env[key] != rebuilt:
            raise ValueError(f"info.environment's {key} {str(env[key])[:80]} is not that of {task.id}, which its task "
                             f"data rebuilds ({str(rebuilt)[:80]})")


def _score(task: RedactionTask, reply: str, recorded_codes: set[str], cap: float, known: Score | None = None) -> Score:
    score = known if known is not None else score_completion(task, reply, budget_s=task.budget_s)
    timed_out = bool(TIME_CODES.intersection(e.code for e in score.errors))
    if timed_out and not TIME_CODES.intersection(recorded_codes) and task.budget_s < cap:
        score = score_completion(task, reply, budget_s=min(task.budget_s * BUDGET_EXTENSION, cap))
    return score


Error = tuple[str, object]  # (code, rule): what `audit verify` compares


def _recorded_errors(info: dict[str, Any]) -> list[Error]:
    """The (code, rule) pairs ``info.redaction_errors`` records, in order. Raises
    ValueError when it is missing (the scorer writes it beside every score) or not what
    it writes."""
    if "redaction_errors" not in info:
        raise ValueError("it records rewards but not info.redaction_errors, which the scorer writes beside them")
    errors = info["redaction_errors"]
    if not isinstance(errors, list) or not all(isinstance(e, dict) and isinstance(e.get("code"), str)
                                               for e in errors):
        raise ValueError("its info.redaction_errors is not a list of error objects with a code")
    return [(e["code"][:60], e.get("rule")) for e in errors]


def _errors_differ(recorded: list[Error], now: list[Error]) -> bool:
    """As `audit verify` compares them: the same (code, rule) pairs in the same order,
    time-outs apart when the recording timed out (where a slow scan stops, or whether it
    does, depends on the machine; the reward says what the time-out cost)."""
    if any(code in TIME_CODES for code, _ in recorded):
        recorded = [e for e in recorded if e[0] not in TIME_CODES]
        now = [e for e in now if e[0] not in TIME_CODES]
    return recorded != now


MAX_ERRORS_SHOWN = 4


def _shown(errors: list[Error]) -> str:
    """At most MAX_ERRORS_SHOWN pairs, then how many more (a hostile trace may record
    hundreds of thousands)."""
    text = ", ".join(code if rule is None else f"{code} (rule {str(rule)[:20]})" for code, rule in
                     errors[:MAX_ERRORS_SHOWN])
    more = len(errors) - MAX_ERRORS_SHOWN
    return f"[{text}{f', and {more:,} more' if more > 0 else ''}]"


def _compare(name: str, copies: Copies, score: Score, errors: list[Error]) -> str | None:
    """How either recorded copy (``rewards.*``, ``info.redaction.*``) or the recorded
    errors differ from the recomputation, or None."""
    assert copies.rewards is not None
    recorded = copies.rewards
    now = {k: float(getattr(score, k)) for k in METRICS}
    now_errors: list[Error] = [(e.code, e.rule) for e in score.errors]
    if all(recorded[k] == now[k] for k in METRICS) and all(v == now[k] for k, v in copies.redaction.items()):
        if not _errors_differ(errors, now_errors):
            return None
        # The same reward from another verdict (a reply voided for another reason, or
        # by another rule): `audit verify` fails such a trace, and "reproduced" would vouch for it.
        return (f"{name}: reward reproduced ({score.reward:.4f}), but its errors are not: recorded "
                f"{_shown(errors)}, recomputed {_shown(now_errors)}")
    detail = ", ".join(f"{k} {recorded[k]:.4f} -> {now[k]:.4f}" for k in METRICS[1:] if recorded[k] != now[k])
    other = {k: v for k, v in copies.redaction.items() if v != recorded[k]}  # where the two copies disagree
    if other:
        detail += ("; " if detail else "") + "info.redaction records " + ", ".join(
            f"{k} {v:.4f}" for k, v in other.items())
    why = f"; errors now {_shown([(e.code, e.rule) for e in score.errors])}" if score.errors else ""
    return f"{name}: reward recorded {recorded['reward']:.4f}, recomputed {score.reward:.4f} ({detail}{why})"


_TALLIES = ("secret_families", "decoy_families", "secret_classes", "decoy_classes")


def _tallies_differ(name: str, trace: dict[str, Any], score: Score, recorded_codes: set[str]) -> str | None:
    """Where the counts a trace records beside its scores (``info.redaction``'s tallies
    by family and class and its counts, ``metrics``) are not the recomputation's: the
    report's and compare's leak and damage tables are read from them (red team,
    2026-12-04: a run whose rewards were real and whose tallies said every secret was
    removed passed `rescore`, `report` and `compare`; `audit verify` failed it). A
    recording that timed out stopped its scan where its machine did: its counts are not
    compared (as `audit verify` compares only what does not depend on the scan's progress)."""
    if TIME_CODES.intersection(recorded_codes):
        return None
    info = _obj(_obj(trace.get("info")).get("redaction"))
    wrong = [k for k in _TALLIES if not _same_json(info.get(k), getattr(score, k))]
    metrics = score.metrics()
    wrong += [f"info.redaction.{k}" for k, v in metrics.items() if not _same_json(info.get(k), v)]
    recorded_metrics = _obj(trace.get("metrics"))
    wrong += [f"metrics.{k}" for k, v in metrics.items() if not _same_json(recorded_metrics.get(k), float(v))]
    if not wrong:
        return None
    return (f"{name}: reward reproduced ({score.reward:.4f}), but the counts recorded beside it are not: "
            f"{', '.join(wrong[:6])}{' ...' if len(wrong) > 6 else ''}")


def _same_json(recorded: object, now: object) -> bool:
    """The same JSON value, types included (a count 3.0 is not 3; a list is a tuple's JSON)."""
    if isinstance(now, (list, tuple)):
        return isinstance(recorded, list) and len(recorded) == len(now) and all(
            _same_json(a, b) for a, b in zip(recorded, now, strict=True))
    if isinstance(now, dict):
        return isinstance(recorded, dict) and recorded.keys() == now.keys() and all(
            _same_json(recorded[k], v) for k, v in now.items())
    return type(recorded) is type(now) and recorded == now


def rescore(path: Path, max_budget_s: float = DEFAULT_MAX_BUDGET_S,
            on_trace: Callable[[], None] = lambda: None, max_cpu_s: float = DEFAULT_MAX_CPU_S,
            jobs: int = 1) -> Outcome:
    traces, follow = traces_file(Path(path))
    out = rescore_in_parallel(lambda problem: episode_traces(traces, problem, follow), jobs, max_budget_s, on_trace,
                              max_cpu_s)
    if out.traces == 0 and not out.difference_count:
        raise RescoreError(f"{traces} holds no traces")
    return out


def rescore_traces(traces: Iterable[tuple[int, int, Any]], max_budget_s: float = DEFAULT_MAX_BUDGET_S,
                   on_trace: Callable[[], None] = lambda: None, max_cpu_s: float = DEFAULT_MAX_CPU_S,
                   out: Outcome | None = None, retry_cap_s: float | None = None,
                   allowance: Allowance | None = None, use_secret: bool = True,
                   scored: Callable[[RedactionTask, str], Score | None] | None = None) -> Outcome:
    """`rescore` of traces already read, each with its (line number, position in the
    line): `compare` and `report` rescore the very traces they show, not the file read
    again. A trace stating a budget above ``max_budget_s`` is NOT CHECKED; a scan that
    times out here where the recording did not is retried with the budget extended 4x,
    up to ``retry_cap_s`` (default ``max_budget_s``), as `audit verify` tolerates a
    slower machine. ``allowance``: the CPU a caller grants all its rescoring (the report
    judges one trace at a time under its own), else one of ``max_cpu_s``. ``use_secret``
    False: a private task is always rebuilt from the seed its trace reveals, unproven (the
    report never reads the private secret: its verdict must not depend on the environment
    a worker process inherits). ``scored``: the verdict a caller already has for a (task,
    reply), if any (the report's marks scored it at the task's budget, as the first try
    here does); a time-out in it is retried here as any other."""
    out = Outcome() if out is None else out
    cap = max_budget_s if retry_cap_s is None else retry_cap_s
    allowance = Allowance(max_budget_s, max_cpu_s) if allowance is None else allowance
    here = build_identity()["source_digest"]
    for number, k, trace in traces:
        out.traces += 1
        where = f"line {number}" + (f" trace {k}" if k else "")
        try:
            if not isinstance(trace.get("task"), dict):
                raise ValueError("not a trace object with a task")
            recorded = _recorded(trace)
            if recorded is None:
                out.failed_rollouts += 1
                out.statuses.append("failed")
                continue
            info = _obj(trace.get("info"))
            env, data = _obj(info.get("environment")), _obj(trace["task"].get("data"))
            out.claims.append((data.get("split"), env.get("split_commitment"), data.get("index"), env.get("task_seed")))
            if env.get("source_digest") not in (None, here):
                out.other_builds += 1
            budget = data.get("budget_s")
            if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > max_budget_s:
                out.not_checked(f"{where}: its budget {float(min(budget, 1e9)):g} s is above --max-budget "
                                f"{max_budget_s:g} s")
                out.statuses.append("not_checked")
                continue
            mislabelled = disagreement(trace)
            if mislabelled is not None:
                raise ValueError(mislabelled)
            refusal = allowance.cpu_refusal()
            if refusal is not None:
                out.not_checked(f"{where}: NOT CHECKED, not rescored because {refusal}")
                out.statuses.append("not_checked")
                continue
            recorded_errors = _recorded_errors(info)
            codes = {code for code, _ in recorded_errors}
            # Building the task is charged too: a trace chooses its parameters (up to 64
            # shown and 256 held-out records at level 5), so building costs what it says.
            with allowance.charging(in_process=True):
                task, unproven = _task(trace, use_secret)
                where = f"{task.id} ({where})"
                _check_revealed(trace, task)
                reply = _reply(trace)
                known = scored(task, reply) if scored is not None else None
                score = _score(task, reply, codes, cap, known)
        except PrivateSeedError as exc:
            out.not_checked(f"{where}: {exc}")
            out.statuses.append("not_checked")
            continue
        except (ValueError, TypeError, KeyError, IndexError, LookupError, OverflowError, RecursionError) as exc:
            out.differ(f"{where}: cannot be rescored: {str(exc)[:300]}")
            out.statuses.append("differs")
            continue
        finally:
            on_trace()
        if unproven is not None:
            out.unproven_seeds += 1
            out.unproven_why = out.unproven_why or unproven
        out.recorded.append(recorded.rewards["reward"] if recorded.rewards else 0.0)
        out.recomputed.append(score.reward)
        out.tasks.append((task.index, task.level))
        difference = _compare(where, recorded, score, recorded_errors) or _tallies_differ(where, trace, score, codes)
        if difference is None:
            out.reproduced += 1
            out.statuses.append("reproduced" if unproven is None else "unproven")
        else:
            out.differ(difference)
            out.statuses.append("differs")
    if out.claims:
        out.split_problem = prove_split(out.claims).disagreement() or ""
    return out


# Traces; below, serial: comparing two 64-task dev runs took 2.4-3.3 s with 1 or 2 jobs
# (forking and starting scan workers cost what the second core saves).
PARALLEL_FROM = 128
CHUNK = 8  # traces per round trip to a worker (~0.1 s of work: an interrupt waits for little)
WINDOW = 4  # chunks read ahead per worker: this process holds a few chunks, not the run
_worker: dict[str, Any] = {}  # a forked worker's allowance and budgets (`_start_worker`)


def rescore_in_parallel(read: Callable[[Callable[[str], None]], Iterable[tuple[int, int, Any]]], jobs: int,
                        max_budget_s: float = DEFAULT_MAX_BUDGET_S, on_trace: Callable[[], None] = lambda: None,
                        max_cpu_s: float = DEFAULT_MAX_CPU_S, out: Outcome | None = None,
                        retry_cap_s: float | None = None) -> Outcome:
    """`rescore_traces` over up to ``jobs`` forked processes (no more than this process
    may use: a mistyped --jobs 100000 forks none beyond that), each trace's verdict its
    own. ``read(problem)`` gives the traces, passing what it cannot read to ``problem``.
    The Outcome is the serial one, every difference in the same order (each reading
    problem where the traces read before it put it), but for which traces a spent
    ``max_cpu_s`` leaves NOT CHECKED: the CPU figure is shared, so the total stops within
    one trace's cost per job of it (`scoring.allowance`). Traces are read as the workers
    take them, `WINDOW` chunks ahead, so this process holds a few chunks, as serially,
    and the workers, forked once the first chunk is read, inherit no more than it (red
    team, 2026-12-04: read whole first, a 158 MB run cost 705 MB with 2 jobs, 70 MB
    serially). Serial below `PARALLEL_FROM` traces, or where forking is not safe
    (`boundary.launch`). A worker that dies (killed, out of memory) is a `RescoreError`,
    never a verdict; an interrupt cancels what was not started."""
    out = Outcome() if out is None else out
    merger = _Merger(out, on_trace)
    items = iter(read(merger.problem))
    head = [merger.numbered(item) for item in islice(items, PARALLEL_FROM)]
    rest = (merger.numbered(item) for item in items)
    context = fork_context()
    jobs = min(jobs, available_cpus())
    if jobs <= 1 or len(head) < PARALLEL_FROM or context is None:
        allowance = Allowance(max_budget_s, max_cpu_s)
        for item in chain(head, rest):
            merger.add([rescore_traces([item], max_budget_s, allowance=allowance, retry_cap_s=retry_cap_s)])
        return merger.finish()
    allowance = Allowance(max_budget_s, max_cpu_s, shared=True)
    pending: deque[Future[list[Outcome]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                             initargs=(allowance, max_budget_s, retry_cap_s)) as pool:
        try:
            for chunk in _chunks(chain(head, rest), CHUNK):
                pending.append(pool.submit(_rescore_chunk, chunk))
                while len(pending) >= jobs * WINDOW:
                    merger.add(pending.popleft().result())
            while pending:
                merger.add(pending.popleft().result())
        except BrokenProcessPool:
            raise RescoreError("a rescoring worker process died (killed, or out of memory) before giving its "
                               "verdicts: there is no verdict; run again, or with --jobs 1") from None
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    return merger.finish()


def _chunks(items: Iterable[tuple[int, int, Any]], size: int) -> Iterator[list[tuple[int, int, Any]]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _start_worker(allowance: Allowance, max_budget_s: float, retry_cap_s: float | None) -> None:
    """Once in each forked worker: the environment of a fresh process, with the private
    secret if the reader holds it (a private seed is proven with it, as serially); an
    interrupt is the reader's to handle (it cancels the work), not a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    scrub_environment(PRIVATE_SEED_ENV)
    _worker.update(allowance=allowance, max_budget_s=max_budget_s, retry_cap_s=retry_cap_s)


def _rescore_chunk(items: list[tuple[int, int, Any]]) -> list[Outcome]:
    return [rescore_traces([item], _worker["max_budget_s"], allowance=_worker["allowance"],
                           retry_cap_s=_worker["retry_cap_s"]) for item in items]


class _Merger:
    """Adds each trace's Outcome to ``out`` in trace order, with the reading problems
    between them where they were found, and judges the split over every claim."""

    def __init__(self, out: Outcome, on_trace: Callable[[], None]) -> None:
        self.out, self.on_trace = out, on_trace
        self.read = 0  # traces read so far
        self.merged = 0  # traces added to out
        self.problems: list[tuple[int, str]] = []  # (traces read before it, problem), the first MAX_KEPT
        self.dropped = 0  # problems past those
        self.shown = 0  # problems added to out

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_KEPT:
            self.problems.append((self.read, text))
        else:
            self.dropped += 1

    def numbered(self, item: tuple[int, int, Any]) -> tuple[int, int, Any]:
        self.read += 1
        return item

    def _problems_before(self, traces: int) -> None:
        while self.shown < len(self.problems) and self.problems[self.shown][0] <= traces:
            self.out.differ(self.problems[self.shown][1])
            self.shown += 1

    def add(self, parts: list[Outcome]) -> None:
        out = self.out
        for part in parts:
            self._problems_before(self.merged)
            for line in part.differences:
                out.differ(line)
            for line in part.not_rescored:
                out.not_checked(line)
            out.traces += part.traces
            out.reproduced += part.reproduced
            out.failed_rollouts += part.failed_rollouts
            out.other_builds += part.other_builds
            out.unproven_seeds += part.unproven_seeds
            out.unproven_why = out.unproven_why or part.unproven_why
            out.recorded += part.recorded
            out.recomputed += part.recomputed
            out.tasks += part.tasks
            out.statuses += part.statuses
            out.claims += part.claims
            self.merged += 1
            self.on_trace()

    def finish(self) -> Outcome:
        self._problems_before(self.read)
        self.out.difference_count += self.dropped
        if self.out.claims:
            self.out.split_problem = prove_split(self.out.claims).disagreement() or ""
        return self.out
