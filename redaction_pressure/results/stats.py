"""Uncertainty of a mean over tasks: standard error and 95% intervals, reproducible to
the bit.

A mean over 64 tasks moves by more than many of the differences people publish, so
every mean a summary, manifest or comparison shows comes with its uncertainty. The
unit of sampling is the task: rollouts of one task share its records and are not
independent, so figures are clustered by task (the cluster-robust standard error of a
mean; with one rollout per task it is the familiar s/sqrt(n)).

Each task weighs the same, whatever its number of rollouts: a run's mean is the mean
over tasks of each task's mean (`task_mean`). A mean over rollouts would let whoever
ran the tasks pull it toward the tasks they liked by rolling those out more (red team,
2026-12-04: 50 more rollouts of one good task moved a signed, verified 8-task mean from
0.134 to 0.320, outside its own interval). When every task has the same number of
rollouts, the standard case, the two means are the same number, and every figure is
computed exactly as before, to the bit, so archives sealed before still verify; with
uneven counts each task is first replaced by its mean and the figures are those of one
value per task (standard error: sd of task means / sqrt(tasks)).

Two 95% intervals: the analytic one (mean ± 1.96 standard errors, clipped to the
metric's range [0, 1]) and a percentile bootstrap that resamples tasks with
replacement. The bootstrap is seeded with a fixed integer and draws from SplitMix64
defined here (not `random`, whose algorithms and seeding are CPython's to change), sums
with `math.fsum` (correctly rounded, so independent of order) and picks fixed order
statistics, so its figures are the same bytes on every run, machine and CPython 3.11+:
an auditor recomputes them from the traces and compares them exactly.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054  # the standard normal's 0.975 quantile
BOOTSTRAP_SEED = 0x5EED_2026_0023  # fixed: a figure a signer could re-seed until it pleased would prove nothing
BOOTSTRAP_REPLICATES = 2000
TAIL = 50  # order statistics cut from each end: 2.5% of BOOTSTRAP_REPLICATES
# The bootstrap costs replicates x tasks draws in Python (about 1 s per 1,000 tasks): above
# this many tasks it is left out, the analytic interval (as good there) stands alone, and a
# hostile unsealed run of 20,000 tasks no longer costs a reader minutes per figure.
MAX_BOOTSTRAP_TASKS = 2000
# Signed into every manifest's summary: unchanged when means became task means, so archives
# sealed before verify; it holds for both (uneven counts are clustered to one value per task).
METHOD = (f"clustered by task; analytic: mean ± {Z95:.2f} standard errors (cluster-robust), clipped to [0, 1]; "
          f"bootstrap (at most {MAX_BOOTSTRAP_TASKS:,} tasks): {BOOTSTRAP_REPLICATES} resamples of tasks "
          f"(SplitMix64, seed {BOOTSTRAP_SEED}), order statistics {TAIL} and {BOOTSTRAP_REPLICATES - TAIL + 1} of "
          f"{BOOTSTRAP_REPLICATES}")
_MASK = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: a 64-bit state, integer arithmetic only."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """An integer in [0, n): the high bits of a 64-bit draw scaled by n (Lemire's
        multiply-shift; its bias, under n / 2**64, is far below any figure shown)."""
        return (self.next() * n) >> 64

    def draws(self, k: int, n: int) -> list[int]:
        """``k`` successive `below` (n) draws: the same numbers, without a call per draw."""
        out = []
        state = self.state
        for _ in range(k):
            state = (state + 0x9E3779B97F4A7C15) & _MASK
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
            out.append(((z ^ (z >> 31)) * n) >> 64)
        self.state = state
        return out


@dataclass(frozen=True)
class Estimate:
    """A mean with its uncertainty. ``se`` and the intervals are None with fewer than
    two tasks (no spread to measure)."""

    mean: float
    n: int         # values (rollouts)
    tasks: int     # clusters
    se: float | None = None
    ci95: tuple[float, float] | None = None
    bootstrap95: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON and TOML (which has no null: absent figures are left out)."""
        out: dict[str, Any] = {"mean": self.mean, "n": self.n, "tasks": self.tasks}
        if self.se is not None:
            out["se"] = self.se
        if self.ci95 is not None:
            out["ci95"] = list(self.ci95)
        if self.bootstrap95 is not None:
            out["bootstrap95"] = list(self.bootstrap95)
        return out

    def pm(self, digits: int = 3) -> str:
        """``0.267 ± 0.017`` (± one standard error), or the bare mean."""
        if self.se is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.se:.{digits}f}"

    def interval(self, digits: int = 3, signed: bool = False) -> str:
        """``95% CI 0.234 to 0.300; bootstrap 0.236 to 0.301`` (the analytic interval alone
        above `MAX_BOOTSTRAP_TASKS`), or "" without a spread."""
        if self.ci95 is None:
            return ""
        spec = f"{'+' if signed else ''}.{digits}f"

        def f(x: float) -> str:
            return format(x, spec)
        analytic = f"95% CI {f(self.ci95[0])} to {f(self.ci95[1])}"
        if self.bootstrap95 is None:
            return analytic
        return f"{analytic}; bootstrap {f(self.bootstrap95[0])} to {f(self.bootstrap95[1])}"


