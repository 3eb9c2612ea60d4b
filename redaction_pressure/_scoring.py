"""score_completion: reply -> rules -> scan of the held-out records -> reward-v1."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import regex

from ._answer import RedactionError, parse_reply
from ._pattern_guard import MAX_REPLY_COST, Refused, compile_cached
from ._reward import Outcome, evaluate
from ._scanner import CompiledRule, scan
from ._task import RedactionTask


@dataclass(frozen=True)
class Score:
    outcome: Outcome
    errors: tuple[RedactionError, ...]
    matches: int
    # per family: [labelled, fully removed] for secrets, [present, damaged] for decoys
    secret_families: dict[str, list[int]] = field(default_factory=dict)
    decoy_families: dict[str, list[int]] = field(default_factory=dict)

    reward = property(lambda self: self.outcome.reward)
    recall = property(lambda self: self.outcome.recall)
    precision = property(lambda self: self.outcome.precision)
    clean = property(lambda self: self.outcome.clean)
    valid = property(lambda self: self.outcome.valid)

    def metrics(self) -> dict:
        o = self.outcome
        return {"valid": o.valid, "secrets_total": o.secrets_total, "secrets_removed": o.secrets_removed,
                "removed_chars": o.removed_chars, "collateral_chars": o.collateral_chars,
                "matches": self.matches, "errors": len(self.errors)}


def _compile(rules, deadline: float) -> tuple[list[CompiledRule], list[RedactionError]]:
    compiled, errors, total_cost = [], [], 0
    for i, rule in enumerate(rules):
        if time.perf_counter() > deadline:
            return [], [RedactionError("budget_exhausted", "the regex time budget ran out while compiling", i)]
        try:
            pattern, cost, required = compile_cached(rule.pattern)
        except Refused as exc:
            errors.append(RedactionError("invalid_regex", f"refused before compiling: {exc}", i))
            continue
        except regex.error as exc:
            errors.append(RedactionError("invalid_regex", f"does not compile: {exc}", i))
            continue
        except Exception as exc:  # noqa: BLE001 - hostile input may reach any corner of regex's compiler
            errors.append(RedactionError("invalid_regex", f"does not compile: {type(exc).__name__}: {exc}"[:300], i))
            continue
        total_cost += cost
        if total_cost > MAX_REPLY_COST:
            errors.append(RedactionError("invalid_regex", f"refused as too costly to compile: the rules' "
                                         f"combined compiled size bound exceeds {MAX_REPLY_COST}", i))
            break
        compiled.append(CompiledRule(pattern, rule.replacement, required))
    return compiled, errors


def _family_tallies(task: RedactionTask, removed) -> tuple[dict, dict]:
    secrets: dict[str, list[int]] = {}
    decoys: dict[str, list[int]] = {}
    for record, gone in zip(task.heldout, removed):
        for s in record.secrets:
            t = secrets.setdefault(s.family, [0, 0])
            t[0] += 1
            t[1] += gone[s.start:s.end].count(1) == s.end - s.start
        for d in record.decoys:
            t = decoys.setdefault(d.family, [0, 0])
            t[0] += 1
            t[1] += gone[d.start:d.end].count(1) > 0
    return secrets, decoys


def score_completion(task: RedactionTask, reply: object, budget_s: float | None = None) -> Score:
    """Scores one reply against ``task``'s held-out records. Never raises for any
    reply: whatever escapes the stages below (none is known to) is recorded as an
    error of the stage it came from, and the episode is invalid, so one hostile
    rollout can never abort an eval run."""
    budget = task.budget_s if budget_s is None else float(budget_s)  # a caller's mistake still raises
    try:
        return _score_completion(task, reply, budget)
    except Exception as exc:  # noqa: BLE001 - the last line of defence; see _contained
        return _contained(task, "invalid_regex", "scoring", exc)


def _contained(task: RedactionTask, code: str, stage: str, exc: BaseException) -> Score:
    error = RedactionError(code, f"unexpected failure while {stage}: {type(exc).__name__}: {exc}"[:300])
    removed = [bytearray(len(r.text)) for r in task.heldout]
    outcome = evaluate(removed, [[(s.start, s.end) for s in r.secrets] for r in task.heldout], True)
    secrets, decoys = _family_tallies(task, removed)
    return Score(outcome, (error,), 0, secrets, decoys)


def _parse(reply: object) -> tuple[list, list[RedactionError]]:
    try:
        return parse_reply(reply)
    except Exception as exc:  # noqa: BLE001 - hostile input; the reply has no answer
        return [], [RedactionError("malformed_json", f"unexpected failure while parsing: {type(exc).__name__}"[:300])]


def _score_completion(task: RedactionTask, reply: object, budget: float) -> Score:
    deadline = time.perf_counter() + budget
    rules, errors = _parse(reply)
    compiled: list[CompiledRule] = []
    if not errors:
        compiled, errors = _compile(rules, deadline)
    texts = [r.text for r in task.heldout]
    if errors:
        removed = [bytearray(len(t)) for t in texts]
        matches = 0
    else:
        result = scan(compiled, texts, deadline)
        removed, matches, errors = result.removed, result.matches, result.errors
    outcome = evaluate(removed, [[(s.start, s.end) for s in r.secrets] for r in task.heldout], bool(errors))
    secrets, decoys = _family_tallies(task, removed)
    return Score(outcome, tuple(errors), matches, secrets, decoys)
