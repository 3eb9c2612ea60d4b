"""Split labels against commitments: what stops a public result passing as private.

A split label is only a claim; the commitment and the seeds are what bind a trace to
a split. Public splits commit to their documented seed range, and every seed must be
that range's start plus the task index. A ``private_eval`` trace must carry a
``private-sha256:`` commitment that is no public range's, a seed outside every public
range (private seeds have the top bit of 64 set), and must not have published its seed
in the task data. Without the secret this proves the seeds are not public ones, not
that they came from the committed secret: ``private_seed_problems`` does that, given
the secret.

Task parameters (``n_shown``, ``n_eval``, ``budget_s``) and the difficulty level decide
how hard a task is, so they are part of what a result claims. An archive states one set
of shared parameters for all its traces (``task_params``) and the levels they cover
(``levels``: one, or several for a run that mixes levels, which is then also summarised
per level). The standard benchmark is the environment's defaults (8, 16, 2.0) at level 1.
A result measured otherwise is genuine for what it measured but is not the standard
benchmark: its signed summary label says so (``summary_label``), and `audit verify`
shows it in the report and the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from redaction_pressure.contract import (
    DEFAULT_BUDGET_S,
    DEFAULT_LEVEL,
    DEFAULT_N_EVAL,
    DEFAULT_N_SHOWN,
    PRIVATE_SIZE,
    SPLIT_LABELS,
    private_commitment,
    private_seed,
)
from redaction_pressure.contract import PUBLIC_SPLITS as PUBLIC

from ._canonical import same_json

_PUBLIC_COMMITMENTS = {r.commitment: name for name, r in PUBLIC.items()}
_PRIVATE_MIN_SEED, _SEED_LIMIT = 1 << 63, 1 << 64
PARAM_KEYS = ("n_shown", "n_eval", "budget_s")  # shared by every trace of an archive
STANDARD_TASK_PARAMS = {"n_shown": DEFAULT_N_SHOWN, "n_eval": DEFAULT_N_EVAL, "budget_s": float(DEFAULT_BUDGET_S)}
STANDARD_LEVELS = [DEFAULT_LEVEL]


def describe_params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={params.get(k)!r}" for k in PARAM_KEYS)


def describe_levels(levels: list[int]) -> str:
    return f"level {levels[0]}" if len(levels) == 1 else f"levels {', '.join(map(str, levels))} (mixed)"


def shared_params(task_params: dict[str, Any]) -> dict[str, Any]:
    """A trace's task parameters without its level: what every trace of an archive shares."""
    return {k: v for k, v in task_params.items() if k != "level"}


def is_standard(params: dict[str, Any], levels: list[int] | None = None) -> bool:
    """The standard benchmark's parameters (and, if given, only its level)."""
    same = {k: params.get(k) for k in PARAM_KEYS} == STANDARD_TASK_PARAMS and len(params) == len(PARAM_KEYS)
    return same and (levels is None or levels == STANDARD_LEVELS)


def summary_label(split: str, params: dict[str, Any], levels: list[int]) -> str:
    """The fixed label of ``split``; a level other than the standard one, or a mix of
    levels, is named; with other non-standard task parameters, a label that says the
    result is not the standard benchmark and names the parameters."""
    label = SPLIT_LABELS[split]
    if is_standard(params, levels):
        return label
    if len(levels) > 1:
        where = (f"difficulty levels {', '.join(map(str, levels))} mixed (each level is summarised apart; the "
                 f"standard benchmark is level {DEFAULT_LEVEL} alone)")
    else:
        where = f"difficulty level {levels[0]} (the standard benchmark is level {DEFAULT_LEVEL})"
    if is_standard(params):
        return f"{label}; {where}"
    odd = (f"{label}; NON-STANDARD task parameters ({describe_params(params)}; the standard benchmark uses "
           f"{describe_params(STANDARD_TASK_PARAMS)}): not comparable with standard results")
    return odd if levels == STANDARD_LEVELS else f"{odd}; {where}"


