"""Reads a traces.jsonl (vf-eval's or `redaction-pressure eval`'s: one verifiers
Episode per line, each holding ``traces[]``) without trusting it.

Two ways in, one parser. ``read_trace_file`` (seal, validate) reads a file whole, at
most ``MAX_TRACES_BYTES`` (checked by ``fstat`` before reading, and again after),
hashes the raw bytes (the traces-file digest) and parses them as verify does.
``parse_trace_bytes`` (verify) parses bytes already read and hashed: verify first
reads at most the sealed size plus one byte and compares size and SHA-256, and parses
only a file that is byte for byte the sealed one. Lines end at ``\n`` only, numbered
from 1, in both. A bad line becomes a problem entry naming its line number, never an
exception. No verifiers import: traces stay plain JSON dicts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from redaction_pressure.contract import (
    MAX_TRACES_BYTES,
    MIN_TRACE_BYTES,
    VALUE_BYTES,
    InputFileError,
    NestedTooDeeply,
    TooManyValues,
    check_json_density,
    open_regular,
)

from ._canonical import StrictJSONError, loads_strict, trace_digest

TRACES_NAME = "traces.jsonl"
MAX_LINE_BYTES = 64 * 1024 * 1024
_LONG_LINE = re.compile(rb"(?m)^[^\n]{%d,}" % (MIN_TRACE_BYTES - 1))
_BLANKS = b" \t\r\x0b\x0c"  # what bytes.strip() strips, but the line break
COUNT_BYTES = 1 << 18  # short lines counted at a time (their objects: a few MB at most)
_NOT_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")
_LAST_NOT_BLANK = regex.compile(rb"(?r)[^ \t\r\n\x0b\x0c]")  # searched from the end

# the per-episode check run where a piece is parsed: one result per (line, Episode)
CheckEpisodes = Callable[[list[tuple[int, Any]]], list[Any]]
Span = tuple[int, int, int]  # (number of its first line, start, stop; -1: one over-long line)
Piece = tuple[Path, int, bytes | None, CheckEpisodes | None]  # what parse_pieces gets for a span
# (fn, spans, prepare) -> fn's results on prepared spans, in order (_parallel.Workers.map)
MapPieces = Callable[[Callable[[list[Piece]], list["TraceFile"]], list[Span], Callable[[Span], Piece]],
                     list["TraceFile"]]


@dataclass(frozen=True)
class TraceEntry:
    line: int        # 1-based line of traces.jsonl
    position: int    # index in that line's traces[]
    trace: Any       # the parsed trace (untrusted: any JSON value, indexed only once schema-valid)
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
    episodes: list[tuple[int, Any]] = field(default_factory=list)  # (line, parsed Episode)
    entries: list[TraceEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    data: bytes | None = None  # the raw bytes, when asked for (sealing copies exactly what it hashed)
    episode_checks: list[Any] | None = None  # check_episodes(episodes), when asked for (one per episode)


def describe_task(trace: Any) -> str:
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
    """Raises MemberError when the file is not a regular file (a FIFO, a device) or is
    larger than ``MAX_TRACES_BYTES`` by ``fstat`` (nothing is read then), OSError if it
    cannot be opened or read. ``member``: the file is an archive member, opened without
    following a link. The bytes are read whole (at most MAX_TRACES_BYTES, as sealing
    keeps them anyway) and parsed exactly as `parse_trace_bytes` parses them."""
    with open_regular(path, follow_links=not member, max_bytes=MAX_TRACES_BYTES) as f:
        data = f.read(MAX_TRACES_BYTES + 1)
    if len(data) > MAX_TRACES_BYTES:
        raise InputFileError(f"{path.name} grew past {MAX_TRACES_BYTES:,} bytes while being read")
    result = parse_trace_bytes(path, data)
    if keep_bytes:
        result.data = data
    return result


def parse_trace_bytes(path: Path, data: bytes, sha256: str | None = None, map_pieces: MapPieces | None = None,
                      check_episodes: CheckEpisodes | None = None) -> TraceFile:
    """Parses the bytes of a whole traces file (``sha256``: their digest, if already
    computed), exactly as ``read_trace_file`` would parse that file.

    ``map_pieces(fn, items, prepare)`` (`audit verify --jobs N`: `_parallel.Workers.map`)
    parses the file in pieces elsewhere: the file is cut at line ends into pieces
    (``items``, each turned into ``fn``'s input by ``prepare`` only when sent, so at most
    the pieces in flight are copied), ``fn`` parses each piece exactly as this function
    parses the whole, and the pieces' results are joined in file order: the same
    TraceFile. ``check_episodes`` (module-level, like ``fn``) is then also run on each
    piece's episodes where the piece is parsed; its results, one per episode, are in
    ``episode_checks``."""
    result = TraceFile(path, sha256 or hashlib.sha256(data).hexdigest(), len(data))
    if map_pieces is None:
        _parse_span(result, data, 0)
        if check_episodes is not None:
            result.episode_checks = check_episodes(result.episodes)
    else:
        def prepare(piece: Span) -> Piece:
            first, start, stop = piece
            raw = None if stop < 0 else data[start:stop]  # an over-long line is not sent
            return path, first, raw, check_episodes
        result.episode_checks = [] if check_episodes is not None else None
        for part in map_pieces(parse_pieces, _pieces(data, PIECE_BYTES), prepare):
            result.episodes += part.episodes
            result.entries += part.entries
            result.problems += part.problems
            if result.episode_checks is not None and part.episode_checks is not None:
                result.episode_checks += part.episode_checks
    _finish(result)
    return result


PIECE_BYTES = 1 << 20  # a piece of the file parsed elsewhere: ~1 MiB of whole lines


def _pieces(data: bytes, size: int) -> list[Span]:
    """(number of its first line, start, stop) of consecutive pieces of whole lines of
    about ``size`` bytes, cut only where a line of MIN_TRACE_BYTES or more starts (a run
    of shorter lines is one piece's, as it is the whole file's); a line over
    MAX_LINE_BYTES is a piece of its own with stop -1. One step per long line, never per
    line: a flood of short lines is crossed in C."""
    pieces: list[Span] = []
    piece_start, piece_first, counted_to, number = 0, 1, 0, 0
    for m in _LONG_LINE.finditer(data):
        start, end = m.span()
        number += data.count(b"\n", counted_to, start)  # lines before this one
        counted_to = start
        if end - start > MAX_LINE_BYTES:
            if piece_start < start:
                pieces.append((piece_first, piece_start, start))
            stop = min(end + 1, len(data))
            pieces.append((number + 1, start, -1))
            piece_start, piece_first = stop, number + 2
        elif start - piece_start >= size:
            pieces.append((piece_first, piece_start, start))
            piece_start, piece_first = start, number + 1
    if piece_start < len(data):
        pieces.append((piece_first, piece_start, len(data)))
    return pieces


def parse_pieces(items: list[Piece]) -> list[TraceFile]:
    """Each (path, number of its first line, bytes of whole lines or None for one
    over-long line, check_episodes or None), parsed as `parse_trace_bytes` parses a file
    (without the whole file's digest, size or emptiness check)."""
    out = []
    for path, first, raw, check_episodes in items:
        part = TraceFile(path)
        if raw is None:
            part.problems.append(Problem(first, f"longer than {MAX_LINE_BYTES} bytes"))
        else:
            _parse_span(part, raw, first - 1)
        if check_episodes is not None:
            part.episode_checks = check_episodes(part.episodes)
        out.append(part)
    return out


def _parse_span(result: TraceFile, data: bytes, number: int) -> None:
    """Parses ``data`` (whole lines), whose first line is line ``number`` + 1. Lines of
    MIN_TRACE_BYTES or more are parsed one by one; of each run of shorter lines between
    them (blank lines aside), the first is parsed and named as any line is and the rest
    are one problem: no trace is that short (review of 2026-12-03: 16 MiB of "a" lines cost
    `audit seal` 212 s and 3.4 GB, a Python step and a problem per line)."""
    pos = 0
    for m in _LONG_LINE.finditer(data):
        start, end = m.span()
        number = _short_run(result, data, pos, start, number)
        number += 1
        stop = min(end + 1, len(data))
        if end - start > MAX_LINE_BYTES:
            result.problems.append(Problem(number, f"longer than {MAX_LINE_BYTES} bytes"))
        else:
            _parse_line(result, number, data[start:stop])
        pos = stop
    _short_run(result, data, pos, len(data), number)


def _short_run(result: TraceFile, data: bytes, start: int, stop: int, number: int) -> int:
    """The lines of ``data[start:stop]`` (each under MIN_TRACE_BYTES), the first of which
    is line ``number`` + 1; returns the number of the last line before ``stop``. Read in
    place: no copy of the run, and no object per line (a list of 16 MiB of "ab" lines
    held 22 times the file; review of the fixes, 2026-12-03)."""
    if start >= stop:
        return number
    lines = data.count(b"\n", start, stop) + (data[stop - 1:stop] != b"\n")
    found = _NOT_BLANK.search(data, start, stop)  # the first byte of a non-blank line, if any
    if found is not None:
        line_start = max(data.rfind(b"\n", start, found.start()) + 1, start)
        line_end = data.find(b"\n", found.start(), stop)
        line_end = stop if line_end < 0 else line_end + 1
        first = number + data.count(b"\n", start, line_start) + 1
        _parse_line(result, first, data[line_start:line_end])
        more = _non_blank_lines(data, line_end, stop)
        if more:
            last_at = _LAST_NOT_BLANK.search(data, line_end, stop).start()  # type: ignore[union-attr]
            last = first + data.count(b"\n", line_end, last_at) + 1
            result.problems.append(Problem(first, f"{more:,} more line{'s' if more > 1 else ''} under "
                                                  f"{MIN_TRACE_BYTES:,} bytes follow{'' if more > 1 else 's'}, to line "
                                                  f"{last:,}: no trace is that short; "
                                                  f"{'they are' if more > 1 else 'it is'} not read"))
    return number + lines


def _non_blank_lines(data: bytes, start: int, stop: int) -> int:
    """How many lines of ``data[start:stop]`` (whole lines) hold more than whitespace,
    counted about COUNT_BYTES at a time, so the line objects `split` makes never
    outnumber one such piece's lines."""
    count = 0
    while start < stop:
        end = data.find(b"\n", min(start + COUNT_BYTES, stop) - 1, stop)
        end = stop if end < 0 else end + 1
        parts = data[start:end].translate(None, _BLANKS).split(b"\n")
        count += len(parts) - parts.count(b"")
        start = end
    return count


def _finish(result: TraceFile) -> None:
    if not result.entries and not result.problems:
        result.problems.append(Problem(None, "no traces in the file"))


def _parse_line(result: TraceFile, number: int, raw: bytes) -> None:
    if not raw.strip():
        return
    # The bound the report, rescore and compare apply (`VALUE_BYTES`), before decoding:
    # a line padded with [[],[],...] cost seal and validate 125 bytes of memory a byte,
    # and a line they read but the report refuses let a signer choose which verified
    # traces a page's figures count (review of 2026-12-03).
    try:
        check_json_density(raw.decode("utf-8", "replace"), len(raw), VALUE_BYTES)
    except TooManyValues as exc:
        result.problems.append(Problem(number, f"holds too many values for its {len(raw):,} bytes ({exc}; a real "
                                               "trace has an array or object per 300 bytes or more, a string per "
                                               "100); it is not read"))
        return
    except NestedTooDeeply:
        pass  # named by loads_strict, as before
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