Clusters = Mapping[Any, Sequence[float]]


def _sorted_clusters(clusters: Clusters) -> list[Sequence[float]]:
    """Clusters in a fixed order (by key, compared as text: keys of mixed kinds sort too),
    so the bootstrap's draws land on the same tasks whatever order the traces came in."""
    return [clusters[k] for k in sorted(clusters, key=lambda k: (repr(type(k)), repr(k)))]


def even(groups: Sequence[Sequence[object]]) -> bool:
    """Whether every group has as many values as the others: the case in which a mean
    over values is already a mean over groups, and figures keep their old bits."""
    return len({len(g) for g in groups}) <= 1


def task_mean(groups: Sequence[Sequence[float]]) -> float:
    """The mean over groups (tasks) of each group's mean. With even counts it is the mean
    of all values, summed at once as it always was (the same bits as before); 0.0 for none."""
    groups = [g for g in groups if g]
    if not groups:
        return 0.0
    if even(groups):
        return math.fsum(v for g in groups for v in g) / sum(map(len, groups))
    return math.fsum(math.fsum(g) / len(g) for g in groups) / len(groups)


def _weighed(groups: list[Sequence[float]]) -> list[Sequence[float]]:
    """``groups`` as the figures weigh them: unchanged with even counts, else each group
    replaced by its mean (one value per task, so each task weighs the same)."""
    return groups if even(groups) else [[math.fsum(g) / len(g)] for g in groups]


def clustered_se(clusters: Clusters) -> float | None:
    """The standard error of `task_mean`. With even counts, the cluster-robust one of the
    mean of all values: sqrt(G / (G - 1) * sum over clusters of (sum of its residuals)^2)
    / N, with G clusters and N values, which is sd of task means / sqrt(G); with uneven
    counts the same formula over the task means (one value per task), which is that sd
    again. Computed as before with even counts, so its bits are the old ones."""
    groups = _weighed([g for g in _sorted_clusters(clusters) if g])
    g, n = len(groups), sum(len(x) for x in groups)
    if g < 2:
        return None
    mean = math.fsum(v for x in groups for v in x) / n
    residuals = [math.fsum(v - mean for v in x) for x in groups]
    return math.sqrt(g / (g - 1) * math.fsum(r * r for r in residuals)) / n


def _clip(x: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, x))


def bootstrap_means(columns: Sequence[Sequence[float]], counts: Sequence[int],
                    replicates: int = BOOTSTRAP_REPLICATES, seed: int = BOOTSTRAP_SEED) -> list[list[float]]:
    """For each column of per-cluster totals, the means of ``replicates`` resamples of the
    clusters (each resample draws len(counts) clusters with replacement; all columns use
    the same draws). ``counts`` are the values per cluster. A resample's mean is its
    total over its count, which weighs clusters by their counts: `estimates` passes
    per-task totals and counts only when counts are even (then it is the mean of the
    resampled task means), and task means with counts of 1 otherwise."""
    rng = SplitMix64(seed)
    g = len(counts)
    out: list[list[float]] = [[] for _ in columns]
    count = counts.__getitem__
    getters = [column.__getitem__ for column in columns]
    for _ in range(replicates):
        picks = rng.draws(g, g)
        n = sum(map(count, picks))
        for get, means in zip(getters, out, strict=True):
            means.append(math.fsum(map(get, picks)) / n)
    return out


def _percentiles(means: list[float]) -> tuple[float, float]:
    ordered = sorted(means)
    return ordered[TAIL - 1], ordered[len(ordered) - TAIL]


