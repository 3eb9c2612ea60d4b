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

Two rows tell the machine apart from the code. The *ceiling* is the same rescoring
split in two plain forked processes, each with one forked scan worker (no pool, no
pickling, no results sent back): what any 2-process split gets from this machine right
now. *Other load* is the CPU the whole machine spent outside this benchmark's
processes during the timed runs (from /proc/stat), in cores: above ~0.2 the second
core was partly someone else's. ``--clean-pairs K`` repeats until K repeats ran with
less than 0.15 cores of other load during both verifications, and reports the speedup
(and the ratio) over those repeats as well as over all of them.

    uv run python benchmarks/bench_audit.py [--quick] [--repeat N] [--clean-pairs K [--max-repeat M]] [--cache DIR]
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
from redaction_pressure.build.identity import source_digest
from redaction_pressure.scoring import scan_pool

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
    from redaction_pressure.run import run_policy

    run_policy("train", "baseline", n, run)
    return run


_CPU: dict[str, list[float]] = {}


_OTHER: dict[str, list[float]] = {}  # cores used by other processes during each timed run
CLEAN = 0.15  # a run is clean when other processes used less than this many cores meanwhile


def _proc_cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _cpu() -> float:
    """CPU seconds of this process, its finished children (the job workers, which reap
    their scan workers) and the live scan workers of this process's own scan pool."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    pool = scan_pool._pool
    live = sum(_proc_cpu(w.pid) for w in list(pool._idle)) if pool is not None else 0.0
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + live


def _machine_cpu() -> float | None:
    """CPU seconds the whole machine spent (all processes), or None without /proc."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _timed(fn, name: str = "") -> float:
    regenerate.cache_clear()
    machine, cpu, start = _machine_cpu(), _cpu(), time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    used = _cpu() - cpu
    _CPU.setdefault(name, []).append(used)
    other = float("nan") if machine is None else max(0.0, (_machine_cpu() - machine - used) / elapsed)
    _OTHER.setdefault(name, []).append(other)
    return elapsed


def _clean(a: str, b: str) -> list[int]:
    """Repeats in which both timed runs ``a`` and ``b`` had the machine to themselves."""
    pairs = zip(_OTHER.get(a, []), _OTHER.get(b, []), strict=False)
    return [i for i, (x, y) in enumerate(pairs) if x < CLEAN and y < CLEAN]


def _comparable(report) -> bytes:
    """The report as `--json` gives it, but for the number of jobs and the seconds."""
    d = report.as_dict()
    d.pop("jobs")
    for check in d["checks"]:
        check["seconds"] = 0
    return json.dumps(d, sort_keys=True).encode()


def _rescore_half(traces: list) -> None:
    scan_pool.set_pool_size(1, fork=True)  # as a job worker does
    rescore_many(traces)
    scan_pool.shutdown()


