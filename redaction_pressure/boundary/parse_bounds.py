"""How deeply a text nests, and how long its keys run, read off the text in linear time
before a parser that recurses or grows quadratically sees it.

Python's JSON decoder and `tomllib` recurse once per level of nested arrays and
objects (inline tables), so without a bound fixed in advance whether a file is read
depends on the caller's stack: a trace nested 982 deep was signed by `audit seal` and
refused by `audit verify` of the same build, and read by `rescore` but not by the
report (red team, 2026-12-03). `tomllib` also takes time and memory quadratic in the
parts of one dotted key: a 48 KB manifest line ``a.a.a…`` of 20,000 parts cost 22 s
and 1.6 GB in `report`, 40,000 parts 6.3 GB, before any signature was checked; and
what it makes costs it ~1 KB a table, so the tables, keys and values a text may make
are counted too (red team, 2026-12-04). Every reader of files from outside applies
these bounds first; each is never below what the parser reaches, up to the parser's
first error (both read the same strings and brackets until then). No pattern here
repeats a group per character: `regex` keeps state per repetition, and such a pattern
ran out of memory on a 16 MB string.
"""

from __future__ import annotations

import json
import tomllib
from itertools import accumulate
from typing import Any

import regex

# A trace nests about ten deep (Episode, traces, trace, info, redaction, a family's
# tallies); manifests, statements and verdicts less. Far below any stack's limit.
MAX_FILE_JSON_NESTING = 64
# tomllib's cost grows with the square of a table header's parts plus a key's, on every
# line: at 64 parts each, 16 MB of such lines took 72 s (review of 2026-12-03); at 8,
# 17.3 s against 9.6 s for any 16 MB of TOML (the size cap's own cost). A manifest's
# longest key has 3 parts (summary.uncertainty.reward), a recipe's 3; nothing nests
# deeper than 2. Inline tables whose keys are dotted nest the result further, so the
# parsed result's depth is bounded too (`_depth`).
MAX_TOML_NESTING = 8
MAX_TOML_KEY_PARTS = 8
MAX_TOML_RESULT_DEPTH = 32
# Within those bounds tomllib still spends ~0.9 KB and ~10 us on every table it makes,
# ~2 us on every key part or value: 16 MB of fresh 8-part table headers cost the report
# 81 s and 5.9 GB (red team, 2026-12-04). A manifest makes one table and ten keys and
# values per trace (its [[traces]] entry, its task in the coverage lists), so the
# largest one `audit seal` writes (1 GiB of 18 KB traces: ~60,000) needs ~60,000 tables
# and ~600,000 items; a recipe under 100 and 400. At these bounds the costliest text
# takes ~2 s and ~240 MB (tables) or ~5 s and ~220 MB (keys) on a loaded 2-core machine.
MAX_TOML_TABLES = 200_000
MAX_TOML_ITEMS = 1_000_000

_JSON_STRING = regex.compile(r'"[^"]*+"')  # once escapes are plain (`_escapes_out`)
_NOT_BRACKET = regex.compile(r"[^\[\]{}]++")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class NestedTooDeeply(ValueError):
    """A text nests deeper than its reader's bound: refused before decoding."""


class TooManyValues(ValueError):
    """A text holds more JSON values than its reader's bound: refused before decoding."""


def loads_json(raw: bytes | str, per_bytes: tuple[int, int, int] | None = None, **hooks: Any) -> Any:
    """``json.loads(raw, **hooks)`` of a file from outside, refused (`NestedTooDeeply`)
    when it nests deeper than MAX_FILE_JSON_NESTING, and (`TooManyValues`) with
    ``per_bytes`` (a, s, v) when it may hold more than one array or object per ``a``
    bytes of its text, one string per ``s`` or one value per ``v``: what a value costs
    its reader once decoded does not depend on how short its text is (``[]``, 2
    characters, is a 56-byte list; ``"ab"`` a 51-byte string). Bytes are decoded as
    ``json.loads`` decodes them (UTF-8, -16 or -32, detected)."""
    text = raw.decode(json.detect_encoding(raw), "surrogatepass") if isinstance(raw, (bytes, bytearray)) else raw
    if per_bytes is None:
        check_json_nesting(text)
    else:
        check_json_density(text, len(raw), per_bytes)
    return json.loads(text, **hooks)


