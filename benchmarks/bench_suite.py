"""How long the README's test command takes, and its slowest modules.

    uv run python benchmarks/bench_suite.py [--jobs N]

Runs the README's test command, `python -m tests.run` (the suite's modules dealt to
parallel unittest shards), once, and prints its wall time, the test count and outcome
of each shard, the machine and its load before and after, and the slowest modules (each
from the end of the test before its first to the end of its last, in its shard).
`--jobs 1` runs every module in one shard, as `python -m unittest discover` would.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=0, help="shards (default: the test command's own default)")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "tests.run"] + (["--jobs", str(args.jobs)] if args.jobs else [])
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out = run.stdout + run.stderr
    ran = [int(n) for n in re.findall(r"^Ran (\d+) tests? in", out, re.M)]
    shards = re.findall(r"^===== shard .*$", out, re.M)
    print(f"test suite on {machine()}: {sum(ran)} tests in {len(shards)} shard(s), "
          f"{'OK' if run.returncode == 0 else 'FAILED'}, {wall:.0f} s wall "
          f"(load average {load:.2f} before, {after:.2f} after)")
    for line in shards + re.findall(r"^===== \d+ shards in .*$", out, re.M):
        print(f"  {line.strip('= ')}")
    for line in re.findall(r"^(?:FAIL|ERROR): .*$", out, re.M):
        print(f"  {line}")
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
