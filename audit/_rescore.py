"""Recomputes a trace's rewards from its recorded reply and the regenerated task.

The task is rebuilt from the seed the trace revealed (``task_from_seed``), with the
split, index and parameters the trace records, and must reproduce the recorded task
data (id, prompt, system prompt), so a reply cannot be scored against a task other
than the one its prompt showed. The task's split, index, commitment and parameters,
wherever the trace records them (info.environment, task.data, task.data.identity), are
the regenerated task's as JSON values, types included: ``level: 1.0`` or ``index: 3.0``
equals the int in Python, but a reader that wants an int drops such a trace. The reply
is the content of the last ``sampled`` node, exactly as the taskset adapter reads it,
and it is scored through the public ``score_completion(task, reply, budget_s=...)``.
Everything the scorer outputs is compared, exactly (floats with ``==``: both sides come
from the same arithmetic, and JSON round-trips doubles exactly; a JSON ``true`` is not
the number 1; in ``info.redaction``, the scorer's own record, types too: a count is a
JSON integer, so ``5.0`` or a tally ``[494.0, 63.0]`` is a mismatch, since readers of
class tables skip such a pair): the three reward scores and their reward-v1 weights;
every key of ``Score.metrics()`` in both ``trace.metrics`` and ``info.redaction``;
``info.redaction``'s reward, recall, precision, clean and its tallies per family and
per summary class; and the (code, rule) pair of every error.
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
  score otherwise here, so a result with many of them depends on the machine. But only
  within the tolerance: a reproduction that finished using strictly less than budget/4 of scan
  CPU (as `contract.Allowance` measures it) could only have run out of time on a machine
  more than 4x slower, so that recorded time-out is a mismatch;
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

from redaction_pressure.contract import (
    DEFAULT_LEVEL,
    WEIGHTS,
    Allowance,
    RedactionTask,
    score_completion,
    task_from_seed,
)

from ._canonical import canonical_json, same_json

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


def _scored(task: RedactionTask, reply: str, budget_s: float) -> tuple[Any, float]:
    """``score_completion`` and the CPU seconds its scan spent here (what the budget
    counts, as the scan workers measure it; 0 for a reply that never reached a scan),
    charged to the allowance."""
    meter = Allowance()  # only measures: the contract's CPU figure of this process's scans
    with meter.charging():
        if _allowance is None:
            score = score_completion(task, reply, budget_s=budget_s)
        else:
            with _allowance.charging():
                score = score_completion(task, reply, budget_s=budget_s)
    return score, meter.spent


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


def _count(value: object) -> bool:
    """A JSON integer: not a float (``5.0``), not a boolean."""
    return isinstance(value, int) and not isinstance(value, bool)


def _with_level(params: dict[str, Any]) -> dict[str, Any]:
    return dict(params, level=params.get("level", DEFAULT_LEVEL))  # absent means the default level


def _timed_out(codes: Iterable[str]) -> bool:
    return bool(TIME_CODES.intersection(codes))


def _tallies(value: object) -> dict[str, tuple[int, ...]] | str:
    """A recorded per-family tally as {family: (a, b)}, or why it is malformed. Every
    count is a JSON integer: ``[494.0, 63.0]`` equals ``[494, 63]`` in Python, but the
    readers of class tables skip a pair that is not two integers, so a leaking class
    written with floats would verify and then vanish from every summary."""
    if not isinstance(value, dict):
        return "not a {family: [n, n]} table"
    out: dict[str, tuple[int, ...]] = {}
    for family, pair in value.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(_number(v) for v in pair)):
            return "not a {family: [n, n]} table"
        if not all(_count(v) for v in pair):
            return (f"its counts must be JSON integers, but {str(family)[:80]} has {str(pair)[:80]} (a count "
                    f"written as a float is skipped by the readers of class tables)")
        out[family] = tuple(pair)
    return out


def _compare_tallies(name: str, recorded: object, reproduced: dict[str, Any], partial: bool) -> list[str]:
    got = _tallies(recorded)
    want = {k: tuple(v) for k, v in reproduced.items()}
    if isinstance(got, str):
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}: {got}"]
    if partial:  # only the labelled/present counts are independent of the scan's progress
        got = {k: v[:1] for k, v in got.items()}
        want = {k: v[:1] for k, v in want.items()}
    if got != want:
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}, recomputed {str(reproduced)[:200]}"]
    return []


def _error_pairs(errors: Iterable[dict[str, Any]]) -> list[tuple[Any, Any]]:
    return [(e["code"], e.get("rule")) for e in errors]


_IDENTITY_TASK_KEYS = ("split", "split_commitment", "task_index", "task_params", "task_seed")


def _recorded_task_problems(trace: dict[str, Any]) -> list[str]:
    """Before regenerating: the task the trace names is one set of values, types
    included (``level: 1.0`` or ``index: 3.0`` equals the int in Python, but readers that
    want an int drop such a trace), in info.environment and in task.data."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    p = _with_level(env["task_params"])
    problems = [f"{where} is {value!r}, not a JSON integer"
                for where, value in (("info.environment.task_index", env["task_index"]),
                                     ("info.environment.task_seed", env["task_seed"]),
                                     *((f"info.environment.task_params.{k}", p.get(k))
                                       for k in ("n_shown", "n_eval", "level")))
                if not _count(value)]
    recorded = {"split": env["split"], "index": env["task_index"], **p}
    for key in ("split", "index", "n_shown", "n_eval", "budget_s", "level"):
        value = data.get(key, DEFAULT_LEVEL if key == "level" else None)
        if not same_json(value, recorded.get(key)):
            problems.append(f"task data {key}={value!r} but info.environment says {recorded.get(key)!r}")
    return problems


