"""`redaction-pressure compare RUN_A RUN_B`: reads two runs (run directories, sealed
archives or traces files), verifies the archives it was given a pinned key for, pairs
them (`results.compare`) and says the result as text, JSON or one HTML page.

Both runs are hostile data: they are read through the file boundary (`report._runfile`:
regular files, bounded, no links followed inside a directory), nothing they name is
imported or run, and every value is read defensively (`results.recorded`). An archive is
marked verified only when `audit verify` ran here with a key the user pinned, passed,
and named the Statement that signs the very files read (`report._verdict.run_verify`);
without a key an archive is "not verified", and a run directory is "not sealed".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .report._runfile import MAX_PROBLEMS, Run, RunError, read_run
from .report._verdict import Verification, read_statement, run_verify
from .rescore import BUDGET_EXTENSION, Outcome, RescoreError, rescore_in_parallel
from .results.compare import CompareRefused, Comparison, compare, side
from .results.evaluated import describe as describe_evaluated
from .results.evaluated import evaluated_of
from .scoring.summary import split_label

__all__ = ["CompareRefused", "Compared", "compare_runs"]


@dataclass(frozen=True)
class Compared:
    comparison: Comparison
    runs: tuple[Run, Run]
    verifications: tuple[Verification | None, Verification | None]  # None: no key was given for it
    # This build's rescoring of a run no key verified (`rescore.rescore_in_parallel`); None
    # for a run verified here (`audit verify` rescored it).
    rescores: tuple[Outcome | None, Outcome | None] = (None, None)

    @property
    def verification_failed(self) -> bool:
        """A verification was asked for and did not pass."""
        return any(v is not None and not v.verified for v in self.verifications)

    @property
    def not_reproduced(self) -> list[str]:
        """A line per run whose recorded rewards this build's rescoring contradicts."""
        return [f"{name} {_differences(o, run.problem_count)}" for name, o, run
                in zip("AB", self.rescores, self.runs, strict=True) if o is not None and o.difference_count]

    @property
    def not_checked(self) -> list[str]:
        """A line per run the rescoring could not check whole (`rescore.Outcome.exit_code`
        3: traces beyond the reader's limits, private seeds not proven, nothing rescored):
        a comparison of such figures is not a pass."""
        out = []
        for name, o in zip("AB", self.rescores, strict=True):
            if o is None or o.difference_count or o.exit_code != 3:
                continue
            why = o.not_rescored[0] if o.not_rescored else (o.unproven_why or o.split_problem or "nothing rescored")
            out.append(f"{name}: {o.not_rescored_count + o.unproven_seeds or o.traces} of {o.traces} trace(s) not "
                       f"checked here (e.g. {why[:200]})")
        return out

    @property
    def exit_code(self) -> int:
        """0 only when every run was verified here or rescored whole and reproduced; 1 when
        a verification failed or a reward did not reproduce; 3 when some were not checked."""
        if self.verification_failed or self.not_reproduced:
            return 1
        return 3 if self.not_checked else 0

    def run_state(self, k: int) -> str:
        run, v, o = self.runs[k], self.verifications[k], self.rescores[k]
        rescored = "" if o is None else f"; {_rescored(o, run.problem_count)}"
        if not run.archive:
            return f"run directory, not sealed{rescored}"
        if v is None:
            return f"sealed archive, NOT VERIFIED here (no --public-key given){rescored}"
        return f"sealed archive, {'✔ ' if v.verified else '✘ '}{v.how}"

    def described(self, k: int) -> str:
        run = self.runs[k]
        evaluated, mixed = evaluated_of(run.traces, run.runs)
        what = describe_evaluated(evaluated) + (" (" + "; ".join(mixed) + ")"
                                                if mixed and run.traces else "")
        unread = f" — {run.problem_count} problem(s) reading it, e.g. {run.problems[0]}" if run.problems else ""
        return f"{run.path} — {self.run_state(k)} — {what}{unread}"

    def context(self) -> str:
        c = self.comparison
        split = c.a.split if c.a.split == c.b.split else None
        label = split_label(split) if split else f"A {c.a.split or 'unestablished'}, B {c.b.split or 'unestablished'}"
        if c.a.private_unproven or c.b.private_unproven:
            label += " (private label UNPROVEN: seed derivation not checked here)"
        params = {r.params for r in c.a.records + c.b.records}
        shown = "; ".join(f"n_shown={p[0]}, n_eval={p[1]}, budget_s={p[2]}" for p in sorted(params, key=str)[:2])
        levels = c.levels
        level = f"level {levels[0]}" if len(levels) == 1 else f"levels {', '.join(map(str, levels))} (mixed)"
        return f"{label}, {level}, {shown}"

    def as_dict(self) -> dict[str, Any]:
        out = self.comparison.as_dict()
        for k, name in ((0, "a"), (1, "b")):
            run, v = self.runs[k], self.verifications[k]
            evaluated, _ = evaluated_of(run.traces, run.runs)
            out[name] = {"path": str(run.path), "archive": run.archive, "verified": bool(v and v.verified),
                         "verification": None if v is None else v.how, "state": self.run_state(k),
                         "rescored": _rescore_dict(self.rescores[k], run.problem_count),
                         "evaluated": evaluated, "traces": len(run.traces), "problems": run.problems}
        out["context"] = self.context()
        return out


