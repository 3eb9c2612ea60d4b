"""The means of scored traces and the labels of splits: the figures every summary of a
run reports, always labelled with the split they come from, so a public dev score is
never mistaken for private evaluation. The split is the one the traces' commitments and
seeds prove (`task.splits.prove_split`), not the label they carry. The whole summary of
a run (uncertainty, classes, levels) is `results.summary`."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from ..results.stats import task_mean
from ..task.splits import SplitProof
from .reward import WEIGHTS

DEFAULT_LEVEL = 1

SPLIT_LABELS = {
    "dev": "public dev split (not a private evaluation)",
    "train": "public train split (not a private evaluation)",
    "private_eval": "private evaluation split",
}


def split_label(split: str) -> str:
    return SPLIT_LABELS.get(split, f"unknown split {split!r}")


def trace_reward(trace: dict[str, Any]) -> float:
    """A trace's reward from its recorded weighted rewards, summed in `WEIGHTS` order
    (what an auditor can recompute from the trace alone)."""
    reward: float = sum(trace["rewards"][k]["score"] * trace["rewards"][k]["weight"] for k in WEIGHTS)
    return reward


def level_of(trace: dict[str, Any]) -> int:
    """The trace's difficulty level (absent: level 1, as before levels existed)."""
    level: int = trace["info"]["environment"]["task_params"].get("level", DEFAULT_LEVEL)
    return level


def task_key(trace: dict[str, Any]) -> tuple[int, int]:
    """What makes two rollouts the same task within one run: its index and level."""
    return trace["info"]["environment"]["task_index"], level_of(trace)


def by_task(traces: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The traces grouped by `task_key`, in order of first appearance."""
    groups: dict[Hashable, list[dict[str, Any]]] = {}
    for t in traces:
        groups.setdefault(task_key(t), []).append(t)
    return list(groups.values())


MEAN_OVER_TASKS = "mean over tasks: each task's rollouts averaged first"


def summary_means(traces: list[dict]) -> dict:  # type: ignore[type-arg]  # the contract's pinned signature text (tests/unit/test_contract.py)
    """The figures every summary of a run reports, the CLI's and the signed manifest's
    alike. Each mean is `results.stats.task_mean` over the traces' tasks (`task_key`):
    every task weighs the same, so more rollouts of a good task cannot raise it; with
    even counts it is the mean of all traces, to the bit. Means use math.fsum, so they
    do not depend on the order of the traces."""
    groups = by_task(traces)

    def mean(value: Callable[[dict[str, Any]], float]) -> float:
        return task_mean([[value(t) for t in g] for g in groups])

    return {
        "traces": len(traces),
        "mean_reward": mean(trace_reward),
        "mean_recall": mean(lambda t: t["rewards"]["recall"]["score"]),
        "mean_precision": mean(lambda t: t["rewards"]["precision"]["score"]),
        "clean_rate": mean(lambda t: t["rewards"]["clean"]["score"]),
        "invalid": sum(1 for t in traces if t["info"]["redaction_errors"]),
    }


def proven_label(proof: SplitProof) -> str:
    """The label of the split ``proof`` establishes, saying loudly where the traces' labels disagree."""
    if proof.agrees and proof.proven is not None:
        return split_label(proof.proven)
    if proof.proven is not None:
        return f"{split_label(proof.proven)} — {proof.disagreement()}"
    return f"split NOT ESTABLISHED — {proof.disagreement()}"
