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

import string
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import regex

from ..build.versions import CORPUS_VERSION
from ..scoring.pattern_guard import compile_bounded
from .families import DECOYS, SECRETS, Family, Fragment
from .levels import LEVELS
from .rng import Rng
from .templates import FIELDS, TEMPLATES, Template
from .world import World, draw_world

MAX_REDRAWS = 50


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    family: str
    group: str = ""  # the family's summary class (Family.summary_group); "" = the family itself

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "family": self.family}


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


@dataclass(frozen=True)
class Instance:
    """A family as one stream uses it: one variant and one or two of its keys."""
    family: Family
    variant: str
    keys: tuple[str, ...]


_FORMATTER = string.Formatter()
Labelled = list[tuple[int, int, Family]]


@cache
def _parsed(fmt: str) -> tuple[tuple[str, str | None], ...]:
    return tuple((literal, name) for literal, name, _, _ in _FORMATTER.parse(fmt))


def _fill(fmt: str, r: Rng, world: World, **fixed: str) -> tuple[str, Labelled]:
    """Fills a template line; a field that draws a policy category (``{host}``,
    ``{ip}``) comes back as a labelled span, secret or decoy as the policy says."""
    out: list[str] = []
    spans: Labelled = []
    drawn: dict[str, tuple[str, Family | None]] = {}
    pos = 0
    for literal, name in _parsed(fmt):
        out.append(literal)
        pos += len(literal)
        if name is None:
            continue
        if name in fixed:
            value, family = fixed[name], None
        elif name in drawn:
            value, family = drawn[name]
        else:
            labelled = world.field(name, r)
            value, family = labelled if labelled else (FIELDS[name](r), None)
            drawn[name] = (value, family)
        if family is not None:
            spans.append((pos, pos + len(value), family))
        out.append(value)
        pos += len(value)
    return "".join(out), spans


# (compiled pattern, literal it requires, lowercase hints one of which it requires,
# compiled line gate or None)
Oracle = tuple["regex.Pattern[str]", str, tuple[str, ...], "regex.Pattern[str] | None"]


@lru_cache(maxsize=4096)
def _compiled(pattern: str, hints: tuple[str, ...], line_gate: str) -> Oracle:
    """Oracle patterns recur across streams (policy categories, every static family)."""
    compiled, _, required = compile_bounded(pattern)
    return compiled, required, hints, (compile_bounded(line_gate)[0] if line_gate else None)


def _oracles(families: Iterable[Family]) -> tuple[Oracle, ...]:
    return tuple(_compiled(p, f.hints, f.line_gate) for f in families for p in f.oracle)


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


