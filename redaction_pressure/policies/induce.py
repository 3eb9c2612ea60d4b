"""A reference learner: redaction rules induced from labelled examples alone.

It sees what a model sees — the shown records and, for each, its labelled secret
spans with their family names — and nothing else: not the held-out records, not the
seed, not the generator's tables, not which unlabelled text is a decoy. For each
family it proposes rules from general to specific and keeps the first that is exact
on the shown records: every match inside one of the family's spans, every span
covered whole. Proposals come from three places:

1. generic shapes every analyst knows (an email address, an IPv4 address, a dotted
   host name under one top-level label), tried when every example has that shape;
2. the token's own shape: the examples' common literal prefix and suffix around a
   body, whose alphabet is the smallest usual one holding every body character, of
   any length first and of the observed lengths if that is needed;
3. the token's context: the key, flag or header the examples sit under, or the
   literal text that always precedes and follows them.

So it is both the proof that tasks are solvable from what the model sees and a
non-LLM baseline to compare models with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import regex

Example = tuple[str, list[tuple[int, int, str]]]  # record text, (start, end, family) labels

_CLASSES = (  # the usual alphabets, smallest first: a body gets the first that holds it
    ("0-9", set("0123456789")),
    ("0-9a-f", set("0123456789abcdef")),
    ("0-9A-F", set("0123456789ABCDEF")),
    ("A-Z2-7", set("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
    ("a-z0-9", set("abcdefghijklmnopqrstuvwxyz0123456789")),
    ("A-Z0-9", set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")),
    ("A-Za-z0-9", set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
)
_ALNUM = _CLASSES[-1][1]
_EMAIL = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
_IPV4 = r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}"
# A key, flag or header name right before a value: not a URL's user name (after "/").
# A ":" may precede it too (an .npmrc line: ``//host/npm/:key=value``).
_KEY_BEFORE = regex.compile(r"""(?:^|[\s"'{(,;?&\[:])(-{0,2}\.?[A-Za-z][A-Za-z0-9_.-]*)["']?\s*[:=]?\s*["']?$""")
_BROAD = r"""[^\s"'`,;&<>]"""  # a value's characters when its key, not its shape, marks it
MAX_RULES = 24
# What a placeholder body looks like to anyone who has read config templates: one
# character six times in a row (xxxxxx, 000000), or a run of the alphabet.
_RUNS = "abcdefgh|ABCDEFGH|01234567|12345678"
_DIGIT_RUN = regex.compile(r"(?:\[0-9\]){2,}")
_DELIMITED = r"""(?=[\s"'`,;<>)\]}]|$)"""


def _no_placeholder(cls: str) -> str:
    return f"(?!{cls}*?(?:({cls})\\1{{5}}|{_RUNS}))"


@dataclass(frozen=True)
class _Family:
    name: str
    values: list[str]
    lefts: list[str]  # the text before each span on its line
    rights: list[str]  # the text after each span on its line


def _char_class(values: list[str]) -> str:
    chars = set("".join(values))
    for body, members in _CLASSES:
        if chars <= members:
            return f"[{body}]"
    extra = chars - _ALNUM
    if extra <= set("-_"):
        return "[A-Za-z0-9_-]"
    if extra <= set("+/="):
        return "[A-Za-z0-9+/=]"
    if extra <= set("-_.+/=~"):
        return r"[A-Za-z0-9._~+/=-]"
    if chars <= set("0123456789 ()+.-"):  # phone numbers and the like
        return r"[0-9 ()+.-]"
    # Free text (passwords, PEM bodies): anything but the delimiters around it.
    if "\n" in chars:
        return r"[A-Za-z0-9+/=\s]" if extra <= set("+/=\n ") else r"[^\x00]"
    return r"""[^\s"'`,;<>@:/\\]"""


def _char_class_members(values: list[str]) -> set[str]:
    chars = set("".join(values))
    for members in [m for _, m in _CLASSES] + [_ALNUM | set("-_"), _ALNUM | set("+/=")]:
        if chars <= members:
            return members
    return chars


def _common_prefix(values: list[str]) -> str:
    return os.path.commonprefix(values)  # noqa: RUF071 - a character prefix is what is wanted


def _common_suffix(values: list[str]) -> str:
    return os.path.commonprefix([v[::-1] for v in values])[::-1]  # noqa: RUF071 - characters, as above


def _trim_prefix(prefix: str) -> str:
    """A literal prefix ends at its last separator when it has one: the characters
    after it are where two examples' random bodies happened to agree."""
    cut = max((i for i, c in enumerate(prefix) if c not in _ALNUM), default=-1)
    return prefix[:cut + 1] if cut >= 0 else prefix


def _trim_suffix(suffix: str) -> str:
    if not suffix.strip("="):  # base64 padding is part of the body, not a literal
        return ""
    cut = next((i for i, c in enumerate(suffix) if c not in _ALNUM), None)
    return suffix[cut:] if cut is not None else ""


def _guards(body: str, prefix: str, suffix: str) -> tuple[str, str]:
    around = "A-Za-z0-9" + ("_" if "_" in body or "-" in body or "_" in prefix or "-" in prefix else "")
    dash = "-" if around.endswith("_") else ""
    before = f"(?<![{around}.{dash}])" if not prefix or prefix[0] in _ALNUM else ""
    after = f"(?![{around}{dash}])" if not suffix or suffix[-1] in _ALNUM else ""
    return before, after


def _lengths(values: list[int]) -> list[str]:
    lo, hi = min(values), max(values)
    return ["+", f"{{{lo},{hi}}}" if lo != hi else f"{{{lo}}}"]


def _shape_rules(fam: _Family) -> tuple[list[str], list[str]]:
    """Generic shapes and prefixed token shapes; and, apart, bare alphabet runs, which
    say little and are tried only after the context rules."""
    out: list[str] = []
    bare: list[str] = []
    values = fam.values
    if all(regex.fullmatch(_EMAIL, v) for v in values):
        out.append(rf"(?<![A-Za-z0-9._%+/:@!*~#$&-]){_EMAIL}(?![A-Za-z0-9_.@-])")
        domains = "|".join(regex.escape(d) for d in sorted({v.rsplit("@", 1)[1] for v in values}))
        out.append(rf"(?<![A-Za-z0-9._%+/:@!*~#$&-])[A-Za-z0-9._%+-]+@(?:{domains})(?![A-Za-z0-9_.@-])")
    if all(regex.fullmatch(_IPV4, v) for v in values):
        out.append(rf"(?<![0-9.]){_IPV4}(?![0-9.])")
    labels = {v.rsplit(".", 1)[-1] for v in values}
    if len(labels) == 1 and all(regex.fullmatch(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+", v) for v in values):
        tld = regex.escape(labels.pop())
        out.append(rf"(?<![A-Za-z0-9_.@-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.{tld}(?![A-Za-z0-9_.-])")
    # Numbers written in one layout (a phone style, an id with a fixed number of digits):
    # every digit becomes [0-9], everything else stays.
    layouts = {regex.sub(r"[0-9]", "9", v) for v in values}
    if len(layouts) == 1 and sum(c.isdigit() for c in values[0]) >= 6 and not regex.search(r"[A-Za-z]", values[0]):
        layout = "".join("[0-9]" if c == "9" else regex.escape(c) for c in layouts.pop())
        layout = _DIGIT_RUN.sub(lambda m: f"[0-9]{{{len(m[0]) // 5}}}", layout)
        out.append(rf"(?<![0-9A-Za-z+(-]){layout}(?![0-9])")
    prefix = _trim_prefix(_common_prefix(values))
    if prefix and all(c in _ALNUM for c in prefix):
        # No separator: keep only what the body's own alphabet cannot produce, since
        # two random bodies may agree on their first characters.
        rest = set(_char_class_members([v[len(prefix):] for v in values]))
        while prefix and prefix[-1] in rest:
            prefix = prefix[:-1]
    suffix = _trim_suffix(_common_suffix([v[len(prefix):] for v in values]))
    bodies = [v[len(prefix):len(v) - len(suffix)] for v in values]
    if all(bodies):
        body = _char_class(bodies)
        before, after = _guards(body, prefix, suffix)
        lazy = "?" if "\\s" in body or "\\x00" in body else ""
        guard = _no_placeholder(body) if "\\s" not in body and "\\x00" not in body else ""
        for q in _lengths([len(b) for b in bodies]):
            for g in (guard, "") if guard else ("",):
                rule = f"{before}{regex.escape(prefix)}{g}{body}{q}{lazy}{regex.escape(suffix)}{after}"
                (out if prefix or suffix else bare).append(rule)
                if q == "+" and not suffix and not lazy:  # the whole token, up to a delimiter
                    whole = f"{before}{regex.escape(prefix)}{g}{body}+{_DELIMITED}"
                    (out if prefix else bare).append(whole)
    return out, bare


def _context_rules(fam: _Family) -> list[str]:
    out: list[str] = []
    body = _char_class(fam.values)
    if "\\x00" in body:
        return out
    right = _common_prefix(fam.rights)
    tails = [f"(?!{body})"] + ([f"(?={regex.escape(right[0])})"] if right and right[0] not in _ALNUM else [])
    anchors: list[str] = []
    keys: list[str] = []
    for left in fam.lefts:
        m = _KEY_BEFORE.search(left)
        if not m:
            keys = []
            break
        keys.append(m.group(1).lower())
    if keys:
        names = "|".join(regex.escape(k) for k in sorted(set(keys)))
        anchors.append(rf"""(?<=(?<![A-Za-z0-9_-])(?i:{names})(?![A-Za-z0-9_-])["']?\s*[:=]?\s*["']?)""")
    left = _common_suffix(fam.lefts)
    starts = sorted({i for i in range(len(left)) if i == 0 or (left[i - 1] in " \t=:\"'/" and left[i] not in " ")},
                    reverse=True)
    run = len(left) - len(left.rstrip("".join(set(left) - _ALNUM)))
    if run and left[-run:].strip():  # the punctuation right before the value, e.g. "://user:" -> ":"
        starts = [len(left) - run] + [i for i in starts if i != len(left) - run]
    anchors += [f"(?<={regex.escape(left[i:])})" for i in starts if left[i:].strip()]
    lengths = _lengths([len(v) for v in fam.values])
    lookahead = tails[1] if len(tails) > 1 else None
    quotes = {r[:1] for r in fam.rights}
    quoted = [(f"(?<={q})", f"[^{q}\\n]") for q in quotes if len(quotes) == 1 and q in ("'", '"')]
    guard = _no_placeholder(body) if "\\s" not in body else ""
    for anchor in anchors:
        start = "(?![:=])" if anchor.startswith("(?<=(?<!") else ""
        # Any length before the observed lengths; a lookahead on the next character
        # only when the value's own alphabet does not end it; inside quotes, anything
        # but the closing quote; without a placeholder body when that is what differs.
        classes = [("", _BROAD, "+"), ("", body, "+")] + [("", body, q) for q in lengths[1:]] + \
            [(opened, c, "+") for opened, c in quoted]
        for opened, cls, q in classes:
            for g in (guard, "") if guard and cls == body else ("",):
                out.append(f"{anchor}{start}{opened}{g}{cls}{q}(?!{cls})")
                if lookahead:
                    out.append(f"{anchor}{start}{opened}{g}{cls}{q}{lookahead}")
    return out


def _exact(rule: str, fam: str, examples: list[Example]) -> bool:
    """True when ``rule`` alone, on every shown record, covers each span of ``fam``
    whole and matches nothing but text inside those spans or another secret whole."""
    try:
        pattern = regex.compile(rule)
    except regex.error:
        return False
    for text, labels in examples:
        spans = [(s, e) for s, e, f in labels if f == fam]
        others = {(s, e) for s, e, f in labels if f != fam}
        covered = bytearray(len(text))
        # No timeout: a time limit would make the reply depend on the machine. The
        # rules are built here from bounded character classes and literals, and run
        # on the few shown records only.
        for m in pattern.finditer(text):
            s, e = m.span()
            if s == e or not (any(a <= s and e <= b for a, b in spans) or (s, e) in others):
                return False
            covered[s:e] = b"\x01" * (e - s)
        if any(covered[a:b].count(1) != b - a for a, b in spans):
            return False
    return True


def _families(examples: list[Example]) -> list[_Family]:
    grouped: dict[str, _Family] = {}
    for text, labels in examples:
        for s, e, name in labels:
            line_start = text.rfind("\n", 0, s) + 1
            line_end = text.find("\n", e)
            fam = grouped.setdefault(name, _Family(name, [], [], []))
            fam.values.append(text[s:e])
            fam.lefts.append(text[line_start:s])
            fam.rights.append(text[e:line_end if line_end >= 0 else len(text)])
    return list(grouped.values())


def induce_rules(examples: list[Example]) -> list[str]:
    """One rule per labelled family, exact on the examples when any proposal is;
    families no proposal fits are left out rather than guessed at."""
    rules = []
    for fam in _families(examples):
        shaped, bare = _shape_rules(fam)
        for rule in shaped + _context_rules(fam) + bare:
            if _exact(rule, fam.name, examples):
                rules.append(rule)
                break
    return rules[:MAX_RULES]
