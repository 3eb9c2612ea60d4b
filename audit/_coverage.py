"""Coverage: which tasks of its split a run holds, and how many rollouts of each.

A mean over 3 hand-picked tasks is not a result on the 64-task dev split, so the
manifest records the task indices and the rollouts per task, and every summary and
verdict says whether the run is the complete split (``complete: all 64 dev tasks, 1
rollout each``) or not (``PARTIAL: 3 of 64 dev tasks, 1 rollout each``). The label is
computed from the traces, never taken from the archive: `audit verify` recomputes it
and fails a manifest whose recorded coverage is not its traces'. ``private_eval`` has
a million task indices, so a private run is always partial by this definition; its
label says how many private tasks it holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from redaction_pressure.contract import PRIVATE_SIZE
from redaction_pressure.contract import PUBLIC_SPLITS as PUBLIC


def split_size(split: str) -> int | None:
    if split in PUBLIC:
        return PUBLIC[split].size
    return PRIVATE_SIZE if split == "private_eval" else None


def _rollouts(rollouts: list[int]) -> str:
    lo, hi = min(rollouts), max(rollouts)
    if lo == hi:
        return f"{lo} rollout{'s' if lo != 1 else ''} each"
    return f"{lo} to {hi} rollouts each (uneven)"


def label(split: str, task_indices: list[int], rollouts: list[int]) -> str:
    size = split_size(split)
    k = len(task_indices)
    each = _rollouts(rollouts) if rollouts else "no rollouts"
    if size is not None and k == size and task_indices == list(range(size)):
        return f"complete: all {size} {split} tasks, {each}"
    return f"PARTIAL: {k} of {size if size is not None else '?'} {split} tasks, {each}"


def coverage_of(split: str, indices: Iterable[int]) -> dict[str, Any]:
    """The coverage record of a run whose traces have task ``indices`` (one per trace)."""
    counts = Counter(indices)
    task_indices = sorted(counts)
    rollouts = [counts[i] for i in task_indices]
    size = split_size(split)
    return {"split_tasks": size if size is not None else 0, "tasks": len(task_indices),
            "complete": label(split, task_indices, rollouts).startswith("complete"),
            "task_indices": task_indices, "rollouts": rollouts, "label": label(split, task_indices, rollouts)}


def trace_indices(traces: Iterable[dict[str, Any]]) -> list[int]:
    return [t["info"]["environment"]["task_index"] for t in traces]
