"""The corpus-v2 record stream: one deterministic stream of labelled records per seed.

A task's stream is drawn in four steps, each from its own forked random stream so
that they do not shift one another: the stream's own world (house formats, labelling
policy, context secrets: ``world``), the mix (templates, static secret and decoy
families, and for each family the one variant and the keys this stream uses), the
plan (which families each record carries, with every secret family placed in at least
two shown records, every decoy in at least one, and at least one secret in the
evaluated records), and the records themselves. Each rendered record is checked
against the oracle of every static secret family and of the stream's own secret
families; a record on which they would remove anything but its labelled secrets is
drawn again, and so is an evaluated record carrying a secret family its shown records
never labelled. So labels, oracle and fairness cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, repeat
from operator import is_, itemgetter
from typing import Any

import regex
from regex import _regex_core as _core_module

from ..build.versions import STREAM_DRAWS
from ..scoring.alternation import alternate
from ..scoring.answer import MAX_RULES
from ..scoring.pattern_guard import _parse, compile_trusted
from ..scoring.stack import with_headroom
from .families import DECOYS, SECRETS, Family, Fragment
from .families.decoys import PLACEHOLDER_KINDS, PLACEHOLDER_TARGETS, PLACEHOLDERS, vendor_placeholder
from .formats import WRITERS, CannotPlace, Item
from .levels import LEVEL_1, LEVELS, Level, Range
from .levels import level as level_table
from .rng import Rng
from .templates import TEMPLATES, Template
from .world import World, draw_world

MAX_REDRAWS = 50
_regex_core: Any = _core_module  # the parse tree's node types (no type stubs)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    family: str
    group: str = ""  # the family's summary class (Family.summary_group); "" = the family itself

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "family": self.family, "group": self.group or self.family}


@dataclass(frozen=True)
class Record:
    text: str
    template: str
    secrets: tuple[Span, ...]
    decoys: tuple[Span, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"template": self.template, "text": self.text,
                "secrets": [s.as_dict() for s in self.secrets],
                "decoys": [d.as_dict() for d in self.decoys]}


# A house look-alike's family name (after the service) -> the look-alike kind it is.
_LOOKALIKE_KINDS = {"key_id": "length", "webhook_id": "alphabet", "preview_key": "near", "client_id": "public",
                    "sandbox_key": "sandbox"}


@dataclass(frozen=True)
class Stream:
    seed: int
    templates: tuple[str, ...]
    secret_families: tuple[str, ...]
    decoy_families: tuple[str, ...]
    shown: tuple[Record, ...]
    heldout: tuple[Record, ...]
    world: World
    oracle: tuple[str, ...]  # the stream's oracle rules, in order
    static_secrets: int = 0  # vendor families of the static catalogue drawn
    quiet_records: int = 0  # held-out records planned without a secret value
    level: int = 1

    def attributes(self) -> dict[str, Any]:
        """What this stream drew of its level's attributes (corpus/levels.py), as counts:
        for the catalogue, ``tasks show`` and the calibration, never for the prompt."""
        w = self.world
        rendered = {s.family for r in self.shown + self.heldout for s in r.secrets}
        # What a record holds, not what the world drew: a family without a file to sit in
        # (too few shown records) is not part of the task.
        groups = [f.group for f in w.extra_secrets if f.name in rendered]
        kinds = sorted({_LOOKALIKE_KINDS[name.removeprefix(h.service + "_")] for h in w.house
                        for name, _, _ in h.lookalikes})
        return {
            "level": self.level, "house_formats": len(w.house),
            "lookalikes_per_format": [len(h.lookalikes) for h in w.house], "lookalike_kinds": kinds,
            "house_placeholders": sum(bool(h.placeholders) for h in w.house),
            "placeholder_kinds": [len(h.placeholders) for h in w.house if h.placeholders],
            "context_secrets": len(w.contexts), "context_lookalikes": [len(c.decoy_names) for c in w.contexts],
            "affixed_lookalikes": [sum(c.secret_name in d for d in c.decoy_names) for c in w.contexts],
            "scoped_secrets": groups.count("scoped_secret"),
            "neutral_sections": int(w.neutral_sections and "scoped_secret" in groups),
            "policy_exceptions": len(w.policy.exceptions),
            "encodings": groups.count("house_format_base64"), "multiline": groups.count("house_key_block"),
            "neutral_block_labels": int(w.neutral_block_labels and "house_key_block" in groups),
            "records_shown": len(self.shown), "quiet_records": self.quiet_records,
            # Quiet files can still hold a value the policy labels (a host field).
            "heldout_records_without_secrets": sum(not r.secrets for r in self.heldout),
            "decoys_per_heldout_record": round(sum(len(r.decoys) for r in self.heldout) / len(self.heldout), 2),
            "static_secrets": self.static_secrets,
        }


@dataclass(frozen=True)
class Instance:
    """A family as one stream uses it: one variant, one or two of its keys, and the
    contexts that variant can sit in."""
    family: Family
    variant: str
    keys: tuple[str, ...]
    contexts: frozenset[str]


Labelled = list[tuple[int, int, Family]]
# Which context a value takes in a template hosting several of its contexts: the
# template's own slot first (a .npmrc's auth token, a service-account key), a plain
# key/value last.
_PREFERENCE = ("npmrc", "pypirc", "gcp_sa", "k8s", "scoped", "escaped", "block", "shell", "kv")


# (compiled pattern, a literal it requires, further literals it requires, clauses of
# literals it requires one of each, lowercase hints one of which it requires (shortest
# first), compiled line gate or None, whether every match starts right after a hint and
# separators, then what `_start_rules` read off a catalogue oracle's pattern (a stream's
# own has None): a literal every match starts right after (with separators between) as
# (literal, whether it is matched ignoring case), the characters one of which precedes
# every match, the characters one of which starts every match)
Oracle = tuple["regex.Pattern[str]", str, tuple[str, ...], tuple[tuple[str, ...], ...], tuple[str, ...],
               "regex.Pattern[str] | None", bool, "tuple[str, bool] | None", "frozenset[str] | None",
               "frozenset[str] | None"]

# What may sit between an anchored oracle's hint (its key) and a match: the key/value
# separators of every format the corpus writes (``key = "v"``, ``key: v``, ``--flag=v``).
ANCHOR_SEPARATORS = frozenset(" \t\n\r\f\v\"':=")


@lru_cache(maxsize=4096)
def _compiled(pattern: str, hints: tuple[str, ...], line_gate: str, hints_anchor: bool,
              read_starts: bool = False) -> Oracle:
    """Oracle patterns recur across streams (policy categories, every static family).
    The literals a match needs skip most scans: a scan that cannot match marks nothing.
    ``read_starts`` parses the pattern once more for `_start_rules`: worth it for the
    catalogue's oracles (compiled once per process: ~6 ms more for the first build), not
    for a stream's own (new in every stream, where a parse would cost more than it saves)."""
    compiled, clauses = compile_trusted(pattern)
    single = [c[0] for c in clauses if len(c) == 1]
    required = max(single, key=len, default="")
    rest = [c for c in clauses if c != (required,)]
    anchor = before = first = None
    # Parsed again only where a rule can pay: starts after a lookbehind or a key, or
    # openers for a clause of alternatives.
    if read_starts and ("(?<=" in pattern or hints_anchor or any(len(c) > 1 for c in rest)):
        anchor, before, first, openers = _start_rules(pattern)
        # Where the literals a match opens with imply a clause of alternatives (an AWS
        # key's AKIA/ASIA/... for its clause KIA/SIA/...), looking for them instead is
        # as many searches, of longer literals, and far fewer texts pass.
        implied = [c for c in rest if openers and all(any(lit in o for lit in c) for o in openers)]
        if any(len(c) > 1 for c in implied):
            rest = [openers, *(c for c in rest if c not in implied)]
    needed = tuple(dict.fromkeys(c[0] for c in rest if len(c) == 1))
    choices = tuple(_fewest(c) for c in rest if len(c) > 1)
    return (compiled, required, needed, choices, tuple(sorted(hints, key=len)),
            compile_trusted(line_gate)[0] if line_gate else None, hints_anchor, anchor, before, first)


