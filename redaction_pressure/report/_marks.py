"""Rebuilds what a reply's rules did to each held-out record, character by character.

A trace records scores, not masks, so the report regenerates the task from what the
scored trace reveals (split, index, task parameters, task seed) and runs the recorded
reply again through this build's parser, pattern guard and scanner. The regenerated
task must reproduce the recorded prompt, otherwise the marks would describe another
task (another corpus or build): then no marks are shown, only the recorded scores.

The verdict and the per-record masks come from the scorer (`score_with_masks`); the
per-rule match counts, which no verdict needs, from one scan per rule.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..corpus.levels import LEVELS
from ..corpus.stream import Record
from ..scoring.answer import RedactionError, parse_reply
from ..scoring.reward import Outcome
from ..scoring.scanner import scan
from ..scoring.score import Score, score_with_masks
from ..scoring.score import _compile as compile_rules
from ..task.splits import PUBLIC
from ..task.tasks import RedactionTask, task_from_seed

MAX_SEED = 1 << 64


class NotRegenerated(Exception):
    """Why a trace's task cannot be rebuilt here (shown on the page as a note)."""


@dataclass(frozen=True)
class Removal:
    outcome: Outcome  # this build's reward-v1 verdict on the recorded reply
    errors: tuple[RedactionError, ...]
    removed: list[bytes]  # per held-out record: 1 where the source character is gone
    rule_matches: list[int] | None  # per rule; None when the episode is void
    score: Score | None = None  # the scorer's whole verdict (the report's judge reuses it)


