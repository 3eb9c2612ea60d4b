"""Summaries of scored traces: the figures a run reports, always labelled with the
split they come from, so a public dev score is never mistaken for private evaluation.
The split is the one the traces' commitments and seeds prove (`task.splits.prove_split`),
not the label they carry."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..task.splits import SplitProof, prove_split
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


def _proven_label(proof: SplitProof) -> str:
    if proof.agrees and proof.proven is not None:
        return split_label(proof.proven)
    if proof.proven is not None:
        return f"{split_label(proof.proven)} — {proof.disagreement()}"
    return f"split NOT ESTABLISHED — {proof.disagreement()}"


def summarize(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregates trace dicts (as in traces.jsonl) into the run summary: `summary_means`
    plus per-family tallies and error counts."""
    envs = [t["info"]["environment"] for t in traces]
    proof = prove_split((e.get("split"), e.get("split_commitment"), e.get("task_index"), e.get("task_seed"))
                        for e in envs)
    secret_fams: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    decoy_fams: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    errors: dict[str, int] = defaultdict(int)
    for t in traces:
        r = t["info"]["redaction"]
        for fam, (total, removed) in r["secret_families"].items():
            secret_fams[fam][0] += total
            secret_fams[fam][1] += removed
        for fam, (total, damaged) in r["decoy_families"].items():
            decoy_fams[fam][0] += total
            decoy_fams[fam][1] += damaged
        for e in t["info"]["redaction_errors"]:
            errors[e["code"]] += 1
    return {
        "split": proof.proven or "unproven",
        "split_label": _proven_label(proof),
        **summary_means(traces),
        "errors": dict(sorted(errors.items())),
        "secret_families": {k: {"labelled": v[0], "removed": v[1], "leaked": v[0] - v[1]}
                            for k, v in sorted(secret_fams.items())},
        "decoy_families": {k: {"present": v[0], "destroyed": v[1]} for k, v in sorted(decoy_fams.items())},
    }


def headline(summary: dict[str, Any], traces_path: str | Path) -> str:
    """The one line a run ends on, so the result is still on screen after the tables
    scroll: split (with its label), every mean, invalid count, and where the traces are."""
    return (f"{summary['split_label']}, {summary['traces']} tasks: "
            f"reward {summary['mean_reward']:.3f} · recall {summary['mean_recall']:.3f} · "
            f"precision {summary['mean_precision']:.3f} · clean {summary['clean_rate']:.3f} · "
            f"invalid {summary['invalid']} · traces {traces_path}")
