"""Recomputes a trace's rewards from its recorded reply and the regenerated task.

The task is rebuilt from the seed the trace revealed (``task_from_seed``), with the
split, index and parameters the trace records, and must reproduce the recorded task
data (id, prompt, system prompt), so a reply cannot be scored against a task other
than the one its prompt showed. The reply is the content of the last ``sampled`` node,
exactly as the taskset adapter reads it. Everything the scorer outputs is compared,
exactly (floats with ``==``: both sides come from the same arithmetic, and JSON
round-trips doubles exactly; a JSON ``true`` is not the number 1): the three reward
scores and their reward-v1 weights; every key of ``Score.metrics()`` (valid,
secrets_total, secrets_removed, removed_chars, collateral_chars, matches, errors) in
both ``trace.metrics`` and ``info.redaction``; ``info.redaction``'s reward, recall,
precision, clean and its per-family tallies (``secret_families``, ``decoy_families``);
and the (code, rule) pair of every error. Error messages are not compared (they may
quote timings).

Wall-clock caveat: the regex budget is measured in seconds, so ``timeout`` and
``budget_exhausted`` depend on the machine. When the recorded errors include one of
them and the reproduction also ends in one of them, the time codes are treated as
matching. What does not depend on how far the scan got is still compared exactly:
rewards and valid (all 0 on both sides: an error voids the episode), secrets_total, the
number of errors, the other errors' (code, rule) pairs, and the family names with
their labelled/present counts. Not compared in that case: secrets_removed,
removed_chars, collateral_chars, matches, the families' removed/damaged counts and
the rule at which time ran out. Any other difference, including a recorded timeout
that does not reproduce or a reproduction that times out where the recording did
not, is a mismatch: the recorded score could not be confirmed.

Only the scoring core is imported (no verifiers), and regenerated tasks are cached:
several rollouts of one task share one regeneration.
"""

from __future__ import annotations

from functools import lru_cache

from redaction_pressure._reward import WEIGHTS
from redaction_pressure._scoring import score_completion
from redaction_pressure._task import RedactionTask, task_from_seed

TIME_CODES = frozenset({"timeout", "budget_exhausted"})


@lru_cache(maxsize=1024)
def regenerate(split: str, index: int, seed: int, commitment: str, n_shown: int, n_eval: int,
               budget_s: float) -> RedactionTask:
    return task_from_seed(split, index, seed, commitment, n_shown, n_eval, budget_s)


def recorded_reply(trace: dict) -> str:
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


def task_of(trace: dict) -> RedactionTask:
    env = trace["info"]["environment"]
    p = env["task_params"]
    return regenerate(env["split"], env["task_index"], env["task_seed"], env["split_commitment"],
                      p["n_shown"], p["n_eval"], float(p["budget_s"]))


# Score.metrics() keys whose value depends on how far a timed-out scan got.
PROGRESS_METRICS = frozenset({"secrets_removed", "removed_chars", "collateral_chars", "matches"})


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tallies(value):
    """A recorded per-family tally as {family: (a, b)}, or None when malformed."""
    if not isinstance(value, dict):
        return None
    out = {}
    for family, pair in value.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(_number(v) for v in pair)):
            return None
        out[family] = tuple(pair)
    return out


def _compare_tallies(name: str, recorded, reproduced: dict, timed_out: bool) -> list[str]:
    got = _tallies(recorded)
    want = {k: tuple(v) for k, v in reproduced.items()}
    if got is None:
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}, not a {{family: [n, n]}} table"]
    if timed_out:  # only the labelled/present counts are independent of the scan's progress
        got = {k: v[0] for k, v in got.items()}
        want = {k: v[0] for k, v in want.items()}
    if got != want:
        return [f"info.redaction.{name} recorded {str(recorded)[:200]}, recomputed {str(reproduced)[:200]}"]
    return []


def _error_pairs(errors) -> list[tuple]:
    return [(e["code"], e.get("rule")) for e in errors]


def rescore(trace: dict) -> list[str]:
    """Every way the schema-valid ``trace`` disagrees with its own reproduction ([] if none)."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    problems = []
    p = env["task_params"]
    for key, value in (("split", env["split"]), ("index", env["task_index"]), ("n_shown", p["n_shown"]),
                       ("n_eval", p["n_eval"]), ("budget_s", p["budget_s"])):
        if data[key] != value:
            problems.append(f"task data {key}={data[key]!r} but info.environment says {value!r}")
    if problems:
        return problems
    task = task_of(trace)
    if env["task_id"] != task.id or data["id"] != task.id:
        problems.append(f"task id recorded as {env['task_id']!r}/{data['id']!r}; the regenerated task is {task.id!r}")
    if data["prompt"] != task.prompt:
        problems.append("the recorded prompt is not the prompt of the task regenerated from the revealed seed")
    if data["system_prompt"] != task.system_prompt:
        problems.append("the recorded system prompt is not this build's system prompt")
    score = score_completion(task, recorded_reply(trace))

    recorded_errors = trace["info"]["redaction_errors"]
    recorded_codes = [e["code"] for e in recorded_errors]
    reproduced_codes = [e.code for e in score.errors]
    timed_out = bool(TIME_CODES.intersection(recorded_codes)) and bool(TIME_CODES.intersection(reproduced_codes))
    recorded_pairs = _error_pairs(recorded_errors)
    reproduced_pairs = [(e.code, e.rule) for e in score.errors]
    if timed_out:
        recorded_pairs = [x for x in recorded_pairs if x[0] not in TIME_CODES]
        reproduced_pairs = [x for x in reproduced_pairs if x[0] not in TIME_CODES]
    if not codes_match(recorded_codes, reproduced_codes):
        problems.append(f"error codes recorded {recorded_codes}, recomputed {reproduced_codes}")
    elif recorded_pairs != reproduced_pairs:
        problems.append(f"errors (code, rule) recorded {recorded_pairs}, recomputed {reproduced_pairs}")
    rewards = trace["rewards"]
    for name, weight in WEIGHTS.items():
        got, want = rewards[name], getattr(score, name)
        if got["weight"] != weight:
            problems.append(f"{name} weight recorded {got['weight']!r}, reward-v1 says {weight!r}")
        if got["score"] != want:
            problems.append(f"{name} recorded {got['score']!r}, recomputed {want!r}")

    metrics = score.metrics()
    compared = [("metrics", trace["metrics"], metrics)]
    summary = trace["info"].get("redaction")
    if isinstance(summary, dict):
        compared.append(("info.redaction", summary, {"reward": score.reward, "recall": score.recall,
                                                     "precision": score.precision, "clean": score.clean,
                                                     **metrics}))
    else:
        problems.append("info.redaction is missing: the scorer's outputs are not recorded")
    for where, recorded, wanted in compared:
        for name, want in wanted.items():
            if name not in recorded:
                problems.append(f"{where}.{name} is missing; recomputed {want!r}")
            elif timed_out and name in PROGRESS_METRICS:
                continue
            elif not _number(recorded[name]) or recorded[name] != want:
                problems.append(f"{where}.{name} recorded {recorded[name]!r}, recomputed {want!r}")
    if isinstance(summary, dict):
        problems += _compare_tallies("secret_families", summary.get("secret_families"), score.secret_families,
                                     timed_out)
        problems += _compare_tallies("decoy_families", summary.get("decoy_families"), score.decoy_families,
                                     timed_out)
    return problems