def _oracle_agrees(text: str, secrets: list[Span], oracles: tuple[Oracle, ...]) -> bool:
    marked = bytearray(len(text))
    lower = None
    for pattern, required, hints, gate in oracles:
        if required not in text:  # "" is in every text
            continue
        if hints:
            lower = text.lower() if lower is None else lower
            if not any(h in lower for h in hints):
                continue
        windows = _gated_lines(gate, text) if gate is not None else [(0, len(text))]
        for start, end in windows:
            for m in pattern.finditer(text, start, end):
                marked[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    want = bytearray(len(text))
    for s in secrets:
        want[s.start:s.end] = b"\x01" * (s.end - s.start)
    return marked == want


def _place(template: Template, inst: Instance, frag: Fragment, r: Rng, world: World) -> tuple[str, int, Labelled]:
    """Renders one fragment as a line of ``template``; returns the line, the offset of
    the fragment inside it, and the category spans its surroundings drew."""
    family = inst.family
    key = frag.key or r.choice(inst.keys)
    key = key.upper() if template.key_case == "upper" else key.lower()
    if "block" in family.contexts:
        fmt, value = template.block, frag.text.replace("\n", "\n" + template.block_indent)
    elif "shell" in family.contexts:
        fmt, value = template.shell, frag.text
    else:
        options = [f for f in template.kv if " " not in frag.text or ('"{v}"' in f or "'{v}'" in f)]
        fmt, value = r.choice(options), frag.text
    assert fmt is not None
    head, tail = fmt.split("{v}")
    head, head_spans = _fill(head, r, world, k=key)
    tail, tail_spans = _fill(tail, r, world, k=key)
    shift = len(head) + len(value)
    return (head + value + tail, len(head),
            head_spans + [(s + shift, e + shift, f) for s, e, f in tail_spans])


def _indented_spans(frag: Fragment, indent: str, family: Family) -> tuple[tuple[int, int], ...]:
    if not indent or "block" not in family.contexts:
        return frag.spans
    # Block fragments are labelled whole, so indentation only stretches the one span.
    grown = len(frag.text) + frag.text.count("\n") * len(indent)
    return tuple((0, grown) for _ in frag.spans)


def _render(template: Template, instances: list[Instance], r: Rng, world: World) -> Record:
    lines: list[tuple[str, Labelled]] = []
    for inst in instances:
        frag = inst.family.make(r, inst.variant)
        line, offset, around = _place(template, inst, frag, r, world)
        spans = _indented_spans(frag, template.block_indent, inst.family)
        lines.append((line, [(offset + s, offset + e, inst.family) for s, e in spans] + around))
    for _ in range(r.between(1, 4)):
        if template.fillers:
            lines.append(_fill(r.choice(template.fillers), r, world))
    body = r.shuffled(lines)
    head = [_fill(h, r, world) for h in template.header]
    foot = [_fill(f, r, world) for f in template.footer]
    text_parts: list[str] = []
    secrets: list[Span] = []
    decoys: list[Span] = []
    pos = 0
    for line, line_spans in head + body + foot:
        for s, e, fam in sorted(line_spans, key=lambda x: x[0]):
            (secrets if fam.kind == "secret" else decoys).append(Span(pos + s, pos + e, fam.name,
                                                                         fam.summary_group))
        text_parts.append(line)
        pos += len(line) + 1
    return Record("\n".join(text_parts) + "\n", template.name, tuple(secrets), tuple(decoys))


def _fits(template: Template, inst: Instance) -> bool:
    return bool(template.contexts & inst.family.contexts)


def _instances(families: list[Family], r: Rng) -> list[Instance]:
    return [Instance(f, r.choice(f.variants), tuple(r.sample(f.keys, min(len(f.keys), r.between(1, 2)))))
            for f in families]


# How much likelier an evaluated record is to carry one of the stream's own families
# than a static one: most evaluated secrets must need the shown records to be found.
_OWN_WEIGHT = 3


def _weighted(pool: list[Instance], own: set[str]) -> list[Instance]:
    return [i for i in pool for _ in range(_OWN_WEIGHT if i.family.name in own else 1)]


def _plan(r: Rng, n_shown: int, n_eval: int, templates: list[Template], world: World
          ) -> tuple[list[Instance], list[Instance], list[tuple[Template, list[Instance]]]]:
    shown_templates = [templates[i % len(templates)] for i in range(n_shown)]
    contexts = frozenset().union(*(t.contexts for t in templates))
    static_s = r.sample([f for f in SECRETS if f.contexts & contexts], r.between(2, 4))
    static_d = r.sample([f for f in DECOYS if f.contexts & contexts], r.between(2, 4))
    own_s = [f for f in world.secret_families if f.contexts & contexts]
    own_d = [f for f in world.decoy_families if f.contexts & contexts]
    secrets = _instances(static_s + own_s, r)
    decoys = _instances(static_d + own_d, r)
    own = {f.name for f in own_s + own_d}
    plan: list[tuple[Template, list[Instance]]] = []
    for i in range(n_shown + n_eval):
        if i < n_shown:
            plan.append((shown_templates[i], []))
            continue
        if i == n_shown:  # every task has at least one evaluated secret of the stream's own
            t = r.choice([t for t in templates if any(_fits(t, s) and s.family.name in own for s in secrets)])
            chosen = [r.choice([s for s in secrets if _fits(t, s) and s.family.name in own])]
        else:
            t, chosen = r.choice(templates), []
        pool_s = _weighted([s for s in secrets if _fits(t, s)], own)
        pool_d = _weighted([d for d in decoys if _fits(t, d)], own)
        # Decoys outnumber secrets: a rule set that removes every candidate must pay
        # for it in precision.
        if pool_s:
            chosen += [r.choice(pool_s) for _ in range(r.between(1, 2))]
        if pool_d:
            chosen += [r.choice(pool_d) for _ in range(r.between(3, 5))]
        plan.append((t, chosen))
    # Fairness: every secret is shown at least twice (so a shape can be read off two
    # examples), every decoy at least once.
    for inst, times in [(s, 2) for s in secrets] + [(d, 1) for d in decoys]:
        slots = [i for i in range(n_shown) if _fits(plan[i][0], inst)]
        for i in r.sample(slots, min(times, len(slots))) if len(slots) >= times else [r.choice(slots)] * times:
            plan[i][1].append(inst)
    return secrets, decoys, plan


def _pick_templates(r: Rng, n_shown: int) -> list[Template]:
    # At most one template per two shown records: each template then hosts at least two
    # shown records, so a family that fits only one template is still shown in two.
    templates = r.sample(TEMPLATES, min(r.between(3, 5), max(1, n_shown // 2)))
    if not any("kv" in t.contexts for t in templates):  # the stream's own formats live in kv lines
        templates[0] = r.choice([t for t in TEMPLATES if "kv" in t.contexts])
    return templates


def build_stream(seed: int, n_shown: int, n_eval: int, level: int = 1) -> Stream:
    if n_shown < 1 or n_eval < 1:
        raise ValueError("n_shown and n_eval must be at least 1")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, got {level!r}")
    root = Rng(f"redaction-pressure/{CORPUS_VERSION}/stream", seed)
    mix = root.fork("mix")
    templates = _pick_templates(mix, n_shown)
    world = draw_world(root.fork("world"), shell=any("shell" in t.contexts for t in templates))
    secrets, decoys, plan = _plan(root.fork("plan"), n_shown, n_eval, templates, world)
    order = {f.name: i for i, f in enumerate(SECRETS)}
    active = sorted({s.family.name: s.family for s in secrets}.values(),
                    key=lambda f: (0, order[f.name]) if f.name in order else (1, 0))
    oracle = tuple(p for f in active for p in f.oracle)
    oracles = _oracles(SECRETS) + _oracles(world.secret_families)
    records: list[Record] = []
    shown_secrets: set[str] = set()
    for i, (template, instances) in enumerate(plan):
        r = root.fork(f"record/{i}")
        for _ in range(MAX_REDRAWS):
            record = _render(template, instances, r, world)
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
        records.append(record)
    return Stream(seed, tuple(t.name for t in templates), tuple(f.name for f in active),
                  tuple(sorted({d.family.name for d in decoys})), tuple(records[:n_shown]),
                  tuple(records[n_shown:]), world, oracle)
