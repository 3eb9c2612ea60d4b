"""The corpus-v1 record stream: one deterministic stream of labelled records per seed.

A task's stream is drawn in three steps, each from its own forked random stream so
that they do not shift one another: the mix (templates, secret families, decoy
families), the plan (which families each record carries, with every active family
placed in at least one shown record and at least one secret in the evaluated
records), and the records themselves. Each rendered record is checked against the
oracle regexes of *all* secret families; a record on which they would remove anything
but its labelled secrets is drawn again, so the labels and the oracle cannot disagree.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache

from ._families import DECOYS, SECRETS, Family, Fragment
from ._pattern_guard import Compiled, compile_bounded
from ._rng import Rng
from ._templates import FIELDS, TEMPLATES, Template
from ._versions import CORPUS_VERSION

MAX_REDRAWS = 50


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    family: str

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "family": self.family}


@dataclass(frozen=True)
class Record:
    text: str
    template: str
    secrets: tuple[Span, ...]
    decoys: tuple[Span, ...]

    def as_dict(self) -> dict:
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


_FORMATTER = string.Formatter()


@lru_cache(maxsize=None)
def _field_names(fmt: str) -> tuple[str, ...]:
    return tuple(sorted({name for _, name, _, _ in _FORMATTER.parse(fmt) if name and name not in ("k", "v")}))


def _fill(fmt: str, r: Rng, **fixed: str) -> str:
    fields = {name: FIELDS[name](r) for name in _field_names(fmt)}
    fields.update(fixed)
    return fmt.format_map(fields)


@lru_cache(maxsize=1)
def _oracle_patterns() -> tuple[Compiled, ...]:
    return tuple(compile_bounded(p) for f in SECRETS for p in f.oracle)


def _oracle_agrees(text: str, secrets: list[Span]) -> bool:
    marked = bytearray(len(text))
    for pattern, _, required in _oracle_patterns():
        if required not in text:  # "" is in every text
            continue
        for m in pattern.finditer(text):
            marked[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    want = bytearray(len(text))
    for s in secrets:
        want[s.start:s.end] = b"\x01" * (s.end - s.start)
    return marked == want


def _place(template: Template, family: Family, frag: Fragment, r: Rng) -> tuple[str, int]:
    """Renders one fragment as a line of ``template``; returns the line and the offset
    of the fragment inside it."""
    key = frag.key or r.choice(family.keys)
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
    head = _fill(head, r, k=key)
    return head + value + _fill(tail, r, k=key), len(head)


def _indented_spans(frag: Fragment, indent: str, family: Family) -> tuple[tuple[int, int], ...]:
    if not indent or "block" not in family.contexts:
        return frag.spans
    # Block fragments are labelled whole, so indentation only stretches the one span.
    grown = len(frag.text) + frag.text.count("\n") * len(indent)
    return tuple((0, grown) for _ in frag.spans)


def _render(template: Template, families: list[Family], r: Rng) -> Record:
    lines: list[tuple[str, list[tuple[int, int, Family]]]] = []
    for family in families:
        frag = family.make(r, "")
        line, offset = _place(template, family, frag, r)
        spans = _indented_spans(frag, template.block_indent, family)
        lines.append((line, [(offset + s, offset + e, family) for s, e in spans]))
    for _ in range(r.between(1, 4)):
        if template.fillers:
            lines.append((_fill(r.choice(template.fillers), r), []))
    body = r.shuffled(lines)
    head = [(_fill(h, r), []) for h in template.header]
    foot = [(_fill(f, r), []) for f in template.footer]
    text_parts: list[str] = []
    secrets: list[Span] = []
    decoys: list[Span] = []
    pos = 0
    for line, spans in head + body + foot:
        for s, e, fam in spans:
            (secrets if fam.kind == "secret" else decoys).append(Span(pos + s, pos + e, fam.name))
        text_parts.append(line)
        pos += len(line) + 1
    return Record("\n".join(text_parts) + "\n", template.name, tuple(secrets), tuple(decoys))


def _fits(template: Template, family: Family) -> bool:
    return bool(template.contexts & family.contexts)


def _plan(r: Rng, n_shown: int, n_eval: int) -> tuple[list[Template], list[Family], list[Family], list[tuple[Template, list[Family]]]]:
    templates = r.sample(TEMPLATES, min(r.between(3, 5), n_shown))
    shown_templates = [templates[i % len(templates)] for i in range(n_shown)]
    contexts = frozenset().union(*(t.contexts for t in templates))
    secrets = r.sample([f for f in SECRETS if f.contexts & contexts], r.between(3, 6))
    decoys = r.sample([f for f in DECOYS if f.contexts & contexts], r.between(3, 6))
    plan: list[tuple[Template, list[Family]]] = []
    for i in range(n_shown + n_eval):
        if i < n_shown:
            t, chosen = shown_templates[i], []
        elif i == n_shown:  # every task has at least one evaluated secret
            t = r.choice([t for t in templates if any(_fits(t, f) for f in secrets)])
            chosen = [r.choice([f for f in secrets if _fits(t, f)])]
        else:
            t, chosen = r.choice(templates), []
        pool_s = [f for f in secrets if _fits(t, f)]
        pool_d = [f for f in decoys if _fits(t, f)]
        if pool_s:
            chosen += [r.choice(pool_s) for _ in range(r.below(3))]
        if pool_d:
            chosen += [r.choice(pool_d) for _ in range(r.below(4))]
        plan.append((t, chosen))
    for family in secrets + decoys:  # fairness: each active family is shown at least once
        plan[r.choice([i for i in range(n_shown) if _fits(plan[i][0], family)])][1].append(family)
    return templates, secrets, decoys, plan


def build_stream(seed: int, n_shown: int, n_eval: int) -> Stream:
    if n_shown < 1 or n_eval < 1:
        raise ValueError("n_shown and n_eval must be at least 1")
    root = Rng(f"redaction-pressure/{CORPUS_VERSION}/stream", seed)
    templates, secrets, decoys, plan = _plan(root.fork("plan"), n_shown, n_eval)
    records: list[Record] = []
    for i, (template, families) in enumerate(plan):
        r = root.fork(f"record/{i}")
        for _ in range(MAX_REDRAWS):
            record = _render(template, families, r)
            if _oracle_agrees(record.text, list(record.secrets)):
                break
        else:  # pragma: no cover - would mean a family table bug
            # No seed in the message: private seeds must not surface before scoring.
            raise RuntimeError(f"record {i}: the oracle disagrees with the labels after {MAX_REDRAWS} draws")
        records.append(record)
    return Stream(seed, tuple(t.name for t in templates), tuple(f.name for f in secrets),
                  tuple(f.name for f in decoys), tuple(records[:n_shown]), tuple(records[n_shown:]))
