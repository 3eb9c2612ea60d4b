"""Leaks and damage summed by class, so sums across tasks mean something.

A stream invents families of its own (``groune_api_key``, ``zuquaquuk_unlock``): summed
by name across 64 tasks they give hundreds of rows of one task each. Every labelled span
has a summary class (`corpus.stream.Span.group`): a static family is its own class, a
stream's invented families fall into the open world's classes (``house_format``, each
look-alike kind ``house_client_id``, ``house_key_id``, ..., ``context_secret``,
``context_lookalike``, each policy category by name). Scoring records the tallies per
class beside the per-family ones (``info.redaction.secret_classes``), and summaries add
those up. A trace recorded without class tallies (an older build) is summed by family
name, under its own names: nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SECRET_CLASSES, DECOY_CLASSES = "secret_classes", "decoy_classes"
MAX_TALLY = 1 << 53  # a span count no task comes near; a larger one is malformed (its sums could not be printed)
_FALLBACK = {SECRET_CLASSES: "secret_families", DECOY_CLASSES: "decoy_families"}


def _pairs(value: object) -> dict[str, tuple[int, int]]:
    """A recorded tally table as {name: (a, b)}, skipping malformed entries (a hostile
    trace may hold anything: counts must be whole numbers in [0, MAX_TALLY])."""
    out: dict[str, tuple[int, int]] = {}
    if not isinstance(value, dict):
        return out
    for name, pair in value.items():
        if (isinstance(name, str) and isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_TALLY for v in pair)
                and pair[1] <= pair[0]):
            out[name] = (pair[0], pair[1])
    return out


def trace_tallies(trace: dict[str, Any], table: str) -> dict[str, tuple[int, int]]:
    """One trace's tallies per class (``table``: SECRET_CLASSES or DECOY_CLASSES), or per
    family when the trace recorded no classes."""
    info = trace.get("info")
    red = info.get("redaction") if isinstance(info, dict) else None
    if not isinstance(red, dict):
        return {}
    return _pairs(red[table] if table in red else red.get(_FALLBACK[table]))


def add_tallies(tables: Iterable[dict[str, tuple[int, int]]]) -> dict[str, list[int]]:
    total: dict[str, list[int]] = {}
    for table in tables:
        for name, (a, b) in table.items():
            t = total.setdefault(name, [0, 0])
            t[0] += a
            t[1] += b
    return dict(sorted(total.items()))


def secret_rows(tallies: dict[str, list[int]]) -> dict[str, dict[str, int]]:
    """{class: {labelled, removed, leaked}}, by name."""
    return {k: {"labelled": a, "removed": b, "leaked": a - b} for k, (a, b) in sorted(tallies.items())}


def decoy_rows(tallies: dict[str, list[int]]) -> dict[str, dict[str, int]]:
    """{class: {present, destroyed}}, by name."""
    return {k: {"present": a, "destroyed": b} for k, (a, b) in sorted(tallies.items())}


def class_summary(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """The class tables of a run: ``secret_classes`` and ``decoy_classes``."""
    return {SECRET_CLASSES: secret_rows(add_tallies(trace_tallies(t, SECRET_CLASSES) for t in traces)),
            DECOY_CLASSES: decoy_rows(add_tallies(trace_tallies(t, DECOY_CLASSES) for t in traces))}
