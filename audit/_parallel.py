"""Parallel work for `audit verify --jobs N`: parsing the traces with their schemas,
and rescoring.

All of it is pure CPU work on plain data (a piece of the traces file, or a trace, in;
its parse or its problems out), so it runs in N worker processes (`Workers`), started
once per verification, right after the manifest is authenticated: the workers fork,
and each starts its one scan worker, while this process reads and hashes the traces
file. The verdict cannot depend on N: items are cut into chunks, each chunk goes
through the same function the serial path uses (``parse_pieces`` with
``episode_errors``, ``rescore_many``), which computes each item's result from that item
alone, and every result is put back at its item's place.

Where the time goes (512 train traces, ~12.5 ms each on one core): regenerating the
task from its seed (~9-11 ms) and the scan (~3 ms, in a scan worker process). So:

* **No oversubscription.** Each worker scores from one thread and so needs one scan
  worker; its scan pool is sized to 1 (`contract.configure_scan_pool`), not to the CPU
  count, so N jobs run at most N scans: with a job and its scan worker taking turns,
  N jobs keep N CPUs busy.
* **No re-imports.** The workers fork from this process, which has imported the
  scoring core; each forks its scan worker from itself (`set_pool_size(1, fork=True)`)
  at start-up (`contract.prestart_scan_pool`): milliseconds, where a fresh interpreter importing
  the scoring core costs ~0.3 s of CPU per worker. Where workers cannot fork (macOS,
  Windows) scan workers are fresh interpreters, started at once so that they start
  while this process reads the traces.
* **Chunks.** Guided sizes: about ``remaining / (4 N)`` items, at least ``min_chunk``
  and at most ``max_chunk`` (64): large chunks first (few round trips), small ones at
  the end so no worker idles while another finishes a large last chunk. Rescoring
  keeps the rollouts of one task in one chunk (``key``), so each task is regenerated
  once, in one worker, however the file orders its rollouts.
* **Serial parts in parallel.** Parsing the file (strict JSON, the canonical JSON and
  SHA-256 of every trace) and the Episode schemas run in the workers, on ~1 MiB
  pieces of whole lines, in one pass: the pieces are sent as bytes (cheap to pickle)
  and each Episode is pickled once, back to this process, which keeps only the
  authenticated-data checks that take milliseconds.
* **Memory bounded by N.** At most ``2 * N`` chunks are in flight (submitted and not
  yet collected; a chunk's input is materialised only when it is sent), so the pickled
  copies in the pipes and the workers' caches stay at a few chunks per worker,
  whatever the archive's size. The workers fork before the traces are read, so they
  hold none of them beyond their chunks.

``jobs == 1`` runs in this process, without a pool. A worker that dies (killed, out of
memory) breaks the pool; that is reported as a failure of the check that used it,
never as a pass.

**Nothing from the current directory.** Workers are forked, never spawned: a spawned
child starts as ``python -c`` with the current directory first on its path, where a
``redaction_pressure/`` or ``multiprocessing/`` beside an archive would run. Where a
process cannot fork safely (`contract.fork_context` is None: macOS, Windows) the work
runs serially here, with the same report. A worker keeps only the minimal environment
of a fresh process (`contract.scrub_environment`: no private secret; the seeds are
checked here), and charges its scans to the verification's one allowance
(`contract.Allowance`, whose CPU figure the workers share).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.util
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from redaction_pressure import contract

from ._rescore import Rescored, rescore_many, task_key, use_allowance

GUIDE = 4        # a chunk is about remaining / (GUIDE * jobs) items
MAX_CHUNK = 64   # fewer items pay more in round trips; more hold more memory per chunk
R = TypeVar("R")


def _same(item: Any) -> Any:
    return item


def default_jobs() -> int:
    """All CPUs this process may use: its affinity mask, capped by a cgroup v2 quota
    (`contract.available_cpus`, as the scan pools count them), so the default never
    runs more jobs than the CPUs it is given."""
    return contract.available_cpus()


def effective_jobs(jobs: int) -> int:
    """The workers ``--jobs N`` gets: at most one per CPU this process may use (more only
    wait for one, and the verdict does not depend on the number; a typo's --jobs 100000
    forked that many processes: review of 2026-12-04), and one where workers cannot be
    forked."""
    return min(max(1, jobs), default_jobs()) if _context() is not None else 1


def _context() -> BaseContext | None:
    """fork, which shares the parent's imported scoring core (no re-import per worker)
    and never puts the current directory on a path; None where it is not safe."""
    return contract.fork_context()


def _init_worker(allowance: contract.Allowance | None) -> None:
    """Once in each (forked) worker: the minimal environment, the verification's
    allowance, and one scan worker (this process scores from one thread) forked from
    this worker, which holds the imported scoring core, and started now. A failure to
    start is not fatal here: the first scan tries again and reports it as that trace's
    failure."""
    contract.scrub_environment()
    use_allowance(allowance)
    contract.configure_scan_pool(1, fork=True)
    # a pool worker leaves through multiprocessing's exit handlers, not atexit: stop and
    # reap the scan worker there (it would also exit on its own when its pipe closes)
    multiprocessing.util.Finalize(None, contract.stop_scan_pool, exitpriority=10)
    with contextlib.suppress(Exception):  # reported by the scan that needs the worker
        contract.prestart_scan_pool()


def _pid() -> int:
    return os.getpid()


def plan_chunks(n: int, jobs: int, min_chunk: int = 4, max_chunk: int = MAX_CHUNK,
                groups: list[list[int]] | None = None) -> list[list[int]]:
    """Item indices cut into chunks of guided size (see the module docstring). ``groups``
    (a partition of ``range(n)``) are kept whole in one chunk unless larger than
    ``max_chunk``; without it, items are chunked in order."""
    if groups is None:
        groups = [[i] for i in range(n)]
    chunks: list[list[int]] = []
    current: list[int] = []
    remaining = n
    target = 0
    for group in groups:
        for start in range(0, len(group), max_chunk):
            part = group[start:start + max_chunk]
            if not current:
                target = max(min_chunk, min(max_chunk, -(-remaining // (GUIDE * jobs))))
            elif len(current) + len(part) > max_chunk:
                chunks.append(current)
                remaining -= len(current)
                current = []
                target = max(min_chunk, min(max_chunk, -(-remaining // (GUIDE * jobs))))
            current += part
            if len(current) >= target:
                chunks.append(current)
                remaining -= len(current)
                current = []
    if current:
        chunks.append(current)
    return chunks


def group_by(items: Sequence[Any], key: Callable[[Any], Any]) -> list[list[int]]:
    """Indices of ``items`` grouped by ``key(item)``, groups in order of first
    appearance, indices in order within a group. An item whose key cannot be computed
    is a group of its own."""
    groups: dict[tuple[str, Any], list[int]] = {}
    for i, item in enumerate(items):
        try:
            k: tuple[str, Any] = ("key", key(item))
            hash(k)
        except Exception:  # noqa: BLE001 - such an item is rescored (and reported) on its own
            k = ("item", i)
        groups.setdefault(k, []).append(i)
    return list(groups.values())


class Workers:
    """``jobs`` worker processes for one verification (none when ``jobs == 1``, or where
    workers cannot be forked). Use as a context manager, or call `start` and `close`.
    ``allowance``: what each worker's rescoring may spend (shared, so create it with
    ``shared=True`` before the workers start)."""

    def __init__(self, jobs: int, allowance: contract.Allowance | None = None) -> None:
        self.jobs = effective_jobs(jobs)
        self.allowance = allowance
        self._pool: ProcessPoolExecutor | None = None

    @property
    def parallel(self) -> bool:
        """Whether work goes to worker processes (``jobs > 1``)."""
        return self.jobs > 1

    def start(self) -> Workers:
        """Forks the workers now (each then starts its scan worker), not at the first map."""
        context = _context()
        if self.jobs > 1 and self._pool is None and context is not None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context, initializer=_init_worker,
                                             initargs=(self.allowance,))
            self._pool.submit(_pid)  # the first submission forks every worker
        return self

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Workers:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, fn: Callable[[list[Any]], list[R]], items: Sequence[Any], prepare: Callable[[Any], Any] | None = None,
            key: Callable[[Any], Any] | None = None, min_chunk: int = 4, max_chunk: int = MAX_CHUNK) -> list[R]:
        """``fn(items)`` (a list, one result per item, each a function of its item alone),
        computed on chunks of ``items`` in the workers and put back in order. ``fn`` must
        be a module-level function. ``prepare``: what ``fn`` gets for an item, computed
        here when its chunk is sent (so only chunks in flight are materialised).
        ``key``: items with equal keys go to one chunk, in order (so a cache in ``fn``
        sees them together)."""
        groups = group_by(items, key) if key is not None else None
        if self._pool is None and self.jobs > 1:
            self.start()
        send: Callable[[Any], Any] = prepare if prepare is not None else _same

        def here(indices: list[int]) -> list[R]:
            previous = use_allowance(self.allowance)
            try:
                return fn([send(items[i]) for i in indices])
            finally:
                use_allowance(previous)

        if self._pool is None:
            order = [i for g in groups for i in g] if groups is not None else list(range(len(items)))
            return _put_back(len(items), [order], [here(order)])
        chunks = plan_chunks(len(items), self.jobs, min_chunk, max_chunk, groups)
        results: list[list[R]] = [[] for _ in chunks]
        pending: dict[Future[list[R]], int] = {}
        next_chunk = 0
        try:
            while next_chunk < len(chunks) or pending:
                while next_chunk < len(chunks) and len(pending) < 2 * self.jobs:
                    pending[self._pool.submit(fn, [send(items[i]) for i in chunks[next_chunk]])] = next_chunk
                    next_chunk += 1
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    try:
                        results[index] = future.result()
                    except RecursionError:
                        # Data too deeply nested to pickle to or from a worker: computed
                        # here, as with one job, so the verdict never depends on --jobs.
                        results[index] = here(chunks[index])
        finally:
            for future in pending:
                future.cancel()
        return _put_back(len(items), chunks, results)


def _put_back(n: int, chunks: list[list[int]], results: list[list[R]]) -> list[R]:
    out: list[Any] = [None] * n
    for indices, part in zip(chunks, results, strict=True):
        if len(part) != len(indices):
            raise RuntimeError(f"a chunk of {len(indices)} items came back with {len(part)} results")
        for i, r in zip(indices, part, strict=True):
            out[i] = r
    return out


def map_chunks(fn: Callable[[list[Any]], list[R]], items: Sequence[Any], jobs: int,
               key: Callable[[Any], Any] | None = None) -> list[R]:
    """``Workers(jobs).map(fn, items, key)`` with workers started and stopped for this
    call alone."""
    with Workers(jobs) as workers:
        return workers.map(fn, items, key=key)


def rescore_all(traces: list[dict[str, Any]], jobs: int, workers: Workers | None = None) -> list[Rescored]:
    """``rescore_many(traces)``, computed with ``jobs`` processes (``workers``' if given),
    the rollouts of one task together."""
    if workers is not None:
        return workers.map(rescore_many, traces, key=task_key)
    return map_chunks(rescore_many, traces, jobs, key=task_key)
