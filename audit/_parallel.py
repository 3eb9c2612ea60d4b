"""Parallel rescoring for `audit verify --jobs N`.

Rescoring is pure CPU work on plain data (a trace in, a list of problems out), so it
runs in N worker processes. The verdict cannot depend on N: traces are cut into
chunks in file order, each chunk is rescored by the same ``rescore_many`` the serial
path uses, and the results are put back in chunk order. Memory is bounded by N: at
most ``2 * N`` chunks are in flight (submitted and not yet collected), so the pickled
copies in the pipes and the workers' caches stay at a few chunks per worker, whatever
the archive's size. ``jobs == 1`` runs in this process, without a pool.

A worker that dies (killed, out of memory) breaks the pool; that is reported as a
failure of the rescoring check by the caller, never as a pass.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from ._rescore import Rescored, rescore_many

CHUNK = 16


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _context():
    # fork shares the parent's imported scoring core (no re-import per worker); where
    # fork is unavailable or unsafe (macOS, Windows) the platform default is used.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and os.name == "posix"
                                       and not _is_macos() else None)


def _is_macos() -> bool:
    return os.uname().sysname == "Darwin" if hasattr(os, "uname") else False


def rescore_all(traces: list, jobs: int, chunk: int = CHUNK) -> list[Rescored]:
    """``rescore_many(traces)``, computed with ``jobs`` processes."""
    if jobs <= 1 or len(traces) <= chunk:
        return rescore_many(traces)
    chunks = [traces[i:i + chunk] for i in range(0, len(traces), chunk)]
    results: list[list[Rescored] | None] = [None] * len(chunks)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        pending: dict = {}
        next_chunk = 0
        while next_chunk < len(chunks) or pending:
            while next_chunk < len(chunks) and len(pending) < 2 * jobs:
                pending[pool.submit(rescore_many, chunks[next_chunk])] = next_chunk
                next_chunk += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                results[pending.pop(future)] = future.result()
    return [r for part in results for r in part]
