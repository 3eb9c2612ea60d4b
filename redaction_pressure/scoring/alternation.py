"""Several rules as one: how a rule set stays within the answer's rule limit when a
stream has more formats than rules (the oracle at the top level; `induce`).

An alternation is not always the same as its parts run in turn: at one position the
first part that matches wins, and each part sees the text the others left. Callers
join only rules whose matches never meet (distinct literal prefixes, distinct keys)
or check the joined rule against its parts on the text they have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import regex

# A numbered back-reference (\1, \12) not itself escaped (\\1 is a backslash and a 1);
# three digits are an octal escape (\101 is "A"), not a reference.
_BACKREF = regex.compile(r"(?<!\\)((?:\\\\)*)\\([1-9][0-9]?)(?![0-9])")
_LEADING_FLAGS = regex.compile(r"\(\?([aimsux]+)\)")
# An inline flag group anywhere: past a part's start it would set the flag for the
# whole alternation (regex's VERSION0 reads a global flag wherever it stands).
_ANY_FLAGS = regex.compile(r"\(\?[aimsuxLV0-9]+\)")
# Named groups and references, \g<...> references and conditionals: what renumbering
# cannot carry into an alternation.
_UNJOINABLE = regex.compile(r"\(\?P[<=>]|\(\?<(?![=!])|\\g<|\(\?\(")


def _shifted(offset: int) -> Callable[[regex.Match[str]], str]:
    return lambda m: f"{m[1]}\\{int(m[2]) + offset}"


def alternate(patterns: Sequence[str]) -> str:
    """``(?:p1|p2|...)``, each part's groups renumbered after the groups of the parts
    before it (a part's ``\\1`` still names its own group) and a leading inline flag
    group (``(?m)``) scoped to its part, where it would otherwise apply to all. Raises
    ValueError for a part whose meaning joining would change: an inline flag group past
    its start, a verbose one (its ``#`` comments would swallow the closing parenthesis),
    a named group or reference (``(?P<n>``, ``(?<n>``, ``\\g<1>``), a conditional."""
    parts = []
    offset = 0
    for p in patterns:
        groups = regex.compile(p).groups
        flags = _LEADING_FLAGS.match(p)
        body = p[flags.end():] if flags else p
        if _ANY_FLAGS.search(body) or _UNJOINABLE.search(p) or (flags and "x" in flags[1]):
            raise ValueError(f"cannot join {p[:80]!r}: a flag group past its start, a named group or a conditional")
        if offset:
            body = _BACKREF.sub(_shifted(offset), body)
        parts.append(f"(?{flags[1]}:{body})" if flags else body)
        offset += groups
    return "(?:" + "|".join(parts) + ")"
