"""Refuses patterns that would be expensive to compile or to run, before compiling.

`regex` has no compile-time timeout, and it expands counted repetition while
compiling: ``(?:a{1000}){1000}`` (17 characters) builds a million nodes, ~1 s and
~280 MB, and one more level takes gigabytes. Under full case folding a one-item set
becomes a ~105-way branch first, so ``(?fi)[\\x00-\\U0010ffff]{19000}`` costs ~730 MB.
Its time budget bounds matching, but not memory: recursion (``(?R)``, ``(?1)``,
``(?&name)``) and fuzzy matching (``{e<=3}``) grow backtracking state by hundreds of
megabytes within two seconds.

So each pattern is first *parsed* with `regex`'s own parser (linear in the pattern,
which the schema caps at 512 characters; parenthesis nesting is capped first, on the
text, so the parse cannot exhaust the stack and the verdict never depends on the
caller's stack depth) and its parse tree is walked:

- recursion and subroutine calls, fuzzy matching, and ``\\K`` inside a lookaround
  (which yields matches that end before they start) are refused;
- the compiled size is bounded: every node costs 1, a literal string its length, a
  set its members, a node under full case folding 105 times that, and a repeat
  multiplies its body by its largest count (an open upper bound is charged its lower
  bound, ``{2,1000}`` 1000). Only a pattern under ``MAX_COMPILED_COST`` is compiled.

Compilation bypasses `regex`'s pattern cache and removes its per-pattern locale note,
so hostile replies cannot grow module state; our own cache is bounded by entries and
by compiled size.
"""

from __future__ import annotations

from typing import NamedTuple

import regex
from regex import _main as _regex_main
from regex import _regex_core

MAX_COMPILED_COST = 20_000
MAX_REPLY_COST = 60_000
MAX_NESTING = 32
FULL_FOLD_FACTOR = 105  # len(regex._regex.get_expand_on_folding()) in regex 2026.11
FLAGS = 0
_FULL_FOLD = _regex_core.FULLIGNORECASE


class Refused(Exception):
    """The pattern is refused as too costly (or too dangerous) to compile or run."""


def _nesting(pattern: str) -> int:
    """Deepest parenthesis nesting, counted on the text (escapes skipped; a paren in a
    character class counts too, which only errs towards refusing)."""
    depth = deepest = 0
    escaped = False
    for c in pattern:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")":
            depth = max(0, depth - 1)
    return deepest


def _children(node: object) -> list:
    out = []
    for value in vars(node).values():
        if isinstance(value, _regex_core.RegexBase):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, _regex_core.RegexBase))
    return out


def _cost(node: object, budget: int, in_lookaround: bool = False) -> int:
    """Upper bound of compiled size; stops early once it exceeds ``budget``. Raises
    `Refused` for constructs whose run-time memory has no bound."""
    if isinstance(node, (_regex_core.CallGroup, _regex_core.CallRef)):
        raise Refused("recursion and subroutine calls ((?R), (?1), (?&name)) are refused: "
                      "their backtracking memory has no bound")
    if isinstance(node, _regex_core.Fuzzy):
        raise Refused("fuzzy matching ({e<=n}) is refused: its memory use has no bound")
    if isinstance(node, _regex_core.Keep) and in_lookaround:
        raise Refused(r"\K inside a lookaround is refused: it makes matches end before they start")
    in_lookaround = in_lookaround or isinstance(node, (_regex_core.LookAround, _regex_core.LookAroundConditional))
    if isinstance(node, _regex_core.GreedyRepeat):  # Lazy and Possessive subclass it
        counts = [c for c in (node.min_count, node.max_count) if c is not None]
        factor = max([1, *counts])
        if factor > budget:
            return budget + 1
        return factor * _cost(node.subpattern, budget // factor + 1, in_lookaround)
    if isinstance(node, _regex_core.String):
        own = len(node.characters)
    elif isinstance(node, _regex_core.SetBase):
        own = len(node.items)
    else:
        own = 1
    if getattr(node, "case_flags", 0) & _FULL_FOLD == _FULL_FOLD:
        own *= FULL_FOLD_FACTOR
    total = own
    for child in _children(node):
        total += _cost(child, budget - total, in_lookaround)
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


def _info(flags: int, char_type: int) -> _regex_core.Info:
    info = _regex_core.Info(flags, char_type, {})
    info.guess_encoding = regex.UNICODE  # as regex.compile sets it for str patterns (\R reads it)
    return info


def _parse(pattern: str):
    if _nesting(pattern) > MAX_NESTING:
        raise Refused(f"parentheses nest deeper than {MAX_NESTING}")
    source = _regex_core.Source(pattern)
    info = _info(FLAGS, source.char_type)
    while True:
        try:
            source = _regex_core.Source(pattern)
            source.ignore_space = bool(info.flags & regex.VERBOSE)
            return _regex_core._parse_pattern(source, info)
        except _regex_core._UnscopedFlagSet:
            info = _info(info.global_flags, source.char_type)


class Compiled(NamedTuple):
    pattern: regex.Pattern
    cost: int
    required: str  # a literal every match needs in the text ("" if none is known)


_CACHE_COST_LIMIT = 200_000  # bounds the memory the cache can hold, whatever replies say
_CACHE_ENTRIES = 2048
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
    while _cache and (_cache_cost + compiled.cost > _CACHE_COST_LIMIT or len(_cache) >= _CACHE_ENTRIES):
        _cache_cost -= _cache.pop(next(iter(_cache))).cost
    _cache[pattern] = compiled
    _cache_cost += compiled.cost
    return compiled


def clear_cache() -> None:
    global _cache_cost
    _cache.clear()
    _cache_cost = 0


def compile_bounded(pattern: str) -> Compiled:
    """Compiles ``pattern`` only if it is bounded; returns it with its cost bound and a
    required literal (the scanner skips texts that lack it, saving a regex call: on
    short records the per-call cost of `timeout` dominates). Raises `Refused`, or what
    `regex` raises for a bad pattern, and never takes long."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in pattern):
        raise Refused("pattern contains a lone surrogate")
    parsed = _parse(pattern)
    cost = _cost(parsed, MAX_COMPILED_COST)
    if cost > MAX_COMPILED_COST:
        raise Refused(f"compiled size bound exceeds {MAX_COMPILED_COST}"
                      " (nested or large counted repetition, or full case folding)")
    try:
        compiled = regex.compile(pattern, FLAGS, cache_pattern=False)
    finally:
        _regex_main._locale_sensitive.pop((str, pattern), None)
    if compiled.flags & regex.LOCALE:
        raise Refused("the LOCALE flag makes matching depend on the machine's locale")
    runs: list[str] = []
    _literal_runs(parsed, runs)
    return Compiled(compiled, cost, max(runs, key=len, default=""))
