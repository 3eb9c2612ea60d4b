"""Coverage: which tasks of its split a run holds, how many rollouts of each, and what
is missing from the standard evaluation.

A mean over 3 hand-picked tasks is not a result on the 64-task dev split, so every
summary, manifest and verdict says whether a run is the standard evaluation of its
split, whole (``complete: all 64 dev tasks, 1 rollout each``), or not (``PARTIAL: 3 of
64 dev tasks, 1 rollout each; missing tasks 3–63``). The label is computed from the
traces, never taken from a file.

The standard evaluations (`STANDARD_EVALUATIONS`): all 64 dev tasks, and on the private
split its first 64 tasks (indices 0–63), which is what `vf-eval` and `redaction-pressure
eval` run by default there; a private run of exactly those tasks reads complete. train
has no standard evaluation: a train run is always partial, and names no missing tasks.

Rollouts left out of an archive (`audit seal --allow-failed` leaves out failed rollouts,
which have no score) are named in the label, and such a run is never complete. How many
failed, and why, is the sealer's statement from the run file: the archive cannot hold
what a failed rollout never produced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..task.splits import PRIVATE_SIZE, PUBLIC

# split -> how many tasks, from index 0, make its standard evaluation
STANDARD_EVALUATIONS: dict[str, int] = {"dev": PUBLIC["dev"].size, "private_eval": 64}


def split_size(split: str) -> int | None:
    if split in PUBLIC:
        return PUBLIC[split].size
    return PRIVATE_SIZE if split == "private_eval" else None


def ranges(indices: Iterable[int]) -> str:
    """``0–2, 5, 9–12``: sorted indices as runs."""
    out: list[str] = []
    start = prev = None
    for i in sorted(indices):
        if start is not None and prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
        start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(out)


def _rollouts(rollouts: list[int]) -> str:
    if not rollouts:
        return "no rollouts"
    lo, hi = min(rollouts), max(rollouts)
    if lo == hi:
        return f"{lo} rollout{'s' if lo != 1 else ''} each"
    return f"{lo} to {hi} rollouts each (uneven)"


def _excluded_phrase(excluded: dict[str, Any]) -> str:
    n = excluded.get("rollouts", 0)
    failed = excluded.get("failed", n)
    what = f"{failed} failed rollout{'s' if failed != 1 else ''}"
    if n != failed:
        what += f" ({n} rollouts in all)"
    return f"{what} not sealed"


def label(split: str, task_indices: list[int], rollouts: list[int],
          excluded: dict[str, Any] | None = None) -> str:
    size = split_size(split)
    k = len(task_indices)
    each = _rollouts(rollouts)
    standard = STANDARD_EVALUATIONS.get(split)
    present = set(task_indices)
    missing = [i for i in range(standard) if i not in present] if standard is not None else []
    outside = sum(1 for i in present if standard is None or i >= standard)
    tail = ""
    if missing:
        tail += f"; missing tasks {ranges(missing)}"
    if excluded:
        tail += f"; {_excluded_phrase(excluded)}"
    if standard is not None and standard == size:  # the whole split is its standard evaluation
        if not missing and not excluded:
            return f"complete: all {size} {split} tasks, {each}"
        return f"PARTIAL: {k} of {size} {split} tasks, {each}{tail}"
    if standard is not None:
        std = f"the standard private evaluation ({split} tasks 0–{standard - 1})"
        if not missing and not outside and not excluded:
            return f"complete: {std}, {each}"
        also = f"; {outside} {split} task{'s' if outside != 1 else ''} outside it" if outside else ""
        return f"PARTIAL: {k - outside} of the {standard} tasks of {std}, {each}{also}{tail}"
    return f"PARTIAL: {k} of {size if size is not None else '?'} {split} tasks, {each}{tail}"


def coverage_of(split: str, indices: Iterable[int], excluded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The coverage record of a run whose traces have task ``indices`` (one per trace);
    ``excluded``: the rollouts left out of it ({rollouts, failed, task_indices, reasons})."""
    counts = Counter(indices)
    task_indices = sorted(counts)
    rollouts = [counts[i] for i in task_indices]
    size = split_size(split)
    standard = STANDARD_EVALUATIONS.get(split, 0)
    text = label(split, task_indices, rollouts, excluded)
    present = set(task_indices)
    out: dict[str, Any] = {
        "split_tasks": size if size is not None else 0, "standard_tasks": standard, "tasks": len(task_indices),
        "complete": text.startswith("complete"), "task_indices": task_indices, "rollouts": rollouts,
        "missing_tasks": [i for i in range(standard) if i not in present], "label": text}
    if excluded:
        out["excluded"] = excluded
    return out
