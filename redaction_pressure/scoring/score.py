"""score_completion: reply -> rules -> scan of the held-out records -> reward-v1.

The reply is parsed here; compiling and scanning (`scan_rules`) run in a scan worker
process (`scan_pool`), where the episode's budget is the CPU time of that one scan.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..task.tasks import RedactionTask
from .answer import RedactionError, Rule, parse_reply, rule_error
from .pattern_guard import MAX_REPLY_COST, Refused, compile_cached, compile_error, refusal
from .reward import Outcome, evaluate
from .scan_pool import run_scan
from .scanner import CompiledRule, scan

if TYPE_CHECKING:
    from .scan_pool import ScanReply


@dataclass(frozen=True)
class Score:
    outcome: Outcome
    errors: tuple[RedactionError, ...]
    matches: int
    # per family: [labelled, fully removed] for secrets, [present, damaged] for decoys
    secret_families: dict[str, list[int]] = field(default_factory=dict)
    decoy_families: dict[str, list[int]] = field(default_factory=dict)
    # the same tallies per summary class (`Span.group`): a static family is its own class,
    # a stream's invented families fall into open-world classes (house_format, ...), so
    # sums across tasks mean something
    secret_classes: dict[str, list[int]] = field(default_factory=dict)
    decoy_classes: dict[str, list[int]] = field(default_factory=dict)

    reward = property(lambda self: self.outcome.reward)
    recall = property(lambda self: self.outcome.recall)
    precision = property(lambda self: self.outcome.precision)
    clean = property(lambda self: self.outcome.clean)
    valid = property(lambda self: self.outcome.valid)

    def metrics(self) -> dict[str, Any]:
        o = self.outcome
        return {"valid": o.valid, "secrets_total": o.secrets_total, "secrets_removed": o.secrets_removed,
                "removed_chars": o.removed_chars, "collateral_chars": o.collateral_chars,
                "matches": self.matches, "errors": len(self.errors)}


def _compile(rules: Sequence[tuple[str, str]]) -> tuple[list[CompiledRule], list[RedactionError]]:
    """Compiling is not charged to the time budget: the compile cache would make the
    same reply cost more or less by what the process compiled before, and the size
    bounds already cap compiling (milliseconds per pattern)."""
    compiled: list[CompiledRule] = []
    errors: list[RedactionError] = []
    total_cost = 0
    for i, (source, replacement) in enumerate(rules):
        try:
            pattern, cost, required, folded, clauses = compile_cached(source)
        except Refused as exc:
            errors.append(rule_error("invalid_regex", i, refusal(source, exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - hostile input may reach any corner of regex's compiler
            errors.append(rule_error("invalid_regex", i, compile_error(source, exc)))
            continue
        total_cost += cost
        if total_cost > MAX_REPLY_COST:
            errors.append(rule_error("invalid_regex", i, f"refused before compiling: rules 1-{i + 1} together are "
                                     f"{total_cost:,} units of compiled size (this rule {cost:,}); the limit for "
                                     f"the reply's rules together is {MAX_REPLY_COST:,}"))
            break
        compiled.append(CompiledRule(pattern, replacement, required, folded, clauses))
    return compiled, errors


Tallies = dict[str, list[int]]


def _tallies(task: RedactionTask, removed: Sequence[bytes | bytearray]) -> tuple[Tallies, Tallies, Tallies, Tallies]:
    """(secret families, decoy families, secret classes, decoy classes): [labelled,
    fully removed] per secret key, [present, damaged] per decoy key. Every span is
    counted in place (no slice copied) and a record with nothing removed damages none
    of its decoys: a task has ~90 decoys, and the public path runs this in the process
    that waits for the scan."""
    secrets: Tallies = {}
    decoys: Tallies = {}
    secret_classes: Tallies = {}
    decoy_classes: Tallies = {}
    for record, gone in zip(task.heldout, removed, strict=False):
        for s in record.secrets:
            hit = gone.count(1, s.start, s.end) == s.end - s.start
            _count(secrets, s.family, hit)
            _count(secret_classes, s.group or s.family, hit)
        touched = 1 in gone
        for d in record.decoys:
            hit = touched and gone.find(1, d.start, d.end) >= 0
            _count(decoys, d.family, hit)
            _count(decoy_classes, d.group or d.family, hit)
    return secrets, decoys, secret_classes, decoy_classes


def _count(table: Tallies, key: str, hit: bool) -> None:
    tally = table.get(key)
    if tally is None:
        table[key] = [1, int(hit)]
    else:
        tally[0] += 1
        tally[1] += hit


def scan_rules(texts: list[str], rules: list[tuple[str, str]], budget_s: float,
               clock: Callable[[], float] = time.process_time) -> tuple[list[bytearray], int, list[RedactionError]]:
    """Compiles ``rules`` (pattern, replacement) and runs them over ``texts`` within
    ``budget_s`` of ``clock``. Called in a scan worker, where the process's CPU time is
    this episode's alone. Never raises: a failure no stage foresaw is the reply's
    error, so the worker survives and the verdict still depends on the reply alone."""
    try:
        compiled, errors = _compile(rules)
        if errors:
            return [bytearray(len(t)) for t in texts], 0, errors
        deadline = clock() + budget_s  # matching only: see _compile
        result = scan(compiled, texts, deadline, clock, budget_s)
        return result.removed, result.matches, result.errors
    except Exception as exc:  # noqa: BLE001 - the last line of defence in the worker
        return [bytearray(len(t)) for t in texts], 0, [_unexpected("scanning", exc)]


def _unexpected(stage: str, exc: BaseException) -> RedactionError:
    return RedactionError("invalid_regex", f"unexpected failure while {stage}: {type(exc).__name__}: {exc}"[:300])


def _parse(reply: object) -> tuple[list[Rule], list[RedactionError]]:
    try:
        return parse_reply(reply)
    except Exception as exc:  # noqa: BLE001 - hostile input; the reply has no answer
        return [], [RedactionError("malformed_json", f"unexpected failure while parsing: {type(exc).__name__}"[:300])]


def score_completion(task: RedactionTask, reply: object, budget_s: float | None = None) -> Score:
    """Scores one reply against ``task``'s held-out records. Never raises for any reply;
    raises `ScanInfrastructureError` when the machine, not the reply, kept the scan from
    finishing (a starved or dead scan worker): such a rollout has no verdict."""
    return score_with_cost(task, reply, budget_s)[0]


def score_with_cost(task: RedactionTask, reply: object, budget_s: float | None = None) -> tuple[Score, float, float]:
    """`score_completion` plus the scan's CPU seconds (what the budget counts) and wall
    seconds in its worker (0 when the reply never reached a scan)."""
    score, _, cpu, wall = _score(task, reply, budget_s)
    return score, cpu, wall


def score_with_masks(task: RedactionTask, reply: object, budget_s: float | None = None) -> tuple[Score, list[bytes]]:
    """`score_completion` plus, per held-out record, which source characters the reply's
    rules removed (1 = gone): the masks behind the score, for reports. When the episode
    is void nothing counts as removed, as in the reward."""
    score, removed, _, _ = _score(task, reply, budget_s)
    return score, [bytes(len(m)) if score.errors else bytes(m) for m in removed]


def score_trusted(task: RedactionTask, reply: str, budget_s: float | None = None) -> Score:
    """`score_completion` for a reply this build wrote itself (a built-in policy's:
    `export`), scanned in this process instead of a scan worker. The isolation a scan
    worker gives (a crash, a runaway pattern, another thread's CPU time charged to the
    budget) guards against hostile replies; a built-in policy's reply is none, and
    skipping the round trip and the second compile of the stream's oracle patterns
    (`share_trusted_compiles`) saves a fifth of an export line. Same rules, same
    scan, same verdict: a reply of a model must never come here. Call it from a
    single-threaded process: the budget is this process's CPU time."""
    return _score(task, reply, budget_s, _scan_here)[0]


def _scan_here(texts: list[str], rules: list[tuple[str, str]], budget_s: float) -> ScanReply:
    cpu, wall = time.process_time(), time.perf_counter()
    removed, matches, errors = scan_rules(texts, rules, budget_s)
    return removed, matches, errors, time.process_time() - cpu, time.perf_counter() - wall


def _score(task: RedactionTask, reply: object, budget_s: float | None,
           scanner: Callable[[list[str], list[tuple[str, str]], float], ScanReply] = run_scan
           ) -> tuple[Score, list[bytearray], float, float]:
    budget = task.budget_s if budget_s is None else float(budget_s)  # a caller's mistake still raises
    rules, errors = _parse(reply)
    texts = [r.text for r in task.heldout]
    cpu = wall = 0.0
    if errors:
        removed, matches = [bytearray(len(t)) for t in texts], 0
    else:
        removed, matches, errors, cpu, wall = scanner(texts, [(r.pattern, r.replacement) for r in rules], budget)
    outcome = evaluate(removed, [[(s.start, s.end) for s in r.secrets] for r in task.heldout], bool(errors))
    return Score(outcome, tuple(errors), matches, *_tallies(task, removed)), removed, cpu, wall
