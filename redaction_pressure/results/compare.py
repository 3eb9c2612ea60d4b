"""`redaction-pressure compare RUN_A RUN_B`: did B do better than A, task by task, and by
how much beyond the noise?

Two means with overlapping intervals can still differ reliably when both runs answered
the same tasks, so the comparison is paired: per task, B's mean reward (over its
rollouts) minus A's, then the mean of those differences with its standard error and 95%
intervals (analytic, and the seeded bootstrap over tasks of `stats`), wins, ties and
losses, and how each class's leak and damage rates moved. Only tasks both runs hold are
paired; the others are named.

Pairing is only meaningful between runs of the same tasks scored the same way, so runs
that differ in split (or private secret), in a paired task's level, in task parameters
or in build are refused, each difference named, unless the caller says to compare anyway
(`allow_mismatch`): the result then says what differs on its first line. The split of a
run is the one its commitments and seeds prove, never its label.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..task.splits import prove_split
from .classes import add_tallies
from .recorded import BUILD_KEYS, METRICS, Recorded, read_recorded
from .stats import METHOD, Estimate, estimates


class CompareRefused(Exception):
    """Runs that cannot be paired (always: no task in common; without allow_mismatch:
    any mismatch). The message is one line."""


@dataclass
class Side:
    """One run as the comparison sees it."""

    name: str
    records: list[Recorded]
    unusable: int  # traces without a usable score (failed rollouts, mangled traces)
    split: str | None
    split_note: str
    unusable_example: str = ""  # why the first of them has none
    private_unproven: bool = False  # a private commitment whose seeds no one here re-derived (`SplitProof`)

    def by_task(self) -> dict[int, list[Recorded]]:
        out: dict[int, list[Recorded]] = defaultdict(list)
        for r in self.records:
            out[r.index].append(r)
        return out


def side(name: str, traces: Sequence[object]) -> Side:
    records: list[Recorded] = []
    example = ""
    for trace in traces:
        record, why = read_recorded(trace)
        if record is not None:
            records.append(record)
        elif not example:
            example = why or ""
    proof = prove_split((r.split, r.commitment, r.index, r.seed) for r in records)
    note = proof.disagreement() or ""
    return Side(name, records, len(traces) - len(records), proof.proven if proof.agrees else None, note,
                example[:300], proof.private_unproven)


def _values(items: Iterable[object]) -> str:
    shown = sorted({str(v) for v in items})
    return ", ".join(s[:80] for s in shown[:3]) + (f" (+{len(shown) - 3} more)" if len(shown) > 3 else "")


def mismatches(a: Side, b: Side) -> list[str]:
    """Every way the two runs are not runs of the same tasks scored the same way."""
    out: list[str] = []
    for s in (a, b):
        if s.split is None:
            out.append(f"{s.name}'s split is not established by its commitments and seeds"
                       + (f" ({s.split_note})" if s.split_note else ""))
    if a.split is not None and b.split is not None and a.split != b.split:
        out.append(f"split: A is {a.split}, B is {b.split}")
    ca, cb = {r.commitment for r in a.records}, {r.commitment for r in b.records}
    if a.split == b.split and ca != cb:
        out.append("split commitment: the runs were drawn under different private secrets (task i is not the "
                   "same task in both)")
    if a.split == b.split and ca == cb:
        # Each run may be consistent on its own and still not be the other's tasks: under
        # one commitment a task has one seed, so another seed for its index is another task.
        seeds: dict[int, set[str]] = {}
        for r in (*a.records, *b.records):
            if r.seed is not None:
                seeds.setdefault(r.index, set()).add(repr(r.seed)[:80])
        clash = sorted(i for i, revealed in seeds.items() if len(revealed) > 1)
        if clash:
            out.append(f"seeds: {len(clash)} task(s) reveal other seeds in A than in B (e.g. task {clash[0]}): under "
                       "one commitment that is another task, not the same one")
    # Typed: 16 and 16.0 (or 1 and true) are equal in Python but not one parameter;
    # only the integer is valid, and a rebuild refuses the other.
    pa, pb = ({tuple((type(v).__name__, v) for v in r.params) for r in s.records} for s in (a, b))
    if pa != pb:
        out.append(f"task parameters (n_shown, n_eval, budget_s): A {_values(r.params for r in a.records)}, "
                   f"B {_values(r.params for r in b.records)}")
    ta, tb = a.by_task(), b.by_task()
    differ = sorted(i for i in set(ta) & set(tb) if {r.level for r in ta[i]} != {r.level for r in tb[i]})
    if differ:
        out.append(f"level: {len(differ)} paired task(s) were run at different levels (e.g. task {differ[0]}: A "
                   f"level {_values([r.level for r in ta[differ[0]]])}, B level "
                   f"{_values([r.level for r in tb[differ[0]]])})")
    for k, key in enumerate(BUILD_KEYS):
        va, vb = {r.build[k] for r in a.records}, {r.build[k] for r in b.records}
        if va != vb:
            out.append(f"build {key}: A {_values(va)}, B {_values(vb)}")
    return out


# A task's difference smaller than this is a tie: rounding, not a result. Rewards are
# sums of weighted ratios, so two runs that did the same thing can differ by ~1e-16
# (fsum(3 x r) / 3 need not be r); the smallest real difference, one secret or one
# character of thousands, is ~1e-5.
TIE = 1e-9


def _mean(values: Sequence[float]) -> float:
    if all(v == values[0] for v in values):  # exact: k copies of r average to r
        return values[0]
    return math.fsum(values) / len(values)


@dataclass
class Comparison:
    a: Side
    b: Side
    paired: list[int]
    only_a: list[int]
    only_b: list[int]
    mismatches: list[str]
    a_est: dict[str, Estimate]
    b_est: dict[str, Estimate]
    diff: dict[str, Estimate]
    wins: int
    ties: int
    losses: int
    tasks: list[dict[str, Any]]
    by_level: list[dict[str, Any]] = field(default_factory=list)
    secret_classes: list[dict[str, Any]] = field(default_factory=list)
    decoy_classes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def levels(self) -> list[int]:
        return sorted({r.level for r in self.a.records + self.b.records if r.index in set(self.paired)})

    def headline(self) -> str:
        d = self.diff["reward"]
        pm = f"{d.mean:+.3f}" + (f" ± {d.se:.3f}" if d.se is not None else "")
        interval = f" ({d.interval(signed=True)})" if d.ci95 is not None else ""
        return (f"B − A: reward {pm}{interval}; B better on {self.wins}, tied on {self.ties}, worse on "
                f"{self.losses} of {len(self.paired)} paired tasks")

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.a.split if self.a.split == self.b.split else None, "levels": self.levels,
            "paired_tasks": len(self.paired), "only_in_a": self.only_a, "only_in_b": self.only_b,
            "unusable_traces": {"a": self.a.unusable, "b": self.b.unusable},
            "unusable_examples": {"a": self.a.unusable_example, "b": self.b.unusable_example},
            "mismatches": self.mismatches, "method": METHOD,
            "metrics": {m: {"a": self.a_est[m].as_dict(), "b": self.b_est[m].as_dict(),
                            "b_minus_a": self.diff[m].as_dict()} for m in METRICS},
            "reward_wins_ties_losses": {"b_better": self.wins, "tied": self.ties, "b_worse": self.losses},
            "by_level": self.by_level, "secret_classes": self.secret_classes, "decoy_classes": self.decoy_classes,
            "tasks": self.tasks, "headline": self.headline(),
        }


def _class_rows(a: list[Recorded], b: list[Recorded], table: str) -> list[dict[str, Any]]:
    """Per class: counts and the bad rate (leaked or destroyed) in A and in B, and the
    change in percentage points; largest changes first."""
    ta = add_tallies(getattr(r, table) for r in a)
    tb = add_tallies(getattr(r, table) for r in b)
    secret = table == "secret_classes"
    rows = []
    for name in sorted(set(ta) | set(tb)):
        (na, ka), (nb, kb) = ta.get(name, [0, 0]), tb.get(name, [0, 0])
        bad_a, bad_b = (na - ka, nb - kb) if secret else (ka, kb)
        ra = bad_a / na if na else None
        rb = bad_b / nb if nb else None
        rows.append({"class": name, "a_total": na, "a_bad": bad_a, "a_rate": ra, "b_total": nb, "b_bad": bad_b,
                     "b_rate": rb, "change_pts": None if ra is None or rb is None else 100 * (rb - ra)})
    rows.sort(key=_by_change)
    return rows


def _by_change(row: dict[str, Any]) -> tuple[float, str]:
    """Most moved first: the rate's change weighted by how many spans the class has, so a
    class of 400 secrets that moved 80 points outranks one of 3 that moved 100."""
    change = row["change_pts"]
    return (-abs(change) * (row["a_total"] + row["b_total"]) if change is not None else 0.0, row["class"])


def _estimates(groups: dict[int, list[Recorded]], keys: list[int]) -> dict[str, Estimate]:
    return estimates({i: [list(r.values) for r in groups[i]] for i in keys}, METRICS)


def compare(a: Side, b: Side, allow_mismatch: bool = False) -> Comparison:
    """Raises CompareRefused (see the class)."""
    found = mismatches(a, b)
    ta, tb = a.by_task(), b.by_task()
    paired = sorted(set(ta) & set(tb))
    if not paired:
        skipped = "".join(f"; {s.name} has {s.unusable} unscored trace(s), e.g. {s.unusable_example[:200]}"
                          for s in (a, b) if s.unusable)
        raise CompareRefused(f"the runs have no task in common (A: {len(ta)} tasks, B: {len(tb)} tasks with a "
                             f"score{skipped}): nothing to pair")
    if found and not allow_mismatch:
        raise CompareRefused(f"refusing to compare runs that are not of the same tasks scored the same way: "
                             f"{'; '.join(found)} (pass --allow-mismatch to compare anyway)")
    rows: dict[int, list[list[float]]] = {}
    tasks = []
    wins = ties = losses = 0
    for i in paired:
        ma = [_mean([r.values[m] for r in ta[i]]) for m in range(len(METRICS))]
        mb = [_mean([r.values[m] for r in tb[i]]) for m in range(len(METRICS))]
        d = [y - x for x, y in zip(ma, mb, strict=True)]
        rows[i] = [d]
        wins += d[0] > TIE
        ties += abs(d[0]) <= TIE
        losses += d[0] < -TIE
        tasks.append({"index": i, "level": ta[i][0].level, "a_reward": ma[0], "b_reward": mb[0], "b_minus_a": d[0],
                      "a_rollouts": len(ta[i]), "b_rollouts": len(tb[i])})
    diff = estimates(rows, METRICS, lo=-1.0, hi=1.0)
    by_level = []
    levels = sorted({ta[i][0].level for i in paired})
    if len(levels) > 1:
        for level in levels:
            mine = {i: rows[i] for i in paired if ta[i][0].level == level}
            est = estimates(mine, METRICS, lo=-1.0, hi=1.0)["reward"]
            by_level.append({"level": level, "tasks": len(mine), "b_minus_a": est.as_dict(),
                             "line": f"level {level}: {len(mine)} tasks, reward B − A {est.mean:+.3f}"
                                     + (f" ± {est.se:.3f}" if est.se is not None else "")})
    in_a = [r for i in paired for r in ta[i]]
    in_b = [r for i in paired for r in tb[i]]
    return Comparison(a, b, paired, sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta)), found,
                      _estimates(ta, paired), _estimates(tb, paired), diff, wins, ties, losses, tasks, by_level,
                      _class_rows(in_a, in_b, "secret_classes"), _class_rows(in_a, in_b, "decoy_classes"))
