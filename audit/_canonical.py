"""Strict JSON reading and the canonical JSON form that per-trace digests cover.

Why strict: a sealed file is read by other tools too. Duplicate object keys (which
parsers resolve differently), NaN/Infinity (not JSON) and unparseable numbers could let
one archive say two things, so they are errors here, never silently resolved.

Canonical form ``rp-canonical-json-v1`` of a parsed JSON value: Python's
``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False)`` encoded as ASCII. That is: no insignificant whitespace; object keys
sorted by Unicode code point; every non-ASCII character written as ``\\uXXXX``
(lowercase hex, astral characters as a surrogate pair) and the usual short escapes
(``\\" \\\\ \\n \\r \\t \\b \\f``); integers in decimal; floats as Python's ``repr`` (the
shortest text that reads back as the same double, e.g. ``0.1``, ``1e-07``, ``1.0``).
The digest of a trace is the SHA-256 of the canonical form of the trace object (one
element of an Episode line's ``traces`` array). Because it is computed from the parsed
value, re-indenting a file does not change trace digests, but the traces-file digest
(over the raw bytes) still changes.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, NoReturn

from redaction_pressure.contract import NestedTooDeeply, check_json_nesting

CANONICALIZATION = "rp-canonical-json-v1"


class StrictJSONError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate object key {key[:80]!r}")
        out[key] = value
    return out


def _constant(name: str) -> NoReturn:
    raise StrictJSONError(f"{name} is not JSON")


# The longest number literal read (sign, digits, fraction and exponent included). Every
# number this environment and verifiers write is far shorter: a seed below 2^64 has 20
# digits, a double's shortest form at most 24 characters. A longer literal is refused
# before it is converted: Python's int() of a 4,300-digit literal is itself quadratic
# work, and such a value (a 4,299-digit reward) overflows float() wherever it is used.
MAX_NUMBER_CHARS = 40


def _literal(text: str, kind: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise StrictJSONError(f"{kind} literal of {len(text):,} characters ({text[:12]}…) is longer than "
                              f"{MAX_NUMBER_CHARS}, the most a number in these files has")


def _integer(text: str) -> int:
    _literal(text, "integer")
    return int(text)


def _finite(text: str) -> float:
    # ``1e999`` is valid JSON syntax that a double cannot hold: Python reads it as
    # infinity, which other parsers may reject or read otherwise
    _literal(text, "number")
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text[:40]} is out of range for a double")
    return value


def decode_utf8(data: bytes | bytearray | memoryview | str, what: str = "the document") -> str:
    """Strict UTF-8 (RFC 3629): no other encoding is guessed (``json.loads`` on bytes
    would accept UTF-16/32), no encoded surrogates (CESU-8, which ``json.loads`` lets
    through with ``surrogatepass``), and no byte order mark. Raises StrictJSONError."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"{what} is not UTF-8: {exc.reason} at byte {exc.start}") from None
    if text.startswith("\ufeff"):
        raise StrictJSONError(f"{what} starts with a byte order mark (U+FEFF); UTF-8 JSON must not")
    return text


def loads_strict(data: bytes | str) -> Any:
    """Parses JSON, refusing duplicate keys, NaN/Infinity, numbers that overflow a
    double (``1e999``) and number literals longer than ``MAX_NUMBER_CHARS`` (refused
    before they are converted). Raises StrictJSONError
    (a ValueError) for every kind of bad input, including too-deep nesting, anything
    that is not strict UTF-8 (see ``decode_utf8``) and numbers Python refuses to
    convert."""
    text = decode_utf8(data, "JSON text")
    try:  # refused before the decoder recurses: no verdict depends on the stack
        check_json_nesting(text)
    except NestedTooDeeply as exc:
        raise StrictJSONError(f"JSON {exc}") from None
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite,
                          parse_int=_integer)
    except StrictJSONError:
        raise
    except RecursionError:
        raise StrictJSONError("JSON nested too deeply") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError, int limits
        raise StrictJSONError(str(exc)[:300]) from None


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def same_json(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value, type included: ``1.0`` is not
    ``1`` and ``true`` is not ``1`` (Python's ``==`` says both are), compared as their
    canonical forms. A value with no JSON form equals nothing."""
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return False


def trace_digest(trace: Any) -> str:
    """Hex SHA-256 of the trace's canonical JSON."""
    return hashlib.sha256(canonical_json(trace)).hexdigest()