def estimates(clusters: Mapping[Any, Sequence[Sequence[float]]], names: Sequence[str],
              lo: float = 0.0, hi: float = 1.0) -> dict[str, Estimate]:
    """One `Estimate` per metric of ``names``: ``clusters`` maps a task to its rollouts,
    each a row of values in ``names`` order. The bootstrap draws once for all metrics.
    ``lo``, ``hi``: the metrics' range (a difference of two rewards spans [-1, 1]).
    Means are `task_mean`s (each task weighs the same), and so are the bootstrap's."""
    keys = sorted(clusters, key=lambda k: (repr(type(k)), repr(k)))
    rows = [clusters[k] for k in keys if clusters[k]]
    n = sum(map(len, rows))
    weighed = rows if even(rows) else [[_row_mean(r, len(names))] for r in rows]
    counts = [len(r) for r in weighed]
    out: dict[str, Estimate] = {}
    totals = [[math.fsum(row[m] for row in r) for r in weighed] for m in range(len(names))]
    boots = bootstrap_means(totals, counts) if 2 <= len(rows) <= MAX_BOOTSTRAP_TASKS else None
    for m, name in enumerate(names):
        if not rows:
            out[name] = Estimate(0.0, 0, 0)
            continue
        mean = task_mean([[row[m] for row in r] for r in rows])  # as `summary_means` computes it
        se = clustered_se({i: [row[m] for row in r] for i, r in enumerate(rows)})
        if se is None:
            out[name] = Estimate(mean, n, len(rows))
            continue
        ci = (_clip(mean - Z95 * se, lo, hi), _clip(mean + Z95 * se, lo, hi))
        out[name] = Estimate(mean, n, len(rows), se, ci, None if boots is None else _percentiles(boots[m]))
    return out


def _row_mean(rows: Sequence[Sequence[float]], width: int) -> list[float]:
    return [math.fsum(row[m] for row in rows) / len(rows) for m in range(width)]


@dataclass(frozen=True)
class Spread:
    """How the rollouts of one task differ (only tasks with several rollouts count)."""

    tasks: int                 # tasks with two or more rollouts
    min_rollouts: int
    max_rollouts: int
    within_task_sd: float      # sqrt of the pooled within-task variance of the reward
    best_of_n: float           # mean over those tasks of their best rollout's reward
    worst_of_n: float          # ... of their worst
    mean: float                # ... of their mean (to set best and worst against)
    agree: int                 # tasks whose rollouts all got the same reward

    def as_dict(self) -> dict[str, Any]:
        return {"tasks": self.tasks, "min_rollouts": self.min_rollouts, "max_rollouts": self.max_rollouts,
                "within_task_sd": self.within_task_sd, "best_of_n": self.best_of_n,
                "worst_of_n": self.worst_of_n, "mean": self.mean, "agree": self.agree}

    def line(self) -> str:
        n = (f"{self.min_rollouts}" if self.min_rollouts == self.max_rollouts
             else f"{self.min_rollouts}-{self.max_rollouts}")
        return (f"{self.tasks} tasks with {n} rollouts: best-of-{n} {self.best_of_n:.3f}, mean {self.mean:.3f}, "
                f"worst-of-{n} {self.worst_of_n:.3f}; within-task sd {self.within_task_sd:.3f}; "
                f"{self.agree} of {self.tasks} tasks got one reward on every rollout")


def spread(clusters: Mapping[Any, Sequence[float]]) -> Spread | None:
    """The rollout spread of the tasks in ``clusters`` (task -> rewards) that have
    several rollouts; None when none has."""
    several = [list(v) for v in _sorted_clusters(clusters) if len(v) >= 2]
    if not several:
        return None
    k = len(several)
    within = math.fsum(math.fsum((v - math.fsum(x) / len(x)) ** 2 for v in x) for x in several)
    dof = sum(len(x) - 1 for x in several)
    return Spread(k, min(map(len, several)), max(map(len, several)), math.sqrt(within / dof),
                  math.fsum(max(x) for x in several) / k, math.fsum(min(x) for x in several) / k,
                  math.fsum(math.fsum(x) / len(x) for x in several) / k, sum(1 for x in several if min(x) == max(x)))


def by_task(pairs: Iterable[tuple[Hashable, float]]) -> dict[Hashable, list[float]]:
    out: dict[Hashable, list[float]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out
