"""Runs every benchmark and prints one table of the figures the issues ask for.

    uv run python benchmarks/bench_all.py [--quick]

Figures are medians; timings on shared 2-core machines are noisy, so each ratio is
measured within one run (numerator and denominator side by side).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_audit
import bench_concurrency
import bench_core
from _common import machine, table


def main() -> int:
    quick = "--quick" in sys.argv
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        core = bench_core.main(quick=quick)
        conc = bench_concurrency.main()
        rc = bench_audit.main(["--quick"] if quick else [])
    if rc != 0:
        print(quiet.getvalue())
        return rc
    audit = dict(re.findall(r"(\w+)=([\d.]+)", quiet.getvalue().strip().splitlines()[-1]))
    print(f"redaction-pressure benchmarks on {machine()}" + (" (quick)" if quick else ""))
    print(table([
        ("figure", "value", "target"),
        ("scoring / raw regex.sub floor, oracle replies, median over dev",
         f"{core['oracle_overhead_warm']:.2f}x", "<= 1.3x"),
        ("scoring / raw regex.sub floor, baseline replies, median over dev",
         f"{core['baseline_overhead_warm']:.2f}x", "<= 1.3x"),
        ("  same, compile cache cleared each call (oracle / baseline; both together)",
         f"{core['oracle_overhead_cold']:.2f}x / {core['baseline_overhead_cold']:.2f}x; {core['overhead_cold']:.2f}x",
         "<= 2.5x together"),
        ("end to end (scan in a worker process) / floor, oracle / baseline (warm)",
         f"{core['oracle_end_to_end_warm']:.2f}x / {core['baseline_end_to_end_warm']:.2f}x", "-"),
        ("hostile reply: CPU time in its scan worker, budget 2.0 s", f"{core['hostile_cpu_s']:.3f} s", "<= 2.15 s"),
        ("median task build time", f"{core['task_build_ms']:.1f} ms", "-"),
        ("baseline mean reward on dev (oracle 1.0)", f"{core['baseline_mean_reward']:.3f}", "between 0 and 1"),
        ("100 benign rollouts scored beside a hostile one", f"{conc['benign_all_done_s']:.3f} s", "< 2.0 s"),
        ("worst event-loop delay meanwhile", f"{conc['worst_loop_delay_ms']:.1f} ms", "< 50 ms"),
        (f"audit verify, {audit['n']} traces", f"{float(audit['traces_per_s']):.1f} traces/s", "-"),
        ("audit verify total / rescoring alone", f"{float(audit['ratio']):.3f}", "<= 1.5"),
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
