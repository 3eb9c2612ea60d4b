"""The test command: the unittest suite, its modules dealt to parallel shards.

    uv run python -m tests.run [-j N] [--record]

Each shard is a plain ``python -m unittest`` child process, so every test runs
exactly as under ``python -m unittest discover -s tests -t .`` (which still works, in
one process). Why not unittest-parallel: its workers are a multiprocessing pool's
daemonic processes, and a daemonic process may not start children, which the audit's
parallel verification and the level tests do. Modules go to the least-loaded shard,
heaviest first, by their last measured duration (``tests/durations.json``; ``--record``
rewrites it from this run). The exit status is 1 if any shard fails; every shard's
full output is printed, one after another, then the slowest modules.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "tests" / "durations.json"
DEFAULT_SECONDS = 3.0


def modules() -> list[str]:
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "tests").rglob("test_*.py"))


def deal(names: list[str], durations: dict[str, float], shards: int) -> list[list[str]]:
    load = [0.0] * shards
    out: list[list[str]] = [[] for _ in range(shards)]
    for name in sorted(names, key=lambda n: (-durations.get(n, DEFAULT_SECONDS), n)):
        i = load.index(min(load))
        out[i].append(name)
        load[i] += durations.get(name, DEFAULT_SECONDS)
    return out


class _Timed(unittest.TextTestResult):
    """Wall time per module: from the end of the test before its first (so its
    setUpModule and setUpClass count) to the end of its last test."""
    spans: ClassVar[dict[str, list[float]]] = {}
    last: ClassVar[list[float]] = []  # when the previous test ended (or the shard started)

    def startTest(self, test: unittest.TestCase) -> None:
        span = self.spans.setdefault(type(test).__module__, [])
        if not span:
            span.append(self.last[-1] if self.last else time.perf_counter())
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        span = self.spans[type(test).__module__]
        del span[1:]
        span.append(time.perf_counter())
        self.last[:] = [span[-1]]


def child(names: list[str], timings: str) -> int:
    """One shard: the named modules in this process, verbose, like ``unittest -v``."""
    suite = unittest.TestSuite()
    imported: dict[str, float] = {}  # a module's import (its module-level tasks) counts as its time
    for name in names:
        start = time.perf_counter()
        suite.addTests(unittest.defaultTestLoader.loadTestsFromName(name))
        imported[name] = time.perf_counter() - start
    _Timed.last[:] = [time.perf_counter()]
    result = unittest.TextTestRunner(verbosity=2, resultclass=_Timed).run(suite)
    seconds = {m: span[-1] - span[0] + imported.get(m, 0.0) for m, span in _Timed.spans.items() if len(span) == 2}
    Path(timings).write_text(json.dumps(seconds), encoding="utf-8")
    return 0 if result.wasSuccessful() else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    ap.add_argument("-j", "--jobs", type=int, default=max(1, min(cpus, 2)), help="shards (default: min(CPUs, 2))")
    ap.add_argument("--record", action="store_true", help="rewrite tests/durations.json from this run")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--timings", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.timings)
    durations = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.exists() else {}
    shards = [s for s in deal(modules(), durations, max(1, args.jobs)) if s]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rp-tests-") as tmp:
        procs = []
        for i, names in enumerate(shards):
            log = open(Path(tmp) / f"shard-{i}.log", "w+b")  # noqa: SIM115 - closed below
            timings = str(Path(tmp) / f"shard-{i}.json")
            proc = subprocess.Popen([sys.executable, "-m", "tests.run", "--timings", timings, "--child", *names],
                                    cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            procs.append((proc, log, timings, names))
        measured: dict[str, float] = {}
        failed = []
        for i, (proc, log, timings, names) in enumerate(procs):
            code = proc.wait()
            log.seek(0)
            sys.stdout.write(f"===== shard {i + 1} of {len(procs)}: {len(names)} modules, exit {code} =====\n")
            sys.stdout.write(log.read().decode("utf-8", "replace"))
            log.close()
            if code:
                failed.append(i + 1)
            if Path(timings).exists():
                measured.update(json.loads(Path(timings).read_text(encoding="utf-8")))
    wall = time.perf_counter() - started
    slowest = sorted(measured.items(), key=lambda x: -x[1])[:8]
    print(f"===== {len(procs)} shards in {wall:.0f} s; slowest modules: "
          + ", ".join(f"{m.rsplit('.', 1)[-1]} {s:.0f} s" for m, s in slowest))
    if args.record and not failed:
        DURATIONS.write_text(json.dumps({k: round(v, 1) for k, v in sorted(measured.items())}, indent=1) + "\n",
                             encoding="utf-8")
    if failed:
        print(f"FAILED: shard(s) {', '.join(map(str, failed))}")
        return 1
    print("OK: every shard passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
