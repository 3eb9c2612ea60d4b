"""Shared bits of the benchmark scripts: timing helpers and the machine line."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def median_time(fn: Callable[[], object], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table(rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) for r in rows)
