"""The lines `eval` prints: the result first and last, every mean with its standard error
and 95% intervals, leaks and damage by class, in at most `MAX_LINES` lines by default.

857 lines of per-family rows, most of them names one stream invented, buried the one
line that mattered. Classes come sorted by what went wrong, as many as fit; ``--classes``
lists every class, ``--families`` every family name too (the old table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scoring.summary import MEAN_OVER_TASKS
from .stats import MAX_BOOTSTRAP_TASKS
from .summary import METRICS, headline, uneven_counts

MAX_LINES = 25
_MEAN_KEYS = {"reward": "mean_reward", "recall": "mean_recall", "precision": "mean_precision", "clean": "clean_rate"}
_NAME = 28


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _interval(est: dict[str, Any], key: str) -> str:
    if key not in est:
        return "-"
    lo, hi = est[key]
    return f"{lo:.3f}–{hi:.3f}"


def metric_lines(summary: dict[str, Any]) -> list[str]:
    u = summary["uncertainty"]
    lines = [f"  {'metric':<10} {'mean ± s.e.':<16} {'95% interval':<14} {'bootstrap 95%':<14}"]
    for m in METRICS:
        est = u[m]
        pm = f"{summary[_MEAN_KEYS[m]]:.3f}" + (f" ± {est['se']:.3f}" if "se" in est else "")
        lines.append(f"  {m:<10} {pm:<16} {_interval(est, 'ci95'):<14} {_interval(est, 'bootstrap95'):<14}")
    return lines


def _class_rows(rows: dict[str, dict[str, int]], bad: str, whole: str) -> list[tuple[str, int, int]]:
    ranked = sorted(rows.items(), key=lambda kv: (-kv[1][bad], kv[0]))
    return [(name, v[whole], v[bad]) for name, v in ranked]


def class_lines(summary: dict[str, Any], secret_room: int | None, decoy_room: int | None) -> list[str]:
    """The two class tables, each cut to its room (None: every class)."""
    lines: list[str] = []
    for title, key, whole, bad, head in (
            ("secrets leaked, by class", "secret_classes", "labelled", "leaked", ("labelled", "leaked")),
            ("decoys destroyed, by class", "decoy_classes", "present", "destroyed", ("present", "destroyed"))):
        rows = _class_rows(summary[key], bad, whole)
        room = secret_room if key == "secret_classes" else decoy_room
        shown = rows if room is None else rows[:max(room, 0)]
        total_bad = sum(r[2] for r in rows)
        total = sum(r[1] for r in rows)
        cut = f"; top {len(shown)} of {len(rows)}: --classes lists all" if len(shown) < len(rows) else ""
        lines.append(f"{title} ({total_bad} of {total}{cut}):")
        if shown:
            lines.append(f"  {'class':<{_NAME}} {head[0]:>9} {head[1]:>9} {'rate':>6}")
            lines += [f"  {name[:_NAME]:<{_NAME}} {n:>9} {k:>9} {_pct(k, n):>6}" for name, n, k in shown]
    return lines


def family_lines(summary: dict[str, Any]) -> list[str]:
    """Every family name, as the old table listed them (a stream's own names included)."""
    lines = ["secret families (by name):"]
    for name, v in sorted(summary["secret_families"].items(), key=lambda kv: (-kv[1]["leaked"], kv[0])):
        lines.append(f"  {name:<32} {v['labelled']:>7} labelled {v['leaked']:>7} leaked")
    lines.append("decoy families (by name):")
    for name, v in sorted(summary["decoy_families"].items(), key=lambda kv: (-kv[1]["destroyed"], kv[0])):
        lines.append(f"  {name:<32} {v['present']:>7} present {v['destroyed']:>7} destroyed")
    return lines


def eval_lines(summary: dict[str, Any], traces_path: str | Path, policy: str, seconds: float, *,
               all_classes: bool = False, families: bool = False) -> list[str]:
    """What `eval` prints: at most `MAX_LINES` lines unless ``all_classes`` or ``families``."""
    first = headline(summary, traces_path)
    head = [first,
            f"policy {policy} · {summary['coverage']} · took {seconds:.1f} s · seal it: audit seal "
            f"{Path(traces_path).parent} --key KEY.pem --out ARCHIVE_DIR",
            *metric_lines(summary)]
    errors = ", ".join(f"{k} {v}" for k, v in summary["errors"].items())
    head.append(f"  invalid episodes: {summary['invalid']} of {summary['traces']}" + (f" ({errors})" if errors else ""))
    spread = summary["uncertainty"].get("rollouts")
    if spread:
        n = (f"{spread['min_rollouts']}" if spread["min_rollouts"] == spread["max_rollouts"]
             else f"{spread['min_rollouts']}-{spread['max_rollouts']}")
        head.append(f"  rollouts: {spread['tasks']} tasks with {n}: best-of-{n} {spread['best_of_n']:.3f}, "
                    f"worst-of-{n} {spread['worst_of_n']:.3f}, within-task sd {spread['within_task_sd']:.3f}, "
                    f"{spread['agree']} tasks with one reward on every rollout")
    if len(summary["by_level"]) > 1:
        for lv in summary["by_level"]:
            u = lv["uncertainty"]["reward"]
            pm = f"{lv['mean_reward']:.3f}" + (f" ± {u['se']:.3f}" if "se" in u else "")
            head.append(f"  level {lv['level']}: {lv['tasks']} tasks, reward {pm} · recall {lv['mean_recall']:.3f}"
                        f" · precision {lv['mean_precision']:.3f} · clean {lv['clean_rate']:.3f} · invalid "
                        f"{lv['invalid']}")
    booted = "bootstrap95" in summary["uncertainty"].get("reward", {})
    foot = ["± one standard error, clustered by task; 95% intervals: normal approximation, and a seeded bootstrap "
            "over tasks (the same figures on every machine)" if booted else
            "± one standard error, clustered by task; 95% intervals: normal approximation (no bootstrap: it runs "
            f"for at most {MAX_BOOTSTRAP_TASKS:,} tasks)", first]
    if uneven_counts(summary):
        foot.insert(0, f"uneven rollouts per task: every figure is a {MEAN_OVER_TASKS}")
    if all_classes or families:
        body = class_lines(summary, None, None) + (family_lines(summary) if families else [])
        return [line.rstrip() for line in head + body + foot]
    # Each class table takes a title line and, with rows, a header line.
    room = MAX_LINES - len(head) - len(foot) - 4
    n_secret, n_decoy = len(summary["secret_classes"]), len(summary["decoy_classes"])
    decoy_room = min(n_decoy, max(1, room // 3))
    secret_room = min(n_secret, max(0, room - decoy_room))
    decoy_room = min(n_decoy, max(0, room - secret_room))
    return [line.rstrip() for line in head + class_lines(summary, secret_room, decoy_room) + foot]