def _int(value: object, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise NotRegenerated(f"the trace records {what} = {str(value)[:40]!r}, not an integer in {lo}..{hi}")
    return value


@lru_cache(maxsize=64)
def _regenerate(split: str, index: int, seed: int, commitment: str, n_shown: int, n_eval: int,
                budget_s: float, level: int) -> RedactionTask:
    return task_from_seed(split, index, seed, commitment, n_shown, n_eval, budget_s, level)


def task_for(trace: dict[str, Any]) -> RedactionTask:
    """The task ``trace`` was scored on, rebuilt by this build. Raises NotRegenerated."""
    info = trace.get("info")
    env = info.get("environment") if isinstance(info, dict) else None
    if not isinstance(env, dict):
        raise NotRegenerated("the trace has no info.environment")
    split, params = env.get("split"), env.get("task_params")
    if not isinstance(params, dict):
        raise NotRegenerated("the trace records no task parameters")
    index = _int(env.get("task_index"), 0, PUBLIC["train"].size, "task_index")
    n_shown = _int(params.get("n_shown"), 1, 64, "n_shown")
    n_eval = _int(params.get("n_eval"), 1, 256, "n_eval")
    level = _int(params.get("level", 1), min(LEVELS), max(LEVELS), "level")
    budget = params.get("budget_s")
    if not isinstance(budget, (int, float)) or isinstance(budget, bool) or not 0 < budget <= 60:
        raise NotRegenerated(f"the trace records budget_s = {str(budget)[:40]!r}")
    seed = env.get("task_seed")
    if seed is None:
        if split not in PUBLIC:
            raise NotRegenerated(f"the {str(split)[:40]!r} trace does not reveal its task seed, so its held-out "
                                 "records cannot be rebuilt")
        if index >= PUBLIC[split].size:
            raise NotRegenerated(f"{split} has no task {index}")
        seed = PUBLIC[split].seed(index)
    seed = _int(seed, 0, MAX_SEED, "task_seed")
    commitment = env.get("split_commitment")
    if not isinstance(split, str) or not isinstance(commitment, str):
        raise NotRegenerated("the trace records no split or split commitment")
    task = _regenerate(split, index, seed, commitment, n_shown, n_eval, float(budget), level)
    data = (trace.get("task") or {}).get("data") if isinstance(trace.get("task"), dict) else None
    recorded_prompt = data.get("prompt") if isinstance(data, dict) else None
    if recorded_prompt is not None and recorded_prompt != task.prompt:
        raise NotRegenerated(f"this build (corpus {task.identity['corpus_version']}) regenerates a different task "
                             "from the recorded seed: the trace comes from another corpus or build")
    return task


def removal(task: RedactionTask, reply: str) -> Removal:
    """This build's verdict on ``reply`` and the masks behind it, from the scorer itself
    (`score_with_masks`: the same worker, budget and clock as every score). Then, for
    the page only, each rule's match count: one scan per rule over the previous rule's
    output, i.e. the very texts the full scan gave it, under a generous CPU deadline
    (the verdict is already made)."""
    score, removed = score_with_masks(task, reply)
    if score.errors:
        return Removal(score.outcome, score.errors, removed, None, score)
    rules = [(r.pattern, r.replacement) for r in parse_reply(reply)[0]]
    slack = time.process_time() + 4 * task.budget_s
    compiled, errors = compile_rules(rules)
    if errors:
        return Removal(score.outcome, (), removed, None, score)
    counts: list[int] = []
    current = [r.text for r in task.heldout]
    for rule in compiled:
        step = scan([rule], current, slack, time.process_time)
        if step.errors:
            return Removal(score.outcome, (), removed, None, score)
        counts.append(step.matches)
        current = step.outputs
    return Removal(score.outcome, (), removed, counts, score)


Segment = tuple[str, str, str]  # (mark class, text, family) of one run of characters

# Character classes on the page (CSS classes of the template, which also says, on hover,
# what each means for the family a mark names).
REMOVED_SECRET, PART_OF_LEAK, LEAKED, DESTROYED_DECOY, KEPT_DECOY, COLLATERAL = "r", "p", "l", "d", "k", "c"


def _runs(text: str, gone: bytes, start: int, end: int, kept: str, cut: str, family: str,
          out: list[Segment]) -> None:
    i = start
    while i < end:
        removed = gone[i] == 1
        j = gone.find(b"\x00" if removed else b"\x01", i, end)
        j = end if j < 0 else j
        cls = cut if removed else kept
        out.append((cls, text[i:j], family if cls else ""))
        i = j


def segments(record: Record, gone: bytes) -> tuple[list[Segment], int, int, int]:
    """``record``'s text as (class, text, family) runs, adjacent characters with the same
    mark in one run, with its count of leaked secrets, destroyed decoys and removed
    characters outside any labelled span (those runs name no family)."""
    text = record.text
    spans = sorted([(s.start, s.end, True, s.family) for s in record.secrets]
                   + [(d.start, d.end, False, d.family) for d in record.decoys])
    out: list[Segment] = []
    leaked = destroyed = 0
    pos = 0
    for start, end, secret, family in spans:
        start = max(start, pos)
        if start >= end:
            continue
        _runs(text, gone, pos, start, "", COLLATERAL, "", out)
        if secret:
            whole = gone.count(1, start, end) == end - start
            if whole:
                _runs(text, gone, start, end, LEAKED, REMOVED_SECRET, family, out)
            else:
                leaked += 1
                _runs(text, gone, start, end, LEAKED, PART_OF_LEAK, family, out)
        else:
            damaged = gone.count(1, start, end) > 0
            destroyed += damaged
            _runs(text, gone, start, end, KEPT_DECOY, DESTROYED_DECOY, family, out)
        pos = end
    _runs(text, gone, pos, len(text), "", COLLATERAL, "", out)
    collateral = sum(len(t) for c, t, _ in out if c == COLLATERAL)
    return out, leaked, destroyed, collateral


_FLAWS = frozenset({LEAKED, PART_OF_LEAK, DESTROYED_DECOY, COLLATERAL})


def flawed_lines(segs: list[Segment]) -> tuple[list[tuple[int, list[Segment]]], int]:
    """The lines of a record (1-based numbers, with their runs) that carry a leak, a
    destroyed decoy or collateral damage, and the number of lines left out: what a
    reader of a large run needs, at a fraction of the page size."""
    lines: list[tuple[int, list[Segment]]] = []
    current: list[Segment] = []
    flawed = False
    number = 1
    total = 0
    for cls, text, family in segs:
        parts = text.split("\n")
        for k, part in enumerate(parts):
            if k:
                if flawed:
                    lines.append((number, current))
                number, current, flawed, total = number + 1, [], False, total + 1
            if part:
                current.append((cls, part, family))
                flawed = flawed or cls in _FLAWS
    if flawed:
        lines.append((number, current))
    return lines, total + 1 - len(lines)
