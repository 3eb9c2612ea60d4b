"""Refuses patterns whose compilation would be expensive, before they are compiled.

`regex` has no compile-time timeout, and it expands counted repetition while
compiling: ``(?:a{1000}){1000}`` (17 characters) builds a million nodes, ~1 s and
~280 MB, and one more level takes gigabytes. So each pattern is first *parsed* with
`regex`'s own parser (cheap: linear in the pattern, which the schema caps at 512
characters) and its parse tree is walked to bound the size of the compiled program:
every node costs 1, a literal string its length, a set its members, and a repeat
multiplies its body by its largest finite count (conservatively: a repeat with an
open upper bound is charged its lower bound, ``{2,1000}`` is charged 1000). Only a
pattern under ``MAX_COMPILED_COST`` reaches `regex.compile`. Compilation bypasses the
module cache, so hostile replies cannot grow it.
"""

from __future__ import annotations

from typing import NamedTuple

import regex
from regex import _regex_core

MAX_COMPILED_COST = 20_000
MAX_REPLY_COST = 60_000
FLAGS = 0


class Refused(Exception):
    """The pattern is refused as too costly to compile (or unparseable)."""


def _children(node: object) -> list:
    out = []
    for value in vars(node).values():
        if isinstance(value, _regex_core.RegexBase):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, _regex_core.RegexBase))
    return out


def _cost(node: object, budget: int) -> int:
    """Upper bound of compiled size; stops early once it exceeds ``budget``."""
    if isinstance(node, _regex_core.GreedyRepeat):  # Lazy and Possessive subclass it
        counts = [c for c in (node.min_count, node.max_count) if c is not None]
        factor = max([1, *counts])
        if factor > budget:
            return budget + 1
        return factor * _cost(node.subpattern, budget // factor + 1)
    if isinstance(node, _regex_core.String):
        own = len(node.characters)
    elif isinstance(node, _regex_core.SetBase):
        own = len(node.items)
    else:
        own = 1
    total = own
    for child in _children(node):
        total += _cost(child, budget - total)
        if total > budget:
            return total
    return total


def _literal_runs(node: object, runs: list[str]) -> None:
    """Collects runs of case-sensitive literal characters that every match needs in
    the searched text: consecutive characters of the top-level sequence, of plain
    groups inside it and of positive lookarounds (which see the same text). Repeats,
    branches, conditionals and fuzzy items are not entered."""
    items = node.items if isinstance(node, _regex_core.Sequence) else [node]
    run: list[str] = []
    for item in items:
        if (type(item) is _regex_core.Character and item.positive and not item.zerowidth
                and item.case_flags == _regex_core.NOCASE):
            run.append(chr(item.value))
            continue
        if run:
            runs.append("".join(run))
            run = []
        if isinstance(item, _regex_core.Sequence):
            _literal_runs(item, runs)
        elif type(item) in (_regex_core.Group, _regex_core.Atomic) or (
                type(item) is _regex_core.LookAround and item.positive):
            _literal_runs(item.subpattern, runs)
    if run:
        runs.append("".join(run))


def _parse(pattern: str):
    source = _regex_core.Source(pattern)
    info = _regex_core.Info(FLAGS, source.char_type, {})
    try:
        while True:
            try:
                source = _regex_core.Source(pattern)
                source.ignore_space = bool(info.flags & regex.VERBOSE)
                parsed = _regex_core._parse_pattern(source, info)
                break
            except _regex_core._UnscopedFlagSet:
                info = _regex_core.Info(info.global_flags, source.char_type, {})
    except RecursionError as exc:
        raise Refused("pattern nests too deeply to parse") from exc
    return parsed


def estimate_cost(pattern: str) -> int:
    """Parses without compiling and returns the cost bound. Raises `regex.error` for
    a syntax error and `Refused` for a parse that itself misbehaves."""
    return _cost(_parse(pattern), MAX_COMPILED_COST)


class Compiled(NamedTuple):
    pattern: regex.Pattern
    cost: int
    required: str  # a literal every match needs in the text ("" if none is known)


_CACHE_COST_LIMIT = 200_000  # bounds the memory the cache can hold, whatever replies say
_cache: dict[str, Compiled] = {}
_cache_cost = 0


def compile_cached(pattern: str) -> Compiled:
    """`compile_bounded` with a cache weighted by compiled size: training repeats the
    same patterns across rollouts, and compiling dominates scoring when it repeats."""
    global _cache_cost
    hit = _cache.get(pattern)
    if hit is not None:
        return hit
    compiled = compile_bounded(pattern)
    while _cache and _cache_cost + compiled.cost > _CACHE_COST_LIMIT:
        _cache_cost -= _cache.pop(next(iter(_cache))).cost
    _cache[pattern] = compiled
    _cache_cost += compiled.cost
    return compiled


def clear_cache() -> None:
    global _cache_cost
    _cache.clear()
    _cache_cost = 0


def compile_bounded(pattern: str) -> Compiled:
    """Compiles ``pattern`` only if its compiled size is bounded; returns it with its
    cost bound and a required literal (the scanner skips texts that lack it, saving
    a regex call: on short records the per-call cost of `timeout` dominates). Raises `Refused`, or what `regex` raises for a bad pattern (`regex.error`,
    `ValueError`, ...), and never takes long."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in pattern):
        raise Refused("pattern contains a lone surrogate")
    parsed = _parse(pattern)
    cost = _cost(parsed, MAX_COMPILED_COST)
    if cost > MAX_COMPILED_COST:
        raise Refused(f"compiled size bound exceeds {MAX_COMPILED_COST}"
                      " (nested or large counted repetition)")
    try:
        compiled = regex.compile(pattern, FLAGS, cache_pattern=False)
    except RecursionError as exc:
        raise Refused("pattern nests too deeply to compile") from exc
    if compiled.flags & regex.LOCALE:
        raise Refused("the LOCALE flag makes matching depend on the machine's locale")
    runs: list[str] = []
    try:
        _literal_runs(parsed, runs)
    except RecursionError:
        runs = []
    return Compiled(compiled, cost, max(runs, key=len, default=""))
