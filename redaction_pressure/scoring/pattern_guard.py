"""Refuses patterns that would be expensive to compile or to run, before compiling.

`regex` has no compile-time timeout, and it expands counted repetition while
compiling: ``(?:a{1000}){1000}`` (17 characters) builds a million nodes, ~1 s and
~280 MB, and one more level takes gigabytes. Under full case folding a one-item set
becomes a ~105-way branch first, so ``(?fi)[\\x00-\\U0010ffff]{19000}`` costs ~730 MB.
Its time budget bounds matching, but not memory: recursion (``(?R)``, ``(?1)``,
``(?&name)``) and fuzzy matching (``{e<=3}``) grow backtracking state by hundreds of
megabytes within two seconds.

So each pattern is first *parsed* with `regex`'s own parser (linear in the pattern,
which the schema caps at `MAX_PATTERN_CHARS` characters) and its parse tree is walked:

- recursion and subroutine calls, fuzzy matching, ``\\K`` inside a lookaround
  (which yields matches that end before they start), named lists (``\\L<name>``, met
  as the parser reads them) and the LOCALE flag, global or scoped, are refused;
- the compiled size is bounded, in the units `regex`'s compiler builds: every node
  costs 1, a literal string its length, a set its members, a node under full case
  folding 105 times that. A counted repeat ``{m,n}`` is built as ``m`` copies of its
  body followed, when ``n > m``, by one looping copy (`regex`'s ``build_REPEAT``), so
  it costs its body ``m + 1`` times (``m`` times when ``n == m``, once when ``m`` is
  0): ``[A-Za-z0-9+/=\\s]{64,10000}`` costs 65 bodies, ``(?:a{1000}){1000}`` a
  million. Only a pattern under ``MAX_COMPILED_COST`` is compiled, and a reply's
  patterns together stay under ``MAX_REPLY_COST``. `benchmarks/bench_pattern_cost.py`
  measures the bound against the memory `regex` really allocates while compiling
  (tracemalloc) on realistic and random patterns: it stays an upper bound at
  `BYTES_PER_UNIT` bytes per unit.

`regex`'s parser and compiler recurse once per level of nested groups and sets, so
before either runs, that nesting is bounded *on the text* (`nesting_bound`), and the
work runs with a fixed stack (`stack`): a verdict never depends on the caller's
stack depth. The parse tree that was checked is the one compiled (`_build` repeats
what ``regex.compile`` does after parsing, proven argument for argument by the
tests), so a fresh pattern is parsed once, not twice. Compilation bypasses `regex`'s
pattern cache and its per-pattern locale note, so hostile replies cannot grow module
state; our own cache is a bounded, locked LRU that only holds successful compiles,
which are pure functions of the pattern.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, NamedTuple

import regex
from regex import _main as _main_module
from regex import _regex as _regex_module
from regex import _regex_core as _core_module

from .stack import with_headroom

# The guard reads and drives regex's parser and compiler, which its type stubs do not
# describe (they cover the public API only); these internals are typed as Any here, and
# _BUILD_VERIFIED_FOR plus the tests pin the behaviour of the version they were read from.
_regex_main: Any = _main_module
_regex: Any = _regex_module
_regex_core: Any = _core_module

MAX_COMPILED_COST = 20_000
MAX_REPLY_COST = 60_000
MAX_NESTING = 32
FULL_FOLD_FACTOR = 105  # len(regex._regex.get_expand_on_folding()) in regex 2026.11
# Peak bytes `regex` allocates while compiling, per unit of the bound: the benchmark's
# maximum is ~650 (a set under full case folding, which becomes a ~105-way branch of
# strings), so a pattern's compile memory stays under BYTES_PER_UNIT *
# MAX_COMPILED_COST (~20 MB) and a reply's under 3x that.
BYTES_PER_UNIT = 1024
# What compiling any pattern costs before its first node (the pattern object, its
# tables), in units: a one-character pattern allocates ~3 KB.
PATTERN_BASE_COST = 16
_REPORTED_COST_CAP = 10**9  # how far a refused pattern's size is counted for its message
FLAGS = 0
_FULL_FOLD = int(_regex_core.FULLIGNORECASE)
# _build mirrors regex._main._compile after parsing; for other versions of regex the
# pattern is compiled by regex.compile instead (parsed twice, same verdict).
_BUILD_VERIFIED_FOR = ("2026.11.19",)
_SINGLE_PARSE = regex.__version__ in _BUILD_VERIFIED_FOR

# regex's parser combines flags thousands of times per pattern, and its flag constants
# are enum.IntFlag members, whose & and | are Python calls: over half the time of
# compiling an oracle pattern. The same numbers as plain ints build the same code
# (tests.unit.test_verdict_purity.SingleParseCompile compares it, pattern by pattern,
# both ways), so for the version _build was read from, regex's parser module holds them
# as ints.
_ENUM_FLAGS: dict[str, Any] = {name: value for name, value in vars(_regex_core).items()
                               if isinstance(value, regex.RegexFlag)}
# REGEX_FLAGS maps inline flag letters to flags: with enum values there, one (?m) or
# (?i:...) made the parse info's flags an IntFlag for the rest of the pattern (a scoped
# oracle pattern parsed 1.8x slower than without its leading (?m)).
_ENUM_TABLES: dict[str, dict[Any, Any]] = {name: getattr(_regex_core, name)
                                           for name in ("CASE_FLAGS_COMBINATIONS", "DEFAULT_FLAGS", "REGEX_FLAGS")}


def _plain(value: Any) -> Any:
    return int(value) if isinstance(value, regex.RegexFlag) else value


def _use_flag_constants(plain: bool) -> None:
    """Sets regex's parser flag constants to plain ints (``plain``) or back to its own."""
    for name, value in _ENUM_FLAGS.items():
        setattr(_regex_core, name, int(value) if plain else value)
    for name, table in _ENUM_TABLES.items():
        setattr(_regex_core, name, {_plain(k): _plain(v) for k, v in table.items()} if plain else table)