def _regenerated_problems(trace: dict[str, Any], task: RedactionTask) -> list[str]:
    """The task fields the trace records are the regenerated task's, as JSON values
    (types included), wherever it records them."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    published = task.task_data()["identity"]
    problems = []
    for where, got, want in (
            ("info.environment", {k: env[k] for k in _IDENTITY_TASK_KEYS if k != "task_seed"},
             {k: task.identity[k] for k in _IDENTITY_TASK_KEYS if k != "task_seed"}),
            ("task.data.identity", {k: data["identity"][k] for k in _IDENTITY_TASK_KEYS if k in data["identity"]},
             {k: published[k] for k in _IDENTITY_TASK_KEYS if k in published}),
            ("task.data", {k: data.get(k) for k in ("split", "index", "n_shown", "n_eval", "budget_s")}
             | {"level": data.get("level", DEFAULT_LEVEL)}, {"split": task.split, "index": task.index, **task.params})):
        if "task_params" in got and isinstance(got["task_params"], dict):
            got["task_params"] = _with_level(got["task_params"])
        if not same_json(got, want):
            problems.append(f"{where} records the task as {canonical_json(got).decode()[:300]}; the task "
                            f"regenerated from it is {canonical_json(want).decode()[:300]} (compared as JSON values, "
                            f"types included)")
    return problems


def _task_problems(trace: dict[str, Any], task: RedactionTask) -> list[str]:
    env, data = trace["info"]["environment"], trace["task"]["data"]
    problems = _regenerated_problems(trace, task)
    if env["task_id"] != task.id or data["id"] != task.id:
        problems.append(f"task id recorded as {env['task_id']!r}/{data['id']!r}; the regenerated task is {task.id!r}")
    if data["prompt"] != task.prompt:
        problems.append("the recorded prompt is not the prompt of the task regenerated from the revealed seed")
    if data["system_prompt"] != task.system_prompt:
        problems.append("the recorded system prompt is not this build's system prompt")
    return problems


def rescore_trace(trace: dict[str, Any]) -> Rescored:
    """How the schema-valid ``trace`` compares with its own reproduction."""
    env = trace["info"]["environment"]
    p = env["task_params"]
    problems = _recorded_task_problems(trace)
    if problems:
        return Rescored(problems)
    refusal = _allowance.budget_refusal(float(p["budget_s"])) if _allowance is not None else None
    if refusal is not None:
        return Rescored([], not_checked=refusal)
    if _allowance is None:
        task = task_of(trace)
    else:
        # Building the task is charged too (red team, 2026-12-03: only the scan was): a
        # trace chooses its parameters, up to 64 shown and 256 held-out records at level
        # 5, and an archive of such traces cost hours whatever --max-cpu said.
        with _allowance.charging(in_process=True):
            task = task_of(trace)
    problems = _task_problems(trace, task)
    reply = recorded_reply(trace)
    score, cpu = _scored(task, reply, task.budget_s)

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
        score, cpu = _scored(task, reply, budget)
        if _timed_out(e.code for e in score.errors):
            return Rescored([
                *problems,
                f"the recording finished, but rescoring ran out of time even with the budget extended "
                f"{BUDGET_EXTENSION:g}x ({budget:g} s): the recorded score could not be confirmed "
                f"(recorded errors {recorded_codes}, recomputed {[e.code for e in score.errors]})"], extended=True)
    reproduced_codes = [e.code for e in score.errors]
    rec_time, rep_time = _timed_out(recorded_codes), _timed_out(reproduced_codes)
    time_dependent = rec_time and not rep_time
    if time_dependent and cpu < task.budget_s / BUDGET_EXTENSION:
        problems.append(
            # (the seconds measured are not quoted: the verdict must not depend on the run)
            f"recorded a time-out {[c for c in recorded_codes if c in TIME_CODES]}, but this machine finished the "
            f"scan in less than 1/{BUDGET_EXTENSION:g} of the {task.budget_s:g} s budget "
            f"({task.budget_s / BUDGET_EXTENSION:g} s of CPU): the sealing machine would have had to be more than "
            f"{BUDGET_EXTENSION:g}x slower, outside the tolerance, so the time-out (which voids the episode's reward) "
            f"is not a machine-speed difference")
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
        typed = where == "info.redaction"  # the scorer's own values (trace.metrics are verifiers' floats)
        for name, want in wanted.items():
            if name not in recorded:
                problems.append(f"{where}.{name} is missing; recomputed {want!r}")
            elif partial and name in PROGRESS_METRICS:
                continue
            elif not _number(recorded[name]) or recorded[name] != want:
                problems.append(f"{where}.{name} recorded {recorded[name]!r}, recomputed {want!r}")
            elif typed and not same_json(recorded[name], want):
                kind = "integer" if _count(want) else "number with a fraction"
                problems.append(f"{where}.{name} recorded {recorded[name]!r}, recomputed {want!r}: the scorer "
                                f"writes a JSON {kind} here")
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
