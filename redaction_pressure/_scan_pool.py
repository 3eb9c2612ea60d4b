"""Scan worker processes: why a verdict does not depend on load.

`regex`'s ``timeout`` counts the CPU time of the whole process, so two scans sharing a
process eat each other's budgets, and a wall-clock deadline charges an episode for
every other process on the machine. Each scan therefore runs alone in a worker
process (`_scan_worker`), whose CPU time is then exactly this episode's: the same
reply gets the same verdict alone or beside any number of concurrent scorers. A
worker holds one scan at a time, so its memory is that scan's too.

A wall-clock ceiling (`CEILING_FACTOR` x the budget, counted from when a worker takes
the scan, not while it waits for one) guards against starvation: hitting it, or a
worker dying, is not the reply's fault and raises `ScanInfrastructureError` instead of
producing a verdict, so the rollout fails loudly and trainers drop it.

Workers are plain subprocesses (``python -m redaction_pressure._scan_worker``) started
on first use, so neither ``fork`` nor ``spawn`` of the caller re-imports its
``__main__``; a forked child forgets its parent's pool (`os.register_at_fork`) and
starts its own.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from ._identity import source_digest

WORKERS_ENV = "REDACTION_PRESSURE_SCAN_WORKERS"
CEILING_FACTOR = 10.0
CEILING_MIN_S = 5.0  # tiny budgets still get time for the round trip on a busy machine
STARTUP_TIMEOUT_S = 60.0
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


class ScanInfrastructureError(RuntimeError):
    """The scan could not finish for a reason outside the reply (a starved or dead
    worker). The rollout has no verdict: it must be dropped, never scored 0."""


def _cgroup_cpus(root: Path = Path("/sys/fs/cgroup"), proc_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """The tightest cgroup v2 ``cpu.max`` quota (in CPUs) on this process's cgroup
    path, or None when there is none."""
    try:
        line = next(x for x in proc_cgroup.read_text().splitlines() if x.startswith("0::"))
    except (OSError, StopIteration):
        return None
    node = root / line[3:].strip().lstrip("/")
    best = None
    while True:
        try:
            quota, period = (node / "cpu.max").read_text().split()[:2]
            if quota != "max" and int(period) > 0:
                cpus = int(quota) / int(period)
                best = cpus if best is None else min(best, cpus)
        except (OSError, ValueError):
            pass
        if node == root or root not in node.parents:
            return best
        node = node.parent


def available_cpus() -> int:
    """CPUs this process may actually use: its affinity mask, capped by a cgroup v2
    quota (rounded up: a 1.5-CPU quota still runs two scans at once usefully)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


def pool_size() -> int:
    """Scan workers per process: ``$REDACTION_PRESSURE_SCAN_WORKERS`` if set (set it to
    CPUs / env-server workers when several share a host), else `available_cpus`."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return available_cpus()
    if not raw.isdigit() or not 1 <= int(raw) <= 256:
        raise ValueError(f"${WORKERS_ENV} must be an integer in 1..256, got {raw!r}")
    return int(raw)


class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen([sys.executable, "-m", "redaction_pressure._scan_worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        self.requests = Connection(os.dup(self.proc.stdin.fileno()), readable=False)
        self.replies = Connection(os.dup(self.proc.stdout.fileno()), writable=False)
        self.proc.stdin.close()
        self.proc.stdout.close()
        try:
            if not self.replies.poll(STARTUP_TIMEOUT_S):
                raise ScanInfrastructureError(f"a scan worker did not start within {STARTUP_TIMEOUT_S:.0f} s")
            tag, self.pid, digest = self.replies.recv()
        except (EOFError, OSError) as exc:
            self.kill()
            raise ScanInfrastructureError(f"a scan worker died while starting (exit {self.proc.poll()})") from exc
        except ScanInfrastructureError:
            self.kill()
            raise
        if tag != "ready" or digest != source_digest():
            self.kill()
            raise ScanInfrastructureError("a scan worker runs another build of redaction_pressure "
                                          f"(source digest {digest}, expected {source_digest()})")

    def close_fds(self) -> None:
        for conn in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                conn.close()

    def kill(self) -> None:
        self.close_fds()
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


class ScanPool:
    """At most ``size`` workers, each lent to one scan at a time; a caller waits for a
    free worker before its ceiling starts."""

    def __init__(self, size: int, ceiling_factor: float = CEILING_FACTOR, ceiling_min_s: float = CEILING_MIN_S) -> None:
        self.size = size
        self.ceiling_factor, self.ceiling_min_s = ceiling_factor, ceiling_min_s
        self._idle: list[_Worker] = []
        self._live = 0
        self._cond = threading.Condition()
        self._closed = False

    def _acquire(self) -> _Worker:
        with self._cond:
            while not self._idle and self._live >= self.size:
                self._cond.wait()
            if self._closed:
                raise ScanInfrastructureError("the scan pool is shut down")
            if self._idle:
                return self._idle.pop()
            self._live += 1
        try:
            return _Worker()
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker, healthy: bool) -> None:
        if not healthy:
            worker.kill()
        with self._cond:
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                self._live -= 1
                if healthy:
                    worker.kill()
            self._cond.notify()

    def run(self, texts: list[str], rules: list[tuple[str, str]], budget_s: float) -> tuple:
        """(removed, matches, errors, cpu_s, wall_s) of one scan in a worker."""
        ceiling = max(self.ceiling_factor * budget_s, self.ceiling_min_s)
        worker = self._acquire()
        healthy = False
        try:
            try:
                worker.requests.send((texts, rules, budget_s))
                ready = worker.replies.poll(ceiling)
                if ready:
                    result = worker.replies.recv()
            except (EOFError, OSError) as exc:
                raise ScanInfrastructureError(f"scan worker {worker.pid} died during a scan "
                                              f"(exit {worker.proc.poll()}); the rollout has no verdict") from exc
            if not ready:
                raise ScanInfrastructureError(
                    f"scan took more than {ceiling:.1f} s of wall time for a {budget_s:g} s CPU budget: the "
                    "worker was starved of CPU; the rollout has no verdict (infrastructure error, not a reward of 0)")
            healthy = True
            return result
        finally:
            self._release(worker, healthy)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()


_lock = threading.Lock()
_pool: ScanPool | None = None


def get_pool() -> ScanPool:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ScanPool(pool_size())
        return _pool


def run_scan(texts: list[str], rules: list[tuple[str, str]], budget_s: float) -> tuple:
    """(removed, matches, errors, cpu_s, wall_s) of one scan, run in a worker process."""
    return get_pool().run(texts, rules, budget_s)


def shutdown() -> None:
    """Stops this process's idle workers (busy ones stop when their scan returns)."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.close()


def _forget_after_fork() -> None:
    """In a forked child the parent's workers are not ours: drop our copies of their
    pipes (so the parent's workers still see EOF when the parent exits) and start
    afresh on first use."""
    global _pool, _lock
    _lock = threading.Lock()
    pool, _pool = _pool, None
    if pool is not None:
        for worker in pool._idle:
            worker.close_fds()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(shutdown)