if _SINGLE_PARSE:
    _use_flag_constants(plain=True)


class Refused(Exception):
    """The pattern is refused as too costly (or too dangerous) to compile or run."""


_SURROGATE = regex.compile("[\ud800-\udfff]")
# A "{" that no backslash escapes, then what may open a fuzzy constraint (an error type
# e, i, d or s, or a digit of a cost, spaces between under (?x)): Python's `re` reads
# "{s}" or "${env:X}" as literal text, `regex` as fuzzy matching.
_FUZZY_OPENER = regex.compile(r"(?<![\\])(?:\\\\)*\{\s*[eids0-9]")
# What `regex` says of a fuzzy constraint it could not read, and the guard of one it read.
_FUZZY_ERRORS = ("fuzzy", "expected }")
FUZZY_HINT = ("(in `regex` a { before e, i, d, s or a digit may open fuzzy matching, as {e<=1} does: write a "
              "literal { as \\{)")


def brace_hint(pattern: str, message: str) -> str:
    """A hint to append to ``message``, a refusal or compile error of ``pattern``: a
    model used to `re` writes "{secret}" or "${env:TOKEN}" meaning literal braces, and
    the bare error ("expected }") does not say why. Only for an error about a fuzzy
    constraint, of a pattern with a brace that may open one."""
    if any(e in message for e in _FUZZY_ERRORS) and _FUZZY_OPENER.search(pattern):
        return f" {FUZZY_HINT}"
    return ""


def refusal(pattern: str, exc: Refused) -> str:
    """The error a reply gets for a refused pattern."""
    return f"refused before compiling: {exc}" + brace_hint(pattern, str(exc))


def compile_error(pattern: str, exc: Exception) -> str:
    """The error a reply gets for a pattern `regex` cannot compile: its message (the
    exception's type too when it is not `regex.error`: hostile input may reach any
    corner of the compiler), cut to 300 characters, then the brace hint."""
    what = str(exc) if isinstance(exc, regex.error) else f"{type(exc).__name__}: {exc}"
    return f"does not compile: {what}"[:300] + brace_hint(pattern, what)


