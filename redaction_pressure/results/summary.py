"""The summary of a run's scored traces: what `eval` prints and its ``--json``, and the
figures a signed manifest carries.

Means come with their uncertainty (`stats`: clustered by task), leaks and damage come by
class (`classes`), and a run that mixes difficulty levels is summarised per level as
well as in all, since a mean over a mix of levels depends on the mix. The split named
is the one the traces' commitments and seeds prove (`task.splits.prove_split`).
Traces here are schema-valid (a run this build wrote, or an archive's, checked first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from ..scoring.summary import level_of, proven_label, summary_means, task_key, trace_reward
from ..task.splits import prove_split
from .classes import class_summary
from .coverage import coverage_of
from .stats import METHOD, Spread, estimates, spread

METRICS = ("reward", "recall", "precision", "clean")


def metric_row(trace: dict[str, Any]) -> list[float]:
    """The trace's reward (`trace_reward`), recall, precision and clean, in `METRICS` order."""
    r = trace["rewards"]
    return [trace_reward(trace), r["recall"]["score"], r["precision"]["score"], r["clean"]["score"]]


def uncertainty(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """Standard error and 95% intervals of each mean, clustered by task (`stats.METHOD`),
    and, when tasks have several rollouts, their spread and best-of-n."""
    clusters: dict[Hashable, list[list[float]]] = defaultdict(list)
    for t in traces:
        clusters[task_key(t)].append(metric_row(t))
    found = estimates(clusters, METRICS)
    out: dict[str, Any] = {"method": METHOD, **{m: found[m].as_dict() for m in METRICS}}
    spread_ = rollout_spread(clusters)
    if spread_ is not None:
        out["rollouts"] = spread_.as_dict()
    return out


def uneven_counts(summary: dict[str, Any]) -> bool:
    """Whether a `summarize`d run's tasks have different numbers of rollouts: unless
    every task has one, even counts mean every task is in the spread, with one count."""
    if summary["traces"] == summary["tasks"]:
        return False
    spread_ = summary["uncertainty"].get("rollouts")
    return not spread_ or spread_["tasks"] != summary["tasks"] or spread_["min_rollouts"] != spread_["max_rollouts"]


def rollout_spread(clusters: dict[Hashable, list[list[float]]]) -> Spread | None:
    return spread({k: [row[0] for row in rows] for k, rows in clusters.items()})


def levels(traces: list[dict[str, Any]]) -> list[int]:
    return sorted({level_of(t) for t in traces})


def by_level(traces: list[dict[str, Any]], overall: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each level's figures: {level, tasks, traces, means, invalid, uncertainty}. With a
    single level they are the run's own (``overall``, its uncertainty, is reused)."""
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for t in traces:
        groups[level_of(t)].append(t)
    out = []
    for level, group in sorted(groups.items()):
        figures = uncertainty(group) if overall is None or len(groups) > 1 else overall
        out.append({"level": level, "tasks": len({task_key(t) for t in group}), **summary_means(group),
                    "uncertainty": figures})
    return out


def describe_levels(found: list[int]) -> str:
    if len(found) == 1:
        return f"level {found[0]}"
    return f"levels {', '.join(map(str, found))} (mixed)"


def summarize(traces: list[dict[str, Any]], families: bool = False) -> dict[str, Any]:
    """The run summary: split (proven), levels, means with their uncertainty, error
    counts, leaks and damage by class, the same per level; per-family tables too with
    ``families`` (a stream's own family names: they belong to one task each)."""
    envs = [t["info"]["environment"] for t in traces]
    proof = prove_split((e.get("split"), e.get("split_commitment"), e.get("task_index"), e.get("task_seed"))
                        for e in envs)
    errors: dict[str, int] = defaultdict(int)
    for t in traces:
        for e in t["info"]["redaction_errors"]:
            errors[e["code"]] += 1
    figures = uncertainty(traces)
    split = proof.proven
    out: dict[str, Any] = {
        "split": split or "unproven",
        "split_label": proven_label(proof),
        "coverage": coverage_of(split, [e["task_index"] for e in envs])["label"] if split else "unknown",
        "levels": levels(traces),
        "tasks": len({task_key(t) for t in traces}),
        **summary_means(traces),
        "uncertainty": figures,
        "errors": dict(sorted(errors.items())),
        **class_summary(traces),
        "by_level": by_level(traces, figures),
    }
    if families:
        out |= _family_tables(traces)
    return out


def _family_tables(traces: list[dict[str, Any]]) -> dict[str, Any]:
    secret: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    decoy: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in traces:
        r = t["info"]["redaction"]
        for table, fams in ((secret, r["secret_families"]), (decoy, r["decoy_families"])):
            for fam, (a, b) in fams.items():
                table[fam][0] += a
                table[fam][1] += b
    return {"secret_families": {k: {"labelled": a, "removed": b, "leaked": a - b}
                                for k, (a, b) in sorted(secret.items())},
            "decoy_families": {k: {"present": a, "destroyed": b} for k, (a, b) in sorted(decoy.items())}}


def _pm(summary: dict[str, Any], metric: str, key: str) -> str:
    est = summary["uncertainty"][metric]
    value = f"{summary[key]:.3f}"
    return f"{value} ± {est['se']:.3f}" if "se" in est else value


def headline(summary: dict[str, Any], traces_path: str | Path) -> str:
    """The one line a run starts and ends on, so the result is on screen whatever
    scrolled: split (with its label), size, level, every mean ± its standard error,
    invalid count, and where the traces are."""
    size = f"{summary['tasks']} tasks"
    if summary["traces"] != summary["tasks"]:
        size += f", {summary['traces']} rollouts"
    return (f"{summary['split_label']}, {size}, {describe_levels(summary['levels'])}: "
            f"reward {_pm(summary, 'reward', 'mean_reward')} · recall {_pm(summary, 'recall', 'mean_recall')} · "
            f"precision {_pm(summary, 'precision', 'mean_precision')} · "
            f"clean {_pm(summary, 'clean', 'clean_rate')} · invalid {summary['invalid']} · traces {traces_path}")
