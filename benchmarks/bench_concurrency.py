"""Scoring that scales: while one rollout burns its whole 2 s budget on a hostile
reply (in its own scan worker process), 100 benign rollouts are scored concurrently through verifiers' own
`Task.score` on the same event loop. Prints how long the benign ones took and the
event loop's worst scheduling delay (a 5 ms ticker's lateness)."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table

HOSTILE = json.dumps({"rules": [{"pattern": r"(?:.|..)+$x", "replacement": ""}]})


async def measure(n_benign: int = 100, budget_s: float = 2.0) -> dict:
    from redaction_pressure import load_task, policies
    from redaction_pressure.taskset import offline_trace, to_row

    tasks = [load_task("dev" if i < 64 else "train", i % 64 if i < 64 else i, budget_s=budget_s)
             for i in range(n_benign + 1)]
    rows = [to_row(t) for t in tasks]
    replies = [HOSTILE] + [(policies.oracle if i % 2 else policies.baseline)(t) for i, t in enumerate(tasks[1:])]
    traces = [offline_trace(r, reply) for r, reply in zip(rows, replies, strict=False)]
    worst, stop = [0.0], asyncio.Event()

    async def ticker():
        while not stop.is_set():
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            worst[0] = max(worst[0], time.perf_counter() - start - 0.005)

    async def timed(coro):
        await coro
        return time.perf_counter()

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    start = time.perf_counter()
    hostile = asyncio.create_task(timed(rows[0].score(traces[0])))
    benign_done = await asyncio.gather(*(timed(r.score(t)) for r, t in zip(rows[1:], traces[1:], strict=False)))
    hostile_done = await hostile
    stop.set()
    await tick
    assert [e["code"] for e in traces[0].info["redaction_errors"]] in (["timeout"], ["budget_exhausted"])
    assert all(t.metrics["valid"] == 1.0 for t in traces[1:])
    return {"benign_all_done_s": max(benign_done) - start,
            "benign_first_done_s": min(benign_done) - start, "hostile_done_s": hostile_done - start,
            "worst_loop_delay_ms": worst[0] * 1000, "n_benign": n_benign, "budget_s": budget_s}


def main() -> dict:
    import redaction_pressure.taskset  # noqa: F401  (import verifiers before timing)

    runs = [asyncio.run(measure()) for _ in range(3)]
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"bench_concurrency on {machine()} (medians of {len(runs)} runs)")
    print(table([("figure", "value", "target"),
                 (f"{out['n_benign']} benign rollouts all scored", f"{out['benign_all_done_s']:.3f} s",
                  f"< hostile's {out['budget_s']:.1f} s"),
                 ("hostile rollout scored (timeout; wall time, load-dependent)", f"{out['hostile_done_s']:.3f} s",
                  "budget of CPU + waiting for a core"),
                 ("worst event-loop scheduling delay", f"{out['worst_loop_delay_ms']:.1f} ms", "< 50 ms")]))
    return out


if __name__ == "__main__":
    main()
