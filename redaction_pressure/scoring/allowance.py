"""What a reader grants the replies it rescores: a budget per trace, CPU in total.

A trace states its own regex budget (task parameters allow up to 60 s), so a reader
that honoured it would spend what the trace's author chose: N hostile traces cost N x
60 CPU-seconds. The report and `audit verify` therefore grant each trace at most
``max_budget_s`` (the standard 2.0 s unless the reader states more) and all traces
together at most ``max_cpu_s`` of scan CPU (measured in the scan workers, so it is the
regex work itself). What a reader does not grant it reports as NOT CHECKED: never a
pass, never silently skipped.

Across the job processes of one reader the CPU spent is one shared figure (a
``multiprocessing.Value`` the forked workers inherit): a trace starts only while less
than ``max_cpu_s`` is spent, so the total stops within one trace's cost per job of it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..boundary.launch import fork_context
from .scan_pool import scan_cpu_seconds
from .scanner import DEFAULT_BUDGET_S

DEFAULT_MAX_BUDGET_S = DEFAULT_BUDGET_S  # the standard benchmark's budget
DEFAULT_MAX_CPU_S = 600.0  # an honest trace costs milliseconds; 600 s is 300 hostile ones at the standard budget


class Allowance:
    """The rescoring a reader grants. ``shared``: the CPU figure is shared with the
    processes this one forks afterwards (create it before forking them)."""

    def __init__(self, max_budget_s: float = DEFAULT_MAX_BUDGET_S, max_cpu_s: float = DEFAULT_MAX_CPU_S,
                 shared: bool = False) -> None:
        for name, value in (("max_budget_s", max_budget_s), ("max_cpu_s", max_cpu_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        self.max_budget_s, self.max_cpu_s = float(max_budget_s), float(max_cpu_s)
        context = fork_context() if shared else None
        self._shared: Any = context.Value("d", 0.0) if context is not None else None
        self._spent = 0.0
        self.withheld: str | None = None  # why nothing is rescored at all (set before forking)
        self.judge = False  # the report: also give each trace `rescore`'s verdict (set before forking)

    @property
    def spent(self) -> float:
        """Seconds of rescoring CPU charged so far (by every process sharing this)."""
        if self._shared is None:
            return self._spent
        with self._shared.get_lock():
            return float(self._shared.value)

    def budget_refusal(self, budget_s: float) -> str | None:
        """Why a trace stating ``budget_s`` is not rescored, or None when it may be."""
        if self.withheld is not None:
            return self.withheld
        if budget_s > self.max_budget_s:
            return (f"its budget of {budget_s:g} s is more than the {self.max_budget_s:g} s this reader grants a "
                    f"trace (--max-budget)")
        return self.cpu_refusal()

    def cpu_refusal(self) -> str | None:
        """Why no more rescoring starts, or None while CPU is left."""
        if self.withheld is not None:
            return self.withheld
        if self.spent >= self.max_cpu_s:
            return f"the {self.max_cpu_s:g} s of scan CPU this reader grants all traces were spent (--max-cpu)"
        return None

    def charge(self, seconds: float) -> None:
        if self._shared is None:
            self._spent += seconds
            return
        with self._shared.get_lock():
            self._shared.value += seconds

    @contextmanager
    def charging(self, in_process: bool = False) -> Iterator[None]:
        """Charges the scan CPU spent inside the block (and, with ``in_process``, this
        process's own CPU too: the report counts matches per rule here)."""
        scans, own = scan_cpu_seconds(), time.process_time()
        try:
            yield
        finally:
            self.charge(scan_cpu_seconds() - scans + (time.process_time() - own if in_process else 0.0))
