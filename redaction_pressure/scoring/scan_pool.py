"""Scan worker processes: why a verdict does not depend on load.

`regex`'s ``timeout`` counts the CPU time of the whole process, so two scans sharing a
process eat each other's budgets, and a wall-clock deadline charges an episode for
every other process on the machine. Each scan therefore runs alone in a worker
process (`scan_worker`), whose CPU time is then exactly this episode's: the same
reply gets the same verdict alone or beside any number of concurrent scorers. A
worker holds one scan at a time, so its memory is that scan's too.

A wall-clock ceiling (`CEILING_FACTOR` x the budget, counted from when a worker takes
the scan, not while it waits for one) guards against starvation: hitting it, or a
worker dying, is not the reply's fault and raises `ScanInfrastructureError` instead of
producing a verdict, so the rollout fails loudly and trainers drop it.

Workers are plain subprocesses started on first use, so neither ``fork`` nor ``spawn``
of the caller re-imports its ``__main__``: isolated interpreters that load this build by
path and see neither the current directory nor the caller's environment
(`boundary.launch`: a ``regex/`` beside an archive must not run in a scan worker, and no
reply needs the private secret). A forked child forgets its parent's pool
(`os.register_at_fork`) and starts its own. A process that knows its share of the machine sizes its pool with
`set_pool_size` (else ``$REDACTION_PRESSURE_SCAN_WORKERS``, else one worker per CPU);
a single-threaded process that already imported the scoring core may also have its
workers forked from itself, which skips the new interpreter's imports (~0.3 s of CPU
per worker): `audit verify --jobs N` gives each of its N worker processes one forked
scan worker.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from ..boundary.launch import child_environment, python_command, scrub_environment
from ..build.identity import source_digest

if TYPE_CHECKING:
    from .answer import RedactionError

    # (removed, matches, errors, cpu_s, wall_s) of one scan
    ScanReply = tuple[list[bytearray], int, list[RedactionError], float, float]

WORKERS_ENV = "REDACTION_PRESSURE_SCAN_WORKERS"
CEILING_FACTOR = 10.0
CEILING_MIN_S = 5.0  # tiny budgets still get time for the round trip on a busy machine
STARTUP_TIMEOUT_S = 60.0


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


_size_override: int | None = None
_fork_workers = False


def pool_size() -> int:
    """Scan workers per process: the size given to `set_pool_size` if any, else
    ``$REDACTION_PRESSURE_SCAN_WORKERS`` if set (set it to CPUs / env-server workers when
    several share a host), else `available_cpus`."""
    if _size_override is not None:
        return _size_override
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return available_cpus()
    problem = _setting_problem(raw)
    if problem:
        raise ValueError(problem)
    return int(raw)


def _setting_problem(raw: str) -> str | None:
    # ASCII digits only: int() reads "²" or Arabic-Indic digits, or refuses them at length
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= 256:
        return f"${WORKERS_ENV} must be an integer in 1..256, got {raw[:32]!r}"
    return None


def setting_problem() -> str | None:
    """Why ``$REDACTION_PRESSURE_SCAN_WORKERS`` cannot size a scan pool, or None. Every
    command asks before it reads a run, so a bad local setting is a usage error, never
    a verdict on the run (red team, 2026-12-04: `rescore` called a genuine run "0/8
    rewards reproduced", and `audit verify --jobs 1` failed a genuine archive)."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    return _setting_problem(raw) if raw else None


class _Forked:
    """The part of `subprocess.Popen` a `_Worker` uses, for a worker forked from this
    process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere
                self.returncode = -1
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> int:
        end = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"scan worker {self.pid}", timeout)
            time.sleep(0.001)
        return code


def _serve_forked(requests_fd: int, replies_fd: int) -> None:
    """The body of a forked scan worker: what ``python -m redaction_pressure.scoring.scan_worker``
    runs, in a copy of this process. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        scrub_environment()  # the environment a fresh scan worker gets: no private secret
        _close_all_but({0, 1, 2, requests_fd, replies_fd})  # hold no other pipe of the parent's open
        os.dup2(2, 1)  # stray prints go to stderr
        sys.stdout = sys.stderr
        from .scan_worker import serve

        serve(Connection(requests_fd, writable=False), Connection(replies_fd, readable=False))
        code = 0
    finally:
        os._exit(code)


def _close_all_but(keep: set[int]) -> None:
    fds: Sequence[int]
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        try:
            top = os.sysconf("SC_OPEN_MAX")
        except (ValueError, OSError):
            top = 1024
        fds = range(max(1024, min(top, 1 << 16)))
    for fd in fds:
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


class _Worker:
    proc: _Forked | subprocess.Popen[bytes]
    requests: Connection
    replies: Connection
    pid: int

    def __init__(self, fork: bool = False) -> None:
        if fork:
            self._fork()
        else:
            self._spawn()
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

    def _fork(self) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        try:
            source_digest()  # computed once, here, not in every worker
            pid = os.fork()
        except BaseException:
            for fd in (requests_r, requests_w, replies_r, replies_w):
                os.close(fd)
            raise
        if pid == 0:  # the worker
            _serve_forked(requests_r, replies_w)
        os.close(requests_r)
        os.close(replies_w)
        self.proc = _Forked(pid)
        self.requests = Connection(requests_w, readable=False)
        self.replies = Connection(replies_r, writable=False)

    def _spawn(self) -> None:
        self.proc = proc = subprocess.Popen(python_command("redaction_pressure.scoring.scan_worker"),
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_environment(),
                                            close_fds=True)
        assert proc.stdin is not None and proc.stdout is not None  # both are PIPE
        self.requests = Connection(os.dup(proc.stdin.fileno()), readable=False)
        self.replies = Connection(os.dup(proc.stdout.fileno()), writable=False)
        proc.stdin.close()
        proc.stdout.close()

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

    def __init__(self, size: int, ceiling_factor: float = CEILING_FACTOR, ceiling_min_s: float = CEILING_MIN_S,
                 fork: bool = False) -> None:
        self.size, self.fork = size, fork
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
            # a fork copies only the calling thread: with other threads alive, locks they
            # hold would stay held in the worker, so it is then started afresh
            return _Worker(fork=self.fork and threading.active_count() == 1)
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

    def run(self, texts: list[str], rules: list[tuple[str, str]], budget_s: float) -> ScanReply:
        """(removed, matches, errors, cpu_s, wall_s) of one scan in a worker."""
        ceiling = max(self.ceiling_factor * budget_s, self.ceiling_min_s)
        worker = self._acquire()
        healthy = False
        try:
            try:
                worker.requests.send((texts, rules, budget_s))
                ready = worker.replies.poll(ceiling)
                if ready:
                    result: ScanReply = worker.replies.recv()
            except (EOFError, OSError) as exc:
                raise ScanInfrastructureError(f"scan worker {worker.pid} died during a scan "
                                              f"(exit {worker.proc.poll()}); the rollout has no verdict") from exc
            if not ready:
                raise ScanInfrastructureError(
                    f"scan took more than {ceiling:.1f} s of wall time for a {budget_s:g} s CPU budget: the "
                    "worker was starved of CPU; the rollout has no verdict (infrastructure error, not a reward of 0)")
            healthy = True
            _count_cpu(result[3])
            return result
        finally:
            self._release(worker, healthy)

    def prestart(self) -> None:
        """Starts every worker the pool may have now rather than on first use (the
        caller's start-up then overlaps other work). Raises `ScanInfrastructureError`
        as a scan would if one cannot start."""
        held = []
        try:
            while True:
                with self._cond:  # take idle workers and start the missing ones; never wait for a busy one
                    if self._closed or (not self._idle and self._live >= self.size):
                        break
                held.append(self._acquire())
        finally:
            for worker in held:
                self._release(worker, True)

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
_cpu_lock = threading.Lock()
_cpu_spent = 0.0


def _count_cpu(seconds: float) -> None:
    global _cpu_spent
    with _cpu_lock:
        _cpu_spent += seconds


def scan_cpu_seconds() -> float:
    """CPU seconds this process's scans have spent in their workers so far (a forked
    child starts from its parent's figure): what a reader rescoring someone else's
    replies counts against the CPU it grants them (`scoring.allowance`)."""
    with _cpu_lock:
        return _cpu_spent


def get_pool() -> ScanPool:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ScanPool(pool_size(), fork=_fork_workers)
        return _pool


def set_pool_size(size: int | None, fork: bool = False) -> None:
    """Sizes this process's scan pool, in place of ``$REDACTION_PRESSURE_SCAN_WORKERS``
    and the CPU count, for a process that knows its share of the machine: one of N
    worker processes that each score from a single thread needs one scan worker (so
    N of them run N scans at most, never N x CPUs; `audit verify --jobs N` does this).
    Call it before the first scan; forked children inherit it. An existing pool is
    stopped (idle workers) and the next scan starts one of the new size.

    ``fork``: start scan workers by forking this process (a few milliseconds) instead
    of as a fresh interpreter that imports the scoring core (~0.3 s of CPU each). Only
    for a single-threaded process that already imported it, such as a worker process
    of `audit verify --jobs N`; while other threads are alive, workers are started
    afresh anyway. A forked worker runs the same `scan_worker.serve` loop with the
    same budget and ceiling, and holds no descriptor of its parent but its two pipes.

    ``set_pool_size(None)`` returns to the default (environment variable or CPUs, fresh
    interpreters)."""
    global _size_override, _fork_workers
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 256):
        raise ValueError(f"a scan pool size must be an integer in 1..256 (or None), got {size!r}")
    _size_override, _fork_workers = size, bool(fork) and size is not None
    shutdown()


