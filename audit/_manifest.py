"""The archive manifest (manifest-v3): what a seal commits to.

The manifest is the predicate of the signed in-toto Statement (``_statement.py``);
``manifest.toml`` beside it is the human-readable copy, written with tomli-w, that is
a subject of that Statement and must parse to exactly the predicate. It records:

- what was evaluated (``evaluated``): the model, its sampling settings, the harness and
  the run name and id as the traces record them, or the built-in policy;
- which task indices the run holds and how many rollouts of each (``coverage``), what
  the split's standard evaluation misses, and rollouts left out at sealing;
- the shared task parameters (``task_params``: n_shown, n_eval, budget_s) and the
  difficulty levels covered (``levels``); with anything but the standard benchmark the
  label says so;
- the summary: means labelled with their split and coverage (means over tasks, each
  task's rollouts averaged first, so every task weighs the same), each with its standard
  error and 95% intervals (clustered by task; the bootstrap is seeded, so `audit verify`
  recomputes the same bytes), leaks and damage by class; and each level's own figures
  (``by_level``), since a mean over a mix of levels depends on the mix.

Every figure is recomputed from the traces by `audit verify` and compared exactly.
"""

from __future__ import annotations

import datetime as dt
import math
import tomllib
from collections import Counter
from typing import Any

import tomli_w

from redaction_pressure.contract import (
    MEAN_OVER_TASKS,
    class_summary,
    coverage_of,
    evaluated_of,
    level_summaries,
    loads_toml,
    run_uncertainty,
    summary_means,
)

from ._canonical import CANONICALIZATION, StrictJSONError, decode_utf8
from ._coverage import trace_indices
from ._labels import shared_params, summary_label
from ._tracefile import TRACES_NAME, TraceFile

MANIFEST_VERSION = "manifest-v3"
MANIFEST_NAME = "manifest.toml"
BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")
TASK_KEYS = ("split", "split_commitment", "task_index", "task_params", "task_id", "task_seed")
DEFAULT_LEVEL = 1
_MEANS = ("traces", "mean_reward", "mean_recall", "mean_precision", "clean_rate", "invalid")


class ManifestError(Exception):
    pass


def build_part(environment: dict[str, Any]) -> dict[str, Any]:
    """The build half of a trace's info.environment (every key but the task's)."""
    return {k: v for k, v in environment.items() if k not in TASK_KEYS}


def level_of(trace: dict[str, Any]) -> int:
    level: int = trace["info"]["environment"]["task_params"].get("level", DEFAULT_LEVEL)
    return level


def uneven(traces: list[dict[str, Any]]) -> bool:
    """Whether the traces' tasks (index and level) have different numbers of rollouts:
    then the summary's means, means over tasks, are not the means over rollouts, and
    what shows them says so."""
    counts = Counter((t["info"]["environment"]["task_index"], level_of(t)) for t in traces)
    return len(set(counts.values())) > 1


def mean_note(manifest: dict[str, Any]) -> str:
    """`` (mean over tasks: …)`` after a mean whose tasks hold uneven rollout counts,
    else "". A task is an index at a level, as `summary_means` groups them (review,
    2026-12-04: read from the run's coverage, which counts per index, the note named a
    plain mean of a run mixing two levels uneven, and missed an uneven one): so the
    counts are each level's coverage."""
    levels = manifest.get("by_level") or [manifest]
    counts = {n for entry in levels for n in entry["coverage"]["rollouts"]}
    return f" ({MEAN_OVER_TASKS})" if len(counts) > 1 else ""


def levels_of(traces: list[dict[str, Any]]) -> list[int]:
    return sorted({level_of(t) for t in traces})


