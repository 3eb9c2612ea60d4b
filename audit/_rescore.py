"""Recomputes a trace's rewards from its recorded reply and the regenerated task.

The task is rebuilt from the seed the trace revealed (``task_from_seed``), with the
split, index and parameters the trace records, and must reproduce the recorded task
data (id, prompt, system prompt), so a reply cannot be scored against a task other
than the one its prompt showed. The reply is the content of the last ``sampled`` node,
exactly as the taskset adapter reads it. Scores, weights and error codes are compared
exactly (floats with ``==``: both sides come from the same arithmetic, and JSON
round-trips doubles exactly).

Wall-clock caveat: the regex budget is measured in seconds, so ``timeout`` and
``budget_exhausted`` depend on the machine. When the recorded errors include one of
them and the reproduction also ends in one of them, the codes are treated as matching
(all scores are then 0 on both sides by the contract). Any other difference, including
a recorded timeout that does not reproduce or a reproduction that times out where the
recording did not, is a mismatch: the recorded score could not be confirmed.

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

    recorded_codes = [e["code"] for e in trace["info"]["redaction_errors"]]
    reproduced_codes = [e.code for e in score.errors]
    if not codes_match(recorded_codes, reproduced_codes):
        problems.append(f"error codes recorded {recorded_codes}, recomputed {reproduced_codes}")
    rewards = trace["rewards"]
    for name, weight in WEIGHTS.items():
        got, want = rewards[name], getattr(score, name)
        if got["weight"] != weight:
            problems.append(f"{name} weight recorded {got['weight']!r}, reward-v1 says {weight!r}")
        if got["score"] != want:
            problems.append(f"{name} recorded {got['score']!r}, recomputed {want!r}")
    if trace["metrics"]["valid"] != score.valid:
        problems.append(f"metrics.valid recorded {trace['metrics']['valid']!r}, recomputed {score.valid!r}")
    summary = trace["info"].get("redaction")
    if isinstance(summary, dict):
        for name in ("reward", "recall", "precision", "clean", "valid"):
            if name in summary and summary[name] != getattr(score, name):
                problems.append(f"info.redaction.{name} recorded {summary[name]!r}, recomputed {getattr(score, name)!r}")
    return problems
