"""Recomputes a trace's rewards from its recorded reply and the regenerated task.

The task is rebuilt from the seed the trace revealed (``task_from_seed``), with the
split, index and parameters the trace records, and must reproduce the recorded task
data (id, prompt, system prompt), so a reply cannot be scored against a task other
than the one its prompt showed. The reply is the content of the last ``sampled`` node,
exactly as the taskset adapter reads it, and it is scored through the public
``score_completion(task, reply, budget_s=...)``. Everything the scorer outputs is
compared, exactly (floats with ``==``: both sides come from the same arithmetic, and
JSON round-trips doubles exactly; a JSON ``true`` is not the number 1): the three
reward scores and their reward-v1 weights; every key of ``Score.metrics()`` in both
``trace.metrics`` and ``info.redaction``; ``info.redaction``'s reward, recall,
precision, clean and its tallies per family and per summary class; and the (code, rule) pair of every error.
Error messages are not compared (they may quote timings).

Machine speed. The regex budget is a time budget, so whether an episode runs out of it
(``timeout``, ``budget_exhausted``) depends on the machine. An honest archive must
verify on a machine up to ``BUDGET_EXTENSION`` (4) times slower or faster than the
one that sealed it:

* the recording finished, the reproduction ran out of time: rescored once more with
  the budget extended 4x, and that reproduction must then match the recording exactly
  (``extended``). Still out of time: a mismatch (the recording could not be confirmed);
* the recording ran out of time, the reproduction finished: *time-dependent*. The
  recording is what a slower machine produces: an episode voided by its time-out.
  Compared: every score and ``valid`` must be the voided episode's 0; the other
  errors' (code, rule) pairs, ``secrets_total``, the error count and the family
  names with their labelled/present counts must be the reproduction's. Not compared:
  what depends on how far the scan got (secrets_removed, removed_chars,
  collateral_chars, matches, the families' removed/damaged counts). Counted and
  reported, not a mismatch: such an episode scored 0 on the sealing machine and would
  score otherwise here, so a result with many of them depends on the machine;
* both ran out of time: the time codes match; compared as in the previous case.

Anything else that differs is a mismatch.

What the evaluator grants. A trace states its own budget (up to 60 s), so rescoring
spends only what the evaluator allows (`contract.Allowance`, set per process with
``use_allowance``): a trace stating more than ``--max-budget`` (default: the standard
2.0 s), or met after ``--max-cpu`` of scan CPU is spent, is not rescored and comes back
``not_checked`` with the reason: never a pass, never a mismatch. The 4x retry above is
the documented machine-speed tolerance on top of the stated budget, and is counted.

Only the scoring core is imported (no verifiers), and regenerated tasks are cached:
several rollouts of one task share one regeneration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from redaction_pressure.contract import WEIGHTS, Allowance, RedactionTask, score_completion, task_from_seed

TIME_CODES = frozenset({"timeout", "budget_exhausted"})
BUDGET_EXTENSION = 4.0
# Score.metrics() keys whose value depends on how far a timed-out scan got.
PROGRESS_METRICS = frozenset({"secrets_removed", "removed_chars", "collateral_chars", "matches"})
_VOIDED = ("reward", "recall", "precision", "clean", "valid")
# info.redaction's tallies, per family and per summary class (all compared, like every output)
TALLIES = ("secret_families", "decoy_families", "secret_classes", "decoy_classes")
# (split, index, seed, commitment, n_shown, n_eval, budget_s, level): what regenerates a task
TaskKey = tuple[str, int, int, str, int, int, float, int]


@dataclass(frozen=True)
class Rescored:
    problems: list[str]
    time_dependent: bool = False  # recorded a time-out that this machine finishes
    extended: bool = False        # reproduced only with the budget extended
    not_checked: str | None = None  # why it was not rescored (the evaluator's allowance)


_allowance: Allowance | None = None  # None: no limit (a direct call, as in the tests)


def use_allowance(allowance: Allowance | None) -> Allowance | None:
    """What this process grants the traces it rescores from now on (a verification sets
    it here, or in each job worker it forks); returns what it granted before."""
    global _allowance
    previous, _allowance = _allowance, allowance
    return previous


def _scored(task: RedactionTask, reply: str, budget_s: float) -> Any:
    """``score_completion``, its scan CPU charged to the allowance."""
    if _allowance is None:
        return score_completion(task, reply, budget_s=budget_s)
    with _allowance.charging():
        return score_completion(task, reply, budget_s=budget_s)


@lru_cache(maxsize=1024)
def regenerate(split: str, index: int, seed: int, commitment: str, n_shown: int, n_eval: int,
               budget_s: float, level: int) -> RedactionTask:
    return task_from_seed(split, index, seed, commitment, n_shown, n_eval, budget_s, level)


def recorded_reply(trace: dict[str, Any]) -> str:
    """The content of the last node with ``sampled: true`` ("" if none), with list
    content joined from its parts' text, as the taskset adapter does."""
    replies = [n["message"] for n in trace["nodes"] if n.get("sampled") is True]
    if not replies:
        return ""
    content = replies[-1].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def codes_match(recorded: list[str], reproduced: list[str]) -> bool:
    if recorded == reproduced:
        return True
    return bool(TIME_CODES.intersection(recorded)) and bool(TIME_CODES.intersection(reproduced))