def check_json_density(text: str, size: int, per_bytes: tuple[int, int, int]) -> None:
    """Raises `NestedTooDeeply` or `TooManyValues` (see `loads_json`) for ``text``, a
    JSON text of ``size`` bytes, before anything decodes it."""
    plain, strings = _JSON_STRING.subn("", _escapes_out(text))
    _check_depth(_bracket_depth(plain))
    counts = (plain.count("[") + plain.count("{"), strings, plain.count(",") + plain.count(":") + 1)
    for (count, what), each in zip(zip(counts, ("arrays and objects", "strings", "values"), strict=True),
                                   per_bytes, strict=True):
        if count > max(size // each, 64):
            raise TooManyValues(f"it may hold {count:,} {what}; at most one per {each} bytes are read")


def check_json_nesting(text: str) -> None:
    """Raises `NestedTooDeeply` when ``text`` nests deeper than MAX_FILE_JSON_NESTING:
    what every reader of a JSON file from outside calls before decoding it."""
    _check_depth(json_nesting(text))


def _bracket_depth(plain: str) -> int:
    """How deeply the brackets of ``plain`` (a JSON text, strings removed) nest: lazily,
    a 64 MB line of brackets holds no list."""
    return max(max(accumulate(map(_STEP.__getitem__, _NOT_BRACKET.sub("", plain))), default=0), 0)


def _check_depth(depth: int) -> None:
    if depth > MAX_FILE_JSON_NESTING:
        raise NestedTooDeeply(f"nested too deeply: {depth:,} levels; at most {MAX_FILE_JSON_NESTING} are read")


def _escapes_out(text: str) -> str:
    """``text`` with escaped backslashes and escaped quotes made plain characters:
    pairs of backslashes first, left to right as a decoder reads them, so a quote after
    an odd run of backslashes is escaped and one after an even run is not. Replaced,
    not deleted, so quotes on either side of an escaped one never join into a closing
    triple quote a TOML decoder does not see. A backslash outside a string, or before a
    quote inside a TOML literal string, is then of no consequence: an error where the
    decoder stops, or string content."""
    return text.replace("\\\\", "__").replace('\\"', "__") if "\\" in text else text


def json_nesting(text: str, start: int = 0, value_only: bool = False) -> int:
    """A bound on how deeply the JSON decoder nests reading ``text`` from ``start``
    (the whole rest, or with ``value_only`` the one value that starts there, up to
    where its brackets close): exact on JSON, and never below what the decoder
    reaches on any text."""
    rest = text[start:] if start else text
    plain = _JSON_STRING.sub("", _escapes_out(rest))
    if not value_only:
        return _bracket_depth(plain)
    depths = accumulate(map(_STEP.__getitem__, _NOT_BRACKET.sub("", plain)))
    steps = list(depths)  # a reply's answer: at most 200,000 characters
    return max(max(steps[:steps.index(0)] if 0 in steps else steps, default=0), 0)


# What TOML reads as a string or a comment, once escapes are plain: a multi-line
# string closes at its first three quotes and takes up to two more, a basic or literal
# one ends on its line, "#" runs to the end of its line. A string left open runs to the
# end of its line (a multi-line one: of the text), where tomllib stops with an error.
# Every alternative matches where it starts, so the scan is linear.
_TOML_SKIP = regex.compile(
    r'"""(?:[\s\S]*?"""|[\s\S]*+)"{0,2}'
    r"|'''(?:[\s\S]*?'''|[\s\S]*+)'{0,2}"
    r'|"[^"\n]*+"?'
    r"|'[^'\n]*+'?"
    r"|#[^\n]*+")
# A run of what a dotted key is made of (bare parts, strings, dots, blanks) holding a
# dot: its dots bound the parts of any key inside it. Runs without a dot are skipped by
# the engine, not by a Python step per line.
_KEY_RUN = regex.compile(r"[A-Za-z0-9_ \t-]*+\.[A-Za-z0-9_. \t-]*+")
# A table header starts its line: tomllib reads nothing but a comment or the end of
# the line after a key's value.
_HEADER = regex.compile(r"^[ \t]*+\[", regex.MULTILINE)


def toml_shape(text: str) -> tuple[int, int]:
    """(a bound on the parts of any dotted key, a bound on how deeply arrays and
    inline tables nest) of a TOML text: a string is one part and holds no bracket."""
    return _shape(_toml_plain(text))


def toml_size(text: str) -> tuple[int, int]:
    """(a bound on the tables, a bound on the tables, keys, values and arrays) that
    `tomllib` makes of a TOML text: what it holds in memory, and most of its time."""
    return _size(_toml_plain(text))


def _toml_plain(text: str) -> str:
    return _TOML_SKIP.sub("Q", _escapes_out(text))


def _shape(plain: str) -> tuple[int, int]:
    parts = max((m.group().count(".") + 1 for m in _KEY_RUN.finditer(plain)), default=1)
    return parts, _bracket_depth(plain)


def _size(plain: str) -> tuple[int, int]:
    """A table is made by a header, by a dotted key's part before a dot, or by "{"; a
    key part follows a header's "[", a dot or a "=" it is the key of, a value a "=" or
    an array's "[" or ","."""
    dots = plain.count(".")
    tables = dots + plain.count("{") + _HEADER.subn("", plain)[1]  # a count, not a list of matches
    return tables, dots + plain.count("{") + plain.count("[") + plain.count("=") + plain.count(",")


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` of a text from outside, refused (ValueError, with the numbers)
    when a run of dotted parts may be longer than MAX_TOML_KEY_PARTS, arrays and inline
    tables nest deeper than MAX_TOML_NESTING, it may make more than MAX_TOML_TABLES
    tables or MAX_TOML_ITEMS tables, keys, values and arrays, or the result nests deeper
    than MAX_TOML_RESULT_DEPTH."""
    plain = _toml_plain(text)
    parts, depth = _shape(plain)
    if parts > MAX_TOML_KEY_PARTS:
        raise ValueError(f"a key of {parts:,} dotted parts; at most {MAX_TOML_KEY_PARTS} are read")
    if depth > MAX_TOML_NESTING:
        raise ValueError(f"arrays or inline tables nested {depth:,} deep; at most {MAX_TOML_NESTING} are read")
    tables, items = _size(plain)
    if tables > MAX_TOML_TABLES:
        raise ValueError(f"it may make {tables:,} tables; at most {MAX_TOML_TABLES:,} are read")
    if items > MAX_TOML_ITEMS:
        raise ValueError(f"it may make {items:,} tables, keys, values and arrays; at most {MAX_TOML_ITEMS:,} are read")
    del plain
    value = tomllib.loads(text)
    depth = _depth(value)
    if depth > MAX_TOML_RESULT_DEPTH:
        raise ValueError(f"tables nested {depth:,} deep once read; at most {MAX_TOML_RESULT_DEPTH} are read")
    return value


def _depth(value: object) -> int:
    """How deeply a parsed value nests tables and arrays, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest
