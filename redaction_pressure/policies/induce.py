"""A reference learner: redaction rules induced from labelled examples alone.

It sees what a model sees — the shown records and, for each, its labelled secret
spans with their family names — and nothing else: not the held-out records, not the
seed, not the generator's tables, not which unlabelled text is a decoy. For each
family it proposes rules from general to specific and keeps the first that is exact
on the shown records: every match inside one of the family's spans, every span
covered whole. Proposals come from five places, tried in this order:

1. generic shapes every analyst knows (an email address, an IPv4 address, a dotted
   host name under one top-level label), tried when every example has that shape; an
   address without each range the prompt's policy sentence keeps comes first (the one
   thing it reads from the prompt's words: a range whose boundary splits an octet
   cannot be learned from a few kept addresses);
2. the token's own shape: the examples' common literal prefix and suffix around a
   body, whose alphabet is the smallest usual one holding every body character, of
   twelve characters or more first and of the observed lengths if that is needed;
   a body whose examples share their separators, part by part (a body and its
   checksum), and then the same without a placeholder body, which is exact where the
   shown records keep a placeholder the first one takes; a multi-line block by its
   first and last lines;
3. the section a value sits in ([production], prod:, "prod": {), when the shown records also
   hold the same key with an unlabelled value in another section;
4. the token's context: the key, flag or header the examples sit under, or the
   literal text that always precedes and follows them;
5. bare alphabet runs, which say little.

When no proposal of a kind is exact, the first whose wrong matches on the shown
records share a start that no labelled value has (a stated exception: an address
range, a host prefix) or are one repeated value (a test account) gets a negative
lookahead for it, and failing that, the first whose wrong matches are one value seen
once; only then does the next kind get its turn.

So it is both the proof that tasks are solvable from what the model sees and a
non-LLM baseline to compare models with.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

import regex

from ..scoring.alternation import alternate
from ..scoring.answer import MAX_PATTERN_CHARS, MAX_RULES
from ..scoring.cidr import within
from ..scoring.pattern_guard import Refused, compile_bounded

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
_STATED_RANGE = regex.compile(r"addresses in ([0-9]{1,3}(?:\.[0-9]{1,3}){3}/[0-9]{1,2})")
# A key, flag or header name right before a value: not a URL's user name (after "/").
# A ":" may precede it too (an .npmrc line: ``//host/npm/:key=value``).
_KEY_BEFORE = regex.compile(r"""(?:^|[\s"'{(,;?&\[:])(-{0,2}\.?[A-Za-z][A-Za-z0-9_.-]*)["']?\s*[:=]?\s*["']?$""")
_BROAD = r"""[^\s"'`,;&<>]"""  # a value's characters when its key, not its shape, marks it
# What a placeholder body looks like to anyone who has read config templates: one
# character six times in a row (xxxxxx, 000000), or a run of the alphabet.
_RUNS = "abcdefgh|ABCDEFGH|01234567|12345678"
_DIGIT_RUN = regex.compile(r"(?:\[0-9\]){2,}")
_DELIMITED = r"""(?=[\s"'`,;<>)\]}]|$)"""
_WORD = 9  # the longest literal segment, separator included, an exclusion may name
_SEGMENTS = regex.compile(r"([^A-Za-z0-9]+)")


def _no_placeholder(cls: str) -> str:
    return f"(?!{cls}*?(?:({cls})\\1{{5}}|{_RUNS}))"


@dataclass(frozen=True)
class _Family:
    name: str
    values: list[str]
    lefts: list[str]  # the text before each span on its line
    rights: list[str]  # the text after each span on its line
    sections: list[tuple[str, str]]  # ("ini" | "yaml" | "json" | "", header) each span sits under


def _char_class(values: list[str], few: bool = False) -> str:
    """The smallest usual alphabet holding every character; from ``few`` characters
    not base32, which a few characters of an upper-case alphanumeric text often fit."""
    chars = set("".join(values))
    for body, members in _CLASSES:
        if chars <= members and not (few and body == "A-Z2-7"):
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
    cut = next((i for i, c in enumerate(suffix) if c not in _ALNUM), None)
    literal = suffix[cut:] if cut is not None else ""
    # Base64 padding (its length varies with the body), or characters after the last
    # separator that two bodies happened to share (a check digit): body, not literal.
    return "" if not literal.strip("=") or literal[-1] in _ALNUM else literal


def _guards(body: str, prefix: str, suffix: str) -> tuple[str, str]:
    around = "A-Za-z0-9" + ("_" if "_" in body or "-" in body or "_" in prefix or "-" in prefix else "")
    dash = "-" if around.endswith("_") else ""
    before = f"(?<![{around}.{dash}])" if not prefix or prefix[0] in _ALNUM else ""
    after = f"(?![{around}{dash}])" if not suffix or suffix[-1] in _ALNUM else ""
    return before, after


def _lengths(values: list[int]) -> list[str]:
    lo, hi = min(values), max(values)
    return ["+", f"{{{lo},{hi}}}" if lo != hi else f"{{{lo}}}"]


def stated_ranges(prompt: str) -> tuple[str, ...]:
    """The address ranges a prompt's policy sentence keeps ("except addresses in
    66.94.32.0/19"): read, as a model reads them, not learned from examples."""
    return tuple(net for net in _STATED_RANGE.findall(prompt) if _network(net))


def _network(text: str) -> bool:
    """Whether ``text`` is an IPv4 network: a prompt not written by this generator may
    state 999.1.2.0/33 or host bits past its prefix."""
    try:
        ipaddress.IPv4Network(text)
    except ValueError:
        return False
    return True


def _generic_rules(fam: _Family, ranges: tuple[str, ...] = ()) -> list[str]:
    """The shapes every analyst knows, when every example has one: they generalise
    better than any layout two examples happen to share. Addresses without a stated
    range come first: exact on the shown records only when the range is what they keep."""
    out: list[str] = []
    values = fam.values
    if all(regex.fullmatch(_EMAIL, v) for v in values):
        out.append(rf"(?<![A-Za-z0-9._%+/:@!*~#$&-]){_EMAIL}(?![A-Za-z0-9_.@-])")
        domains = "|".join(regex.escape(d) for d in sorted({v.rsplit("@", 1)[1] for v in values}))
        out.append(rf"(?<![A-Za-z0-9._%+/:@!*~#$&-])[A-Za-z0-9._%+-]+@(?:{domains})(?![A-Za-z0-9_.@-])")
    if all(regex.fullmatch(_IPV4, v) for v in values):
        out += [rf"(?<![0-9.])(?!{within(net)}){_IPV4}(?![0-9.])" for net in ranges]
        out.append(rf"(?<![0-9.]){_IPV4}(?![0-9.])")
    labels = {v.rsplit(".", 1)[-1] for v in values}
    if len(labels) == 1 and all(regex.fullmatch(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+", v) for v in values):
        tld = regex.escape(labels.pop())
        out.append(rf"(?<![A-Za-z0-9_.@-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.{tld}(?![A-Za-z0-9_.-])")
    return out


def _shape_rules(fam: _Family) -> tuple[list[str], list[str]]:
    """Prefixed token shapes; and, apart, bare alphabet runs, which say little and are
    tried only after the context rules."""
    out: list[str] = []
    bare: list[str] = []
    values = fam.values
    # Numbers written in one layout (a phone style, an id with a fixed number of digits):
    # every digit becomes [0-9], everything else stays.
    layouts = {regex.sub(r"[0-9]", "9", v) for v in values}
    if len(layouts) == 1 and sum(c.isdigit() for c in values[0]) >= 6 and not regex.search(r"[A-Za-z]", values[0]):
        layout = "".join("[0-9]" if c == "9" else regex.escape(c) for c in layouts.pop())
        layout = _DIGIT_RUN.sub(lambda m: f"[0-9]{{{len(m[0]) // 5}}}", layout)
        out.append(rf"(?<![0-9A-Za-z+(-]){layout}(?![0-9])")
    if all("\n" in v for v in values):
        out += _block_rules(values)
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
        segmented = _segmented(bodies)
        body = _char_class(bodies)
        before, after = _guards(body, prefix, suffix)
        lazy = "?" if "\\s" in body or "\\x00" in body else ""
        guard = _no_placeholder(body) if "\\s" not in body and "\\x00" not in body else ""
        # Twelve characters or more (fewer if an example has fewer), not any length: a
        # key name such as ``npm_token`` has the prefix and alphabet of the token it names.
        lengths = _lengths([len(b) for b in bodies])
        least = "+" if lazy else f"{{{min(12, *map(len, bodies))},}}"
        for q in [least, *lengths[1:]]:
            for g in (guard, "") if guard else ("",):
                rule = f"{before}{regex.escape(prefix)}{g}{body}{q}{lazy}{regex.escape(suffix)}{after}"
                (out if prefix or suffix else bare).append(rule)
                if q == least and not suffix and not lazy:  # the whole token, up to a delimiter
                    whole = f"{before}{regex.escape(prefix)}{g}{body}{least}{_DELIMITED}"
                    (out if prefix else bare).append(whole)
        if segmented and (prefix or suffix):
            before, after = _guards("_-", prefix, suffix)
            out.append(f"{before}{regex.escape(prefix)}{segmented}{regex.escape(suffix)}{after}")
            # Then without a placeholder body in the first part: tried only once the shown
            # records keep a placeholder that the rule above takes (a body of 0s and its
            # checksum of 0s beside the credential), so a reply changes only where they do.
            first = segmented[:segmented.index("]") + 1]
            out.append(f"{before}{regex.escape(prefix)}{_no_placeholder(first)}{segmented}{regex.escape(suffix)}{after}")
    return out, bare


def _block_rules(values: list[str]) -> list[str]:
    """A multi-line block (a PEM key, a vendor's own armour): its first line and its
    last line, whatever indentation the file gives the lines between and the last."""
    first = _common_prefix(values).split("\n", 1)[0]
    last = _common_suffix(values).rsplit("\n", 1)[-1].lstrip(" \t")
    if not first.strip() or not last.strip() or not all(v.split("\n", 1)[0] == first for v in values):
        return []
    inner = "".join(v.split("\n", 1)[1].rsplit("\n", 1)[0] for v in values)
    body = r"[A-Za-z0-9+/=\s]" if set(inner) <= _ALNUM | set("+/=\n \t") else r"[^\x00]"
    return [f"{regex.escape(first)}\\n{body}+?{regex.escape(last)}"]


def _segmented(bodies: list[str]) -> str:
    """The body as its separated parts, each with its own alphabet and length, when
    every example has the same separators in the same places (a body and its checksum):
    a look-alike of another alphabet, or with its separator elsewhere, then differs."""
    split = [_SEGMENTS.split(b) for b in bodies]
    if len(split[0]) < 3 or any(len(p) != len(split[0]) for p in split) or \
            any(p[1::2] != split[0][1::2] for p in split):
        return ""
    parts = []
    for i, sep in enumerate(split[0]):
        if i % 2:
            parts.append(regex.escape(sep))
            continue
        segs = [p[i] for p in split]
        cls = _char_class(segs, few=sum(map(len, segs)) < 32) if all(segs) else "\\s"
        if "\\s" in cls or "\\x00" in cls:
            return ""
        parts.append(cls + _lengths([len(x) for x in segs])[1])
    return "".join(parts)


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
        # Anything up to a delimiter, of a few characters at least: not the "}" after a
        # key name that a source file lists (``export { KEY_NAME };``).
        shortest = min(6, *map(len, fam.values))
        classes = [("", _BROAD, f"{{{shortest},}}" if shortest > 1 else "+"), ("", body, "+")] + \
            [("", body, q) for q in lengths[1:]] + \
            [(opened, c, "+") for opened, c in quoted]
        for opened, cls, q in classes:
            # Under a key, anything up to a delimiter may be a placeholder too (a vendor
            # token's placeholders keep its separators): the same guard, in that class.
            g_cls = guard if cls == body else _no_placeholder(cls) if cls == _BROAD else ""
            for g in (g_cls, "") if g_cls else ("",):
                out.append(f"{anchor}{start}{opened}{g}{cls}{q}(?!{cls})")
                if lookahead:
                    out.append(f"{anchor}{start}{opened}{g}{cls}{q}{lookahead}")
    return out


def _misfires(rule: str, fam: str, examples: list[Example]) -> list[str] | None:
    """The texts ``rule`` wrongly matches on the shown records, or None when it also
    leaves a span of ``fam`` partly uncovered (no exclusion can repair that)."""
    try:
        pattern = regex.compile(rule)
    except regex.error:
        return None
    wrong: list[str] = []
    for text, labels in examples:
        spans = [(s, e) for s, e, f in labels if f == fam]
        others = {(s, e) for s, e, f in labels if f != fam}
        covered = bytearray(len(text))
        # No timeout: a time limit would make the reply depend on the machine. The
        # rules are built here from bounded character classes and literals, and run
        # on the few shown records only.
        for m in pattern.finditer(text):
            s, e = m.span()
            if s == e:
                return None
            if any(a <= s and e <= b for a, b in spans) or (s, e) in others:
                covered[s:e] = b"\x01" * (e - s)
            else:
                wrong.append(m.group())
        if any(covered[a:b].count(1) != b - a for a, b in spans):
            return None
    return wrong


_INI_HEADER = regex.compile(r"^\[([^\]\n]+)\][ \t]*$", regex.M)
_YAML_HEADER = regex.compile(r"^([A-Za-z0-9_.-]+):[ \t]*$", regex.M)
_JSON_HEADER = regex.compile(r'^  "([A-Za-z0-9_.-]+)": \{[ \t]*$', regex.M)


def _section(text: str, line_start: int) -> tuple[str, str]:
    """The INI/TOML table, top-level YAML mapping or top-level JSON object a line
    belongs to: the nearest ``[name]`` line above it; for an indented line the nearest
    unindented ``name:`` line above it with only indented or blank lines between; for a
    line indented four spaces the nearest ``  "name": {`` line above it with only such
    lines between."""
    above = text[:line_start]
    ini = list(_INI_HEADER.finditer(above))
    if ini:
        return "ini", ini[-1][1]
    if text.startswith("    ", line_start):
        objects = list(_JSON_HEADER.finditer(above))
        if objects and all(ln.startswith("    ") for ln in above[objects[-1].end() + 1:].split("\n")[:-1]):
            return "json", objects[-1][1]
    if text[line_start:line_start + 1] in (" ", "\t"):
        yaml = list(_YAML_HEADER.finditer(above))
        if yaml and all(not ln.strip() or ln[0] in " \t" for ln in above[yaml[-1].end() + 1:].split("\n")[:-1]):
            return "yaml", yaml[-1][1]
    return "", ""


def _section_rules(fam: _Family, examples: list[Example]) -> list[str]:
    """The value under its key in one section only, when the shown records also have
    that key with an unlabelled value in another section: what separates a production
    credential from the same key's value under ``[staging]``."""
    styles = set(fam.sections)
    keys = {m.group(1) for m in map(_KEY_BEFORE.search, fam.lefts) if m}
    if any(not style for style, _ in styles) or len({name for _, name in styles}) != 1 or len(keys) != 1:
        return []
    elsewhere = regex.compile(rf"(?m)^[ \t]*\"?{regex.escape(next(iter(keys)))}\"?[ \t]*[:=]")
    if not any(_section(text, m.start())[1] not in ("", fam.sections[0][1])
               for text, _ in examples for m in elsewhere.finditer(text)):
        return []
    name, key = regex.escape(next(iter(styles))[1]), regex.escape(keys.pop())
    # Every spelling of a section, whichever the examples used: an INI/TOML table, a
    # top-level YAML key and a top-level JSON object.
    forms = [rf"^\[{name}\][ \t]*\n(?:(?!\[)[^\n]*\n)*[ \t]*{key}[ \t]*=[ \t]*",
             rf"^{name}:[ \t]*\n(?:[ \t]+[^\n]*\n|\n)*[ \t]+{key}:[ \t]*",
             rf"^  \"{name}\": \{{[ \t]*\n(?:    [^\n]*\n)*    \"{key}\": "]
    body = _char_class(fam.values)
    if "\\s" in body or "\\x00" in body:
        return []
    anchor = f"(?m)(?<=(?:{'|'.join(forms)})[\"']?)"
    return [f"{anchor}{body}{q}(?![A-Za-z0-9_-])" for q in _lengths([len(v) for v in fam.values])]


def _exact(rule: str, fam: str, examples: list[Example]) -> bool:
    """True when ``rule`` alone, on every shown record, covers each span of ``fam``
    whole and matches nothing but text inside those spans or another secret whole."""
    return _misfires(rule, fam, examples) == []


def _exclusions(wrong: list[str], values: list[str], lone: bool) -> list[str]:
    """Negative lookaheads that keep what a rule wrongly took: the stated exceptions of
    a policy (a private address range, a build-host prefix, a test account) show up in
    the shown records as unlabelled values of the labelled shape. The longest common
    start of the wrong matches, cut back to a separator, when no labelled value starts
    so; else the one value they all are, seen more than once or, as a last resort
    (``lone``), once."""
    out = []
    prefix = _common_prefix(wrong)
    cuts = [i + 1 for i, c in enumerate(prefix) if c not in _ALNUM]
    # The shortest start no labelled value has; from several kept values, the longest
    # they share (an address range's two octets, not its first alone), word by word.
    starts = []
    for a, b in zip([0, *cuts], cuts, strict=False):
        if b - a > _WORD:  # a random body that happened to match, not a word and its separator
            break
        if not any(v.startswith(prefix[:b]) for v in values):
            starts.append(prefix[:b])
    if starts:
        out.append(f"(?!{regex.escape(starts[-1] if len(set(wrong)) > 1 else starts[0])})")
    if len(set(wrong)) == 1 and wrong[0] not in values and (len(wrong) > 1 or lone):
        out.append(f"(?!{regex.escape(wrong[0])}(?![A-Za-z0-9_-]))")
    return out


def _choose(tier: list[str], fam: _Family, examples: list[Example]) -> str | None:
    """The tier's first exact proposal; else the first whose wrong matches a stated
    exception explains (a prefix, or one value seen more than once); else, as a last
    resort, the first that excepts the single value it wrongly took. Each proposal is
    run over the shown records once."""
    wrong: dict[str, list[str] | None] = {}

    def misfires(rule: str) -> list[str] | None:
        if rule not in wrong:
            wrong[rule] = _misfires(rule, fam.name, examples)
        return wrong[rule]

    exact = next((rule for rule in tier if misfires(rule) == []), None)
    if exact is not None:
        return exact
    for lone in (False, True):
        for rule in tier:
            for x in _exclusions(misfires(rule) or [], fam.values, lone):
                if _exact(excepted := _before(x, rule), fam.name, examples):
                    return excepted
    return None


def _before(exclusion: str, rule: str) -> str:
    """``rule`` with ``exclusion`` in front, after a leading flag group (``(?m)``), which
    must stay first: past the start, regex reads it as a flag for the whole pattern."""
    flags = regex.match(r"\(\?[aimsux]+\)", rule)
    return rule[:flags.end()] + exclusion + rule[flags.end():] if flags else exclusion + rule


def _families(examples: list[Example]) -> list[_Family]:
    grouped: dict[str, _Family] = {}
    for text, labels in examples:
        for s, e, name in labels:
            line_start = text.rfind("\n", 0, s) + 1
            line_end = text.find("\n", e)
            fam = grouped.setdefault(name, _Family(name, [], [], [], []))
            fam.values.append(text[s:e])
            fam.lefts.append(text[line_start:s])
            fam.rights.append(text[e:line_end if line_end >= 0 else len(text)])
            fam.sections.append(_section(text, line_start))
    return list(grouped.values())


def induce_rules(examples: list[Example], ranges: tuple[str, ...] = ()) -> list[str]:
    """One rule per labelled family, exact on the examples when any proposal is;
    families no proposal fits are left out rather than guessed at."""
    rules = []
    for fam in _families(examples):
        shaped, bare = _shape_rules(fam)
        tiers = [_generic_rules(fam, ranges), shaped, _section_rules(fam, examples), _context_rules(fam), bare]
        found = next((rule for tier in tiers if (rule := _choose(tier, fam, examples))), None)
        if found:
            rules.append(found)
    return _within_limit(rules, examples)


def _within_limit(rules: list[str], examples: list[Example]) -> list[str]:
    """More rules than an answer holds: two neighbours at a time become one alternation
    (the shortest pair first, so no pattern nears the length limit), only where the
    alternation matches on every shown record exactly what the two did; what still does
    not fit is left out."""
    texts = [text for text, _ in examples]
    seen: dict[str, list[set[tuple[int, int]]]] = {}

    def spans(rule: str) -> list[set[tuple[int, int]]]:
        if rule not in seen:  # a rule is compared again each round until it is joined
            pattern = regex.compile(rule)
            seen[rule] = [{m.span() for m in pattern.finditer(t)} for t in texts]
        return seen[rule]

    while len(rules) > MAX_RULES:
        for i in sorted(range(len(rules) - 1), key=lambda i: len(rules[i]) + len(rules[i + 1])):
            joined = alternate(rules[i:i + 2])
            if len(joined) > MAX_PATTERN_CHARS:
                continue
            try:
                compile_bounded(joined)
            except (Refused, regex.error, ValueError):
                continue
            if spans(joined) == [a | b for a, b in zip(spans(rules[i]), spans(rules[i + 1]), strict=True)]:
                rules[i:i + 2] = [joined]
                break
        else:
            break
    return rules[:MAX_RULES]
