"""Benchmark of `redaction-pressure report`: page size and generation time.

Targets (issue 13): 64 episodes under 1 MB, 1,000 episodes under 10 MB, generated in
seconds. Builds (or reuses, while the installed build is unchanged) three runs: dev
with the oracle and the baseline policies (64 episodes each) and train with the
baseline policy (1,000 episodes, 256 with --quick; runs above 256 episodes show only
flawed lines). Times the whole report (read, regenerate every task, rescore, render),
median of --repeat runs, with the task cache cleared before each; the large run once
in one process and once over every core.

    uv run python benchmarks/bench_report.py [--quick] [--repeat N] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine

from redaction_pressure.build.identity import source_digest
from redaction_pressure.report import _marks, render_report

MB = 1_000_000


def _run_dir(cache: Path, split: str, policy: str, n: int) -> Path:
    run = cache / f"{split}-{policy}-{n}"
    traces = run / "traces.jsonl"
    if traces.is_file():
        with open(traces, encoding="utf-8") as f:
            first = json.loads(f.readline())
        if first["traces"][0]["info"]["environment"]["source_digest"] == source_digest():
            return run
    print(f"generating {n} {split} traces of {policy} (imports verifiers once) ...", file=sys.stderr)
    from redaction_pressure.run import run_policy

    run_policy(split, policy, n, run)
    return run


def _measure(run: Path, repeat: int, jobs: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeat):
        _marks._regenerate.cache_clear()
        start = time.perf_counter()
        page = render_report(run, jobs=jobs)
        times.append(time.perf_counter() - start)
        size = len(page.encode("utf-8"))
    return statistics.median(times), size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="256 train episodes instead of 1,000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rp-bench-report")
    args = parser.parse_args(argv)
    big = 256 if args.quick else 1000
    cores = os.cpu_count() or 1
    cases = [("dev", "oracle", 64, 1, 1 * MB), ("dev", "baseline", 64, 1, 1 * MB),
             ("train", "baseline", big, 1, 10 * MB), ("train", "baseline", big, cores, 10 * MB)]
    print(f"bench_report on {machine()}; median of {args.repeat}")
    print(f"{'run':<24} {'episodes':>8} {'jobs':>4} {'size':>10} {'limit':>8} {'seconds':>8} {'ms/episode':>10}")
    ok = True
    for split, policy, n, jobs, limit in cases:
        run = _run_dir(args.cache, split, policy, n)
        seconds, size = _measure(run, args.repeat, jobs)
        within = size < limit
        ok &= within
        print(f"{split + '-' + policy:<24} {n:>8} {jobs:>4} {size / MB:>8.3f}MB {limit / MB:>6.0f}MB "
              f"{seconds:>8.2f} {1000 * seconds / n:>10.2f}{'' if within else '  OVER THE LIMIT'}")
    # The floor no report can go below: regenerating the large run's tasks (the corpus).
    traces = [t for line in (_run_dir(args.cache, "train", "baseline", big) / "traces.jsonl").read_text().splitlines()
              for t in json.loads(line)["traces"]]
    times = []
    for _ in range(args.repeat):
        _marks._regenerate.cache_clear()
        start = time.perf_counter()
        for t in traces:
            _marks.task_for(t)
        times.append(time.perf_counter() - start)
    print(f"{'train: regenerate tasks only':<29} {big:>8} {1:>4} {'':>10} {'':>8} {statistics.median(times):>8.2f} "
          f"{1000 * statistics.median(times) / big:>10.2f}")
    print("bench_report: " + ("size targets met" if ok else "SIZE TARGET MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
