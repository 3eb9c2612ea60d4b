"""Reads a run for the report: a run directory of `eval` or `vf-eval`, a sealed archive,
or a traces.jsonl path. Everything read is hostile: a line that does not parse, or an
Episode without a list of trace objects, becomes a problem listed on the page, and the
rest of the run is still shown (nothing is silently dropped)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACES = "traces.jsonl"
MANIFEST = "manifest.toml"
ENVELOPE = "manifest.dsse.json"
MAX_MANIFEST_BYTES = 16 << 20
MAX_PROBLEMS = 50


class RunError(Exception):
    """The path is not something a report can be made of (a clear, one-line reason)."""


@dataclass
class Run:
    path: Path  # the run directory or archive
    traces_path: Path
    traces: list[dict[str, Any]]
    archive: bool
    manifest: dict[str, Any] | None = None
    manifest_problem: str | None = None
    problems: list[str] = field(default_factory=list)


def _traces_path(path: Path) -> tuple[Path, Path]:
    if path.is_file():
        return path.parent, path
    if not path.exists():
        raise RunError(f"{path} does not exist")
    if not path.is_dir():
        raise RunError(f"{path} is neither a run directory nor a traces.jsonl file")
    found = path / TRACES
    if not found.is_file():
        raise RunError(f"{path} holds no {TRACES}: give a run directory of `redaction-pressure eval` or "
                       f"`vf-eval`, a sealed archive, or the traces file itself")
    return path, found


def _read_manifest(run: Run) -> None:
    path = run.path / MANIFEST
    if not path.is_file():
        run.manifest_problem = f"the archive has no {MANIFEST}"
        return
    try:
        data = path.read_bytes()
        if len(data) > MAX_MANIFEST_BYTES:
            raise ValueError(f"larger than {MAX_MANIFEST_BYTES} bytes")
        manifest = tomllib.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # TOMLDecodeError and UnicodeError are ValueErrors
        run.manifest_problem = f"{MANIFEST} could not be read: {str(exc)[:300]}"
        return
    run.manifest = manifest


def _problem(run: Run, text: str) -> None:
    if len(run.problems) < MAX_PROBLEMS:
        run.problems.append(text)
    elif len(run.problems) == MAX_PROBLEMS:
        run.problems.append("... further problems are not listed")


def read_run(path: Path) -> Run:
    """The traces of the run at ``path`` (every trace of every Episode line, in file order)."""
    root, traces_path = _traces_path(Path(path))
    archive = (root / MANIFEST).exists() or (root / ENVELOPE).exists()
    run = Run(root, traces_path, [], archive)
    if archive:
        _read_manifest(run)
    try:
        f = open(traces_path, "rb")  # noqa: SIM115 - closed by the `with f` below; only the open may fail here
    except OSError as exc:
        raise RunError(f"cannot read {traces_path}: {exc}") from None
    with f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                episode = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                _problem(run, f"{TRACES} line {number} is not JSON ({str(exc)[:120]}); it is not shown")
                continue
            traces = episode.get("traces") if isinstance(episode, dict) else None
            if not isinstance(traces, list):
                _problem(run, f"{TRACES} line {number} is not an Episode with a list of traces; it is not shown")
                continue
            for k, trace in enumerate(traces):
                if isinstance(trace, dict):
                    run.traces.append(trace)
                else:
                    _problem(run, f"{TRACES} line {number} trace {k} is not an object; it is not shown")
    return run