# An inline flag group that may set VERBOSE: "(?" then flag letters (and V0/V1 digits,
# "-") with an x among them. A superset of what `regex` reads as one (its flag sets
# hold nothing else), so a real VERBOSE flag is never missed; "(?P<prefix>" is not one.
_MAYBE_VERBOSE = regex.compile(r"\(\?[A-Za-z0-9-]*x")
# The same for the VERSION1 flag: "(?V1)", "(?iV1)", "(?V1:...)".
_MAYBE_V1 = regex.compile(r"\(\?[A-Za-z0-9-]*V1")
# VERBOSE surely on everywhere: the pattern opens with positional flags groups of
# `regex`'s flag letters, x among them (nothing before it can make it anything else;
# VERBOSE is a scoped flag, so from there it holds in every group), and nothing can
# turn it off. Turning a flag off needs a "-" after "(?" and flag letters, which under
# VERBOSE may be spaced out or interrupted by "#" comments ("(?i #...\n -x)"): any
# "(?" followed by letters, digits, white space and comments, then "-", counts (a
# superset: in a set, escaped or in a comment it would be text). White space there is
# what `regex` skips, every character of which ``str.isspace`` is true: ``\s`` and
# U+001C-U+001F, which ``\s`` does not match ("(?\x1f-x)" turns VERBOSE off; a review
# found the bound at 1 for 60 real levels when only ``\s`` was allowed).
_POSITIONAL_FLAGS = regex.compile(r"(?:\(\?(?:[abefiLmprsuwx]|V[01])*+\))++")
_MAYBE_FLAGS_OFF = regex.compile(r"\(\?(?!#)(?:[\s\x1c-\x1fA-Za-z0-9]|#[^\n]*+)*+-")


def nesting_bound(pattern: str) -> int:
    """An upper bound, read from the text alone, on how deeply groups and character
    sets nest (every kind of group, lookaround, conditional, V1 nested set).

    The text is read as `regex` reads it: parentheses inside a set are literals
    (``(?<=[\\s(=:])`` nests two levels, not three), a ``]`` first in a set is a literal
    (``[]...]``, ``[^]...]``), a ``(?#...)`` comment ends at its first unescaped ``)``.
    Sets are read as version 0 reads them (a ``[`` inside a set is a literal unless
    ``[:`` may open a POSIX class) and, when the pattern may set the VERSION1 flag, also as version 1 does
    (sets nest), and the larger count is taken. Where the text alone cannot say what
    `regex` will do, every reading is followed and the deepest taken: whether a ``#`` outside a set starts a comment
    (VERBOSE may be on there, which depends on flags; a pattern that opens with ``(?x)``
    and can never turn it off reads every such ``#`` as a comment, so parentheses in
    its comments do not count), whether a ``]`` after an inner
    ``[`` closes a POSIX class or the set (version 0), whether a ``]`` after ``--``,
    ``&&``, ``||`` or ``~~`` is a literal (version 1). Readings that meet in one state
    keep the most open groups (which never lowers what follows); a text that keeps more
    than `_MAX_READINGS` readings apart gets the plain count of its openers, which is
    always an upper bound. So the bound never undercounts, costs linear time, and
    overcounts only where a comment's text or an ambiguous bracket would nest deeper
    than the pattern does."""
    openers = pattern.count("(") + pattern.count("[")
    if openers <= MAX_NESTING:
        return openers  # each level needs an opener
    leading = _POSITIONAL_FLAGS.match(pattern)
    verbose = (_ALWAYS if leading is not None and "x" in leading.group() and not _MAYBE_FLAGS_OFF.search(pattern)
               else _MAYBE if _MAYBE_VERBOSE.search(pattern) else _NEVER)
    # Sets nest only under version 1, which only a flag in the pattern can set (the
    # parser's default version is pinned to 0): without one, the version-1 reading
    # would count "[^[\]]" (a literal "[" in a set) as a set left open.
    versions = (False, True) if _MAYBE_V1.search(pattern) is not None else (False,)
    found = [f for f in (_nesting(pattern, nested, verbose) for nested in versions) if f is not None]
    return max(found) if len(found) == len(versions) else openers


_CODE, _LINE_COMMENT, _PAREN_COMMENT = 0, 1, 2
_NEVER, _MAYBE, _ALWAYS = 0, 1, 2  # whether a "#" outside a set starts a comment
_MAX_READINGS = 12  # states kept at one position before the plain opener count is taken
_SET_OPERATORS = ("--", "&&", "||", "~~")


