"""The family catalogue and what it costs to build tasks from it.

    uv run python benchmarks/bench_catalog.py [--quick]

Prints: the number of secret and decoy families, variants, examples and near misses
per family (a table), oracle patterns and their required literals, the median time of
load_task over the 64 dev tasks (with the share spent checking every record against
all secret oracles), and the oracle policy's reward on dev and on train tasks.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

from redaction_pressure import catalog, load_task, policies, score_completion
from redaction_pressure.corpus import stream
from redaction_pressure.scoring.pattern_guard import compile_bounded


def family_table(entries: list[dict]) -> str:
    rows = [("family", "kind", "variants", "examples", "negatives", "oracle", "required literals")]
    for e in entries:
        literals = ", ".join(repr(compile_bounded(p).required) for p in e["oracle"])
        rows.append((e["name"], e["kind"], str(max(1, len(e["variants"]))), str(len(e["examples"])),
                     str(len(e["negatives"])), str(len(e["oracle"])), literals))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows)


def build_times() -> tuple[float, float]:
    """Median load_task time over dev, and the median time inside the oracle check."""
    spent = [0.0]
    original = stream._oracle_agrees

    def timed(*args):
        start = time.perf_counter()
        try:
            return original(*args)
        finally:
            spent[0] += time.perf_counter() - start

    load_task("dev", 0)  # compile the oracle patterns once, as a long-lived process does
    totals, checks = [], []
    stream._oracle_agrees = timed
    try:
        for i in range(64):
            spent[0] = 0.0
            start = time.perf_counter()
            load_task("dev", i)
            totals.append(time.perf_counter() - start)
            checks.append(spent[0])
    finally:
        stream._oracle_agrees = original
    return statistics.median(totals), statistics.median(checks)


def oracle_rewards(split: str, n: int) -> tuple[float, int]:
    rewards, most_rules = [], 0
    for i in range(n):
        task = load_task(split, i)
        reply = policies.oracle(task)
        most_rules = max(most_rules, reply.count('"pattern"'))
        rewards.append(score_completion(task, reply).reward)
    return min(rewards), most_rules


def main(quick: bool = False) -> dict:
    entries = catalog()
    secrets = [e for e in entries if e["kind"] == "secret"]
    decoys = [e for e in entries if e["kind"] == "decoy"]
    print(f"machine: {machine()}")
    print(family_table(entries))
    print()
    figures = {
        "secret families": len(secrets),
        "decoy families": len(decoys),
        "secret variants": sum(max(1, len(e["variants"])) for e in secrets),
        "examples (secret / decoy)":
            f"{sum(len(e['examples']) for e in secrets)} / {sum(len(e['examples']) for e in decoys)}",
        "near misses": sum(len(e["negatives"]) for e in entries),
        "min examples / negatives per family": f"{min(len(e['examples']) for e in entries)} / "
                                               f"{min(len(e['negatives']) for e in entries)}",
        "oracle patterns (all secret families)": sum(len(e["oracle"]) for e in secrets),
    }
    total, check = build_times()
    figures["task build median (dev, 64 tasks)"] = f"{total * 1e3:.1f} ms (oracle check {check * 1e3:.1f} ms)"
    n_train = 100 if quick else 500
    for split, n in (("dev", 64), ("train", n_train)):
        low, rules = oracle_rewards(split, n)
        figures[f"oracle reward, min over {n} {split} tasks"] = f"{low:.3f} (at most {rules} rules)"
    width = max(map(len, figures))
    for k, v in figures.items():
        print(f"{k.ljust(width)}  {v}")
    return figures


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
