"""Parallel work for `audit verify --jobs N`: rescoring and the trace schemas.

Both are pure CPU work on plain data (a trace or an Episode in, a list of problems
out), so they run in N worker processes. The verdict cannot depend on N: traces are cut into
chunks in file order, each chunk goes through the same function the serial path uses
(``rescore_many``, ``episode_errors``), and the results are put back in chunk order. Memory is bounded by N: at
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


def chunk_size(n: int, jobs: int) -> int:
    """About 8 chunks per worker (so the last ones balance the load), each of 4 to 64
    items (fewer items pay more in pipes and pickling; more hold more memory)."""
    return max(4, min(64, -(-n // (8 * jobs))))


def map_chunks(fn, items: list, jobs: int) -> list:
    """``fn(items)`` (a list, one result per item), computed on chunks of ``items`` in
    ``jobs`` processes and put back in order. ``fn`` must be a module-level function."""
    chunk = chunk_size(len(items), jobs)
    if jobs <= 1 or len(items) <= chunk:
        return fn(items)
    chunks = [items[i:i + chunk] for i in range(0, len(items), chunk)]
    results: list[list | None] = [None] * len(chunks)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        pending: dict = {}
        next_chunk = 0
        while next_chunk < len(chunks) or pending:
            while next_chunk < len(chunks) and len(pending) < 2 * jobs:
                pending[pool.submit(fn, chunks[next_chunk])] = next_chunk
                next_chunk += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                results[pending.pop(future)] = future.result()
    return [r for part in results for r in part]


def rescore_all(traces: list, jobs: int) -> list[Rescored]:
    """``rescore_many(traces)``, computed with ``jobs`` processes."""
    return map_chunks(rescore_many, traces, jobs)
