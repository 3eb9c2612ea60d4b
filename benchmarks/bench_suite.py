"""How long the README's test command takes, and its slowest modules.

    uv run python benchmarks/bench_suite.py [--top N]

Runs `python -m unittest discover -s tests -t .` once, as the README and .ci/run do, in
one process with a result class that times each test module (from the end of the test
before it, so its setUpModule and setUpClass count, to its last test's end), then prints the whole suite's wall time,
the test count and outcome, the machine and its load, and the N slowest modules.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import unittest
from collections import defaultdict
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine

ROOT = Path(__file__).resolve().parents[1]


class _Timed(unittest.TextTestResult):
    """Wall time per module: from the end of the test before its first (so its
    setUpModule and setUpClass count) to the end of its last test."""

    spans: ClassVar[dict[str, list[float]]] = defaultdict(list)
    last: ClassVar[list[float]] = []  # when the previous test ended (or the suite started)

    def startTest(self, test: unittest.TestCase) -> None:
        span = self.spans[type(test).__module__]
        if not span:
            span.append(self.last[-1] if self.last else time.perf_counter())
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        span = self.spans[type(test).__module__]
        del span[1:]
        span.append(time.perf_counter())
        self.last[:] = [span[-1]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=8, help="slowest modules to list (default: 8)")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    start = time.perf_counter()
    _Timed.last[:] = [start]
    suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".")
    with open(os.devnull, "w") as quiet:
        result = unittest.TextTestRunner(stream=quiet, resultclass=_Timed, verbosity=0).run(suite)
    wall = time.perf_counter() - start
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    outcome = "OK" if result.wasSuccessful() else (f"FAILED (failures={len(result.failures)}, "
                                                   f"errors={len(result.errors)})")
    print(f"test suite on {machine()}: {result.testsRun} tests, {outcome}, skipped {len(result.skipped)}, "
          f"{wall:.0f} s wall (load average {load:.2f} before, {after:.2f} after)")
    spans = sorted(((v[-1] - v[0], k) for k, v in _Timed.spans.items() if len(v) == 2), reverse=True)
    for seconds, module in spans[:args.top]:
        print(f"  {seconds:6.1f} s  {module}")
    for test, trace in result.failures + result.errors:
        print(f"FAIL {test}: {trace.strip().splitlines()[-1]}")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    raise SystemExit(main())
