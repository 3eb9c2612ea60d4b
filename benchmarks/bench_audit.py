"""Benchmark of `audit verify` on an archive of train traces.

Builds (or reuses, while the installed build is unchanged) a baseline-policy run of
512 train traces (128 with --quick), seals it with a throwaway key, then times, three
times each and interleaved (so load from other processes hits every variant alike),
the whole in-process verification with ``--jobs 1`` and ``--jobs 2`` and the
rescoring alone (regenerating every task from its revealed seed and rescoring the
recorded reply: the part no verifier can skip) with 1 and 2 processes. Reports traces
per second for each, the speedup of 2 processes over 1 (target >= 1.7x on 2 free
cores), and the ratio total / rescoring (target <= 1.5: every other check together
costs at most half as much as rescoring). Caches of regenerated tasks are cleared
before every timed run. Medians are reported; on a machine shared with other work the
speedup is a lower bound of what 2 free cores give.

    uv run python benchmarks/bench_audit.py [--quick] [--repeat N] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from audit._keys import keygen, load_private_key, load_public_key
from audit._parallel import rescore_all
from audit._rescore import regenerate, rescore_many
from audit._seal import seal
from audit._tracefile import read_trace_file
from audit._verify import verify_archive
from redaction_pressure._identity import source_digest

TARGET_RATIO = 1.5
TARGET_SPEEDUP = 1.7


def _run_dir(cache: Path, n: int) -> Path:
    """A train run of n baseline traces from this build (regenerated when stale)."""
    run = cache / f"train-baseline-{n}"
    traces = run / "traces.jsonl"
    if traces.is_file():
        with open(traces, encoding="utf-8") as f:
            first = json.loads(f.readline())
        if first["traces"][0]["info"]["environment"]["source_digest"] == source_digest():
            return run
    print(f"generating {n} train traces (imports verifiers once) ...", file=sys.stderr)
    from redaction_pressure._run import run_policy

    run_policy("train", "baseline", n, run)
    return run


_CPU: dict[str, list[float]] = {}


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn, name: str = "") -> float:
    regenerate.cache_clear()
    cpu, start = _cpu(), time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    _CPU.setdefault(name, []).append(_cpu() - cpu)
    return elapsed


def _halves_in_two_processes(traces: list) -> None:
    """The machine's own ceiling: each half rescored by a forked process that already
    holds it (no pool, no pickling, no result transfer). Raises if a child fails."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=rescore_many, args=(traces[i::2],)) for i in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError("a rescoring process failed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="128 traces instead of 512")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rp-bench-audit")
    args = parser.parse_args(argv)
    n = 128 if args.quick else 512

    run = _run_dir(args.cache, n)
    with tempfile.TemporaryDirectory(prefix="rp-bench-audit-") as tmp:
        private, public, _ = keygen(Path(tmp) / "keys")
        archive = Path(tmp) / "archive"
        seal(run, load_private_key(private), archive)
        public_key = load_public_key(public)
        traces = [e.trace for e in read_trace_file(archive / "traces.jsonl").entries]
        assert len(traces) == n

        times: dict[str, list[float]] = {"verify1": [], "verify2": [], "rescore1": [], "rescore2": [],
                                         "halves": []}
        reports = {1: [], 2: []}
        for _ in range(args.repeat):
            for jobs in (1, 2):
                holder = {}
                times[f"verify{jobs}"].append(_timed(lambda: holder.setdefault(
                    "r", verify_archive(archive, public_key, jobs=jobs)), f"verify{jobs}"))
                reports[jobs].append(holder["r"])
                times[f"rescore{jobs}"].append(_timed(lambda: rescore_all(traces, jobs), f"rescore{jobs}"))
            times["halves"].append(_timed(lambda: _halves_in_two_processes(traces), "halves"))
        for jobs in (1, 2):
            report = reports[jobs][-1]
            if report.exit_code != 0:
                print(json.dumps(report.as_dict(), indent=1)[:3000], file=sys.stderr)
                print(f"bench_audit: the benchmark archive did not verify with --jobs {jobs}", file=sys.stderr)
                return 1
        report = reports[1][-1]
        verdicts = {jobs: [(c.name, c.status) for c in reports[jobs][-1].checks] for jobs in (1, 2)}
        if verdicts[1] != verdicts[2]:
            print("bench_audit: --jobs 1 and --jobs 2 disagree", file=sys.stderr)
            return 1

    med = {k: statistics.median(v) for k, v in times.items()}
    verify_s, rescore_s = med["verify1"], med["rescore1"]
    ratio, ratio2 = verify_s / rescore_s, med["verify2"] / med["rescore2"]
    per_s, per_s2 = n / verify_s, n / med["verify2"]
    speedup = verify_s / med["verify2"]
    console = Console(highlight=False)
    table = Table(title=f"audit verify, {n} train traces (baseline policy), median of {args.repeat}, "
                        f"{os.cpu_count()} CPUs visible")
    table.add_column("measure")
    table.add_column("--jobs 1", justify="right")
    table.add_column("--jobs 2", justify="right")
    table.add_row("verify, total", f"{verify_s:.3f} s", f"{med['verify2']:.3f} s")
    table.add_row("rescoring alone", f"{rescore_s:.3f} s", f"{med['rescore2']:.3f} s")
    table.add_row("traces per second (verify)", f"{per_s:.1f}", f"{per_s2:.1f}")
    table.add_row("ms per trace (verify)", f"{1000 * verify_s / n:.2f}", f"{1000 * med['verify2'] / n:.2f}")
    table.add_row("ratio total / rescoring", f"{ratio:.3f}", f"{ratio2:.3f}")
    table.add_row("speedup of verify", "1.00x", f"{speedup:.2f}x (target >= {TARGET_SPEEDUP}x)")
    cpu = {k: statistics.median(v) for k, v in _CPU.items()}
    ceiling = rescore_s / med["halves"]
    table.add_row("ceiling: halves in 2 plain processes", f"{rescore_s:.3f} s (serial)",
                  f"{med['halves']:.3f} s = {ceiling:.2f}x, CPU {cpu['halves'] / cpu['rescore1']:.2f} of serial")
    table.add_row("CPU seconds, all processes (verify)", f"{cpu['verify1']:.3f}", f"{cpu['verify2']:.3f}")
    table.add_row("CPU work of --jobs 2 / --jobs 1", "1.00", f"{cpu['verify2'] / cpu['verify1']:.2f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table.add_row("load average (1 min) at the end", f"{load:.2f}", "")
    console.print(table)
    print("(the speedup needs 2 idle cores; with a load average above the core count other processes take "
          "the second core's time. The ceiling row is the same rescoring split in two plain forked processes: "
          "what this machine gives any 2-process split right now; the CPU work ratios show how much more CPU "
          "the same work costs when two processes run at once, and what the pool adds on top)")
    checks = Table(title="per check (median s)")
    checks.add_column("check")
    checks.add_column("seconds", justify="right")
    for i, c in enumerate(report.checks):
        checks.add_row(c.name, f"{statistics.median(r.checks[i].seconds for r in reports[1]):.4f}")
    console.print(checks)
    ratio_verdict = "ratio target met" if ratio <= TARGET_RATIO else "RATIO TARGET MISSED"
    speed_verdict = "speedup target met" if speedup >= TARGET_SPEEDUP else "SPEEDUP TARGET MISSED"
    print(f"bench_audit: n={n} traces_per_s={per_s:.1f} ratio={ratio:.3f} traces_per_s_jobs1={per_s:.1f} "
          f"traces_per_s_jobs2={per_s2:.1f} "
          f"speedup={speedup:.2f} ratio_jobs1={ratio:.3f} ratio_jobs2={ratio2:.3f} verify_s_jobs1={verify_s:.3f} "
          f"verify_s_jobs2={med['verify2']:.3f} rescore_s_jobs1={rescore_s:.3f} rescore_s_jobs2={med['rescore2']:.3f} "
          f"cpu_work_ratio={cpu['verify2'] / cpu['verify1']:.3f} ceiling_speedup={ceiling:.2f} "
          f"ceiling_cpu_ratio={cpu['halves'] / cpu['rescore1']:.3f} loadavg={load:.2f} "
          f"({ratio_verdict}; {speed_verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
