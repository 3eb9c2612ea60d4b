"""What was evaluated: the model, its sampling settings, the harness and the run, as the
run recorded them.

A score without its model is a number about nothing, and the traces already say what
ran: verifiers records ``agent.config.model``, ``agent.config.sampling`` and
``agent.config.harness.id`` in every trace, and each Episode line names its run
(``run.name``, ``run.id``). `redaction-pressure eval` records the model
``policy:NAME`` and no harness: such a run is the built-in policy NAME, with no model.

This is metadata the run recorded, not proof: an archive's signature binds it to the
traces, and `audit verify` checks that the manifest says what the traces say, but no
one can check offline that the replies came from the model named. Everything read is
hostile text, so it is made bounded and plain (strings cut to `MAX_TEXT` characters,
sampling values to scalars), deterministically: the auditor recomputes the same record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

MAX_TEXT = 256
MAX_SAMPLING_KEYS = 32
POLICY_PREFIX = "policy:"
POLICY_HARNESS = "none: a built-in policy of redaction-pressure eval"
_INT64 = 1 << 63


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _scalar(value: object) -> str | int | float | bool:
    """A sampling value TOML and the manifest schema hold: a bounded string, a 64-bit
    integer, a finite float, a boolean; anything else as its compact JSON text."""
    if isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else str(value)[:MAX_TEXT]
    if isinstance(value, str):
        return value[:MAX_TEXT]
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "unreadable"
    return text[:MAX_TEXT]


def sampling_of(config: dict[str, Any]) -> dict[str, str | int | float | bool]:
    """The sampling settings a trace's agent config records, set ones only (verifiers
    writes null for a setting left to the provider), in key order."""
    raw = _dict(config.get("sampling"))
    keys = sorted(k for k, v in raw.items() if isinstance(k, str) and v is not None)
    return {k[:MAX_TEXT]: _scalar(raw[k]) for k in keys[:MAX_SAMPLING_KEYS]}


def _one(trace: object, run: object) -> dict[str, Any]:
    config = _dict(_dict(_dict(trace).get("agent")).get("config"))
    model = _text(config.get("model"))
    harness = _text(_dict(config.get("harness")).get("id"))
    run_info = _dict(run)
    out: dict[str, Any] = {"kind": "model", "model": model, "sampling": sampling_of(config),
                           "harness": harness, "run_name": _text(run_info.get("name")),
                           "run_id": _text(run_info.get("id"))}
    if model.startswith(POLICY_PREFIX) and not harness:
        out.update(kind="policy", policy=model.removeprefix(POLICY_PREFIX), harness=POLICY_HARNESS)
    return out


def evaluated_of(traces: Sequence[object], runs: Sequence[object]) -> tuple[dict[str, Any], list[str]]:
    """(what the run evaluated, why it is not one thing: [] when every trace names the same
    model, sampling, harness and run: one run name, or one run id where the traces name
    none). ``runs``: each trace's Episode ``run`` object.
    With several, the first trace's is returned beside the problems."""
    records = [_one(t, r) for t, r in zip(traces, runs, strict=True)]
    if not records:
        return _one({}, {}), ["no traces"]
    first = records[0]
    problems = []
    # A resumed run has one id per invocation (vf-eval --resume) under its one name: one
    # run. Ids count only where no name says so.
    named = all(r["run_name"] for r in records) and len({r["run_name"] for r in records}) == 1
    if named and len({r["run_id"] for r in records}) > 1:
        # ... but only as a resume leaves it: every task with as many rollouts (two runs
        # of one name pasted together are not one run: a review, 2026-12-03)
        per_task: dict[str, int] = {}
        for t in traces:
            task = _text(_dict(_dict(_dict(t).get("task")).get("data")).get("id"))
            per_task[task] = per_task.get(task, 0) + 1
        if len(set(per_task.values())) > 1:
            named = False
    for key, what in (("model", "models"), ("sampling", "sampling settings"), ("harness", "harnesses"),
                      ("run_name", "run names"), *([] if named else [("run_id", "run ids")])):
        seen = sorted({json.dumps(r[key], sort_keys=True) for r in records})
        if len(seen) > 1:
            shown = ", ".join(s[:80] for s in seen[:4]) + (", ..." if len(seen) > 4 else "")
            problems.append(f"the traces name {len(seen)} different {what}: {shown}")
    return first, problems


def describe(evaluated: dict[str, Any]) -> str:
    """``model fake-model (max_tokens=2048, temperature=0.7) · harness null · run e2e (id …)``."""
    run = evaluated.get("run_name") or "unnamed"
    run_id = evaluated.get("run_id") or ""
    if run_id and run_id != run:
        shown = run_id if len(run_id) <= 24 else run_id[:24] + "…"
        run += f" (id {shown}{', not uploaded' if run_id.startswith('disabled-') else ''})"
    if evaluated.get("kind") == "policy":
        return f"built-in policy {evaluated.get('policy')} (no model) · run {run}"
    sampling = evaluated.get("sampling") or {}
    settings = ", ".join(f"{k}={v}" for k, v in sampling.items()) or "provider defaults"
    return (f"model {evaluated.get('model') or 'not recorded'} ({settings}) · harness "
            f"{evaluated.get('harness') or 'not recorded'} · run {run}")
