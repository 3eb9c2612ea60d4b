"""The archive manifest (manifest-v2): what a seal commits to.

The manifest is the predicate of the signed in-toto Statement (``_statement.py``);
``manifest.toml`` beside it is the human-readable copy, written with tomli-w, that is
a subject of that Statement and must parse to exactly the predicate. It records which
task indices the run holds and how many rollouts of each (``coverage``), and the
summary carries the coverage label, so a partial run says so. Summary scores are
always written with the split they were measured on and a fixed label for that split,
so a public dev score cannot be quoted from an archive without saying it is one. The
task parameters every trace was scored with are recorded once (``task_params``); with
non-standard parameters the label says the result is not the standard benchmark.
"""

from __future__ import annotations

import datetime as dt
import math
import tomllib
from typing import Any

import tomli_w

from redaction_pressure.contract import summary_means

from ._canonical import CANONICALIZATION, StrictJSONError, decode_utf8
from ._coverage import coverage_of, trace_indices
from ._labels import summary_label
from ._tracefile import TRACES_NAME, TraceFile

MANIFEST_VERSION = "manifest-v2"
MANIFEST_NAME = "manifest.toml"
BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")
TASK_KEYS = ("split", "split_commitment", "task_index", "task_params", "task_id", "task_seed")


class ManifestError(Exception):
    pass


def build_part(environment: dict[str, Any]) -> dict[str, Any]:
    """The build half of a trace's info.environment (every key but the task's)."""
    return {k: v for k, v in environment.items() if k not in TASK_KEYS}


def summarize(traces: list[dict[str, Any]], split: str, task_params: dict[str, Any]) -> dict[str, Any]:
    """Summary scores of schema-valid traces (`summary_means`, the CLI's figures),
    labelled with their split, task parameters and coverage."""
    means = summary_means(traces)
    return {
        "split": split,
        "label": summary_label(split, task_params),
        "traces": means["traces"],
        "mean_reward": means["mean_reward"],
        "mean_recall": means["mean_recall"],
        "mean_precision": means["mean_precision"],
        "clean_rate": means["clean_rate"],
        "invalid": means["invalid"],
        "coverage": coverage_of(split, trace_indices(traces))["label"],
    }


def build_manifest(tracefile: TraceFile, run_id: str, sealed_by: str,
                   created: dt.datetime | None = None) -> dict[str, Any]:
    """The manifest of a schema-valid trace file whose traces agree on build, split and
    task parameters."""
    traces = [e.trace for e in tracefile.entries]
    env = traces[0]["info"]["environment"]
    split, task_params = env["split"], dict(env["task_params"])
    summary = summarize(traces, split, task_params)
    created = created or dt.datetime.now(dt.UTC)
    return {
        "manifest_version": MANIFEST_VERSION,
        "created": created.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sealed_by": sealed_by,
        "run_id": run_id,
        "identity": build_part(env),
        "split": {"name": split, "commitment": env["split_commitment"]},
        "task_params": task_params,
        "counts": {"episodes": len(tracefile.episodes), "traces": len(traces),
                   "valid": len(traces) - summary["invalid"], "invalid": summary["invalid"]},
        "summary": summary,
        "coverage": coverage_of(split, trace_indices(traces)),
        "traces_file": {"path": TRACES_NAME, "sha256": tracefile.sha256, "bytes": tracefile.size},
        "canonicalization": CANONICALIZATION,
        "traces": [{"line": e.line, "position": e.position, "task_id": e.task_id, "sha256": e.digest}
                   for e in tracefile.entries],
    }


def dumps(manifest: dict[str, Any]) -> bytes:
    return tomli_w.dumps(manifest).encode("utf-8")


def loads(data: bytes) -> dict[str, Any]:
    """Parses manifest bytes (strict UTF-8 TOML, no byte order mark). Raises ManifestError."""
    try:
        return tomllib.loads(decode_utf8(data, "the manifest"))
    except StrictJSONError as exc:  # decode_utf8's error; nothing JSON about it here
        raise ManifestError(str(exc)) from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise ManifestError(f"the manifest is not valid TOML: {str(exc)[:300]}") from None


def jsonable(value: Any) -> Any:
    """tomllib's values as JSON Schema should see them. TOML has kinds JSON lacks:
    dates/times and nan/inf floats. They become tagged objects, so the manifest schema
    (which wants strings and finite numbers) rejects them on type, loudly, instead of
    a NaN slipping through every numeric bound."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return {"toml-datetime": value.isoformat()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"toml-float": repr(value)}
    return value