def _nesting(pattern: str, nested: bool, verbose: int) -> int | None:
    """The deepest nesting over every reading of ``pattern``, or None when the readings
    multiply past `_MAX_READINGS`. A reading's state is (mode, open set levels) with its
    open groups. ``nested``: sets nest (version 1); otherwise a set holds at most one
    more level (a POSIX class). ``verbose``: whether a "#" outside a set starts a comment
    (`_NEVER`, `_MAYBE`: both readings, `_ALWAYS`)."""
    n = len(pattern)
    at: list[dict[tuple[int, int], int]] = [{} for _ in range(n + 2)]
    at[0][(_CODE, 0)] = 0
    deepest = 0

    def go(pos: int, mode: int, sets: int, groups: int) -> None:
        nonlocal deepest
        deepest = max(deepest, groups + sets)
        key = (mode, sets)
        states = at[min(pos, n)]
        if states.get(key, -1) < groups:
            states[key] = groups

    for i in range(n):
        if len(at[i]) > _MAX_READINGS:
            return None
        c = pattern[i]
        for (mode, sets), groups in at[i].items():
            if mode == _LINE_COMMENT:
                go(i + 1, _CODE if c == "\n" else mode, 0, groups)
            elif mode == _PAREN_COMMENT:
                go(i + 2 if c == "\\" else i + 1, _CODE if c == ")" else mode, 0, groups)
            elif c == "\\":
                go(i + 2, mode, sets, groups)
            elif c == "[" and sets and not nested and not pattern.startswith(":", i + 1):
                go(i + 1, mode, sets, groups)  # a literal: in a version-0 set only "[:" may open a POSIX class
            elif c == "[":
                j = i + 1
                if nested or not sets:  # a new set: a leading "^" and "]" are part of it
                    j += pattern.startswith("^", j)
                    j += pattern.startswith("]", j)
                go(j, mode, sets + 1 if nested or sets < 2 else sets, groups)
            elif sets:
                if c != "]":
                    go(i + 1, mode, sets, groups)
                elif nested:
                    go(i + 1, mode, sets - 1, groups)
                    if pattern[max(0, i - 2):i] in _SET_OPERATORS:  # maybe a literal "]"
                        go(i + 1, mode, sets, groups)
                else:
                    go(i + 1, mode, 0, groups)  # the set ends (an inner "[" was a literal)
                    if sets > 1 and pattern[i - 1] == ":":  # or a POSIX class does: only ":]" closes one
                        go(i + 1, mode, sets - 1, groups)
            elif c == "(":
                if pattern.startswith("?#", i + 1):  # the comment's own level, never left open
                    deepest = max(deepest, groups + 1)
                    go(i + 3, _PAREN_COMMENT, 0, groups)
                else:
                    go(i + 1, mode, 0, groups + 1)
            elif c == ")":
                go(i + 1, mode, 0, max(groups - 1, 0))
            elif c == "#" and verbose == _ALWAYS:
                go(i + 1, _LINE_COMMENT, 0, groups)
            else:
                if c == "#" and verbose == _MAYBE:
                    go(i + 1, _LINE_COMMENT, 0, groups)
                go(i + 1, mode, 0, groups)
        at[i] = {}
    return deepest


_CHILD_ATTRS = ("subpattern", "items", "branches", "yes_item", "no_item")
_NODE = _regex_core.RegexBase
_PLAIN, _FUZZY, _CALL, _KEEP, _LOOK, _REPEAT, _STRING, _SET, _LOOK_IF, _GRAPHEME = range(10)
GRAPHEME_COST = 5  # \X is one node in the parse tree, an atomic lazy repeat and a test when compiled
_KINDS = ((_regex_core.Fuzzy, _FUZZY), ((_regex_core.CallGroup, _regex_core.CallRef), _CALL),
          (_regex_core.Keep, _KEEP), (_regex_core.LookAround, _LOOK), (_regex_core.LookAroundConditional, _LOOK_IF),
          (_regex_core.GreedyRepeat, _REPEAT),  # Lazy and Possessive subclass it
          (_regex_core.String, _STRING), (_regex_core.SetBase, _SET), (_regex_core.Grapheme, _GRAPHEME))
_kind_of: dict[type, int] = {}


def _kind(node_type: type) -> int:
    kind = _kind_of.get(node_type)
    if kind is None:
        kind = next((k for types, k in _KINDS if issubclass(node_type, types)), _PLAIN)
        _kind_of[node_type] = kind  # one entry per regex node class: bounded
    return kind