def summarize(traces: list[dict[str, Any]], split: str, task_params: dict[str, Any], levels: list[int],
              excluded: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary, by_level) of schema-valid traces: `summary_means` (the CLI's figures)
    with their uncertainty and class tables, labelled with their split, task parameters,
    levels and coverage; then each level's coverage and figures."""
    means = summary_means(traces)
    figures = run_uncertainty(traces)
    summary = {"split": split, "label": summary_label(split, task_params, levels),
               **{k: means[k] for k in _MEANS},
               "coverage": coverage_of(split, trace_indices(traces), excluded)["label"],
               "uncertainty": figures, **class_summary(traces)}
    per_level = []
    for lv in level_summaries(traces, figures):
        indices = trace_indices(t for t in traces if level_of(t) == lv["level"])
        cov = coverage_of(split, indices)
        per_level.append({"level": lv["level"],
                          "coverage": {k: cov[k] for k in ("tasks", "task_indices", "rollouts")},
                          "summary": {**{k: lv[k] for k in _MEANS}, "uncertainty": lv["uncertainty"]}})
    return summary, per_level


def build_manifest(tracefile: TraceFile, run_id: str, sealed_by: str, created: dt.datetime | None = None,
                   excluded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of a schema-valid trace file whose traces agree on build, split,
    shared task parameters and what was evaluated; ``excluded``: the rollouts left out."""
    traces = [e.trace for e in tracefile.entries]
    env = traces[0]["info"]["environment"]
    split, task_params = env["split"], shared_params(env["task_params"])
    levels = levels_of(traces)
    summary, per_level = summarize(traces, split, task_params, levels, excluded)
    evaluated, _ = evaluated_of(traces, episode_runs(tracefile))
    created = created or dt.datetime.now(dt.UTC)
    return {
        "manifest_version": MANIFEST_VERSION,
        "created": created.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sealed_by": sealed_by,
        "run_id": run_id,
        "evaluated": evaluated,
        "identity": build_part(env),
        "split": {"name": split, "commitment": env["split_commitment"]},
        "task_params": task_params,
        "levels": levels,
        "counts": {"episodes": len(tracefile.episodes), "traces": len(traces),
                   "valid": len(traces) - summary["invalid"], "invalid": summary["invalid"]},
        "summary": summary,
        "by_level": per_level,
        "coverage": coverage_of(split, trace_indices(traces), excluded),
        "traces_file": {"path": TRACES_NAME, "sha256": tracefile.sha256, "bytes": tracefile.size},
        "canonicalization": CANONICALIZATION,
        "traces": [{"line": e.line, "position": e.position, "task_id": e.task_id, "sha256": e.digest}
                   for e in tracefile.entries],
    }


def run_ids(tracefile: TraceFile) -> set[Any]:
    """The run ids the Episodes record (None for an Episode that records none)."""
    return {ep.get("run", {}).get("id") if isinstance(ep.get("run"), dict) else None for _, ep in tracefile.episodes}


def run_id_of(tracefile: TraceFile) -> str | None:
    """The manifest's top-level ``run_id``: the one run id every Episode records, else
    ``unnamed-`` and the traces file's digest; None when Episodes name several runs. A
    resumed run (``vf-eval --resume`` gives each invocation its own id, under the run's
    one name) is one run: its first Episode's id."""
    ids = run_ids(tracefile)
    if len(ids) > 1:
        runs = [ep.get("run") if isinstance(ep.get("run"), dict) else {} for _, ep in tracefile.episodes]
        names = {r.get("name") for r in runs}
        if len(names) != 1 or not isinstance(next(iter(names)), str) or not next(iter(names)):
            return None
        ids = {runs[0].get("id")}
    run_id = next(iter(ids), None)
    return run_id if isinstance(run_id, str) and run_id else f"unnamed-{tracefile.sha256[:16]}"


def episode_runs(tracefile: TraceFile) -> list[Any]:
    """Each trace's Episode ``run`` object (what names the run), in trace order."""
    runs = {line: ep.get("run") if isinstance(ep, dict) else None for line, ep in tracefile.episodes}
    return [runs.get(e.line) for e in tracefile.entries]


def dumps(manifest: dict[str, Any]) -> bytes:
    """tomli_w's TOML, with every character Python does not call printable that tomli_w
    writes raw (bidi overrides, U+2028: it escapes only control characters) written as
    its escape: ``cat manifest.toml`` shows a run's name as it is, not reordered (red
    team, 2026-12-04). tomli_w writes every string and quoted key as a basic string, where
    an escape means the same character, so the parsed manifest is unchanged. A lone
    surrogate is left for the UTF-8 encoding to refuse."""
    text = tomli_w.dumps(manifest)
    if not text.isascii():
        text = "".join(c if c.isprintable() or c.isascii() or 0xD800 <= ord(c) <= 0xDFFF else
                       (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") for c in text)
    return text.encode("utf-8")


def loads(data: bytes) -> dict[str, Any]:
    """Parses manifest bytes (strict UTF-8 TOML, no byte order mark). Raises ManifestError."""
    try:
        return loads_toml(decode_utf8(data, "the manifest"))
    except StrictJSONError as exc:  # decode_utf8's error; nothing JSON about it here
        raise ManifestError(str(exc)) from None
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ManifestError(f"the manifest is not valid TOML: {str(exc)[:300]}") from None
    except ValueError as exc:  # past loads_toml's bounds
        raise ManifestError(f"the manifest is not read: {str(exc)[:300]}") from None


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
