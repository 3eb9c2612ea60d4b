"""The compiled size as the system prompt states it (task.prompt; its words are mirrored
here rule by rule), computed from a pattern's text for the syntax
tests.support.random_patterns writes and the rest a model may write (atomic groups,
{,n}, escapes of several characters, conditionals on a group): what a model reading the
prompt would compute. A test requires it to equal what the pattern guard charges; where
the words do not define a size it raises `Unstated` instead of guessing."""

from __future__ import annotations

import re

FOLD, BASE, GRAPHEME, LINEBREAK = 105, 16, 5, 12
_FLAGS = re.compile(r"\(\?([a-zA-Z0-9]*)\)")
_NAMED = re.compile(r"\(\?P?<[A-Za-z_][A-Za-z0-9_]*>")
_SCOPED = re.compile(r"\(\?([a-zA-Z0-9]*)(?:-[a-zA-Z0-9]+)?:")  # a flag group: (?i:, (?-s:, (?i-m:
_COUNT = re.compile(r"\{(\d+)(?:(,)(\d*))?\}|\{()(,)(\d*)\}")  # {,n} and {,}: m left out is 0
_GROUP_CONDITION = re.compile(r"\(\?\((?:\d+|[A-Za-z_][A-Za-z0-9_]*)\)")  # (?(1)..., (?(name)...
_SET_OPERATOR = re.compile(r"--|&&|\|\||~~")


class Unstated(ValueError):
    """The prompt's words do not define this construct's size (see `stated_cost`)."""


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
    """Raises `Unstated` for a (?V1) set holding a nested set or a set operation
    (--, &&, ||, ~~): the prompt's "1 plus 1 per member" does not say what a member is
    there, and the guard charges each nested set as a set of its own (and an operand of
    several items as one more set), more than one unit per member."""
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
        first, comma, last = m.group(1, 2, 3) if m.group(1) is not None else m.group(4, 5, 6)
        low = int(first) if first else 0
        high = low if comma is None else (int(last) if last else None)
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
    if (m := _GROUP_CONDITION.match(r.text, r.pos)) is not None or r.take("(?(?=") or r.take("(?(?!") \
            or r.take("(?(?<=") or r.take("(?(?<!"):
        if m is not None:  # (?(1)y|n): a group's number or name is the condition, with no contents
            r.pos, condition = m.end(), 0
        else:
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
    for opener in ("(?<=", "(?<!", "(?=", "(?!", "(?>", "("):  # lookaround, atomic, capturing
        if r.take(opener):
            inner = _alternation(r, flags)
            assert r.take(")")
            return 1 + inner
    if r.take("["):
        return _set(r, fold, "i" in flags, "V1" in flags)
    if r.take("\\"):
        kind = _escape(r)
        if kind == "X":
            return GRAPHEME
        if kind == "R":
            return LINEBREAK
        if kind in ("class", "anchor"):
            return 1
        return FOLD if fold else 1  # a character, \N{name}, \p{..}, a backreference: each folds
    c = r.text[r.pos]
    r.pos += 1
    if c in ".^$":
        return 1
    return FOLD if fold else 1


def _escape(r: _Reader) -> str:
    """Reads one escape after its backslash, all of its text (\\x41, \\u00e9, \\U0001F600,
    \\101, \\N{name}, \\p{L}, \\12 as a backreference): "X", "R", "class" (\\d ...),
    "anchor" (\\b ...), "property" (\\p{..}, \\P{..}) or "char" (any other: a character or
    a backreference, each one character by the prompt's words)."""
    c = r.text[r.pos]
    r.pos += 1
    if c in "pP" and not r.peek("{"):  # \pL: a one-letter property
        r.pos += 1
        return "property"
    if c in "pPN":
        assert r.take("{"), r.text
        r.pos = r.text.index("}", r.pos) + 1
        return "char" if c == "N" else "property"
    if c in "xuU":
        m = _HEX[c].match(r.text, r.pos)
        assert m is not None, r.text
        r.pos = m.end()
        return "char"
    if c.isdigit():  # \0 and three octal digits: a character; else a backreference
        m = _OCTAL.match(r.text, r.pos - 1) or _GROUP_NUMBER.match(r.text, r.pos - 1)
        assert m is not None
        r.pos = m.end()
        return "char"
    if c in "XR":
        return c
    if c in "dDwWsS":
        return "class"
    if c in "bBAZGmM":
        return "anchor"
    return "char"


_HEX = {"x": re.compile(r"[0-9a-fA-F]{2}"), "u": re.compile(r"[0-9a-fA-F]{4}"), "U": re.compile(r"[0-9a-fA-F]{8}")}
_OCTAL = re.compile(r"0[0-7]{0,2}|[0-7]{3}")
_GROUP_NUMBER = re.compile(r"[1-9][0-9]?")


def _set(r: _Reader, fold: bool, nocase: bool, v1: bool = False) -> int:
    """1 plus 1 per member (106 per member under full case folding); 1 more when it is
    not negated nor case-insensitive and ends in an unescaped "-" right after a single
    character that is not its first member; a set of one member costs as that member
    (105 under full case folding). Under (?V1) a nested set or a set operation is
    `Unstated`."""
    negated = r.take("^")
    kinds: list[str] = []
    hyphen = False
    while not r.take("]"):
        if v1 and (_SET_OPERATOR.match(r.text, r.pos) or (r.peek("[") and not r.peek("[:"))):
            raise Unstated(r.text)
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
        kind = _escape(r)
        return "class" if kind in ("class", "property") else "char"
    r.pos += 1
    return "char"
