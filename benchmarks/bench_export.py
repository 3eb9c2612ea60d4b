"""Times `redaction-pressure export --split train -n N` (the README's figure).

    uv run python benchmarks/bench_export.py [-n 10000] [--policy oracle] [--jobs J] [--serial]

Runs the real command (a fresh process, start-up included) with all cores (or
``--jobs J``) and prints its wall time, lines per second, and the CPU time a line
costs, which bounds the figure: building a task, the policy's reply, and scoring it.
``--serial`` also runs it with one worker and checks both outputs are the same bytes.
The machine may be shared, so the load average before and after is printed too.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

ROOT = Path(__file__).resolve().parents[1]


def run(n: int, policy: str, jobs: int, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "redaction_pressure.cli", "export", "--split", "train", "-n", str(n),
                    "--policy", policy, "--jobs", str(jobs), "--out", str(out)], cwd=ROOT, check=True,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=10000)
    p.add_argument("--policy", default="oracle", choices=("oracle", "induce"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="the parallel run's workers")
    p.add_argument("--serial", action="store_true", help="also run with --jobs 1 and compare the bytes")
    args = p.parse_args(argv)
    print(f"export --split train -n {args.n} --policy {args.policy} on {machine()}; "
          f"load average {os.getloadavg()[0]:.2f} before")
    digests = []
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in sorted({1, args.jobs} if args.serial else {args.jobs}):
            out = Path(tmp) / f"jobs{jobs}.jsonl"
            wall, cpu = run(args.n, args.policy, jobs, out)
            size = out.stat().st_size
            digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
            print(f"--jobs {jobs}: {wall:.1f} s wall, {args.n / wall:.0f} lines/s, {cpu / args.n * 1e3:.1f} ms CPU "
                  f"per line, {size / 1e6:.1f} MB")
    same = len(set(digests)) == 1
    if args.serial:
        print(f"same bytes with every --jobs: {'yes' if same else 'NO'} (sha256 {digests[0][:16]})")
    print(f"load average {os.getloadavg()[0]:.2f} after")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
