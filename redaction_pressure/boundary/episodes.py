"""The traces of a traces.jsonl someone else wrote, read so that what a file makes its
reader hold and do stays proportional to the file's bytes, with a small constant.

`report`, `compare` and `rescore` read a run's Episode lines. A trace of a real run is
18 KB or more (its task data holds the prompt), but ``{"traces": [{}, {}, ...]}`` costs
3 bytes per "trace", and every trace used to get a page section, a comparison record or
a difference line of its own: 2 MiB of such a line made `report` use 3.1 GB and write a
266 MB page. So, besides the file's size cap (`files.MAX_TRACES_BYTES`) and the line cap:

* a line that may hold more arrays and objects, strings or values than `VALUE_BYTES`
  allows for its bytes is not read (one problem), counted on its text before it is
  decoded: what a decoded value costs does not depend on how short its text is (red
  team, 2026-12-03: traces padded with ``[[],[],...]`` made `report` hold 25 times the
  file's size, 10 GB);
* a line whose trace entries average under `MIN_TRACE_BYTES` is not read (one problem
  for the line): no real trace is that small, so no honest line is refused;
* lines under `MIN_TRACE_BYTES` hold no trace: the first `SHORT_LINES_NAMED` are read
  and named as any line is, and the rest are counted, unread, in one problem. The file
  is read in `CHUNK_BYTES` pieces and such lines are skipped, blank ones too, by
  searches in C, never a Python step per line (review of 2026-12-03: 16 MiB of ``{}``
  lines cost `report` 88 s and `compare` 185 s; 50 MB of line breaks, 42 s);
* an entry that is not a trace object (an object holding a ``task`` or ``info``
  object) is not read, and all such entries are one summarized problem;
* at most `MAX_TRACES` traces are read (the rest of the file is still hashed, never
  parsed), one summarized problem saying how many were left;
* a number literal longer than `MAX_NUMBER_CHARS` is never converted (Python's int()
  of a 4,300-digit literal is quadratic work, and its value overflows float() wherever
  a reader uses it): it reads as NaN, which every reader already refuses where a number
  belongs (a hostile file may hold ``NaN`` itself), so the field is named as malformed
  there, and the line gets one problem saying how many such literals it holds.

* a line with an object that names a key twice is not read (one problem naming the
  key): RFC 8259 leaves such a value to the reader, so one reader would show one score
  and the next another; `audit` refuses such files too (review of 2026-12-04: these
  readers took the last, silently).

The reader holds the parsed traces (the caller's choice), never one object per entry it
refused, and problems are passed on as they are found (callers cap how many they keep).

A trace of an Episode marked failed, or of an Episode another of whose rollouts failed,
is read as a failed rollout, whatever it records: verifiers counts such an Episode
failed (`vf-eval --resume` runs it again) and `audit seal --allow-failed` leaves the whole
Episode line out, so no reader of an unsealed run may count its score (red team,
2026-12-04: an Episode with ``ok: false`` around a scored trace was refused by the sealer
and counted by `rescore`, `report` and `compare`; then a group of rollouts whose worst
were marked failed read as complete to every reader but the sealer).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Protocol

from ..scoring.stack import with_headroom
from .parse_bounds import NestedTooDeeply, TooManyValues, loads_json

MAX_LINE_BYTES = 64 << 20  # an Episode line of 16 rollouts of 24-rule replies is a few MB
MAX_TRACES = 160_000  # 10,000 tasks x 16 rollouts: far above any run one reads in one piece
MIN_TRACE_BYTES = 1024  # the smallest real trace (n_shown=1, n_eval=1, an empty reply) is ~18 KB
# What a decoded value costs does not depend on how short its text is: "[]" (2 bytes) is
# a 56-byte list, "ab" a 51-byte string, 1.5 a 24-byte float. A line may hold at most one
# array or object per 32 bytes, one string per 16 and one value of any kind per 4, so
# what it makes a reader hold stays within about 8 times its size (a float per 4 bytes,
# the worst case left). Real traces hold an array or object per 300 bytes or more and a
# string per 100; a training trace's token ids, logprobs and masks a value per 9 or
# more. Red team, 2026-12-03: a 392 MB file of traces padded with [[],[],...] made
# `report` hold 10 GB, and the machine killed it.
VALUE_BYTES = (32, 16, 4)
SHORT_LINES_NAMED = 64  # lines under MIN_TRACE_BYTES read and named; the rest are counted
CHUNK_BYTES = 1 << 20
_LONG_LINE = re.compile(rb"(?m)^[^\n]{%d,}" % (MIN_TRACE_BYTES - 1))
_NON_BLANK_LINE = re.compile(rb"(?m)^[^\n]*[^\s][^\n]*")
_BLANKS = b" \t\r\x0b\x0c"  # what bytes.strip() strips, but the line break
# The longest number literal converted (as `audit`'s strict reader: a seed below 2^64 has
# 20 digits, a double's shortest form at most 24 characters).
MAX_NUMBER_CHARS = 40


class _Numbers:
    """json.loads hooks that convert number literals of at most MAX_NUMBER_CHARS and read
    longer ones as NaN, counting them."""

    def __init__(self) -> None:
        self.oversized = 0
        self.longest = 0

    def _too_long(self, text: str) -> bool:
        if len(text) <= MAX_NUMBER_CHARS:
            return False
        self.oversized += 1
        self.longest = max(self.longest, len(text))
        return True

    def integer(self, text: str) -> int | float:
        return math.nan if self._too_long(text) else int(text)

    def real(self, text: str) -> float:
        return math.nan if self._too_long(text) else float(text)


@with_headroom  # the decoder recurses up to the nesting bound: never short of stack, wherever it is read
def loads_bounded(raw: bytes | str, per_bytes: tuple[int, int, int] | None = None) -> tuple[Any, int, int]:
    """``json.loads(raw)`` with number literals over MAX_NUMBER_CHARS read as NaN: (the
    value, how many literals were, the longest one's length). Raises `NestedTooDeeply`
    for a text nesting deeper than MAX_FILE_JSON_NESTING, before the decoder recurses,
    and `TooManyValues` for one holding more values than ``per_bytes`` allows
    (`loads_json`)."""
    numbers = _Numbers()
    value = loads_json(raw, per_bytes, parse_int=numbers.integer, parse_float=numbers.real,
                       object_pairs_hook=_unique_keys)
    return value, numbers.oversized, numbers.longest


class DuplicateKey(ValueError):
    """A JSON object names a key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are distinct. With a key twice RFC 8259 leaves the value to
    the reader (Python's takes the last, strict readers refuse), so a trace could show
    one score to one reader and another to the next; `audit` refuses such files too."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    raise DuplicateKey(f"an object names the key {key[:80]!r} twice")


_Read = Iterator[tuple[int, int, dict[str, Any], object]]  # (line, position, trace, the Episode's run)


def failed(record: object) -> bool:
    """Whether a trace or an Episode is marked failed: ``ok`` false, or errors recorded
    (the rule `audit`'s failure summary applies)."""
    if not isinstance(record, dict):
        return False
    errors = record.get("errors")
    return record.get("ok") is False or (isinstance(errors, list) and bool(errors))


def _as_failed(trace: dict[str, Any], episode: dict[str, Any]) -> dict[str, Any]:
    """A trace of a failed Episode, as the failed rollout it is: ``ok`` false, with the
    Episode's errors where the trace records none of its own."""
    if failed(trace):
        return trace
    errors = episode.get("errors")
    if not (isinstance(errors, list) and errors):
        errors = [{"type": "EpisodeFailed",
                   "message": "its Episode is marked failed, or another rollout of it failed"}]
    return {**trace, "ok": False, "errors": errors}


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


def is_trace(value: object) -> bool:
    """A trace object: a JSON object holding a ``task`` or an ``info`` object."""
    return isinstance(value, dict) and (isinstance(value.get("task"), dict) or isinstance(value.get("info"), dict))


class EpisodeReader:
    """Reads the Episode lines of an open traces file. ``where(n)`` names line n in a
    problem (``traces.jsonl line 3``); ``problem`` receives each problem, once, as a
    line of text."""

    def __init__(self, problem: Callable[[str], None], where: Callable[[int], str] = lambda n: f"line {n}",
                 max_traces: int | None = None) -> None:
        self.problem, self.where = problem, where
        self.max_traces = MAX_TRACES if max_traces is None else max_traces
        self.traces = 0  # traces read (yielded)
        self.not_traces = 0  # entries that are not trace objects
        self._seen: dict[bytes, tuple[int, int]] = {}  # each trace's digest -> where it was first read
        self.left = False  # a trace after the max_traces-th was found, and not read
        self._first_not_trace: int | None = None
        self._first_left: int | None = None
        self.named_short = 0  # lines under MIN_TRACE_BYTES read and named
        self.short = 0  # further non-blank lines under MIN_TRACE_BYTES, counted unread
        self._first_short: int | None = None

    def read(self, f: BinaryIO, digest: _Digest | None = None) -> _Read:
        """(line number, position in the line, trace, the Episode's ``run``) of every trace
        read, in file order; ``digest`` is updated with every byte of the file."""
        number = 0  # lines complete so far
        pending: list[bytes] = []  # a line begun in an earlier chunk (dropped once over MAX_LINE_BYTES)
        pending_size = 0
        while chunk := f.read(CHUNK_BYTES):
            if digest is not None:
                digest.update(chunk)
            start = 0
            if pending_size:
                nl = chunk.find(b"\n")
                end = len(chunk) if nl < 0 else nl + 1
                pending_size += end
                if pending_size <= MAX_LINE_BYTES + 1:
                    pending.append(chunk[:end])
                else:
                    pending.clear()
                if nl < 0:
                    continue
                number += 1
                yield from self._spanning(number, pending, pending_size - 1)
                pending, pending_size, start = [], 0, end
            last = chunk.rfind(b"\n")
            if last >= start:
                region = chunk[start:last + 1]
                yield from self._region(region, number)
                number += region.count(b"\n")
                start = last + 1
            if start < len(chunk):
                pending, pending_size = [chunk[start:]], len(chunk) - start
        if pending_size:
            yield from self._spanning(number + 1, pending, pending_size)
        self._summarize()

    def _spanning(self, number: int, parts: list[bytes], length: int) -> _Read:
        """A line that began in an earlier chunk: ``length`` bytes without its line break,
        ``parts`` (empty once it passed MAX_LINE_BYTES)."""
        if length > MAX_LINE_BYTES or not parts:
            self.problem(f"{self.where(number)} is longer than {MAX_LINE_BYTES:,} bytes; it is not read")
        else:
            yield from self._one(number, b"".join(parts))

    def _region(self, region: bytes, number: int) -> _Read:
        """The whole lines in ``region``, the first of which is line ``number`` + 1. While
        short lines are named, every line that is not blank is read; then only lines of
        MIN_TRACE_BYTES or more, and the others are counted."""
        base = number
        named = self.named_short < SHORT_LINES_NAMED
        pos = 0
        long_lines = long_blank = 0  # (with named: every non-blank line)
        for m in (_NON_BLANK_LINE if named else _LONG_LINE).finditer(region):
            begin, stop = m.span()
            number += region.count(b"\n", pos, begin) + 1
            pos = stop + 1
            long_lines += 1
            long_blank += not m.group().strip()
            yield from self._one(number, region[begin:pos])
        if named:
            return
        total = region.count(b"\n") + (not region.endswith(b"\n"))
        short = total - long_lines - (_blank_lines(region) - long_blank)
        if short > 0:
            if self._first_short is None:
                self._first_short = base + next(i for i, raw in enumerate(_lines(region), 1)
                                                if raw.strip() and len(raw.rstrip(b"\n")) < MIN_TRACE_BYTES - 1)
            self.short += short

    def _one(self, number: int, raw: bytes) -> _Read:
        if not raw.strip():
            return
        if len(raw.rstrip(b"\n")) < MIN_TRACE_BYTES - 1:
            if self.named_short >= SHORT_LINES_NAMED:
                self.short += 1
                self._first_short = self._first_short or number
                return
            self.named_short += 1
        if self.traces >= self.max_traces:
            if not self.left:  # unparsed: whether it holds traces is not known
                self.left, self._first_left = True, number
            return
        yield from self._line(number, raw)

    def _line(self, number: int, raw: bytes) -> _Read:
        if not raw.strip():
            return
        if raw.startswith(b"\xef\xbb\xbf"):  # json.loads of bytes skips it; `audit` refuses it (RFC 8259 §8.1)
            self.problem(f"{self.where(number)} starts with a byte order mark (U+FEFF), which JSON text must not; "
                         "it is not read")
            return
        try:
            episode, oversized, longest = loads_bounded(raw, VALUE_BYTES)
        except NestedTooDeeply as exc:
            self.problem(f"{self.where(number)} is {exc}; it is not read")
            return
        except TooManyValues as exc:
            self.problem(f"{self.where(number)} holds too many values for its {len(raw):,} bytes ({exc}; a real "
                         "trace has an array or object per 300 bytes or more, a string per 100); it is not read")
            return
        except DuplicateKey as exc:
            self.problem(f"{self.where(number)} is ambiguous JSON ({exc}: readers disagree on its value); "
                         "it is not read")
            return
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            self.problem(f"{self.where(number)} is not JSON ({str(exc)[:120]}); it is not read")
            return
        if oversized:
            self.problem(f"{self.where(number)} holds {oversized:,} number literal{'' if oversized == 1 else 's'} "
                         f"longer than {MAX_NUMBER_CHARS} characters (the longest {longest:,}); "
                         f"{'it is' if oversized == 1 else 'they are'} read as not a number")
        traces = episode.get("traces") if isinstance(episode, dict) else None
        if not isinstance(traces, list):
            self.problem(f"{self.where(number)} is not an Episode with a list of traces; it is not read")
            return
        if len(raw) < len(traces) * MIN_TRACE_BYTES:
            self.problem(f"{self.where(number)} holds {len(traces):,} trace entr{'y' if len(traces) == 1 else 'ies'} "
                         f"in {len(raw):,} bytes, under {MIN_TRACE_BYTES:,} bytes each (a real trace is 18 KB or "
                         f"more); it is not read")
            return
        run = episode.get("run")
        episode_failed = failed(episode) or any(is_trace(t) and failed(t) for t in traces)
        for k, trace in enumerate(traces):
            if not is_trace(trace):
                self.not_traces += 1
                self._first_not_trace = self._first_not_trace or number
            elif self.traces >= self.max_traces:
                if not self.left:
                    self.left, self._first_left = True, number
            elif not episode_failed and (first := self._first_copy(trace, number, k)) is not None:
                self.problem(f"{self.where(number)}{f' trace {k}' if k else ''} is the same trace as "
                             f"{self.where(first[0])}{f' trace {first[1]}' if first[1] else ''} (`audit seal` "
                             "refuses a trace counted twice); it is not read")
            else:
                self.traces += 1
                yield number, k, _as_failed(trace, episode) if episode_failed else trace, run

    def _first_copy(self, trace: dict[str, Any], number: int, k: int) -> tuple[int, int] | None:
        """Where an identical trace was read before, if one was (red team, 2026-12-04: a
        trace repeated 51 times was refused by `audit seal` and counted 51 times by
        `rescore` and the report). Identical means the same canonical JSON, as seal's
        digest compares; a copy with a fresh id is another rollout, and counts. Only
        rollouts that count are compared, as `audit seal --allow-failed` leaves a failed
        Episode out before it looks for copies: a failed copy of a counted trace is a
        failed rollout, and the counted one is read wherever it stands."""
        key = hashlib.sha256(json.dumps(trace, sort_keys=True, separators=(",", ":")).encode(
            "utf-8", "surrogatepass")).digest()
        first = self._seen.get(key)
        if first is None:
            self._seen[key] = (number, k)
        return first

    def _summarize(self) -> None:
        if self.short:
            n = self.short
            self.problem(f"{n:,} more line{'' if n == 1 else 's'} under {MIN_TRACE_BYTES:,} bytes (the first in "
                         f"{self.where(self._first_short or 0)}) hold no trace (a real trace is 18 KB or more): "
                         f"{'it is' if n == 1 else 'they are'} not read; the first {SHORT_LINES_NAMED} such lines "
                         "were read and named")
        if self.not_traces:
            n = self.not_traces
            self.problem(f"{n:,} trace entr{'y is' if n == 1 else 'ies are'} not a trace object (an object holding "
                         f"a task or info object; the first in {self.where(self._first_not_trace or 0)}); "
                         f"{'it is' if n == 1 else 'they are'} not read")
        if self.left:
            self.problem(f"the file holds more than {self.max_traces:,} traces, the most this reader reads: "
                         f"the traces after the first {self.max_traces:,} (from "
                         f"{self.where(self._first_left or 0)} on) are not read")


def _lines(region: bytes) -> list[bytes]:
    """``region``'s lines, each with its line break (the last may have none)."""
    lines = [line + b"\n" for line in region.split(b"\n")]
    last = lines.pop()
    if len(last) > 1:
        lines.append(last[:-1])
    return lines


def _blank_lines(region: bytes) -> int:
    """How many of ``region``'s lines are blank (whitespace only): once the whitespace
    but line breaks is dropped, a blank line is an empty one (split and counted in C)."""
    parts = region.translate(None, _BLANKS).split(b"\n")
    return parts.count(b"") - (parts[-1] == b"" and region.endswith(b"\n"))
