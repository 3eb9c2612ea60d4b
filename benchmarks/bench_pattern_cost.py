"""The compile-cost bound against what `regex` really builds (issue 20, item 6).

For every pattern (realistic: catalogue oracles, the built-in policies' rules on dev,
model-style alternations of vendor prefixes, the false-zero cases; random: a grammar
heavy in counted and nested repeats, sets, case folding, lookarounds), the guard's
bound (`pattern_guard._cost`) is compared with what compiling it really costs:

- memory: peak bytes `regex` allocates while compiling it (tracemalloc traces the
  PyMem allocator `regex`'s C compiler uses), per unit of the bound. The bound is an
  upper bound when that ratio never exceeds `BYTES_PER_UNIT`;
- time: compile time per unit (no tracemalloc; median of 3);
- what the previous bound (a repeat charged its largest count) refused that the
  current one accepts, and whether any pattern now accepted is costly to compile.

Prints one table; exits 1 if any accepted pattern exceeds `BYTES_PER_UNIT` bytes per
unit. ``--random N`` (default 2000) sets the number of random patterns.

    uv run --frozen python benchmarks/bench_pattern_cost.py [--random N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import regex

from redaction_pressure.scoring import pattern_guard as guard
from redaction_pressure.scoring.answer import MAX_PATTERN_CHARS
from tests.support.random_patterns import FALSE_ZERO_CASES, random_patterns, realistic_patterns


def old_cost(node: Any, budget: int) -> int:
    """The bound before corpus-v3 (environment 0.2): a repeat multiplied its body by its
    largest count (an open upper bound charged its lower bound)."""
    core = guard._regex_core
    if isinstance(node, core.GreedyRepeat):
        factor = max([1, *(c for c in (node.min_count, node.max_count) if c is not None)])
        if factor > budget:
            return budget + 1
        return factor * old_cost(node.subpattern, budget // factor + 1)
    own = len(node.characters) if isinstance(node, core.String) else (
        len(node.items) if isinstance(node, core.SetBase) else 1)
    flags = getattr(node, "case_flags", 0)
    if flags and int(flags) & int(core.FULLIGNORECASE) == int(core.FULLIGNORECASE):
        own *= guard.FULL_FOLD_FACTOR
    total = own
    for name in guard._CHILD_ATTRS:
        value = getattr(node, name, None)
        for child in (value,) if isinstance(value, core.RegexBase) else value if isinstance(value, (list, tuple)) \
                else ():
            if isinstance(child, core.RegexBase):
                total += old_cost(child, budget - total)
                if total > budget:
                    return total
    return total


def measure(pattern: str) -> dict[str, Any] | None:
    """The bound and the real compile cost of ``pattern``; None if `regex` rejects it."""
    try:
        tree = guard._parse(pattern)[0]
    except guard.Refused as exc:
        return {"refused": str(exc), "old_refused": True}
    except Exception:  # noqa: BLE001 - a pattern regex itself rejects is not measured
        return None
    try:
        bound = guard.PATTERN_BASE_COST + guard._cost(tree, guard.MAX_COMPILED_COST)
    except guard.Refused as exc:
        return {"refused": str(exc), "old_refused": True}
    old = old_cost(guard._parse(pattern)[0], guard.MAX_COMPILED_COST)  # (had no base cost)
    row: dict[str, Any] = {"pattern": pattern, "bound": bound, "old_refused": old > guard.MAX_COMPILED_COST}
    if bound > guard.MAX_COMPILED_COST:
        row["refused"] = "cost"
        return row
    try:
        regex.compile(pattern, cache_pattern=False)
    except Exception:  # noqa: BLE001
        return None
    tracemalloc.start()
    tracemalloc.reset_peak()
    regex.compile(pattern, cache_pattern=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        regex.compile(pattern, cache_pattern=False)
        times.append(time.perf_counter() - start)
    row.update(bytes=peak, seconds=statistics.median(times))
    return row


def summarize(name: str, rows: list[dict[str, Any]]) -> list[str]:
    accepted = [r for r in rows if "refused" not in r]
    refused = len(rows) - len(accepted)
    ratios = sorted(r["bytes"] / r["bound"] for r in accepted)
    per_unit_us = sorted(r["seconds"] / r["bound"] * 1e6 for r in accepted)
    newly = [r for r in accepted if r["old_refused"]]
    worst = max(accepted, key=lambda r: r["bytes"] / r["bound"])
    slowest = max(accepted, key=lambda r: r["seconds"])
    return [
        f"{name}: {len(rows)} patterns, {len(accepted)} accepted, {refused} refused "
        f"({len(newly)} accepted now that the previous bound refused)",
        f"  peak compile bytes per unit of the bound: median {statistics.median(ratios):.1f}, "
        f"p99 {ratios[int(0.99 * (len(ratios) - 1))]:.1f}, max {ratios[-1]:.1f} "
        f"(BYTES_PER_UNIT {guard.BYTES_PER_UNIT}) — worst: {worst['pattern'][:60]!r}",
        f"  compile time per unit: median {statistics.median(per_unit_us):.2f} us, max {per_unit_us[-1]:.2f} us; "
        f"slowest accepted pattern {slowest['seconds'] * 1e3:.1f} ms ({slowest['bound']} units, "
        f"{slowest['bytes'] / 1e6:.2f} MB)",
        f"  largest accepted compile: {max(r['bytes'] for r in accepted) / 1e6:.2f} MB "
        f"(bound x BYTES_PER_UNIT at the limit: {guard.MAX_COMPILED_COST * guard.BYTES_PER_UNIT / 1e6:.1f} MB)",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=2000, help="random patterns (default 2000)")
    args = parser.parse_args()
    started = time.perf_counter()
    realistic = [m for m in map(measure, realistic_patterns()) if m is not None]
    random_rows = [m for m in map(measure, random_patterns(args.random, max_chars=MAX_PATTERN_CHARS))
                   if m is not None]
    lines = [f"bench_pattern_cost: regex {regex.__version__}, MAX_COMPILED_COST {guard.MAX_COMPILED_COST:,}, "
             f"pattern limit {MAX_PATTERN_CHARS} characters ({time.perf_counter() - started:.0f} s)"]
    lines += summarize("realistic", realistic)
    lines += summarize("random", random_rows)
    for case in FALSE_ZERO_CASES:
        row = measure(case)
        assert row is not None
        status = f"refused ({row['refused']})" if "refused" in row else \
            f"accepted: bound {row['bound']}, {row['bytes'] / 1024:.0f} KiB, {row['seconds'] * 1e3:.2f} ms"
        lines.append(f"  false-zero case {case[:50]!r}: previous bound {'refused' if row['old_refused'] else 'ok'}, "
                     f"now {status}")
    bad = [r for r in realistic + random_rows if "refused" not in r and r["bytes"] > guard.BYTES_PER_UNIT * r["bound"]]
    lines.append(f"upper bound holds on {len(realistic) + len(random_rows) - len(bad)} of "
                 f"{len(realistic) + len(random_rows)} measured patterns" + ("" if not bad else
                 f"; EXCEEDED by {[r['pattern'][:40] for r in bad[:5]]}"))
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
