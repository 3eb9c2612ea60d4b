"""Median task-build time at each level, optionally against another source tree.

    uv run python benchmarks/bench_build.py [--tasks 64] [--levels 1,2,3,4,5] [--rounds 3] [--against DIR] [--cpu]

Each round builds, in a fresh process per tree, dev tasks 0..N-1 at each level (after
16 train builds of that level warm the process, as bench_levels does) and takes the
median build time. With ``--against DIR`` (another checkout, say the commit before a
change) the two trees take turns, round by round, so a shared machine's changing load
hits both alike; the figure per tree and level is the median over rounds, and the
ratio is ours over theirs. DIR is only read (bytecode is not written there).
``--cpu`` times each build by the process's CPU time instead of the wall clock: on a
shared machine whose other tenants take cores away, the wall clock counts their share
too (one tree's level-5 rounds measured 20 to 35 ms wall within minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

ROOT = Path(__file__).resolve().parents[1]


def child(levels: list[int], n_tasks: int, cpu: bool = False) -> dict[int, float]:
    """Median build ms per level, in this process (the tree first on sys.path)."""
    from redaction_pressure import load_task

    clock = time.process_time if cpu else time.perf_counter
    out = {}
    for level in levels:
        for i in range(16):
            load_task("train", i, level=level)
        times = []
        for i in range(n_tasks):
            start = clock()
            load_task("dev", i, level=level)
            times.append(clock() - start)
        out[level] = 1000 * statistics.median(times)
    return out


def run_tree(root: Path, levels: list[int], n_tasks: int, cpu: bool = False) -> dict[int, float]:
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2]); "
            "import redaction_pressure, bench_build; "
            "assert redaction_pressure.__file__.startswith(sys.argv[1]), redaction_pressure.__file__; "
            "print(json.dumps(bench_build.child(json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '1')))")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", code, str(root), str(Path(__file__).resolve().parent),
                           json.dumps(levels), str(n_tasks), "1" if cpu else "0"],
                          env=env, check=True, capture_output=True, text=True)
    return {int(k): v for k, v in json.loads(done.stdout).items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64, help="dev tasks per level (default 64)")
    ap.add_argument("--levels", default="1,2,3,4,5")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--against", type=Path, help="another source tree, timed in turn with this one")
    ap.add_argument("--cpu", action="store_true", help="time builds by CPU time, not the wall clock")
    args = ap.parse_args(argv)
    levels = sorted({int(x) for x in args.levels.split(",")})
    trees = {"this tree": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    runs: dict[str, list[dict[int, float]]] = {name: [] for name in trees}
    print(f"bench_build on {machine()}: {args.tasks} dev tasks per level, {args.rounds} rounds, "
          f"{'CPU time' if args.cpu else 'wall clock'}; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    for r in range(args.rounds):
        order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
        for name, root in order:
            runs[name].append(run_tree(root, levels, args.tasks, args.cpu))
            print(f"  round {r + 1} {name}: " + ", ".join(f"L{lv} {runs[name][-1][lv]:.1f}" for lv in levels),
                  flush=True)
    print("median build ms (median over rounds)")
    print("| level | " + " | ".join(trees) + (" | ratio |" if args.against else " |"))
    for lv in levels:
        med = {name: statistics.median(run[lv] for run in runs[name]) for name in trees}
        cells = " | ".join(f"{med[name]:.1f}" for name in trees)
        ratio = f" | {med['this tree'] / med['against']:.2f} |" if args.against else " |"
        print(f"| {lv} | {cells}{ratio}")
    print(f"load average {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