def _rescore_dict(o: Outcome | None, unread: int) -> dict[str, Any] | None:
    """``differ`` counts the problems reading the run (``reading_problems``) too, as
    `rescore` counts them."""
    if o is None:
        return None
    return {"reproduced": o.reproduced, "differ": o.difference_count, "reading_problems": unread,
            "not_checked": o.not_rescored_count,
            "failed_rollouts": o.failed_rollouts, "headline": o.headline()}


def _differences(o: Outcome, unread: int) -> str:
    """What a rescoring that did not reproduce found: rewards, and problems reading the
    run (each fed to the rescoring, so each counts once among its differences)."""
    rewards = o.difference_count - unread
    parts = [f"records {rewards} of {o.traces - o.failed_rollouts} reward(s) this build does not give (or cannot "
             "rescore)"] if rewards else []
    if unread:
        parts.append(f"has {unread} problem(s) reading it (a line or entry not read, a copy of a trace, a number too "
                     "long to read; each a difference to `rescore`)")
    return " and ".join(parts)


def _rescored(o: Outcome, unread: int) -> str:
    scored = o.traces - o.failed_rollouts
    if o.difference_count:
        return f"rescored here: NOT REPRODUCED, the run {_differences(o, unread)}"
    unchecked = f", {o.not_rescored_count} NOT CHECKED" if o.not_rescored_count else ""
    unproven = f", {o.unproven_seeds} on private seeds NOT CHECKED as the split's" if o.unproven_seeds else ""
    return f"rescored here: {o.reproduced}/{scored} rewards reproduced{unchecked}{unproven}"


def _rescore(run: Run, max_budget_s: float, max_cpu_s: float, jobs: int) -> Outcome:
    """This build's rescoring of the run as `rescore` rescores it: every trace (one whose
    recorded scores are unusable, which the comparison skips, is a difference) and every
    line or entry the reader could not read (a difference too), each trace retried up to
    4x its budget after a time-out the recording did not have, as `rescore` and `audit
    verify` tolerate a slower machine; over ``jobs`` processes. Red team, 2026-12-04:
    compare rescored only the traces it paired and exited 0 on a run that `rescore`
    failed, so a run could drop the tasks it lost by spoiling their lines."""
    def everything(problem: Callable[[str], None]) -> Iterator[tuple[int, int, Any]]:
        listed = min(run.problem_count, MAX_PROBLEMS)
        for text in run.problems[:listed]:
            problem(text)
        for _ in range(run.problem_count - listed):
            problem("a further problem reading the traces (not listed)")
        return ((n, 0, t) for n, t in enumerate(run.traces, 1))
    try:
        return rescore_in_parallel(everything, jobs, max_budget_s, max_cpu_s=max_cpu_s,
                                   retry_cap_s=max_budget_s * BUDGET_EXTENSION)
    except RescoreError as exc:
        raise RunError(f"{run.path}: {exc}") from None


def _verify(run: Run, counted: int, key: Path | None, jobs: int, max_budget_s: float, max_cpu_s: float,
            strict: bool) -> Verification | None:
    """``run``'s verification with ``key``, as shown beside ``counted`` of its traces
    (`Verification.as_shown`); None without a key."""
    if key is None:
        return None
    return run_verify(run.path, key, read_statement, run.shown, jobs=jobs, max_budget_s=max_budget_s,
                      max_cpu_s=max_cpu_s, strict=strict).as_shown(len(run.traces), counted, run.problem_count)


def compare_runs(path_a: Path, path_b: Path, *, keys: tuple[Path | None, Path | None] = (None, None),
                 allow_mismatch: bool = False, jobs: int = 1, max_budget_s: float = 2.0,
                 max_cpu_s: float = 600.0, strict: bool = False) -> Compared:
    """Raises report.RunError (a path that holds no run, or a run directory given a key
    to verify it with) or CompareRefused. ``strict``: `audit verify --strict` (a
    tolerated budget retry or time-dependent episode fails the verification)."""
    runs = (read_run(Path(path_a)), read_run(Path(path_b)))
    for run, key, name in ((runs[0], keys[0], "A"), (runs[1], keys[1], "B")):
        if key is not None and not run.archive:  # verifying one side must not pass off the other, unsealed
            raise RunError(f"{name} ({run.path}) is not a sealed archive (no manifest.toml or manifest.dsse.json): "
                           f"with --public-key both runs must be sealed archives, verified here")
    comparison = compare(side("A", runs[0].traces), side("B", runs[1].traces), allow_mismatch)
    verifications = (_verify(runs[0], len(comparison.a.records), keys[0], jobs, max_budget_s, max_cpu_s, strict),
                     _verify(runs[1], len(comparison.b.records), keys[1], jobs, max_budget_s, max_cpu_s, strict))
    # Red team, 2026-12-04: a run whose recorded scores were all raised to 1.0 was "B
    # better on 64 of 64", exit 0. A run no key verified is rescored here, within the
    # reader's limits, from the very traces compared.
    first = None if verifications[0] is not None else _rescore(runs[0], max_budget_s, max_cpu_s, jobs)
    if verifications[1] is not None:
        second = None
    elif first is not None and runs[1].shown == runs[0].shown:  # the same bytes: one rescoring
        second = first
    else:
        second = _rescore(runs[1], max_budget_s, max_cpu_s, jobs)
    return Compared(comparison, runs, verifications, (first, second))
