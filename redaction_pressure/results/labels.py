"""Whether a trace's labels describe the task its data rebuilds.

A trace says which task it scored twice: the labels readers show (``info.environment``:
split, commitment, task index and seed, task parameters) and the task data a rescoring
rebuilds the task from (``task.data``: split, index, parameters, and its own copy of the
identity). The scorer writes both from one task, so they always agree. A run edited to
look like something else (train tasks labelled dev, 64 shown records labelled the
standard 8) changes the labels and keeps the data that reproduces its rewards: the
rewards then "reproduce", and the labels would be believed. Every reader of an unsealed
run (`rescore`, `compare`, the report) checks this first, without building anything;
`audit verify` checks the same and more for archives.
"""

from __future__ import annotations

from typing import Any

from ..task.tasks import task_id

_PARAMS = ("n_shown", "n_eval", "budget_s", "level")
_IDENTITY = ("split", "split_commitment", "task_index", "task_params", "task_seed")


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _same(a: object, b: object) -> bool:
    """JSON equality that keeps booleans apart from numbers (``true`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and (isinstance(a, (int, float)) == isinstance(b, (int, float)))


def _shown(value: object) -> str:
    return repr(value)[:60]


def label_problems(trace: object) -> list[str]:
    """How ``trace``'s labels (info.environment) disagree with its task data (task.data
    and task.data.identity); empty when they agree or the trace records no labels."""
    t = _dict(trace)
    env = _dict(_dict(t.get("info")).get("environment"))
    data = _dict(_dict(t.get("task")).get("data"))
    if not env:
        return []  # nothing labelled: no split or parameters are read from it
    if not data:
        # Every scored trace records its task data; without it no label can be checked,
        # and an edited run would pass by deleting it.
        return ["it records labels (info.environment) but no task data (task.data) to check them against"]
    problems: list[str] = []
    pairs = [("split", env.get("split"), data.get("split")), ("task index", env.get("task_index"), data.get("index"))]
    params = _dict(env.get("task_params"))
    for key in _PARAMS:
        recorded = data.get(key, 1 if key == "level" else None)
        pairs.append((key, params.get(key, 1 if key == "level" else None), recorded))
    if "task_id" in env and "id" in data:
        pairs.append(("task id", env.get("task_id"), data.get("id")))
    index = data.get("index")
    if isinstance(index, int) and not isinstance(index, bool):
        # An id is "{split}-{index:06d}": one naming another index titled a page as another
        # task's (red team, 2026-12-03). Its split part is the split label's, checked
        # against the commitment and seeds where the split is established.
        suffix = task_id("", index)
        for key in ("id", "name"):
            if key in data and not (isinstance(data[key], str) and data[key].endswith(suffix)):
                problems.append(f"task {key}: task.data says {_shown(data[key])}, its index is {index}")
    identity = data.get("identity")
    if isinstance(identity, dict):
        for key in _IDENTITY:  # a private row's identity holds no seed: it is revealed by scoring
            if key in identity and key in env:
                label, rebuilt = env.get(key), identity.get(key)
                if key == "task_params" and isinstance(label, dict) and isinstance(rebuilt, dict):
                    label, rebuilt = {"level": 1, **label}, {"level": 1, **rebuilt}  # absent means level 1
                pairs.append((f"identity {key}", label, rebuilt))
    for what, label, rebuilt in pairs:
        if not _same(label, rebuilt):
            problems.append(f"{what}: info.environment says {_shown(label)}, task.data says {_shown(rebuilt)}")
    return problems


def disagreement(trace: object) -> str | None:
    """One line on how the labels disagree with the task data, or None."""
    found = label_problems(trace)
    if not found:
        return None
    more = f" (and {len(found) - 2} more)" if len(found) > 2 else ""
    return "its labels do not describe the task its data rebuilds: " + "; ".join(found[:2]) + more
