"""Tasks the test modules share: one build per (split, index, level) per process.

A shard of the test command runs many modules in one process, and most of them read
the same dev tasks and train ranges; building each once keeps the suite's CPU for the
checks. Tasks are frozen, so sharing them cannot leak one test's changes into another.
"""

from __future__ import annotations

from functools import lru_cache

from redaction_pressure import load_task
from redaction_pressure.task.tasks import RedactionTask


@lru_cache(maxsize=4096)
def task(split: str, index: int, level: int = 1) -> RedactionTask:
    return load_task(split, index, level=level)


def dev(count: int = 64, level: int = 1) -> list[RedactionTask]:
    return [task("dev", i, level) for i in range(count)]
