"""Benchmark of `audit verify` on an archive of train traces.

Builds (or reuses, while the installed build is unchanged) a baseline-policy run of
512 train traces (128 with --quick), seals it with a throwaway key, then times, three
times each, the whole in-process verification and the rescoring alone (regenerating
every task from its revealed seed and rescoring the recorded reply: the part no
verifier can skip). Reports traces per second and the ratio total / rescoring: the
target is <= 1.5, i.e. every other check together costs at most half as much as
rescoring. Caches of regenerated tasks are cleared before every timed run.

    uv run python benchmarks/bench_audit.py [--quick] [--repeat N] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from audit._keys import keygen, load_private_key, load_public_key
from audit._rescore import regenerate, rescore
from audit._seal import seal
from audit._tracefile import read_trace_file
from audit._verify import verify_archive
from redaction_pressure._identity import source_digest

TARGET_RATIO = 1.5


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


def _timed(fn) -> float:
    regenerate.cache_clear()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


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

        verify_times, rescore_times, reports = [], [], []
        for _ in range(args.repeat):
            holder = {}
            verify_times.append(_timed(lambda: holder.setdefault("r", verify_archive(archive, public_key))))
            reports.append(holder["r"])
            rescore_times.append(_timed(lambda: [rescore(t) for t in traces]))
        report = reports[-1]
        if report.exit_code != 0:
            print(json.dumps(report.as_dict(), indent=1)[:3000], file=sys.stderr)
            print("bench_audit: the benchmark archive did not verify", file=sys.stderr)
            return 1

    verify_s, rescore_s = statistics.median(verify_times), statistics.median(rescore_times)
    ratio = verify_s / rescore_s
    per_s = n / verify_s
    console = Console(highlight=False)
    table = Table(title=f"audit verify, {n} train traces (baseline policy), median of {args.repeat}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("verify, total", f"{verify_s:.3f} s")
    table.add_row("rescoring alone", f"{rescore_s:.3f} s")
    table.add_row("traces per second (verify)", f"{per_s:.1f}")
    table.add_row("ms per trace (verify)", f"{1000 * verify_s / n:.2f}")
    table.add_row("ratio total / rescoring", f"{ratio:.3f} (target <= {TARGET_RATIO})")
    console.print(table)
    checks = Table(title="per check (median s)")
    checks.add_column("check")
    checks.add_column("seconds", justify="right")
    for i, c in enumerate(report.checks):
        checks.add_row(c.name, f"{statistics.median(r.checks[i].seconds for r in reports):.4f}")
    console.print(checks)
    verdict = "target met" if ratio <= TARGET_RATIO else "TARGET MISSED"
    print(f"bench_audit: traces_per_s={per_s:.1f} ratio={ratio:.3f} n={n} verify_s={verify_s:.3f} "
          f"rescore_s={rescore_s:.3f} ({verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
