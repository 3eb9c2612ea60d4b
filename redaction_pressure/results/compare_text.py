"""The lines `compare` prints: the paired difference first and last, both runs named
(and whether each is a sealed archive verified here), the per-metric table with
intervals, wins/ties/losses, and the classes whose leak or damage rates moved most."""

from __future__ import annotations

from typing import Any

from .compare import Comparison
from .recorded import METRICS
from .stats import MAX_BOOTSTRAP_TASKS, Estimate

MAX_LINES = 25  # by default; --classes lists every class that moved


def _pm(e: Estimate, signed: bool = False) -> str:
    mean = f"{e.mean:+.3f}" if signed else f"{e.mean:.3f}"
    return mean + (f" ± {e.se:.3f}" if e.se is not None else "")


def _iv(e: Estimate, key: str) -> str:
    pair = e.ci95 if key == "ci95" else e.bootstrap95
    return "-" if pair is None else f"{pair[0]:+.3f} to {pair[1]:+.3f}"


def _rate(r: float | None) -> str:
    return "-" if r is None else f"{100 * r:.0f}%"


def class_lines(rows: list[dict[str, Any]], title: str, limit: int | None) -> list[str]:
    moved = [r for r in rows if r["change_pts"]]
    shown = moved if limit is None else moved[:limit]
    more = f"; {len(moved) - len(shown)} more: --classes" if len(shown) < len(moved) else ""
    lines = [f"{title} ({len(moved)} of {len(rows)} classes changed{more}):"]
    lines += [f"  {r['class'][:28]:<28} {_rate(r['a_rate']):>5} → {_rate(r['b_rate']):>5}  "
              f"({r['change_pts']:+.0f} pts; A {r['a_bad']} of {r['a_total']}, B {r['b_bad']} of {r['b_total']})"
              for r in shown]
    return lines


def compare_lines(c: Comparison, described: tuple[str, str], context: str, all_classes: bool = False) -> list[str]:
    """``described``: one line per run (path, archive state, what was evaluated);
    ``context``: split, levels and task parameters."""
    first = c.headline()
    lines = [first]
    if c.mismatches:
        lines.append("MISMATCHED RUNS (compared anyway, --allow-mismatch): " + "; ".join(c.mismatches))
    lines += [f"A: {described[0]}", f"B: {described[1]}", context]
    only = []
    if c.only_a:
        only.append(f"{len(c.only_a)} only in A")
    if c.only_b:
        only.append(f"{len(c.only_b)} only in B")
    unusable = [f"{side.unusable} unscored trace(s) in {name}" + (f" (e.g. {side.unusable_example})"
                                                                   if side.unusable_example else "")
                for name, side in (("A", c.a), ("B", c.b)) if side.unusable]
    lines.append(f"{len(c.paired)} tasks paired" + (f" ({', '.join(only)}: not compared)" if only else "")
                 + (f"; skipped {', '.join(unusable)}" if unusable else ""))
    lines.append(f"  {'metric':<10} {'A':<15} {'B':<15} {'B − A':<16} {'95% interval':<17} bootstrap 95%")
    for m in METRICS:
        lines.append(f"  {m:<10} {_pm(c.a_est[m]):<15} {_pm(c.b_est[m]):<15} {_pm(c.diff[m], True):<16} "
                     f"{_iv(c.diff[m], 'ci95'):<17} {_iv(c.diff[m], 'bootstrap95'):<17}".rstrip())
    lines += [f"  {lv['line']}" for lv in c.by_level]
    booted = c.diff["reward"].bootstrap95 is not None
    foot = ["± one standard error of the paired per-task differences (tasks are the unit); 95% intervals: "
            + ("normal approximation, and a seeded bootstrap over tasks" if booted else
               f"normal approximation (no bootstrap: it runs for at most {MAX_BOOTSTRAP_TASKS:,} tasks)"), first]
    moved = [sum(1 for r in rows if r["change_pts"]) for rows in (c.secret_classes, c.decoy_classes)]
    if all_classes:
        limits: tuple[int | None, int | None] = (None, None)
    else:  # what is left of MAX_LINES after the rest and the two table titles, most of it to secrets
        room = max(0, MAX_LINES - len(lines) - len(foot) - 2)
        secret = min(moved[0], max(room - min(moved[1], room // 3), 0))
        limits = (secret, min(moved[1], room - secret))
    lines += class_lines(c.secret_classes, "secrets leaked, by class, A → B", limits[0])
    lines += class_lines(c.decoy_classes, "decoys destroyed, by class, A → B", limits[1])
    return lines + foot