def _halves_in_two_processes(traces: list) -> None:
    """The machine's own ceiling: each half rescored by a forked process that already
    holds it (no pool, no pickling, no result transfer). Raises if a child fails."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_rescore_half, args=(traces[i::2],)) for i in (0, 1)]
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
    parser.add_argument("--clean-pairs", type=int, default=0, metavar="K",
                        help="on a shared machine: repeat (up to --max-repeat) until K repeats ran with other "
                             f"processes using < {CLEAN} cores during both verifications")
    parser.add_argument("--max-repeat", type=int, default=30)
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
        # untimed: start this process's scan worker (--jobs 1 scans there) and build the schema
        # validators and compile caches the first verification would otherwise pay for alone
        verify_archive(archive, public_key, jobs=1)
        done = 0
        while done < args.repeat or (len(_clean("verify1", "verify2")) < args.clean_pairs
                                     and done < args.max_repeat):
            done += 1
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
        if len({_comparable(r) for jobs in (1, 2) for r in reports[jobs]}) != 1:
            print("bench_audit: the reports of --jobs 1 and --jobs 2 differ", file=sys.stderr)
            return 1

    med = {k: statistics.median(v) for k, v in times.items()}
    verify_s, rescore_s = med["verify1"], med["rescore1"]
    ratio, ratio2 = verify_s / rescore_s, med["verify2"] / med["rescore2"]
    per_s, per_s2 = n / verify_s, n / med["verify2"]
    speedup = verify_s / med["verify2"]
    paired = statistics.median(a / b for a, b in zip(times["verify1"], times["verify2"], strict=True))
    other = statistics.median(x for v in _OTHER.values() for x in v)
    clean = _clean("verify1", "verify2")
    clean_speedup = statistics.median(times["verify1"][i] / times["verify2"][i] for i in clean) if clean \
        else float("nan")
    clean_r = _clean("verify1", "rescore1")
    clean_ratio = statistics.median(times["verify1"][i] / times["rescore1"][i] for i in clean_r) if clean_r \
        else float("nan")
    console = Console(highlight=False)
    table = Table(title=f"audit verify, {n} train traces (baseline policy), median of {done}, "
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
    table.add_row("  median of the paired runs' speedups", "", f"{paired:.2f}x")
    cpu = {k: statistics.median(v) for k, v in _CPU.items()}
    ceiling = rescore_s / med["halves"]
    table.add_row("ceiling: halves in 2 plain processes", f"{rescore_s:.3f} s (serial)",
                  f"{med['halves']:.3f} s = {ceiling:.2f}x, CPU {cpu['halves'] / cpu['rescore1']:.2f} of serial")
    table.add_row("CPU seconds, all processes (verify)", f"{cpu['verify1']:.3f}", f"{cpu['verify2']:.3f}")
    table.add_row("CPU work of --jobs 2 / --jobs 1", "1.00", f"{cpu['verify2'] / cpu['verify1']:.2f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table.add_row("load average (1 min) at the end", f"{load:.2f}", "")
    table.add_row("other load during the timed runs (cores, median)", f"{other:.2f}", "")
    table.add_row(f"clean repeats (other load < {CLEAN} cores)", f"{len(clean_r)} of {done}",
                  f"{len(clean)} of {done}")
    table.add_row("  over those: ratio total / rescoring; speedup", f"{clean_ratio:.3f}", f"{clean_speedup:.2f}x")
    console.print(table)
    print("(the speedup needs 2 idle cores; 'other load' is the CPU other processes took meanwhile, in cores: "
          "above ~0.2 they had part of the second core, and the clean repeats leave those runs out. The ceiling "
          "row is the same rescoring split in two plain forked processes, each with one forked scan worker: what "
          "this machine gives any 2-process split right now; the CPU work ratios show how much more CPU the same "
          "work costs when two processes run at once, and what the pool adds on top)")
    checks = Table(title="per check (median s)")
    checks.add_column("check")
    checks.add_column("--jobs 1", justify="right")
    checks.add_column("--jobs 2", justify="right")
    for i, c in enumerate(report.checks):
        checks.add_row(c.name, *(f"{statistics.median(r.checks[i].seconds for r in reports[jobs]):.4f}"
                                 for jobs in (1, 2)))
    console.print(checks)
    ratio_verdict = "ratio target met" if ratio <= TARGET_RATIO else "RATIO TARGET MISSED"
    speed_verdict = "speedup target met" if speedup >= TARGET_SPEEDUP else "SPEEDUP TARGET MISSED"
    print(f"bench_audit: n={n} traces_per_s={per_s:.1f} ratio={ratio:.3f} traces_per_s_jobs1={per_s:.1f} "
          f"traces_per_s_jobs2={per_s2:.1f} "
          f"speedup={speedup:.2f} speedup_paired={paired:.2f} ratio_jobs1={ratio:.3f} ratio_jobs2={ratio2:.3f} "
          f"verify_s_jobs1={verify_s:.3f} "
          f"verify_s_jobs2={med['verify2']:.3f} rescore_s_jobs1={rescore_s:.3f} rescore_s_jobs2={med['rescore2']:.3f} "
          f"cpu_work_ratio={cpu['verify2'] / cpu['verify1']:.3f} "
          f"clean_pairs={len(clean)} speedup_clean={clean_speedup:.2f} ratio_clean={clean_ratio:.3f} "
          f"ceiling_speedup={ceiling:.2f} "
          f"ceiling_cpu_ratio={cpu['halves'] / cpu['rescore1']:.3f} loadavg={load:.2f} other_load_cores={other:.2f} "
          f"({ratio_verdict}; {speed_verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