def _fewest(literals: tuple[str, ...]) -> tuple[str, ...]:
    """Literals one of which a text holds, without those holding another (found with it)."""
    unique = tuple(dict.fromkeys(literals))
    return tuple(lit for lit in unique if not any(o != lit and o in lit for o in unique))


def _oracles(families: Iterable[Family], read_starts: bool = False) -> tuple[Oracle, ...]:
    return tuple(_compiled(p, f.hints, f.line_gate, f.hints_anchor, read_starts) for f in families for p in f.oracle)


@lru_cache(maxsize=1)
def _catalogue_oracles() -> tuple[Oracle, ...]:
    """The static catalogue's oracles, the same in every stream: built once."""
    return _oracles(SECRETS, read_starts=True)


# What `_start_rules` reads in the parse tree `regex` compiles (compile_trusted's).
_REPEATS = (_regex_core.GreedyRepeat,)  # lazy and possessive repeats subclass it
# Items that consume nothing and only test where they stand (verbs like \K are not).
_ZERO_WIDTH = (_regex_core.LookAround, _regex_core.Boundary, _regex_core.DefaultBoundary,
               _regex_core.StartOfWord, _regex_core.EndOfWord, _regex_core.DefaultStartOfWord,
               _regex_core.DefaultEndOfWord, _regex_core.StartOfLine, _regex_core.StartOfLineU,
               _regex_core.EndOfLine, _regex_core.EndOfLineU, _regex_core.StartOfString,
               _regex_core.EndOfString, _regex_core.EndOfStringLine, _regex_core.EndOfStringLineU)
_MAX_SET = 512  # a character set is read as its characters up to this many
_MAX_OPENERS = 8  # literals a match may open with, at most


def _items(node: Any) -> list[Any]:
    """A sequence's items, groups opened (what they match is the same in line)."""
    if type(node) is _regex_core.Sequence:
        return [x for item in node.items for x in _items(item)]
    if type(node) is _regex_core.Group:
        return _items(node.subpattern)
    return [node]


def _chars(node: Any) -> frozenset[str] | None:
    """The characters a one-character item matches: a case-sensitive character, range
    or set of them; None for anything else (a class like \\s, a negated set, a flag)."""
    kind = type(node)
    if kind not in (_regex_core.Character, _regex_core.Range, _regex_core.SetUnion) or not node.positive \
            or node.zerowidth or node.case_flags != 0:
        return None
    if kind is _regex_core.Character:
        return frozenset(chr(node.value))
    if kind is _regex_core.Range:
        return frozenset(map(chr, range(node.lower, node.upper + 1))) if node.upper - node.lower < _MAX_SET else None
    out: frozenset[str] = frozenset()
    for item in node.items:
        part = _chars(item)
        if part is None:
            return None
        out |= part
    return out if len(out) <= _MAX_SET else None


def _one_char(node: Any) -> frozenset[str] | None:
    """The characters one of which an item's first (and last) character is, for a
    one-character item or a repeat of at least one of it; else None."""
    if isinstance(node, _REPEATS):
        inner = _items(node.subpattern)
        return _chars(inner[0]) if node.min_count >= 1 and len(inner) == 1 else None
    return _chars(node)


def _separators_only(node: Any) -> bool:
    """Whether an item only ever consumes `ANCHOR_SEPARATORS` (or nothing)."""
    if type(node) is _regex_core.LookAround:
        return True
    if isinstance(node, _REPEATS):
        return all(_separators_only(x) for x in _items(node.subpattern))
    chars = _chars(node)
    return chars is not None and chars <= ANCHOR_SEPARATORS


def _literal_character(node: Any) -> int | None:
    """A literal character's case flags (0: exact, IGNORECASE: either case), else None."""
    if type(node) is not _regex_core.Character or not node.positive or node.zerowidth:
        return None
    flags = int(node.case_flags)
    return flags if flags in (0, int(_regex_core.IGNORECASE)) else None