def task_key(trace: dict[str, Any]) -> TaskKey:
    """What regenerates ``trace``'s task: rollouts of one task share it."""
    env = trace["info"]["environment"]
    p = env["task_params"]
    return (env["split"], env["task_index"], env["task_seed"], env["split_commitment"],
            p["n_shown"], p["n_eval"], float(p["budget_s"]), p.get("level", 1))


def task_of(trace: dict[str, Any]) -> RedactionTask:
    return regenerate(*task_key(trace))


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _timed_out(codes: Iterable[str]) -> bool:
    return bool(TIME_CODES.intersection(codes))


def _tallies(value: object) -> dict[str, tuple[Any, ...]] | None:
    """A recorded per-family tally as {family: (a, b)}, or None when malformed."""
    if not isinstance(value, dict):
        return None
    out: dict[str, tuple[Any, ...]] = {}
    for family, pair in value.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(_number(v) for v in pair)):
            return None
        out[family] = tuple(pair)
    return out


def _compare_tallies(name: str, recorded: object, reproduced: dict[str, Any], partial: bool) -> list[str]:
    got = _tallies(recorded)
    want = {k: tuple(v) for k, v in reproduced.items()}
    if got is None:
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}, not a {{family: [n, n]}} table"]
    if partial:  # only the labelled/present counts are independent of the scan's progress
        got = {k: v[0] for k, v in got.items()}
        want = {k: v[0] for k, v in want.items()}
    if got != want:
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}, recomputed {str(reproduced)[:200]}"]
    return []


def _error_pairs(errors: Iterable[dict[str, Any]]) -> list[tuple[Any, Any]]:
    return [(e["code"], e.get("rule")) for e in errors]


def _task_problems(trace: dict[str, Any], task: RedactionTask) -> list[str]:
    env, data = trace["info"]["environment"], trace["task"]["data"]
    problems = []
    if env["task_id"] != task.id or data["id"] != task.id:
        problems.append(f"task id recorded as {env['task_id']!r}/{data['id']!r}; the regenerated task is {task.id!r}")
    if data["prompt"] != task.prompt:
        problems.append("the recorded prompt is not the prompt of the task regenerated from the revealed seed")
    if data["system_prompt"] != task.system_prompt:
        problems.append("the recorded system prompt is not this build's system prompt")
    return problems


