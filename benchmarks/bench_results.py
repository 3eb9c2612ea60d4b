"""The figures of the README's result sections (issue 23): what `eval` prints, what its
JSON summary weighs, the uncertainty of the reference policies on dev, a comparison of
two of them, and what the uncertainty figures cost to compute.

    uv run python benchmarks/bench_results.py [--cache DIR]

Scores the 64 dev tasks with the baseline and induce policies (or reuses the runs in
--cache while the installed build is unchanged), then prints: each run's headline (the
line `eval` starts and ends on), the number of lines `eval` prints by default and with
--families, the size of `eval --json` with and without the per-family tables, the
`compare` of the two runs, and the median time of one run summary (means, clustered
standard errors, the 2,000-resample bootstrap, class tables) for 64 and 1,000 traces.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, median_time

from redaction_pressure.build.identity import source_digest
from redaction_pressure.report._runfile import read_run
from redaction_pressure.results.compare import compare, side
from redaction_pressure.results.compare_text import compare_lines
from redaction_pressure.results.summary import headline, summarize
from redaction_pressure.results.text import eval_lines


def _run(cache: Path, policy: str) -> tuple[Path, float]:
    """Dev, 64 tasks, ``policy``: reused from ``cache`` when this build wrote it; and the
    seconds scoring it took (recorded beside it when it was made)."""
    run = cache / f"dev-{policy}"
    traces, took = run / "traces.jsonl", run / "seconds.txt"
    if traces.is_file() and took.is_file():
        with open(traces, encoding="utf-8") as f:
            first = json.loads(f.readline())
        if first["traces"][0]["info"]["environment"]["source_digest"] == source_digest():
            return traces, float(took.read_text())
    start = time.perf_counter()
    from redaction_pressure.run import run_policy

    path = run_policy("dev", policy, 64, run)
    seconds = time.perf_counter() - start  # with verifiers' import, as `eval` counts it
    took.write_text(f"{seconds:.1f}\n")
    return path, seconds


def _traces(path: Path) -> list[dict]:
    return [t for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            for t in json.loads(line)["traces"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rp-bench-results",
                    help="directory for the dev runs (default: a fixed directory under the temp dir)")
    args = ap.parse_args(argv)
    print(f"redaction-pressure result summaries on {machine()}")
    runs = {p: _run(args.cache, p) for p in ("baseline", "induce")}
    paths = {p: path for p, (path, _) in runs.items()}
    for policy, (path, seconds) in runs.items():
        traces = _traces(path)
        summary = summarize(traces)
        lines = eval_lines(summary, f"runs/dev-{policy}/traces.jsonl", policy, seconds)
        full = eval_lines(summarize(traces, families=True), "t", policy, 0.0, families=True)
        plain = len(json.dumps(summary | {"policy": policy}, indent=2))
        with_families = len(json.dumps(summarize(traces, families=True) | {"policy": policy}, indent=2))
        print(f"\n{policy}: {headline(summary, f'runs/dev-{policy}/traces.jsonl')}")
        print(f"  eval prints {len(lines)} lines ({len(full)} with --families: {len(summary['secret_classes'])} "
              f"secret and {len(summary['decoy_classes'])} decoy classes, "
              f"{len(summarize(traces, families=True)['secret_families'])} secret and "
              f"{len(summarize(traces, families=True)['decoy_families'])} decoy family names); "
              f"eval --json {plain / 1000:.1f} KB ({with_families / 1000:.1f} KB with --families)")
        if policy == "baseline":
            print("  eval's output:")
            for line in lines:
                print(f"    {line}")
    a, b = read_run(paths["baseline"]), read_run(paths["induce"])
    c = compare(side("A", a.traces), side("B", b.traces))
    print("\ncompare runs/dev-baseline runs/dev-induce:")
    for line in compare_lines(c, ("runs/dev-baseline — run directory, not sealed — built-in policy baseline",
                                  "runs/dev-induce — run directory, not sealed — built-in policy induce"),
                              "public dev split (not a private evaluation), level 1, n_shown=8, n_eval=16, "
                              "budget_s=2.0"):
        print(f"    {line}")
    traces = _traces(paths["baseline"])
    big = []
    for k in range(16):  # 1,024 traces: the dev run's 64 as 16 times as many tasks
        for t in traces:
            t2 = copy.deepcopy(t)
            t2["info"]["environment"]["task_index"] += 64 * k
            big.append(t2)
    small_s = median_time(lambda: summarize(traces), repeat=5)
    start = time.perf_counter()
    summarize(big)
    big_s = time.perf_counter() - start
    print(f"\none run summary (means, clustered standard errors, 2,000-resample bootstrap, class tables): "
          f"{small_s:.2f} s for 64 traces (median of 5), {big_s:.1f} s for {len(big):,} traces")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
