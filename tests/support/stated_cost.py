"""The compiled size as the system prompt states it (task.prompt; its words are mirrored
here rule by rule), computed from a pattern's text for the syntax
tests.support.random_patterns writes: what a model reading the prompt would compute.
A test requires it to equal what the pattern guard charges."""

from __future__ import annotations

import re

FOLD, BASE, GRAPHEME, LINEBREAK = 105, 16, 5, 12
_FLAGS = re.compile(r"\(\?([a-zA-Z0-9]*)\)")
_NAMED = re.compile(r"\(\?P?<[A-Za-z_][A-Za-z0-9_]*>")
_SCOPED = re.compile(r"\(\?([a-zA-Z0-9]*)(?:-[a-zA-Z0-9]+)?:")  # a flag group: (?i:, (?-s:, (?i-m:
_COUNT = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False


def stated_cost(pattern: str) -> int:
    r = _Reader(pattern)
    flags = ""
    while (m := _FLAGS.match(pattern, r.pos)) is not None:  # leading flags: cost nothing
        flags += m.group(1)
        r.pos = m.end()
    cost = _alternation(r, flags)
    assert r.pos == len(pattern), (pattern, r.pos)
    return BASE + cost


def _folds(flags: str) -> bool:
    return "i" in flags and ("f" in flags or "V1" in flags)


def _alternation(r: _Reader, flags: str) -> int:
    """1 per alternative, and 1 more for a | list."""
    sides = [_sequence(r, flags)]
    while r.take("|"):
        sides.append(_sequence(r, flags))
    return sum(1 + s for s in sides) + (len(sides) > 1)


def _sequence(r: _Reader, flags: str) -> int:
    total = 0
    while r.pos < len(r.text) and not r.peek("|") and not r.peek(")"):
        atom = _atom(r, flags)
        total += _repeat(r, atom)
    return total


def _repeat(r: _Reader, body: int) -> int:
    if r.take("*"):
        low, high = 0, None
    elif r.take("+"):
        low, high = 1, None
    elif r.take("?"):
        low, high = 0, 1
    elif (m := _COUNT.match(r.text, r.pos)) is not None:
        r.pos = m.end()
        low = int(m.group(1))
        high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
    else:
        return body
    r.take("?") or r.take("+")  # lazy, possessive: the same size
    if low == high == 1:  # {1} is its body
        return body
    # {m,n} with n > m and {m,}: body m+1 times; {m} and {m,m}: m times; at least once
    times = max(1, low + (high is None or high > low))
    return 1 + times * body


def _atom(r: _Reader, flags: str) -> int:
    fold = _folds(flags)
    if r.take("(?P=") or r.take("\\g<"):  # a backreference by name or number: as one character
        r.pos = r.text.index(")" if r.text[r.pos - 1] == "=" else ">", r.pos) + 1
        return FOLD if fold else 1
    # a conditional: 1, its condition's contents, each branch (any lookaround as its condition)
    if r.take("(?(?=") or r.take("(?(?!") or r.take("(?(?<=") or r.take("(?(?<!"):
        condition = _alternation(r, flags)
        assert r.take(")")
        yes = 1 + _sequence(r, flags)
        no = 1 + _sequence(r, flags) if r.take("|") else 1  # a left-out branch: an empty alternative
        assert r.take(")")
        return 1 + condition + yes + no
    if r.take("(?#"):  # a comment: nothing
        r.pos = r.text.index(")", r.pos) + 1
        return 0
    if r.take("(?:") or r.take("(?|"):
        inner = _alternation(r, flags)
        assert r.take(")")
        return inner
    if (m := _SCOPED.match(r.text, r.pos)) is not None:
        r.pos = m.end()
        inner = _alternation(r, flags + m.group(1))
        assert r.take(")")
        return inner
    if (m := _NAMED.match(r.text, r.pos)) is not None:  # a named group: a capturing group
        r.pos = m.end()
        inner = _alternation(r, flags)
        assert r.take(")")
        return 1 + inner
    for opener in ("(?<=", "(?<!", "(?=", "(?!", "("):
        if r.take(opener):
            inner = _alternation(r, flags)
            assert r.take(")")
            return 1 + inner
    if r.take("["):
        return _set(r, fold, "i" in flags)
    if r.take("\\"):
        c = r.text[r.pos]
        r.pos += 1
        if c in "pPN":
            assert r.take("{")
            r.pos = r.text.index("}", r.pos) + 1
            return FOLD if fold else 1  # \N{name} is a character; \p{..} folds too
        if c == "X":
            return GRAPHEME
        if c == "R":
            return LINEBREAK
        if c in "dDwWsSbBAZ":
            return 1
        return FOLD if fold else 1  # an escaped character
    c = r.text[r.pos]
    r.pos += 1
    if c in ".^$":
        return 1
    return FOLD if fold else 1


def _set(r: _Reader, fold: bool, nocase: bool) -> int:
    """1 plus 1 per member (106 per member under full case folding); 1 more when it is
    not negated nor case-insensitive and ends in an unescaped "-" right after a single
    character that is not its first member; a set of one member costs as that member
    (105 under full case folding)."""
    negated = r.take("^")
    kinds: list[str] = []
    hyphen = False
    while not r.take("]"):
        if r.peek("-]") and kinds:
            r.pos += 1
            hyphen = kinds[-1] == "char" and len(kinds) > 1
            kinds.append("char")
            continue
        kinds.append(_member(r))
    members = len(kinds)
    if members == 1:
        return FOLD if fold else 1
    return members * (FOLD + 1) if fold else 1 + members + (hyphen and not nocase and not negated)


def _member(r: _Reader) -> str:
    """One member of a set: "char", "range" or "class" (an escape of a class, \\p{..}, [:name:])."""
    if r.take("[:"):
        r.pos = r.text.index(":]", r.pos) + 2
        return "class"
    kind = _char(r)
    if r.peek("-") and not r.peek("-]"):  # a range: one member
        r.pos += 1
        _char(r)
        return "range"
    return kind


def _char(r: _Reader) -> str:
    if r.take("\\"):
        c = r.text[r.pos]
        if c in "pP":
            r.pos = r.text.index("}", r.pos) + 1
            return "class"
        r.pos += 1 + (2 if c == "x" else 8 if c == "U" else 0)
        return "class" if c in "dDwWsS" else "char"
    r.pos += 1
    return "char"
