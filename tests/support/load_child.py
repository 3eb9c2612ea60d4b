"""Targets for processes the load tests spawn: importing this module stays light
(the scoring core only, no verifiers), so a spawned child starts fast."""

from __future__ import annotations


def score_in_child(queue, split: str, index: int, budget_s: float, reply: str) -> None:
    from redaction_pressure import load_task, score_completion
    s = score_completion(load_task(split, index, budget_s=budget_s), reply)
    queue.put((s.reward, tuple((e.code, e.rule) for e in s.errors)))