def prestart() -> None:
    """Starts this process's scan workers now (`ScanPool.prestart`) instead of at the
    first scan: a process that will score soon overlaps their start-up (an interpreter
    and the scoring core's imports, ~0.3 s each) with other work."""
    get_pool().prestart()


def run_scan(texts: list[str], rules: list[tuple[str, str]], budget_s: float) -> ScanReply:
    """(removed, matches, errors, cpu_s, wall_s) of one scan, run in a worker process."""
    return get_pool().run(texts, rules, budget_s)


def shutdown() -> None:
    """Stops this process's idle workers (busy ones stop when their scan returns)."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.close()


_inherited: list[ScanPool] = []  # a forked child's copies of its parent's pools, never collected


def _forget_after_fork() -> None:
    """In a forked child the parent's workers are not ours: drop our copies of their
    pipes (so the parent's workers still see EOF when the parent exits) and start
    afresh on first use. The copies are kept, not collected: collecting one would warn
    that the parent's live workers are "still running" (a ResourceWarning in every job
    worker of rescore, compare and the report)."""
    global _pool, _lock, _cpu_lock
    _lock, _cpu_lock = threading.Lock(), threading.Lock()
    pool, _pool = _pool, None
    if pool is not None:
        for worker in pool._idle:
            worker.close_fds()
        _inherited.append(pool)


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(shutdown)
