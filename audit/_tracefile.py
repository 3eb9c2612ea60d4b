"""Reads a traces.jsonl (vf-eval's or `redaction-pressure eval`'s: one verifiers
Episode per line, each holding ``traces[]``) without trusting it.

Two ways in, one parser. ``read_trace_file`` (seal, validate) reads a file once,
hashing the raw bytes (the traces-file digest) and parsing each line strictly; lines
are read with a size cap, so a hostile file cannot make the reader buffer an unbounded
line. ``parse_trace_bytes`` (verify) parses bytes already read and hashed: verify first
reads at most the sealed size plus one byte and compares size and SHA-256, and parses
only a file that is byte for byte the sealed one. Lines end at ``\n`` only, numbered
from 1, in both. A bad line becomes a problem entry naming its line number, never an
exception. No verifiers import: traces stay plain JSON dicts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ._canonical import StrictJSONError, loads_strict, trace_digest
from ._files import open_member

TRACES_NAME = "traces.jsonl"
MAX_LINE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class TraceEntry:
    line: int        # 1-based line of traces.jsonl
    position: int    # index in that line's traces[]
    trace: object    # the parsed trace (untrusted: any JSON value)
    digest: str      # SHA-256 of its canonical JSON

    @property
    def task_id(self) -> str:
        return describe_task(self.trace)

    @property
    def where(self) -> str:
        return f"line {self.line} trace {self.position} ({self.task_id})"


@dataclass(frozen=True)
class Problem:
    line: int | None
    message: str

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"


@dataclass
class TraceFile:
    path: Path
    sha256: str = ""
    size: int = 0
    episodes: list[tuple[int, object]] = field(default_factory=list)  # (line, parsed Episode)
    entries: list[TraceEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    data: bytes | None = None  # the raw bytes, when asked for (sealing copies exactly what it hashed)


def describe_task(trace) -> str:
    """A short, safe label for a trace: its task id if it has a sane one."""
    try:
        tid = trace["info"]["environment"]["task_id"]
    except (TypeError, KeyError, IndexError):
        try:
            tid = trace["task"]["data"]["id"]
        except (TypeError, KeyError, IndexError):
            return "no task id"
    if isinstance(tid, str) and len(tid) <= 64 and tid.isprintable():
        return tid
    return "unprintable task id"


def read_trace_file(path: Path, keep_bytes: bool = False, member: bool = False) -> TraceFile:
    """Raises OSError only if the file cannot be opened or read. ``member``: the file
    is an archive member, opened without following a link (raises MemberError)."""
    result = TraceFile(path)
    h = hashlib.sha256()
    kept = bytearray() if keep_bytes else None
    with (open_member(path) if member else open(path, "rb")) as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            number += 1
            h.update(raw)
            result.size += len(raw)
            if kept is not None:
                kept += raw
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                result.problems.append(Problem(number, f"longer than {MAX_LINE_BYTES} bytes"))
                while raw and not raw.endswith(b"\n"):  # hash and skip the rest of the line
                    raw = f.readline(MAX_LINE_BYTES)
                    h.update(raw)
                    result.size += len(raw)
                    if kept is not None:
                        kept += raw
                continue
            _parse_line(result, number, raw)
    result.sha256 = h.hexdigest()
    if kept is not None:
        result.data = bytes(kept)
    _finish(result)
    return result


def parse_trace_bytes(path: Path, data: bytes, sha256: str | None = None) -> TraceFile:
    """Parses the bytes of a whole traces file (``sha256``: their digest, if already
    computed), exactly as ``read_trace_file`` would parse that file."""
    result = TraceFile(path, sha256 or hashlib.sha256(data).hexdigest(), len(data))
    start, number, end = 0, 0, len(data)
    while start < end:
        stop = data.find(b"\n", start)
        stop = end if stop < 0 else stop + 1
        number += 1
        if stop - start - (data[stop - 1] == 0x0A) > MAX_LINE_BYTES:
            result.problems.append(Problem(number, f"longer than {MAX_LINE_BYTES} bytes"))
        else:
            _parse_line(result, number, data[start:stop])
        start = stop
    _finish(result)
    return result


def _finish(result: TraceFile) -> None:
    if not result.entries and not result.problems:
        result.problems.append(Problem(None, "no traces in the file"))


def _parse_line(result: TraceFile, number: int, raw: bytes) -> None:
    if not raw.strip():
        return
    try:
        episode = loads_strict(raw)
    except StrictJSONError as exc:
        result.problems.append(Problem(number, f"not valid JSON: {exc}"))
        return
    result.episodes.append((number, episode))
    traces = episode.get("traces") if isinstance(episode, dict) else None
    if not isinstance(traces, list):
        result.problems.append(Problem(number, "not an Episode with a traces array"))
        return
    for position, trace in enumerate(traces):
        try:
            digest = trace_digest(trace)
        except (ValueError, RecursionError) as exc:
            result.problems.append(Problem(number, f"trace {position} cannot be canonicalised: {exc}"))
            continue
        result.entries.append(TraceEntry(number, position, trace, digest))