def repeat_factor(min_count: int, max_count: int | None) -> int:
    """How many copies of its body `regex` builds for a repeat ``{min_count,max_count}``
    (``max_count`` None: unbounded): the minimum unrolled, plus one looping copy when
    more may follow."""
    return max(1, min_count + (max_count is None or max_count > min_count))


def _cost(node: Any, budget: int, in_lookaround: bool = False) -> int:
    """Upper bound of compiled size; stops early once it exceeds ``budget``. Raises
    `Refused` for constructs whose run-time memory has no bound. (Written for speed:
    it runs on every fresh pattern; tests check it against a plain reference.)"""
    kind = _kind(type(node))
    own = 1
    if kind:
        if kind == _FUZZY:
            raise Refused("fuzzy matching ({e<=n}) is refused: its memory use has no bound")
        if kind == _CALL:
            raise Refused("recursion and subroutine calls ((?R), (?1), (?&name)) are refused: "
                          "their backtracking memory has no bound")
        if kind == _KEEP:
            if in_lookaround:
                raise Refused(r"\K inside a lookaround is refused: it makes matches end before they start")
        elif kind == _LOOK:
            in_lookaround = True
        elif kind == _LOOK_IF:
            # Only the condition is a lookaround; the branches match the text itself.
            total = 1 + _cost(node.subpattern, budget - 1, True)
            for branch in (node.yes_item, node.no_item):
                if total <= budget and branch is not None:
                    total += _cost(branch, budget - total, in_lookaround)
            return total
        elif kind == _REPEAT:
            factor = repeat_factor(node.min_count, node.max_count)
            if factor > budget:
                return budget + 1
            return 1 + factor * _cost(node.subpattern, budget // factor + 1, in_lookaround)
        elif kind == _STRING:
            own = len(node.characters)
        elif kind == _GRAPHEME:
            own = GRAPHEME_COST
        # else a set: one unit for the set, one per member (its children, below)
    fields = node.__dict__  # every regex node has one; .get avoids getattr's exception path
    case_flags = fields.get("case_flags")
    if case_flags and int(case_flags) & _FULL_FOLD == _FULL_FOLD:  # int(): IntFlag's & is slow Python
        # full case folding turns each member of a set into a branch of strings
        own = (len(node.items) if kind == _SET else own) * FULL_FOLD_FACTOR
    total = own
    for name in _CHILD_ATTRS:
        value = fields.get(name)
        if value is None:
            continue
        for child in (value,) if isinstance(value, _NODE) else value if isinstance(value, (list, tuple)) else ():
            if isinstance(child, _NODE):
                total += _cost(child, budget - total, in_lookaround)
                if total > budget:
                    return total
    return total


def _literal_runs(node: Any, runs: list[str], folded: bool = False) -> None:
    """Collects runs of case-sensitive literal characters that every match needs in
    the searched text: consecutive characters of the top-level sequence, of plain
    groups inside it and of positive lookarounds (which see the same text). Repeats,
    branches, conditionals and fuzzy items are not entered.

    ``folded``: the runs read ignoring case instead, of ASCII literal characters matched
    exactly or ignoring case, lowercased. In an ASCII text a match needs each such run in
    the text lowercased: an ASCII character matches another ignoring case only as its
    other case (the Kelvin sign or a long s match k and s, but they are not ASCII), and
    a non-ASCII pattern character ends a run. The scanner reads them only in ASCII
    texts, so a key matched ignoring case (``(?i:db_password)``) skips texts without it."""
    items = node.items if isinstance(node, _regex_core.Sequence) else [node]
    run: list[str] = []
    for item in items:
        if (type(item) is _regex_core.Character and item.positive and not item.zerowidth
                and (item.value < 128 if folded else item.case_flags == _regex_core.NOCASE)):
            run.append(chr(item.value).lower() if folded else chr(item.value))
            continue
        if run:
            runs.append("".join(run))
            run = []
        if isinstance(item, _regex_core.Sequence):
            _literal_runs(item, runs, folded)
        elif type(item) in (_regex_core.Group, _regex_core.Atomic) or (
                type(item) is _regex_core.LookAround and item.positive):
            _literal_runs(item.subpattern, runs, folded)
    if run:
        runs.append("".join(run))


def literal_clauses(node: Any) -> list[tuple[str, ...]]:
    """What every match needs in the searched text, as clauses: each clause holds
    literals one of which the text contains. `_literal_runs` gives one-literal
    clauses; a branch whose every alternative needs a literal gives a clause of
    alternatives, and a repeat of at least one its body's. Anything under a case or
    fuzzy flag, a negative lookaround or a conditional adds none, so this never asks
    for more than a match needs."""
    items = node.items if type(node) is _regex_core.Sequence else [node]
    out: list[tuple[str, ...]] = []
    run: list[str] = []
    for item in items:
        kind = type(item)
        if (kind is _regex_core.Character and item.positive and not item.zerowidth
                and item.case_flags == _regex_core.NOCASE):
            run.append(chr(item.value))
            continue
        if run:
            out.append(("".join(run),))
            run = []
        if kind is _regex_core.Sequence:
            out += literal_clauses(item)
        elif kind in (_regex_core.Group, _regex_core.Atomic) or (kind is _regex_core.LookAround and item.positive):
            out += literal_clauses(item.subpattern)
        elif kind in (_regex_core.GreedyRepeat, _regex_core.LazyRepeat, _regex_core.PossessiveRepeat):
            if item.min_count >= 1:
                out += literal_clauses(item.subpattern)
        elif kind is _regex_core.Branch:
            alternatives = [literal_clauses(b) for b in item.branches]
            if all(alternatives):
                # each alternative's most selective clause: its shortest literal longest
                best = [max(a, key=lambda c: min(map(len, c))) for a in alternatives]
                out.append(tuple(dict.fromkeys(lit for clause in best for lit in clause)))
    if run:
        out.append(("".join(run),))
    return out


_LOCALE_REFUSED = "the LOCALE flag (?L) is refused: it makes matching depend on the machine's locale"
_NAMED_LISTS_REFUSED = r"named lists (\L<name>) are refused: a reply cannot supply their contents"


class _NoNamedLists(dict[str, Any]):
    """The parse info's named-list arguments: none, and asking for one refuses the
    pattern. `regex`'s parser looks a ``\\L<name>`` up here as it reads it, and with an
    empty dict it fails with "undefined named list", a compile error; the system prompt
    names \\L<name> among what is refused before compiling, so that is what a reply gets."""

    def __contains__(self, name: object) -> bool:
        raise Refused(_NAMED_LISTS_REFUSED)


def _info(flags: int, char_type: int) -> Any:
    info = _regex_core.Info(flags, char_type, _NoNamedLists())
    info.guess_encoding = regex.UNICODE  # as regex.compile sets it for str patterns (\R reads it)
    return info


def _parse(pattern: str) -> tuple[Any, Any, Any]:
    """Parses as ``regex.compile`` does (restarting when a flag turns out global);
    returns the tree, the source and the parse info."""
    if (depth := nesting_bound(pattern)) > MAX_NESTING:
        raise Refused(f"groups and sets nest deeper than {MAX_NESTING} levels (up to {depth} read from the text)")
    # The parser reads the default version from module state that regex.compile resets
    # from regex.DEFAULT_VERSION on every call; a reply's verdict must not depend on
    # who compiled what before, so it is pinned to regex's documented default, V0.
    _regex_core.DEFAULT_VERSION = _regex_core.VERSION0
    source = _regex_core.Source(pattern)
    info = _info(FLAGS, source.char_type)
    while True:
        try:
            source = _regex_core.Source(pattern)
            source.ignore_space = bool(info.flags & regex.VERBOSE)
            return _regex_core._parse_pattern(source, info), source, info
        except _regex_core._UnscopedFlagSet:
            info = _info(info.global_flags, source.char_type)


def _build(pattern: str, parsed: Any, source: Any, info: Any) -> regex.Pattern[str]:
    """What ``regex._main._compile`` does after parsing (regex 2026.11.19), for a str
    pattern, no named lists and no caching: the already checked tree is compiled
    instead of parsing the pattern a second time."""
    core = _regex_core
    if not source.at_end():
        raise regex.error("unbalanced parenthesis", pattern, source.pos)
    version = (info.flags & core._ALL_VERSIONS) or core.DEFAULT_VERSION
    if version not in (0, core.VERSION0, core.VERSION1):
        raise ValueError("VERSION0 and VERSION1 flags are mutually incompatible")
    if (info.flags & core._ALL_ENCODINGS) not in (0, core.ASCII, core.LOCALE, core.UNICODE):
        raise ValueError("ASCII, LOCALE and UNICODE flags are mutually incompatible")
    if not (info.flags & core._ALL_ENCODINGS):
        info.flags |= core.UNICODE
    reverse = bool(info.flags & core.REVERSE)
    fuzzy = isinstance(parsed, core.Fuzzy)
    try:
        parsed.fix_groups(pattern, reverse, False)
    except core.error as e:
        raise regex.error(e.msg, e.pattern, e.pos) from None
    parsed = parsed.optimise(info, reverse)
    parsed = parsed.pack_characters(info)
    req_offset, req_chars, req_flags = core._get_required_string(parsed, info.flags)
    if info.named_lists_used:
        raise Refused(_NAMED_LISTS_REFUSED)
    core._check_group_features(info, parsed)
    code = parsed.compile(reverse)
    ref = info.call_refs.get((0, reverse, fuzzy))
    if ref is not None:
        code = [(core.OP.CALL_REF, ref), *code, (core.OP.END,)]
    code += [(core.OP.SUCCESS, )]
    for group, rev, fuz in info.additional_groups:
        code += group.compile(rev, fuz)
    code = core._flatten_code(code)
    if not parsed.has_simple_start():
        with contextlib.suppress(core._FirstSetError):
            code = core._flatten_code(core._compile_firstset(info, parsed.get_firstset(reverse))) + code
    index_group = {v: n for n, v in info.group_index.items()}
    compiled: regex.Pattern[str] = _regex.compile(pattern, info.flags | version, code, info.group_index,
                                                  index_group, {}, [], req_offset, req_chars, req_flags,
                                                  info.group_count)
    return compiled


class Compiled(NamedTuple):
    pattern: regex.Pattern[str]
    cost: int
    required: str  # a literal every match needs in the text ("" if none is known)
    # a literal every match needs in an ASCII text lowercased ("" if none is known or it
    # says no more than ``required``): `_literal_runs` with folded
    folded: str = ""
    # the rest of its `literal_clauses`: every match needs one literal of each in the text
    clauses: tuple[tuple[str, ...], ...] = ()


_CACHE_COST_LIMIT = 200_000  # bounds the memory the cache can hold, whatever replies say
_CACHE_ENTRIES = 2048
_cache: OrderedDict[str, Compiled] = OrderedDict()
_cache_cost = 0
_cache_lock = threading.Lock()


def compile_cached(pattern: str) -> Compiled:
    """`compile_bounded` behind a least-recently-used cache weighted by compiled size:
    training repeats the same patterns across rollouts. Safe from any number of
    threads. Only successes are kept, and a success is a pure function of the pattern
    (bounded nesting, fixed stack), so a hit is exactly what a fresh compile gives;
    refusals and errors are recomputed every time."""
    with _cache_lock:
        hit = _cache.get(pattern)
        if hit is not None:
            _cache.move_to_end(pattern)
            return hit
    compiled = compile_bounded(pattern)
    _remember(pattern, compiled)
    return compiled


def _remember(pattern: str, compiled: Compiled) -> None:
    global _cache_cost
    with _cache_lock:
        if pattern not in _cache:
            while _cache and (_cache_cost + compiled.cost > _CACHE_COST_LIMIT or len(_cache) >= _CACHE_ENTRIES):
                _cache_cost -= _cache.popitem(last=False)[1].cost
            _cache[pattern] = compiled
            _cache_cost += compiled.cost
        else:
            _cache.move_to_end(pattern)


def cache_stats() -> tuple[int, int]:
    """(entries, summed compiled cost) of the compile cache."""
    with _cache_lock:
        return len(_cache), _cache_cost


def clear_cache() -> None:
    global _cache_cost
    with _cache_lock:
        _cache.clear()
        _cache_cost = 0


@with_headroom
def compile_bounded(pattern: str) -> Compiled:
    """Compiles ``pattern`` only if it is bounded; returns it with its cost bound and a
    required literal and the other literals every match needs (the scanner skips texts
    that lack one, saving a regex call: on short records the per-call cost of `timeout`
    dominates, and a rule led by a lookbehind costs a test at every position). Raises `Refused`, or what
    `regex` raises for a bad pattern, and never takes long."""
    if not pattern.isascii() and _SURROGATE.search(pattern):
        raise Refused("the pattern contains a lone surrogate (an unpaired \\ud800-\\udfff code point)")
    return _bounded(pattern, *_parse(pattern))


def _bounded(pattern: str, parsed: Any, source: Any, info: Any,
             clauses: list[tuple[str, ...]] | None = None) -> Compiled:
    """`compile_bounded` after parsing (``clauses``: its `literal_clauses`, when read)."""
    cost = PATTERN_BASE_COST + _cost(parsed, MAX_COMPILED_COST - PATTERN_BASE_COST)
    if cost > MAX_COMPILED_COST:
        # Counted again without stopping early, so the message says how much to cut.
        full = PATTERN_BASE_COST + _cost(parsed, _REPORTED_COST_CAP)
        size = f"{full:,} units" if full <= _REPORTED_COST_CAP else f"over {_REPORTED_COST_CAP:,} units"
        raise Refused(f"its compiled size is {size}; the limit is {MAX_COMPILED_COST:,} (a counted repeat "
                      f"{{m,n}} builds its body m+1 times, nested repeats multiply, a set costs 1 plus 1 per "
                      f"member, full case folding costs {FULL_FOLD_FACTOR}x)")
    if info.inline_locale or info.flags & regex.LOCALE:
        # Scoped too: (?L:...) sets LOCALE for its group, and the prompt refuses the flag.
        raise Refused(_LOCALE_REFUSED)
    runs: list[str] = []
    _literal_runs(parsed, runs)
    caseless: list[str] = []
    _literal_runs(parsed, caseless, folded=True)
    if clauses is None:
        clauses = literal_clauses(parsed)  # before _build, which rewrites the tree
    if _SINGLE_PARSE:
        compiled = _build(pattern, parsed, source, info)
    else:
        try:
            compiled = regex.compile(pattern, FLAGS, cache_pattern=False)
        finally:
            _regex_main._locale_sensitive.pop((str, pattern), None)
    if compiled.flags & regex.LOCALE:
        raise Refused(_LOCALE_REFUSED)
    required = max(runs, key=len, default="")
    lowered = max(caseless, key=len, default="")
    rest = tuple(dict.fromkeys(c for c in clauses if c != (required,) and "" not in c))
    return Compiled(compiled, cost, required, lowered if len(lowered) > len(required) else "", rest)


_share_trusted = False


def share_trusted_compiles() -> None:
    """From now on `compile_trusted` also puts what it compiles, bounded, in the
    cache `compile_cached` reads, when the bound allows it: a process that scores the
    stream's own oracle in the process that built the task (`export`) then compiles
    each pattern once, not twice. Off by default: the size bound costs a build ~3%."""
    global _share_trusted
    _share_trusted = True


@with_headroom
def compile_trusted(pattern: str) -> tuple[regex.Pattern[str], list[tuple[str, ...]]]:
    """The generator's own patterns (oracle patterns, line gates; never a reply):
    compiled as `compile_bounded` compiles them, without the size bound that guards
    against replies (a tenth of a compile, and a level-5 build compiles ~14 new
    patterns), with the `literal_clauses` every match needs."""
    parsed, source, info = _parse(pattern)
    clauses = literal_clauses(parsed)
    if _share_trusted and _SINGLE_PARSE and (pattern.isascii() or not _SURROGATE.search(pattern)):
        try:
            compiled = _bounded(pattern, parsed, source, info, clauses)
        except Refused:  # over a reply's bound (a joined oracle rule may be): compiled afresh below
            parsed, source, info = _parse(pattern)
        else:
            _remember(pattern, compiled)
            return compiled.pattern, clauses
    if _SINGLE_PARSE:
        return _build(pattern, parsed, source, info), clauses
    try:
        return regex.compile(pattern, FLAGS, cache_pattern=False), clauses
    finally:
        _regex_main._locale_sensitive.pop((str, pattern), None)


def _charged(pattern: str) -> int:
    return _cost(_parse(pattern)[0], MAX_COMPILED_COST)


# \R is not one node: `regex` parses it as a branch of line-break sequences. What it
# adds to a pattern, measured here so the system prompt states the guard's own figure.
LINEBREAK_COST = _charged(r"\R") - _charged("a") + 1
