"""Times `rescore` and `compare` of runs no key verified, serial and over every core.

    uv run python benchmarks/bench_rescore.py [-n 400] [--rounds 3] [--cache DIR]

Both commands rebuild every task of a run and rescore its recorded reply; --jobs
spreads that over forked workers (`rescore.rescore_in_parallel`). Builds (or reuses in
--cache while the installed build is unchanged) two train runs of -n tasks, baseline
and induce, then runs `rescore A` and `compare A B` as fresh processes with --jobs 1
and with all cores, alternately, --rounds times each (the order reversed every other
round: on a shared machine only runs this close together compare), and prints each
run's wall time, the medians and the serial/parallel ratio, and whether every run
printed the same output.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine

from redaction_pressure.build.identity import source_digest
from redaction_pressure.scoring.scan_pool import available_cpus


def _run(cache: Path, policy: str, n: int) -> Path:
    run = cache / f"train-{policy}-{n}"
    stamp = run / "built-by"
    if stamp.is_file() and stamp.read_text() == source_digest():
        return run
    subprocess.run([sys.executable, "-m", "redaction_pressure.cli", "eval", "--split", "train", "-n", str(n),
                    "--policy", policy, "--out", str(run), "--force"], check=True, stdout=subprocess.DEVNULL)
    stamp.write_text(source_digest())
    return run


def _timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "redaction_pressure.cli", *argv], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return wall, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rp-bench-rescore")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    a, b = _run(args.cache, "baseline", args.n), _run(args.cache, "induce", args.n)
    cores = available_cpus()
    print(f"rescore and compare of {args.n}-trace train runs on {machine()}; load average "
          f"{os.getloadavg()[0]:.2f} before")
    commands = {"rescore A": ["rescore", str(a)], "compare A B": ["compare", str(a), str(b)]}
    for name, argv in commands.items():
        times: dict[int, list[float]] = {1: [], cores: []}
        outputs = set()
        for r in range(args.rounds):
            for jobs in ((1, cores) if r % 2 == 0 else (cores, 1)):
                wall, out = _timed([*argv, "--jobs", str(jobs)])
                times[jobs].append(wall)
                outputs.add(out)
        serial, parallel = statistics.median(times[1]), statistics.median(times[cores])
        print(f"{name}: --jobs 1 {', '.join(f'{t:.1f}' for t in times[1])} s (median {serial:.1f}); --jobs {cores} "
              f"{', '.join(f'{t:.1f}' for t in times[cores])} s (median {parallel:.1f}); {serial / parallel:.2f}x; "
              f"{'the same output every run' if len(outputs) == 1 else 'OUTPUTS DIFFER'}")
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
