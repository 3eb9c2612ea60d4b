"""The means of scored traces and the labels of splits: the figures every summary of a
run reports, always labelled with the split they come from, so a public dev score is
never mistaken for private evaluation. The split is the one the traces' commitments and
seeds prove (`task.splits.prove_split`), not the label they carry. The whole summary of
a run (uncertainty, classes, levels) is `results.summary`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..task.splits import SplitProof
from .reward import WEIGHTS

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


def summary_means(traces: list[dict]) -> dict:  # type: ignore[type-arg]  # the contract's pinned signature text (tests/unit/test_contract.py)
    """The figures every summary of a run reports, the CLI's and the signed manifest's
    alike. Means use math.fsum, so they do not depend on the order of the traces."""
    n = len(traces)

    def mean(values: Iterable[float]) -> float:
        return math.fsum(values) / n if n else 0.0

    return {
        "traces": n,
        "mean_reward": mean(trace_reward(t) for t in traces),
        "mean_recall": mean(t["rewards"]["recall"]["score"] for t in traces),
        "mean_precision": mean(t["rewards"]["precision"]["score"] for t in traces),
        "clean_rate": mean(t["rewards"]["clean"]["score"] for t in traces),
        "invalid": sum(1 for t in traces if t["info"]["redaction_errors"]),
    }


def proven_label(proof: SplitProof) -> str:
    """The label of the split ``proof`` establishes, saying loudly where the traces' labels disagree."""
    if proof.agrees and proof.proven is not None:
        return split_label(proof.proven)
    if proof.proven is not None:
        return f"{split_label(proof.proven)} — {proof.disagreement()}"
    return f"split NOT ESTABLISHED — {proof.disagreement()}"
