"""Gives recursive work the same stack wherever it is called from.

Parsing JSON, validating it and parsing or compiling a regex recurse. Their depth is
bounded on the raw text first (`answer`, `pattern_guard`), so they need at most a
fixed number of frames; this module makes sure those frames exist. A caller already
deep in its own stack (a framework, a test harness, a recursive evaluator) would
otherwise turn a valid reply into a RecursionError, and the verdict would depend on
who asked. When the headroom is short, the work runs on a fresh thread, whose stack
starts empty; that costs a thread start, and only in that rare case.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

# Frames kept free for the bounded work: twice the worst case measured (~240 frames,
# 32 nested V1 sets), as tests/unit/test_verdict_purity.py::StackUse checks.
HEADROOM_FRAMES = 600

T = TypeVar("T")
P = ParamSpec("P")


def _has_headroom() -> bool:
    """Whether at least `HEADROOM_FRAMES` frames are free below the recursion limit
    for the caller of the function that asks (the wrapper below): the stack, counted
    from that caller, holds at most ``limit - HEADROOM_FRAMES`` frames. Asked of the
    interpreter in one step (is there a frame that far out?) rather than by walking
    the stack frame by frame, which cost ~0.15 us a frame on every call."""
    # sys._getframe(k) here: 0 is this function, 1 the wrapper, 2 its caller, so the
    # caller's stack holds more than ``room`` frames iff frame ``room + 2`` exists.
    room = sys.getrecursionlimit() - HEADROOM_FRAMES
    if room < 1:
        return False
    try:
        sys._getframe(room + 2)
    except ValueError:
        return True
    return False


def with_headroom(fn: Callable[P, T]) -> Callable[P, T]:
    """Runs ``fn`` where at least `HEADROOM_FRAMES` frames are free below the
    recursion limit: in place when there are, else on a fresh thread (its result or
    exception is handed back unchanged)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        if _has_headroom():
            return fn(*args, **kwargs)
        results: list[T] = []
        failures: list[BaseException] = []

        def run() -> None:
            try:
                results.append(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
                failures.append(exc)

        worker = threading.Thread(target=run, name="redaction-pressure-fresh-stack", daemon=True)
        worker.start()
        worker.join()
        if failures:
            raise failures[0]
        return results[0]

    return wrapper
