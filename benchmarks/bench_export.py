"""Times `redaction-pressure export --split train -n N` (the README's figure).

    uv run python benchmarks/bench_export.py [-n 10000] [--policy oracle] [--jobs J] [--serial]
                                             [--against TREE [--rounds R]]

Runs the real command (a fresh process, start-up included) with all cores (or
``--jobs J``) and prints its wall time, lines per second, and the CPU time a line
costs, which bounds the figure: building a task, the policy's reply, and scoring it.
``--serial`` also runs it with one worker and checks both outputs are the same bytes.
Then, in this process, where a line's CPU time goes over 200 train tasks: building the
task (and the part of that spent checking every record against the stream's oracle),
the reply, and scoring it; and the floor that sets on N lines with J idle cores.
The machine may be shared, so the load average before and after is printed too.

``--against TREE`` (another checkout, e.g. the unmodified tree) times the command in
this tree and in TREE alternately, ``--rounds R`` times each (the order reversed every
other round), and prints each run, the medians and whether every run wrote the same
bytes: on a shared machine only runs this close together compare (the CPU time of one
line of the same code measured 9.4 and 12-13 ms on this VM 30 minutes apart).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

ROOT = Path(__file__).resolve().parents[1]


def run(n: int, policy: str, jobs: int, out: Path, root: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children), the command run in
    ``root``'s tree (``python -m`` puts the current directory first on the path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "redaction_pressure.cli", "export", "--split", "train", "-n", str(n),
                    "--policy", policy, "--jobs", str(jobs), "--out", str(out)], cwd=root, check=True,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def breakdown(policy: str, n: int = 200) -> float:
    """Prints where a line's CPU time goes, as an export worker spends it (the
    stream's oracle patterns compiled once for the build's check and the scan);
    returns the CPU seconds of one line."""
    import redaction_pressure.corpus.stream as stream
    from redaction_pressure import load_task, policies
    from redaction_pressure.scoring.pattern_guard import share_trusted_compiles
    from redaction_pressure.scoring.score import score_trusted

    check = [0.0]
    agrees = stream._oracle_agrees

    def timed(*args):  # type: ignore[no-untyped-def]
        start = time.process_time()
        try:
            return agrees(*args)
        finally:
            check[0] += time.process_time() - start

    share_trusted_compiles()
    load_task("train", 0)
    stream._oracle_agrees = timed
    build = reply = score = 0.0
    try:
        for i in range(1, n + 1):
            start = time.process_time()
            task = load_task("train", i)
            middle = time.process_time()
            answer = policies.POLICIES[policy](task)
            end = time.process_time()
            score_trusted(task, answer)
            build, reply, score = build + middle - start, reply + end - middle, score + time.process_time() - end
    finally:
        stream._oracle_agrees = agrees
    per = (build + reply + score) / n
    print(f"CPU per line over train 1..{n}: build {build / n * 1e3:.1f} ms (of which the oracle check of every "
          f"record {check[0] / n * 1e3:.1f} ms), {policy} reply {reply / n * 1e3:.1f} ms, scoring "
          f"{score / n * 1e3:.1f} ms; {per * 1e3:.1f} ms in all")
    return per


def against(n: int, policy: str, jobs: int, other: Path, rounds: int) -> bool:
    """Times the command in this tree and in ``other`` alternately; prints the medians;
    returns whether every run wrote the same bytes."""
    trees = {"this": ROOT, "other": other}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    digests = set()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name in sorted(trees, reverse=r % 2 == 1):
                out = Path(tmp) / f"{name}.jsonl"
                load = os.getloadavg()[0]
                wall, cpu = run(n, policy, jobs, out, trees[name])
                digest = hashlib.sha256(out.read_bytes()).hexdigest()
                digests.add(digest)
                runs[name].append((wall, cpu / n))
                print(f"round {r + 1} {name} ({trees[name]}): {wall:.1f} s wall, {cpu / n * 1e3:.2f} ms CPU per line, "
                      f"load average {load:.2f} before, sha256 {digest[:16]}")
    for name in trees:
        print(f"{name}: median of {rounds} {statistics.median(w for w, _ in runs[name]):.1f} s wall, "
              f"{statistics.median(c for _, c in runs[name]) * 1e3:.2f} ms CPU per line")
    print(f"same bytes in every run: {'yes' if len(digests) == 1 else 'NO'}")
    return len(digests) == 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=10000)
    p.add_argument("--policy", default="oracle", choices=("oracle", "induce"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="the parallel run's workers")
    p.add_argument("--serial", action="store_true", help="also run with --jobs 1 and compare the bytes")
    p.add_argument("--skip-run", action="store_true", help="print only the in-process breakdown")
    p.add_argument("--against", type=Path, metavar="TREE",
                   help="another checkout to time alternately with this one (then nothing else runs)")
    p.add_argument("--rounds", type=int, default=3, help="with --against: runs of each tree (default: 3)")
    args = p.parse_args(argv)
    if args.against is not None:
        print(f"export --split train -n {args.n} --policy {args.policy} --jobs {args.jobs} on {machine()}, "
              f"this tree against {args.against.resolve()}")
        same = against(args.n, args.policy, args.jobs, args.against.resolve(), args.rounds)
        print(f"load average {os.getloadavg()[0]:.2f} after")
        return 0 if same else 1
    print(f"export --split train -n {args.n} --policy {args.policy} on {machine()}; "
          f"load average {os.getloadavg()[0]:.2f} before")
    digests = []
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in [] if args.skip_run else sorted({1, args.jobs} if args.serial else {args.jobs}):
            out = Path(tmp) / f"jobs{jobs}.jsonl"
            wall, cpu = run(args.n, args.policy, jobs, out)
            size = out.stat().st_size
            digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
            print(f"--jobs {jobs}: {wall:.1f} s wall, {args.n / wall:.0f} lines/s, {cpu / args.n * 1e3:.1f} ms CPU "
                  f"per line, {size / 1e6:.1f} MB")
    per = breakdown(args.policy)
    print(f"floor for {args.n} lines on {args.jobs} idle cores at that rate: {per * args.n / args.jobs:.0f} s")
    same = len(set(digests)) <= 1
    if args.serial and digests:
        print(f"same bytes with every --jobs: {'yes' if same else 'NO'} (sha256 {digests[0][:16]})")
    print(f"load average {os.getloadavg()[0]:.2f} after")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
