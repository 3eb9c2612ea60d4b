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

# A numbered back-reference (\1, \12) not itself escaped (\\1 is a backslash and a 1).
_BACKREF = regex.compile(r"(?<!\\)((?:\\\\)*)\\([1-9][0-9]*)")
_LEADING_FLAGS = regex.compile(r"\(\?([aimsux]+)\)")


def _shifted(offset: int) -> Callable[[regex.Match[str]], str]:
    return lambda m: f"{m[1]}\\{int(m[2]) + offset}"


def alternate(patterns: Sequence[str]) -> str:
    """``(?:p1|p2|...)``, each part's groups renumbered after the groups of the parts
    before it (a part's ``\\1`` still names its own group) and a leading inline flag
    group (``(?m)``) scoped to its part, where it would otherwise apply to all."""
    parts = []
    offset = 0
    for p in patterns:
        groups = regex.compile(p).groups
        if offset:
            p = _BACKREF.sub(_shifted(offset), p)
        flags = _LEADING_FLAGS.match(p)
        if flags:
            p = f"(?{flags[1]}:{p[flags.end():]})"
        parts.append(p)
        offset += groups
    return "(?:" + "|".join(parts) + ")"