def _anchor_literal(body: list[Any]) -> tuple[str, bool] | None:
    """The literal a lookbehind's text ends with, before only separators: every match
    of a pattern led by that lookbehind starts right after it and a run of separators."""
    k = len(body) - 1
    while k >= 0 and _literal_character(body[k]) is None:
        if not _separators_only(body[k]):
            return None
        k -= 1
    if k < 0:
        return None
    flags = _literal_character(body[k])
    start = k
    while start > 0 and _literal_character(body[start - 1]) == flags:
        start -= 1
    literal = "".join(chr(item.value) for item in body[start:k + 1])
    if flags and not literal.isascii():  # matched ignoring case only in ASCII text, lowercased
        return None
    return (literal.lower(), True) if flags else (literal, False)


def _openers(items: list[Any]) -> tuple[list[str], bool]:
    """Literals one of which the text of ``items`` starts with (exact: one of which it
    is, when the flag says the items were read to their end): literal characters, small
    sets and branches of them, from the start up to the first item that is none."""
    out = [""]
    for item in items:
        if isinstance(item, _ZERO_WIDTH):
            continue
        chars = _chars(item)
        whole = True
        if chars is not None and len(chars) <= _MAX_OPENERS:
            more = sorted(chars)
        elif type(item) is _regex_core.Branch:
            read = [_openers(_items(b)) for b in item.branches]
            more = list(dict.fromkeys(s for strings, _ in read for s in strings))
            whole = all(w for _, w in read)
        else:
            return out, False
        if len(out) * len(more) > _MAX_OPENERS:
            return out, False
        out = [a + b for a in out for b in more]
        if not whole:
            return out, False
    return out, True


@lru_cache(maxsize=256)
@with_headroom  # the parse recurses: as deep wherever the build is called from
def _start_rules(pattern: str) -> tuple[tuple[str, bool] | None, frozenset[str] | None, frozenset[str] | None,
                                         tuple[str, ...]]:
    """What a pattern's parse says about where its matches start: a literal (from a
    leading lookbehind) every match starts right after, with separators between, the
    characters one of which precedes every match (a leading lookbehind's last item), the
    characters one of which starts it (its first consuming item), each None when the
    pattern does not say; and the literals one of which every match starts with (none:
    ()). `oracle_marks` tries a pattern only at such starts, and in texts with such a
    literal."""
    parsed, _, info = _parse(pattern)
    if info.flags & int(_regex_core.REVERSE):
        return None, None, None, ()
    items = _items(parsed)
    anchor: tuple[str, bool] | None = None
    before: frozenset[str] | None = None
    i = 0
    while i < len(items) and type(items[i]) is _regex_core.LookAround:
        look = items[i]
        i += 1
        if not (look.behind and look.positive):
            continue
        body = _items(look.subpattern)
        found = _anchor_literal(body)
        if found is not None and (anchor is None or len(found[0]) > len(anchor[0])):
            anchor = found
        last = [x for x in body if type(x) is not _regex_core.LookAround]
        chars = _one_char(last[-1]) if last else None
        if chars is not None:
            before = chars if before is None else before & chars
    first = _one_char(items[i]) if i < len(items) else None
    openers = _fewest(tuple(_openers(items)[0]))
    return anchor, before, first, openers if all(openers) else ()


