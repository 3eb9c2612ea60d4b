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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .report._runfile import Run, RunError, read_run
from .report._verdict import Verification, read_statement, run_verify
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

    @property
    def verification_failed(self) -> bool:
        """A verification was asked for and did not pass."""
        return any(v is not None and not v.verified for v in self.verifications)

    def run_state(self, k: int) -> str:
        run, v = self.runs[k], self.verifications[k]
        if not run.archive:
            return "run directory, not sealed"
        if v is None:
            return "sealed archive, NOT VERIFIED here (no --public-key given)"
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
                         "evaluated": evaluated, "traces": len(run.traces), "problems": run.problems}
        out["context"] = self.context()
        return out


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
    return Compared(comparison, runs, verifications)
