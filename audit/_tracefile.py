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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redaction_pressure.contract import (
    MAX_TRACES_BYTES,
    VALUE_BYTES,
    NestedTooDeeply,
    TooManyValues,
    check_json_density,
    open_regular,
)

from ._canonical import StrictJSONError, loads_strict, trace_digest

TRACES_NAME = "traces.jsonl"
MAX_LINE_BYTES = 64 * 1024 * 1024

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
    following a link."""
    result = TraceFile(path)
    h = hashlib.sha256()
    kept = bytearray() if keep_bytes else None
    with open_regular(path, follow_links=not member, max_bytes=MAX_TRACES_BYTES) as f:
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
    about ``size`` bytes; a line over MAX_LINE_BYTES is a piece of its own with stop -1."""
    pieces: list[Span] = []
    start, number, end = 0, 0, len(data)
    piece_start, piece_first = 0, 1
    while start < end:
        stop = data.find(b"\n", start)
        stop = end if stop < 0 else stop + 1
        number += 1
        if stop - start - (data[stop - 1] == 0x0A) > MAX_LINE_BYTES:
            if piece_start < start:
                pieces.append((piece_first, piece_start, start))
            pieces.append((number, start, -1))
            piece_start, piece_first = stop, number + 1
        elif stop - piece_start >= size:
            pieces.append((piece_first, piece_start, stop))
            piece_start, piece_first = stop, number + 1
        start = stop
    if piece_start < end:
        pieces.append((piece_first, piece_start, end))
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
    """Parses ``data`` (whole lines), whose first line is line ``number`` + 1."""
    start, end = 0, len(data)
    while start < end:
        stop = data.find(b"\n", start)
        stop = end if stop < 0 else stop + 1
        number += 1
        if stop - start - (data[stop - 1] == 0x0A) > MAX_LINE_BYTES:
            result.problems.append(Problem(number, f"longer than {MAX_LINE_BYTES} bytes"))
        else:
            _parse_line(result, number, data[start:stop])
        start = stop


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