def rescore_trace(trace: dict[str, Any]) -> Rescored:
    """How the schema-valid ``trace`` compares with its own reproduction."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    problems = []
    p = env["task_params"]
    for key, value in (("split", env["split"]), ("index", env["task_index"]), ("n_shown", p["n_shown"]),
                       ("n_eval", p["n_eval"]), ("budget_s", p["budget_s"]), ("level", p.get("level", 1))):
        if data.get(key, 1 if key == "level" else None) != value:
            problems.append(f"task data {key}={data[key]!r} but info.environment says {value!r}")
    if problems:
        return Rescored(problems)
    refusal = _allowance.budget_refusal(float(p["budget_s"])) if _allowance is not None else None
    if refusal is not None:
        return Rescored([], not_checked=refusal)
    task = task_of(trace)
    problems = _task_problems(trace, task)
    reply = recorded_reply(trace)
    score = _scored(task, reply, task.budget_s)

    recorded_errors = trace["info"]["redaction_errors"]
    recorded_codes = [e["code"] for e in recorded_errors]
    extended = False
    if _timed_out(e.code for e in score.errors) and not _timed_out(recorded_codes):
        extended = True
        budget = task.budget_s * BUDGET_EXTENSION
        refusal = _allowance.cpu_refusal() if _allowance is not None else None
        if refusal is not None:
            return Rescored(problems, extended=True, not_checked=f"{refusal} before its retry with the budget "
                                                                  f"extended {BUDGET_EXTENSION:g}x")
        score = _scored(task, reply, budget)
        if _timed_out(e.code for e in score.errors):
            return Rescored([
                *problems,
                f"the recording finished, but rescoring ran out of time even with the budget extended "
                f"{BUDGET_EXTENSION:g}x ({budget:g} s): the recorded score could not be confirmed "
                f"(recorded errors {recorded_codes}, recomputed {[e.code for e in score.errors]})"], extended=True)
    reproduced_codes = [e.code for e in score.errors]
    rec_time, rep_time = _timed_out(recorded_codes), _timed_out(reproduced_codes)
    time_dependent = rec_time and not rep_time
    partial = rec_time  # (rep_time without rec_time was retried above, or returned)
    recorded_pairs = _error_pairs(recorded_errors)
    reproduced_pairs = [(e.code, e.rule) for e in score.errors]
    if partial:
        recorded_pairs = [x for x in recorded_pairs if x[0] not in TIME_CODES]
        reproduced_pairs = [x for x in reproduced_pairs if x[0] not in TIME_CODES]
    if not codes_match(recorded_codes, reproduced_codes) and not time_dependent:
        problems.append(f"error codes recorded {recorded_codes}, recomputed {reproduced_codes}")
    elif recorded_pairs != reproduced_pairs:
        problems.append(f"errors (code, rule) recorded {recorded_pairs}, recomputed {reproduced_pairs}")

    metrics = score.metrics()
    expected = {"reward": score.reward, "recall": score.recall, "precision": score.precision, "clean": score.clean,
                **metrics}
    if time_dependent:  # the recording is the voided episode a slower machine produced
        expected.update({k: 0.0 for k in _VOIDED}, errors=len(recorded_errors))
    rewards = trace["rewards"]
    for name, weight in WEIGHTS.items():
        got, want = rewards[name], expected[name]
        if got["weight"] != weight:
            problems.append(f"{name} weight recorded {got['weight']!r}, reward-v1 says {weight!r}")
        if got["score"] != want:
            problems.append(f"{name} recorded {got['score']!r}, recomputed {want!r}")

    compared = [("metrics", trace["metrics"], {k: expected[k] for k in metrics})]
    summary = trace["info"].get("redaction")
    if isinstance(summary, dict):
        compared.append(("info.redaction", summary, expected))
    else:
        problems.append("info.redaction is missing: the scorer's outputs are not recorded")
    for where, recorded, wanted in compared:
        for name, want in wanted.items():
            if name not in recorded:
                problems.append(f"{where}.{name} is missing; recomputed {want!r}")
            elif partial and name in PROGRESS_METRICS:
                continue
            elif not _number(recorded[name]) or recorded[name] != want:
                problems.append(f"{where}.{name} recorded {recorded[name]!r}, recomputed {want!r}")
    if isinstance(summary, dict):
        for name in TALLIES:
            problems += _compare_tallies(name, summary.get(name), getattr(score, name), partial)
    return Rescored(problems, time_dependent=time_dependent and not problems, extended=extended)


def rescore(trace: dict[str, Any]) -> list[str]:
    """Every way the schema-valid ``trace`` disagrees with its own reproduction ([] if none)."""
    return rescore_trace(trace).problems


def rescore_many(traces: list[dict[str, Any]]) -> list[Rescored]:
    """Rescores each trace; one hostile trace's exception is its own failure, not the
    batch's. (The unit of work of `audit verify --jobs`.)"""
    out = []
    for trace in traces:
        try:
            out.append(rescore_trace(trace))
        except Exception as exc:  # noqa: BLE001 - one hostile trace must not hide the others
            out.append(Rescored([f"could not be rescored: {type(exc).__name__}: {str(exc)[:200]}"]))
    return out