def _gated_lines(gate: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    """(start, end) of each line holding a match of ``gate``, in order, once each."""
    lines: list[tuple[int, int]] = []
    for m in gate.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if lines and lines[-1][0] == start:
            continue
        end = text.find("\n", m.end())
        lines.append((start, len(text) if end < 0 else end))
    return lines


def anchor_starts(text: str, lower: str, hints: tuple[str, ...], before: frozenset[str] | None = None,
                  first: frozenset[str] | None = None) -> list[int]:
    """Every position right after an occurrence of a hint in ``lower`` (``text``
    lowercased, the same length, or ``text`` itself) and then any run of separators:
    where an anchored oracle's matches can start, in order; only those after a
    character of ``before`` and at one of ``first`` when given."""
    starts: set[int] = set()
    n = len(text)
    for root, longer in _hint_roots(hints):
        at = lower.find(root)
        while at >= 0:
            # a hint that extends another starts where it does: found with it
            for h in longer:
                if h is root or lower.startswith(h, at):
                    p = end = at + len(h)
                    while end < n and text[end] in ANCHOR_SEPARATORS:
                        end += 1
                    for q in range(p, end + 1):
                        if (before is None or (q and text[q - 1] in before)) and \
                                (first is None or (q < n and text[q] in first)):
                            starts.add(q)
            at = lower.find(root, at + 1)
    return sorted(starts)


@lru_cache(maxsize=1024)
def _hint_roots(hints: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The hints no other hint is a prefix of, each with itself and the hints it is a
    prefix of: a text is searched once per root."""
    unique = tuple(dict.fromkeys(hints))
    roots = [h for h in unique if not any(o != h and h.startswith(o) for o in unique)]
    return tuple((r, (r, *(h for h in unique if h != r and h.startswith(r)))) for r in roots)


def _anchored_spans(pattern: regex.Pattern[str], text: str, starts: list[int]) -> list[tuple[int, int]] | None:
    """The spans `finditer` yields for a pattern whose every match starts at one of
    ``starts``, from a match attempt at each start instead of one at every position
    (a lookbehind-led pattern costs as much at a position it cannot match as at one it
    can). None when a match is empty (finditer's rule for those is not mirrored here)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for p in starts:
        if p < pos:
            continue
        m = pattern.match(text, p)
        if m is not None:
            if m.end() == m.start():
                return None
            spans.append(m.span())
            pos = m.end()
    return spans


_REQUIRED = itemgetter(1)


def oracle_marks(text: str, oracles: tuple[Oracle, ...]) -> bytearray:
    """1 for every character some oracle match covers. Shortcuts skip scans that cannot
    match (a missing literal, opener or hint), and scan only gated lines or anchored
    starts (after a key, or the literal a leading lookbehind ends with, and separators);
    tests check on generated records that the marks equal a plain scan's."""
    marked = bytearray(len(text))
    lower = None
    ascii_text = None
    has = text.__contains__
    # Most oracles lack their required literal ("" is in every text): filtered without a
    # Python step per oracle.
    for pattern, _, needed, choices, hints, gate, anchored, anchor, before, first in \
            compress(oracles, map(has, map(_REQUIRED, oracles))):
        if needed and not all(map(has, needed)):
            continue
        if choices:  # a literal of each (a loop: no generator to start)
            for choice in choices:
                if not any(map(has, choice)):
                    break
            else:
                choice = ()
            if choice:
                continue
        spans: list[tuple[int, int]] | None = None
        if hints:
            if lower is None:
                lower = text.lower()
            if not any(map(lower.__contains__, hints)):
                continue
            # Lowercasing keeps every offset only in ASCII text (the corpus's).
            if anchored and (ascii_text := text.isascii() if ascii_text is None else ascii_text):
                spans = _anchored_spans(pattern, text, anchor_starts(text, lower, hints, before, first))
        if spans is None and anchor is not None:
            literal, folded = anchor
            if not folded:
                spans = _anchored_spans(pattern, text, anchor_starts(text, text, (literal,), before, first))
            elif ascii_text := text.isascii() if ascii_text is None else ascii_text:
                if lower is None:
                    lower = text.lower()
                spans = _anchored_spans(pattern, text, anchor_starts(text, lower, (literal,), before, first))
        if spans is not None:
            for start, end in spans:
                marked[start:end] = b"\x01" * (end - start)
        elif gate is None:
            for m in pattern.finditer(text):
                start, end = m.span()
                marked[start:end] = b"\x01" * (end - start)
        else:
            for line_start, line_end in _gated_lines(gate, text):
                for m in pattern.finditer(text, line_start, line_end):
                    start, end = m.span()
                    marked[start:end] = b"\x01" * (end - start)
    return marked


def _oracle_agrees(text: str, secrets: list[Span], oracles: tuple[Oracle, ...]) -> bool:
    want = bytearray(len(text))
    for s in secrets:
        want[s.start:s.end] = b"\x01" * (s.end - s.start)
    return oracle_marks(text, oracles) == want


# How many times a shown encoded value is drawn again to differ from the first shown
# one at both ends: the least likely draw to succeed (base62 body, prefix of 5, checksum)
# does with a chance of 0.116, so 200 draws all fail about once in 5 * 10**10 records
# (then the record is drawn again).
SPREAD_DRAWS = 200


def _spread(family: Family, variant: str, r: Rng, frag: Fragment, lead: int, trail: int, first: str) -> Fragment:
    """``frag``, or a value of ``family`` drawn again, that differs from ``first`` just
    past the characters every value shares at each end (``lead``, ``trail``;
    `house.encoding_ends`): the shown encodings of a credential then span what a held-out
    one may be at either end. On levels-v10 a third of level-5 dev streams showed two
    encodings that agreed on the first character the body decides, and a held-out one
    did not; careful readers who copied the shown encodings' common start lost three of
    the four level-5 tasks they lost."""
    for _ in range(SPREAD_DRAWS):
        text = frag.text
        if text[lead] != first[lead] and text[-1 - trail] != first[-1 - trail]:
            return frag
        frag = family.make(r, variant)
    raise CannotPlace(f"no value of {family.name} differs from the first shown one at both ends")


def _render(template: Template, instances: list[Instance], r: Rng, world: World,
            keys: dict[int, str] | None = None, spread: dict[str, tuple[int, int, str]] | None = None) -> Record:
    """One record of ``template`` holding ``instances`` (and fillers), laid out by the
    template's format writer; raises `CannotPlace` when the format cannot carry a
    value verbatim (the caller draws the record again). ``keys`` fixes the key of some
    instances (by position); ``spread`` names the encoded credentials whose value must
    differ from a first shown one (name -> leading, trailing, the first: "" when this
    record shows the first)."""
    items = []
    spread = dict(spread) if spread else None
    placed: set[str] = set()
    encoded: dict[str, int] = {}  # encoded look-alike -> its values this file holds
    hosts = template.hosts
    for k, inst in enumerate(instances):
        family = inst.family
        name = family.name
        if name in placed and "scoped" in inst.contexts:
            continue  # a scoped value has one place in a file: its key in its section
        if family.group == "house_format_base64_lookalike":
            encoded[name] = encoded.get(name, 0) + 1
            if encoded[name] > 2:
                continue  # a Secret holds its key once: a file holds a look-alike in two Secrets at most
        placed.add(name)
        frag = family.make(r, inst.variant)
        if spread and name in spread:
            lead, trail, first = spread[name]
            if first:
                frag = _spread(family, inst.variant, r, frag, lead, trail, first)
                del spread[name]
            else:
                spread[name] = (lead, trail, frag.text)
        key = frag.key or (keys[k] if keys and k in keys else r.choice(inst.keys))
        spans = frag.spans
        labels = [(spans[0][0], spans[0][1], family)] if len(spans) == 1 else [(s, e, family) for s, e in spans]
        items.append(Item(key, frag.text, labels, _context(hosts, inst.contexts), inst.variant, False, frag.section))
    out = WRITERS[template.format](template, items, r, world)
    secrets: list[Span] = []
    decoys: list[Span] = []
    labelled = out.labels  # the writer's own list: sorted in place
    labelled.sort(key=_span_of)
    for s, e, fam in labelled:
        (secrets if fam.kind == "secret" else decoys).append(Span(s, e, fam.name, fam.summary_group))
    return Record(out.text, template.name, tuple(secrets), tuple(decoys))


_span_of = itemgetter(0, 1)


@lru_cache(maxsize=1024)
def _context(hosts: frozenset[str], contexts: frozenset[str]) -> str:
    return next(c for c in _PREFERENCE if c in hosts and c in contexts)



def _instances(families: list[Family], r: Rng, contexts: frozenset[str]) -> list[Instance]:
    """Each family with one variant whose contexts the stream's templates host."""
    out = []
    for f in families:
        if f.variant_contexts:
            variant = r.choice([v for v in f.variants if f.contexts_of(v) & contexts])
            where = f.contexts_of(variant)
        else:  # every variant sits in the family's own contexts: no look-up per variant
            variant = r.choice(f.variants if not f.contexts.isdisjoint(contexts) else [])
            where = f.contexts
        count = r.between(1, 2)
        # A sample of one key draws nothing (the count above is drawn all the same).
        keys = tuple(f.keys) if len(f.keys) == 1 else tuple(r.sample(f.keys, min(len(f.keys), count)))
        out.append(Instance(f, variant, keys, where))
    return out


# How much likelier an evaluated record is to carry one of the stream's own families
# than a static one: most evaluated secrets must need the shown records to be found.
_OWN_WEIGHT = 3


def _weighted(pool: list[Instance], own: set[str]) -> list[Instance]:
    return [i for i in pool for _ in range(_OWN_WEIGHT if i.family.name in own else 1)]


@lru_cache(maxsize=1024)
def _static_pools(contexts: frozenset[str]) -> tuple[tuple[Family, ...], tuple[Family, ...]]:
    """The catalogue's secret and decoy families a stream whose templates host
    ``contexts`` draws from, in catalogue order (placeholders apart: they are drawn
    per vendor)."""
    return (tuple(f for f in SECRETS if not f.contexts.isdisjoint(contexts)),
            tuple(f for f in DECOYS if not f.contexts.isdisjoint(contexts) and f.name != PLACEHOLDERS.name))


def _plan(r: Rng, n_shown: int, n_eval: int, templates: list[Template], world: World
          ) -> tuple[list[Instance], list[Instance], list[tuple[Template, list[Instance]]], tuple[int, int]]:
    lv = world.lv
    shown_templates = [templates[i % len(templates)] for i in range(n_shown)]
    contexts = frozenset().union(*(t.contexts for t in templates))
    static_pool, decoy_pool = _static_pools(contexts)
    static_s = r.sample(static_pool, r.between(*lv.static_secrets))
    for t in templates:  # a template that exists for one kind of credential gets one
        if t.required and not any(t.required in f.contexts for f in static_s):
            static_s.append(r.choice([f for f in SECRETS if t.required in f.contexts and f not in static_s]))
    static_d = r.sample(decoy_pool, r.between(2, 4))
    if lv.config_values[1] and r.fork("config-values").between(*lv.config_values):
        static_d += [f for f in decoy_pool if f.name == _CONFIG_VALUES and f not in static_d]
    own_s = [f for f in world.secret_families if not f.contexts.isdisjoint(contexts)]
    own_d = [f for f in world.decoy_families if not f.contexts.isdisjoint(contexts)]
    secrets = _instances(static_s + own_s, r, contexts)
    decoys = _instances(static_d + own_d, r, contexts)
    # Placeholders of the stream's own vendors, under the same keys, as real files have
    # them beside the real thing (an .env.example line, a template, a sample config).
    # Each placeholder decoy must be shown beside a real secret of its format: decoy
    # instance -> that secret's instance, by id.
    partners: dict[int, Instance] = {}
    ph = r.fork("placeholders")  # every vendor with a placeholder shape, in placeholder_kinds kinds, each drawn once
    for inst in secrets[:len(static_s)]:
        name = inst.family.name
        where = inst.contexts & PLACEHOLDERS.contexts_of(name) & contexts if name in PLACEHOLDER_TARGETS \
            else frozenset()
        if where:
            for kind in ph.sample(PLACEHOLDER_KINDS, ph.between(*lv.placeholder_kinds)):
                decoys.append(Instance(vendor_placeholder(ph, name, kind), name, inst.keys, where))
                partners[id(decoys[-1])] = inst
    # The stream's own formats' placeholders (house_placeholders), beside their credential.
    by_name = {s.family.name: s for s in secrets}
    for d in decoys:
        if d.family.group == "house_placeholder":
            partners[id(d)] = by_name[d.family.name.rsplit("_placeholder_", 1)[0] + "_api_key"]
    own = {f.name for f in own_s + own_d}
    # A format's placeholder kinds share one place in the held-out pool (its first kind
    # stands for them all and a pick of it draws the kind): a placeholder is as likely as
    # any other decoy, however many kinds its format has.
    kinds_of: dict[int, list[Instance]] = {}
    for d in decoys:
        if id(d) in partners:
            kinds_of.setdefault(id(partners[id(d)]), []).append(d)
    first = {id(kinds[0]): kinds for kinds in kinds_of.values()}
    pooled = [d for d in decoys if id(d) not in partners or id(d) in first]
    # Held-out files planned without a secret value (a level attribute, per 16 held-out
    # records; 4-5 at level 1, so that a reply removing every value of a kind pays for
    # it in precision). A filler field the policy labels (a host, an address) can still
    # make one hold a secret.
    quiet: set[int] = set()
    if lv.quiet_records[1]:
        count = min(n_eval - 1, round(r.between(*lv.quiet_records) * n_eval / 16))
        quiet = set(r.sample(range(n_shown + 1, n_shown + n_eval), count))
    plan: list[tuple[Template, list[Instance]]] = [(t, []) for t in shown_templates]
    # Each template's pools, built once: held-out records of one template draw from the same.
    pools: dict[str, tuple[list[Instance], list[Instance]]] = {}
    weighted_templates = [t for t in templates for _ in range(_weight(t))]
    quiet_templates = [t for t in templates if not t.required] or templates
    choice, between = r.choice, r.between
    for i in range(n_shown, n_shown + n_eval):
        if i == n_shown:  # every task has at least one evaluated secret of the stream's own
            own_secrets = [s for s in secrets if s.family.name in own]
            t = choice([t for t in templates if any(not t.hosts.isdisjoint(s.contexts) for s in own_secrets)])
            chosen = [choice([s for s in own_secrets if not t.hosts.isdisjoint(s.contexts)])]
        elif i in quiet:  # a file for no one credential, so nothing forces a secret into it
            t, chosen = choice(quiet_templates), []
        else:
            t, chosen = choice(weighted_templates), []
        pool = pools.get(t.name)
        if pool is None:
            hosts = t.hosts
            pool = pools[t.name] = (_weighted([s for s in secrets if not hosts.isdisjoint(s.contexts)], own),
                                    _weighted([d for d in pooled if not hosts.isdisjoint(d.contexts)], own))
        pool_s, pool_d = pool
        # Decoys outnumber secrets: a rule set that removes every candidate must pay
        # for it in precision.
        if pool_s and i not in quiet:
            chosen += [choice(pool_s) for _ in range(between(1, 2))]
        if pool_d:
            picks = [choice(pool_d) for _ in range(between(*lv.decoy_density))]
            chosen += [choice(first[id(d)]) if id(d) in first else d for d in picks]
        plan.append((t, chosen[:t.capacity]))
    if lv.heldout_coverage[1] or lv.lookalike_coverage[1]:
        _cover(r.fork("coverage"), plan, n_shown, secrets, decoys, quiet, lv.heldout_coverage,
               lv.lookalike_coverage, templates)
    # Fairness: every secret is shown at least twice (so a shape can be read off two
    # examples), every decoy at least once; a placeholder in a record that also holds a
    # real secret of its format (a contrasting pair).
    shown = plan[:n_shown]
    # The shown records that host a context set, in order (the records never change
    # template here). Their capacity is checked as they fill, unless no record can fill
    # up: each step below adds at most two values to a record.
    hosting: dict[frozenset[str], list[int]] = {}
    roomy = (min((t.capacity for t in shown_templates), default=0)
             > max((len(c) for _, c in shown), default=0) + 2 * (len(secrets) + len(decoys)))
    for inst, times in [(s, 2) for s in secrets] + [(d, 1) for d in decoys]:
        if id(inst) in partners:
            _beside(r, shown, inst, partners[id(inst)])
            continue
        slots = hosting.get(inst.contexts)
        if slots is None:
            slots = hosting[inst.contexts] = [i for i in range(n_shown)
                                              if not shown_templates[i].hosts.isdisjoint(inst.contexts)]
        if not roomy:
            slots = [i for i in slots if len(plan[i][1]) < plan[i][0].capacity]
        for i in r.sample(slots, min(times, len(slots))) if len(slots) >= times else [r.choice(slots)] * times:
            plan[i][1].append(inst)
    if lv.layout_coverage[1]:
        layouts = r.fork("layouts")
        if layouts.between(*lv.layout_coverage):
            _other_layouts(layouts, plan, n_shown, secrets, quiet)
    # A file that exists for one kind of credential (a service-account key, a .pypirc)
    # holds one.
    for t, chosen in plan:
        if t.required and not any(t.required in c.contexts for c in chosen):
            chosen.append(r.choice([s for s in secrets if t.required in s.contexts]))
    return secrets, decoys, plan, (len(static_s), len(quiet))


# Groups whose oracle patterns join into one rule, in this order, while a stream's
# oracle has more rules than an answer may: each group's patterns match disjoint text
# (distinct literal prefixes, distinct keys, distinct armour names).
_JOINABLE = ("house_format", "context_secret", "scoped_secret", "house_format_base64", "house_key_block")


def _oracle_rules(active: list[Family]) -> tuple[str, ...]:
    """The stream's oracle, one rule per pattern, in order; within the answer's rule
    limit by joining a group's patterns into one alternation where needed (only the
    top level draws that many formats)."""
    rules = [(f.group, p) for f in active for p in f.oracle]
    for group in _JOINABLE:
        if len(rules) <= MAX_RULES:
            break
        where = [i for i, (g, _) in enumerate(rules) if g == group]
        if len(where) > 1:
            joined = (group, alternate([rules[i][1] for i in where]))
            rules = [joined if i == where[0] else r for i, r in enumerate(rules) if i not in where[1:]]
    return tuple(p for _, p in rules)


_CATALOGUE_SECRETS = frozenset(f.name for f in SECRETS)


def _cover(r: Rng, plan: list[tuple[Template, list[Instance]]], n_shown: int, secrets: list[Instance],
           decoys: list[Instance], quiet: set[int], times: Range, decoy_times: Range,
           templates: list[Template]) -> None:
    """Every secret the stream draws goes into at least ``times`` held-out records, and
    every decoy (each placeholder kind apart) into at least ``decoy_times``: what the
    shown records teach is what the held-out ones test. Drawn at random, a level's many
    families would leave most of what a reader learned untested (two thirds of level
    5's secret families, before), and a slip on them would cost nothing. Look-alikes are
    where careful readers slip (a scoped value kept in the wrong section, a placeholder
    taken), and they cost a rule that takes too much: testing each more often raises
    both costs without adding secret text. Secrets go into quiet files only when no
    other held-out file of a type they sit in has room (the file is then quiet no
    longer), and when no held-out file can take them at all, a quiet file becomes a file
    of a type they sit in, holding them alone (a credential's base64 form needs a
    Kubernetes Secret, which no held-out file of 41% of level-5 dev streams was, so it
    went untested; a key block or a scoped value sometimes needs it too). A look-alike
    leaves a quiet file quiet. The catalogue's vendor secrets stay as drawn: what they
    test is memory, not the stream, and placing each again would raise the share a
    memorised rule set (the baseline, a constant reply) earns at the levels meant to
    lower it."""
    want = r.between(*times)
    want_decoy = r.between(*decoy_times)
    held = range(n_shown, len(plan))
    present = {i: {id(c) for c in plan[i][1]} for i in held}
    placed: dict[int, int] = {}  # instance (by id) -> the held-out records holding it
    for ids in present.values():
        for key in ids:
            placed[key] = placed.get(key, 0) + 1
    rows = [(i, present[i], plan[i][0].hosts) for i in held]  # kept in step with plan and present
    insts = secrets + decoys
    # Each placement adds one value to a record (a record given a new template starts
    # empty): when no record can fill up, capacity need not be checked as they fill.
    roomy = (min(t.capacity for t in templates)
             > max((len(plan[i][1]) for i in held), default=0) + len(insts) * max(want, want_decoy))
    for inst in insts:
        secret = inst.family.kind == "secret"
        need = (0 if inst.family.name in _CATALOGUE_SECRETS else want) if secret else want_decoy
        key = id(inst)
        have = placed.get(key, 0)
        if have >= need:
            continue
        where = inst.contexts
        fit = [i for i, ids, hosts in rows if key not in ids and not hosts.isdisjoint(where)
               and not (secret and i in quiet)]
        for _ in range(need - have):
            if not roomy:
                fit = [i for i in fit if len(plan[i][1]) < plan[i][0].capacity]
            if not fit and secret:
                # No file that holds secrets has room and is of a type this one sits in:
                # a quiet file of that type takes it (and is quiet no longer), else a
                # quiet file becomes one, holding it alone, rather than leave a shown
                # format untested (a base64 form needs a Kubernetes Secret).
                fit = [i for i in held if i in quiet and key not in present[i]
                       and not plan[i][0].hosts.isdisjoint(where) and len(plan[i][1]) < plan[i][0].capacity]
                kinds = [t for t in templates if not t.hosts.isdisjoint(where)] if not fit else []
                if kinds and quiet:
                    i = r.choice(sorted(quiet))
                    for gone in present[i]:
                        placed[gone] -= 1
                    plan[i] = (r.choice(kinds), [])  # its decoys are placed again below if need be
                    present[i] = set()
                    rows[i - n_shown] = (i, present[i], plan[i][0].hosts)
                    fit = [i]
            if not fit:
                break
            i = r.choice(fit)
            plan[i][1].append(inst)
            present[i].add(key)
            placed[key] = placed.get(key, 0) + 1
            if secret:  # a decoy leaves a file quiet
                quiet.discard(i)
            fit.remove(i)


_CONFIG_VALUES = "k8s_config_data"  # Level.config_values
_LAYOUT_BOUND = ("context_secret", "scoped_secret")


def _other_layouts(r: Rng, plan: list[tuple[Template, list[Instance]]], n_shown: int, secrets: list[Instance],
                   quiet: set[int]) -> None:
    """Each key- or section-scoped secret also goes into a held-out file of a type no
    shown record shows it in, where a held-out file of such a type has room (a file
    that holds secrets first; a quiet one is then quiet no longer): the shown files
    teach the key and each file type's layout, the held-out ones test both together.
    Model replies lost most here (a ``gaflur_cursor: ...`` rule meeting ``gaflur_cursor
    = "..."`` in a TOML file)."""
    held = range(n_shown, len(plan))
    for inst in secrets:
        if inst.family.group not in _LAYOUT_BOUND:
            continue
        seen = {plan[i][0].name for i in range(n_shown) if any(map(is_, plan[i][1], repeat(inst)))}
        if any(plan[i][0].name not in seen and any(map(is_, plan[i][1], repeat(inst))) for i in held):
            continue
        fit = [i for i in held if plan[i][0].name not in seen and not plan[i][0].hosts.isdisjoint(inst.contexts)
               and len(plan[i][1]) < plan[i][0].capacity]
        loud = [i for i in fit if i not in quiet]
        if fit:
            i = r.choice(loud or fit)
            plan[i][1].append(inst)
            quiet.discard(i)


def _beside(r: Rng, shown: list[tuple[Template, list[Instance]]], inst: Instance, partner: Instance) -> None:
    """Places ``inst`` in a shown record that holds ``partner``, or else both in one."""
    where = inst.contexts
    fit = [i for i, (t, chosen) in enumerate(shown) if not t.hosts.isdisjoint(where) and len(chosen) < t.capacity]
    held = [i for i in fit if any(map(is_, shown[i][1], repeat(partner)))]  # holds it (by identity)
    if held:
        shown[r.choice(held)][1].append(inst)
        return
    i = r.choice([i for i in fit if len(shown[i][1]) + 1 < shown[i][0].capacity] or fit)
    shown[i][1].extend((partner, inst))


# The catalogue's certificates and public keys: what a .pem holds when it holds no value.
_PUBLIC_BLOCK = next(f for f in DECOYS if f.name == "public_key_material")


def _public_blocks(plan: list[tuple[Template, list[Instance]]], n_shown: int) -> list[int]:
    """The records that get a public block: every file that is its blocks planned with
    none (a quiet held-out .pem, or any .pem of a stream that draws no block value;
    corpus-v12 wrote 5,856 of 11,390 .pem files with comments only, which OpenSSL
    refuses). A held-out one tests a decoy the shown records must show kept: when none
    shows one, the first shown file of that type takes one too. Every other record is
    planned, and drawn, as before."""
    bare = [i for i, (t, chosen) in enumerate(plan) if t.holds_block and not chosen]
    if bare and bare[0] >= n_shown and not any(c.family is _PUBLIC_BLOCK for _, chosen in plan[:n_shown]
                                               for c in chosen):
        bare[:0] = [i for i in range(n_shown) if plan[i][0].holds_block][:1]
    return bare


def _weight(template: Template) -> int:
    return 1 if template.required else 3


def _weighted_sample(r: Rng, templates: tuple[Template, ...], k: int) -> list[Template]:
    """``k`` distinct templates, each drawn with its weight from those not yet drawn."""
    weighted = _WEIGHTED_TEMPLATES if templates is TEMPLATES else [t for t in templates for _ in range(_weight(t))]
    out: list[Template] = []
    for _ in range(k):
        pick = r.choice(weighted)
        out.append(pick)
        weighted = [t for t in weighted if t is not pick]  # every copy of it: it leaves the pool
    return out


# Each of the catalogue's templates as many times as its weight, in order (never mutated).
_WEIGHTED_TEMPLATES = [t for t in TEMPLATES for _ in range(_weight(t))]


@lru_cache(maxsize=64)
def _templates_for(context: str, kv: bool) -> list[Template]:
    """The catalogue's templates that host ``context`` (and key/value lines if ``kv``),
    in order (never mutated)."""
    return [t for t in TEMPLATES if context in t.contexts and (not kv or "kv" in t.contexts)]


def _pick_templates(r: Rng, n_shown: int, lv: Level = LEVEL_1) -> list[Template]:
    # At most one template per two shown records: each template then hosts at least two
    # shown records, so a family that fits only one template is still shown in two.
    # Files that exist for one kind of credential (a service-account key, a .pypirc) are
    # rarer than configs and logs, as in real repositories: drawn with a third of the weight.
    templates = _weighted_sample(r, TEMPLATES, min(r.between(3, 5), max(1, n_shown // 2)))
    if not any("kv" in t.contexts for t in templates):  # the stream's own formats live in kv lines
        templates[0] = r.choice(_templates_for("kv", False))
    # A level that draws scoped secrets, encoded credentials or key blocks has a file
    # where each can sit (never a level-1 draw). A file placed for one need is never
    # replaced for the next, nor the stream's last file with key-value lines.
    needs = [n for n, upper in (("scoped", lv.scoped_secrets[1]), ("k8s", lv.encodings[1]),
                                ("block", lv.multiline[1])) if upper]
    # A level that tests scoped secrets in other layouts (layout_coverage) asks for a
    # second file type they sit in (one to show a secret in, one to test it in), met
    # where the files the other needs keep leave room.
    if lv.scoped_secrets[1] and lv.layout_coverage[1]:
        needs.append("scoped")
    kept_for: dict[str, list[int]] = {}  # need -> the files kept for it
    for needed in needs:
        before = kept_for.setdefault(needed, [])
        held = [i for i, t in enumerate(templates) if needed in t.contexts and i not in before]
        if held:
            before.append(held[0])
            continue
        kept = {i for files in kept_for.values() for i in files}
        free = [i for i in range(len(templates) - 1, -1, -1) if i not in kept
                and ("kv" not in templates[i].contexts or sum("kv" in t.contexts for t in templates) > 1)]
        others = [t for t in _templates_for(needed, True) or _templates_for(needed, False)
                  if not any(t is templates[i] for i in before)]
        if not free or not others:  # too few shown records for a file per need: the need goes unmet
            continue
        templates[free[0]] = r.choice(others)
        before.append(free[0])
    return templates


def build_stream(seed: int, n_shown: int, n_eval: int, level: int = 1) -> Stream:
    if n_shown < 1 or n_eval < 1:
        raise ValueError("n_shown and n_eval must be at least 1")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, got {level!r}")
    lv = level_table(level)
    # Level 1 keeps the stream's original label; each higher level draws under its own.
    root = Rng(f"redaction-pressure/{STREAM_DRAWS}/stream" + ("" if level == 1 else f"/level-{level}"), seed)
    mix = root.fork("mix")
    templates = _pick_templates(mix, n_shown, lv)
    world = draw_world(root.fork("world"), shell=any("shell" in t.contexts for t in templates), lv=lv)
    secrets, decoys, plan, drawn = _plan(root.fork("plan"), n_shown, n_eval, templates, world)
    blockless = _public_blocks(plan, n_shown)
    if blockless:
        public = Instance(_PUBLIC_BLOCK, "", _PUBLIC_BLOCK.keys, _PUBLIC_BLOCK.contexts)
        for i in blockless:
            plan[i][1].append(public)
        decoys.append(public)
    order = {f.name: i for i, f in enumerate(SECRETS)}
    active = sorted({s.family.name: s.family for s in secrets}.values(),
                    key=lambda f: (0, order[f.name]) if f.name in order else (1, 0))
    oracle = _oracle_rules(active)
    oracles = _catalogue_oracles() + _oracles(world.secret_families)
    records: list[Record] = []
    shown_secrets: set[str] = set()
    # Encoded credentials whose second shown value must differ from the first just past
    # what all their values share (held-out records are drawn as before): the first shown
    # value of each, and those whose shown values already differ so.
    ends = {name: (lead, trail) for name, lead, trail in world.encoded_ends}
    firsts: dict[str, str] = {}
    spread_out: set[str] = set()
    # The shown records write each instance's keys in turn, so every key a held-out
    # record may use is shown (a value secret by its key alone is learnable only so).
    turns: dict[int, int] = {}
    for i, (template, instances) in enumerate(plan):
        r = root.fork(f"record/{i}")
        keys = None
        if i < n_shown:
            keys = {}
            for k, inst in enumerate(instances):
                turn = turns.get(id(inst), 0)
                keys[k], turns[id(inst)] = inst.keys[turn % len(inst.keys)], turn + 1
        for _ in range(MAX_REDRAWS):
            try:
                record = _render(template, instances, r, world, keys,
                                 {n: (*ends[n], firsts.get(n, "")) for n in ends if n not in spread_out}
                                 if i < n_shown and ends else None)
            except CannotPlace:
                continue
            if not _oracle_agrees(record.text, list(record.secrets), oracles):
                continue
            if i >= n_shown and not {s.family for s in record.secrets} <= shown_secrets:
                continue
            break
        else:  # pragma: no cover - would mean a family table bug
            # No seed in the message: private seeds must not surface before scoring.
            raise RuntimeError(f"record {i}: the oracle disagrees with the labels after {MAX_REDRAWS} draws")
        if i < n_shown:
            shown_secrets |= {s.family for s in record.secrets}
            for s in record.secrets:
                if s.family in ends and s.family not in spread_out:
                    if s.family in firsts:
                        spread_out.add(s.family)
                    else:
                        firsts[s.family] = record.text[s.start:s.end]
        records.append(record)
    return Stream(seed, tuple(t.name for t in templates), tuple(f.name for f in active),
                  tuple(sorted({d.family.name for d in decoys})), tuple(records[:n_shown]),
                  tuple(records[n_shown:]), world, oracle, *drawn, level)
