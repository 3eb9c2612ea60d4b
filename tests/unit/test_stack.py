"""`stack.with_headroom` asks the interpreter whether the caller's stack is deeper than
the headroom allows (one frame looked up) instead of walking it frame by frame: the
answer must be the walk's, at every depth around the bound and at several limits."""

from __future__ import annotations

import sys
import unittest

from redaction_pressure.scoring import stack


def _frames(frame) -> int:
    n = 0
    while frame is not None:
        n, frame = n + 1, frame.f_back
    return n


class Headroom(unittest.TestCase):
    def test_the_probe_is_the_walk(self):
        def walked() -> bool:  # the walk the wrapper did before: the caller's frames, counted
            return sys.getrecursionlimit() - _frames(sys._getframe(2)) >= stack.HEADROOM_FRAMES

        def wrapper():  # stands in for with_headroom's wrapper: its caller is `at`
            return walked(), stack._has_headroom()

        def at(depth: int):
            return wrapper() if depth == 0 else at(depth - 1)

        here = _frames(sys._getframe())
        saved = sys.getrecursionlimit()
        try:
            for limit in (stack.HEADROOM_FRAMES - 1, stack.HEADROOM_FRAMES + 1, saved, saved + 500):
                sys.setrecursionlimit(max(limit, here + 50))
                bound = sys.getrecursionlimit() - stack.HEADROOM_FRAMES - here
                answers = set()
                for depth in sorted({0, 5, *range(max(0, bound - 8), max(0, bound + 8))}):
                    walk, probe = at(depth)
                    self.assertEqual(probe, walk, (limit, depth))
                    answers.add(probe)
                if bound > 8:  # the depths tried straddle the bound: both answers seen
                    self.assertEqual(answers, {True, False}, limit)
        finally:
            sys.setrecursionlimit(saved)

    def test_work_runs_in_place_with_room_and_on_a_fresh_stack_without(self):
        import threading

        seen = []
        wrapped = stack.with_headroom(lambda: seen.append(threading.current_thread().name) or len(seen))
        self.assertEqual(wrapped(), 1)

        def deep(k: int):
            return wrapped() if k == 0 else deep(k - 1)

        here = _frames(sys._getframe())
        self.assertEqual(deep(sys.getrecursionlimit() - stack.HEADROOM_FRAMES - here + 5), 2)
        self.assertEqual(seen[0], threading.current_thread().name)
        self.assertEqual(seen[1], "redaction-pressure-fresh-stack")


if __name__ == "__main__":
    unittest.main()
