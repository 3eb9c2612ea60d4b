"""Reads a run for the report: a run directory of `eval` or `vf-eval`, a sealed archive,
or a traces.jsonl path. Everything read is hostile: a line that does not parse, an
Episode without a list of trace objects, or entries that are not traces become problems
listed on the page (`boundary.episodes`, which also bounds how many traces a file can
make the page show), and the rest of the run is still shown (nothing is silently
dropped).

Files go through the project's file boundary (`boundary.files`): members of the run
directory are regular files, not followed through links; a traces file the user names
directly may be a link, but must be a regular file. Sizes are checked from ``fstat``
before reading (a sparse traces.jsonl of terabytes, or a link to ``/dev/zero``, is a
one-line error, not a MemoryError), lines are read with a cap, and the traces file's
and manifest's SHA-256 are taken over the very bytes shown, so a verification can be
bound to them."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..boundary.episodes import EpisodeReader
from ..boundary.files import MAX_MANIFEST_BYTES, MAX_TRACES_BYTES, InputFileError, open_regular, read_bounded
from ..boundary.parse_bounds import loads_toml

TRACES = "traces.jsonl"
MANIFEST = "manifest.toml"
ENVELOPE = "manifest.dsse.json"
MAX_PROBLEMS = 50  # listed; `problem_count` counts them all


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
    problems: list[str] = field(default_factory=list)  # the first MAX_PROBLEMS, then a line saying there are more
    problem_count: int = 0
    shown: dict[str, str] = field(default_factory=dict)  # SHA-256 of the bytes read, by file name
    runs: list[Any] = field(default_factory=list)  # each trace's Episode ``run`` object (names the run)


def _traces_path(path: Path) -> tuple[Path, Path, bool]:
    """(run directory, traces file, whether a link may be followed to it)."""
    if path.is_dir():
        return path, path / TRACES, False
    if os.path.lexists(path):
        return path.parent, path, True  # a file the user named
    raise RunError(f"{path} does not exist")


def _read_manifest(run: Run) -> None:
    try:
        data = read_bounded(run.path / MANIFEST, MAX_MANIFEST_BYTES)
        manifest = loads_toml(data.decode("utf-8"))
    except InputFileError as exc:
        run.manifest_problem = f"{MANIFEST} could not be read: {exc}"
        return
    except OSError as exc:
        run.manifest_problem = f"{MANIFEST} could not be read: {exc.strerror or exc}"
        return
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError and UnicodeError are ValueErrors
        run.manifest_problem = f"{MANIFEST} could not be read: {str(exc)[:300]}"
        return
    run.manifest = manifest
    run.shown[MANIFEST] = hashlib.sha256(data).hexdigest()


def _problem(run: Run, text: str) -> None:
    run.problem_count += 1
    if len(run.problems) < MAX_PROBLEMS:
        run.problems.append(text)
    elif len(run.problems) == MAX_PROBLEMS:
        run.problems.append("... further problems are not listed")


def read_run(path: Path) -> Run:
    """The traces of the run at ``path`` (every trace of every Episode line, in file
    order, as `boundary.episodes` reads them: at most MAX_TRACES, none of a line that
    is not an Episode or is too small for its traces)."""
    root, traces_path, follow = _traces_path(Path(path))
    archive = os.path.lexists(root / MANIFEST) or os.path.lexists(root / ENVELOPE)
    run = Run(root, traces_path, [], archive)
    if archive:
        _read_manifest(run)
    try:
        f = open_regular(traces_path, follow_links=follow, max_bytes=MAX_TRACES_BYTES)
    except InputFileError as exc:
        if exc.missing and not follow:
            raise RunError(f"{root} holds no {TRACES}: give a run directory of `redaction-pressure eval` or "
                           f"`vf-eval`, a sealed archive, or the traces file itself") from None
        raise RunError(f"cannot read {traces_path}: {exc}") from None
    except OSError as exc:
        raise RunError(f"cannot read {traces_path}: {exc.strerror or exc}") from None
    digest = hashlib.sha256()
    reader = EpisodeReader(lambda text: _problem(run, text), lambda n: f"{TRACES} line {n}")
    with f:
        for _number, _k, trace, episode_run in reader.read(f, digest):
            run.traces.append(trace)
            run.runs.append(episode_run)
    run.shown[TRACES] = digest.hexdigest()
    return run