def task_params_problems(trace: dict[str, Any], params: dict[str, Any], levels: list[int]) -> list[str]:
    """Where a schema-valid trace's task parameters differ from the archive's shared
    ``params`` or its ``levels``, or from themselves: the ones it was scored with
    (info.environment), the ones its task published (task.data.identity) and the task
    data fields must be one set."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    scored = env["task_params"]
    level = scored.get("level", DEFAULT_LEVEL)
    problems = []
    # compared as JSON values, types included: a level of 1.0 is not the level 1
    if not same_json(shared_params(scored), params):
        problems.append(f"info.environment.task_params is {describe_params(scored)}; the archive's task "
                        f"parameters are {describe_params(params)}")
    if not any(same_json(level, lv) for lv in levels):
        problems.append(f"info.environment.task_params.level is {level!r}; the archive covers "
                        f"{describe_levels(levels)}")
    fields = {k: data.get(k) for k in PARAM_KEYS} | {"level": data.get("level", DEFAULT_LEVEL)}
    for where, value in (("task.data.identity.task_params", data["identity"]["task_params"]),
                         ("task.data (n_shown, n_eval, budget_s, level)", fields)):
        if not same_json(dict(value, level=value.get("level", DEFAULT_LEVEL)), dict(scored, level=level)):
            problems.append(f"{where} is {describe_params(value)}, level {value.get('level', DEFAULT_LEVEL)!r}; "
                            f"the trace was scored with {describe_params(scored)}, level {level!r}")
    return problems


def commitment_problems(split: str, commitment: str) -> list[str]:
    if split in PUBLIC:
        expected = PUBLIC[split].commitment
        if commitment != expected:
            return [f"split {split} claims commitment {commitment}, but {split}'s public seed range "
                    f"commitment is {expected}"]
        return []
    if split != "private_eval":
        return [f"unknown split {split!r}"]
    if commitment in _PUBLIC_COMMITMENTS:
        return [f"labelled private_eval but carries the public {_PUBLIC_COMMITMENTS[commitment]} "
                f"commitment: this is a public result relabelled"]
    if not commitment.startswith("private-sha256:"):
        return [f"labelled private_eval but its commitment {commitment} is not a private-sha256 commitment"]
    return []


def manifest_problems(manifest: dict[str, Any]) -> list[str]:
    split, commitment = manifest["split"]["name"], manifest["split"]["commitment"]
    problems = commitment_problems(split, commitment)
    summary = manifest["summary"]
    if summary["split"] != split:
        problems.append(f"the summary is labelled split {summary['split']!r} but the archive is split {split!r}")
    expected = (summary_label(split, manifest["task_params"], manifest["levels"])
                if split in SPLIT_LABELS and manifest["levels"] else None)
    if summary["label"] != expected:
        problems.append(f"the summary label {summary['label']!r} is not the label of split {split!r} with "
                        f"these task parameters ({expected!r})")
    return problems


def trace_problems(trace: dict[str, Any], split: str, commitment: str) -> list[str]:
    """How a schema-valid trace disagrees with the archive's split and commitment."""
    env, data = trace["info"]["environment"], trace["task"]["data"]
    ident = data["identity"]
    problems = []
    for where, value in (("info.environment.split", env["split"]), ("task.data.split", data["split"]),
                         ("task.data.identity.split", ident["split"])):
        if not same_json(value, split):
            problems.append(f"{where} is {value!r}, the archive is split {split!r}")
    for where, value in (("info.environment", env["split_commitment"]),
                         ("task.data.identity", ident["split_commitment"])):
        if value != commitment:
            problems.append(f"{where} commitment {value} differs from the archive's {commitment}")
    index, seed = env["task_index"], env["task_seed"]
    if not same_json(ident["task_index"], index):
        problems.append(f"task.data.identity.task_index {ident['task_index']} differs from info.environment's {index}")
    if split in PUBLIC:
        r = PUBLIC[split]
        if not 0 <= index < r.size:
            problems.append(f"task index {index} is outside {split}'s {r.size} tasks")
        elif not same_json(seed, r.start + index):
            problems.append(f"revealed seed {seed} is not {split}'s seed for index {index} ({r.start + index})")
        if not same_json(ident.get("task_seed"), seed):
            problems.append(f"task.data.identity.task_seed {ident.get('task_seed')!r} differs from the revealed {seed}")
    elif split == "private_eval":
        if not _PRIVATE_MIN_SEED <= seed < _SEED_LIMIT:
            owner = next((n for n, r in PUBLIC.items() if r.start <= seed < r.start + r.size), None)
            problems.append(f"revealed seed {seed} cannot be a private seed"
                            + (f" (it is {owner}'s public seed {seed - PUBLIC[owner].start})" if owner else ""))
        if index >= PRIVATE_SIZE:
            problems.append(f"task index {index} is outside private_eval's {PRIVATE_SIZE} tasks")
        if "task_seed" in ident:
            problems.append("the private seed was published in the task data (task.data.identity.task_seed)")
    return problems


def private_seed_problems(secret: bytes, commitment: str, traces: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
    """Checks the commitment against ``secret`` and re-derives every revealed seed."""
    expected = private_commitment(secret)
    if commitment != expected:
        return [f"the archive's commitment {commitment} is not the commitment of the supplied secret "
                f"({expected}): wrong secret, or seeds not drawn from it"]
    problems = []
    for where, trace in traces:
        env = trace["info"]["environment"]
        index, seed = env["task_index"], env["task_seed"]
        if not 0 <= index < PRIVATE_SIZE:
            problems.append(f"{where}: task index {index} is outside private_eval")
        elif private_seed(secret, index) != seed:
            problems.append(f"{where}: revealed seed {seed} is not the seed the secret derives for index {index}")
    return problems
