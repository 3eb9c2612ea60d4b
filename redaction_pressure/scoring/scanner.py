"""Applies rules in order to records, tracking where every output character came from.

Each record's current text is described by segments ``(source_start, length)`` in
output order, ``source_start = -1`` for inserted replacement text. A rule's matches
are replaced by literal text; the source characters under a match are what that
match removed. So "which source characters are gone" stays exact even when a later
rule matches an earlier marker or a zero-width match inserts one, and the work per
rule is proportional to its matches, not to the length of the record.

All regex calls of an episode share one time budget: each call gets the remaining
budget as its `timeout`. (No ``concurrent=True``: a scan worker has one thread, so
releasing the GIL per call buys nothing and costs ~3% of matching time.) `regex`
measures that timeout in process CPU time, so the deadline is kept on the same
clock (`time.process_time`) and scans run one at a time per process (`scan_pool`):
the budget is then the CPU time of this episode, not of whatever else runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

import regex

from .answer import RedactionError, rule_error

DEFAULT_BUDGET_S = 2.0
MAX_MATCHES = 10_000  # per episode, zero-width matches included


@dataclass(frozen=True)
class CompiledRule:
    pattern: regex.Pattern[str]
    replacement: str
    required: str = ""  # a literal every match needs; texts without it are skipped
    folded: str = ""  # a literal every match needs in an ASCII text lowercased; those without it are skipped
    clauses: tuple[tuple[str, ...], ...] = ()  # literals one of each a match needs; texts without are skipped


@dataclass
class ScanResult:
    removed: list[bytearray]  # per record: 1 where the source character is gone
    outputs: list[str]
    matches: int
    errors: list[RedactionError]


_NOT_ASCII = "\x80"  # (by identity) a text that is not ASCII, where case-folded literals say nothing


class _Record:
    """One record's current text, its segments, and the source intervals removed so far."""

    __slots__ = ("_lowered", "removed", "segments", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.segments: list[tuple[int, int]] = [(0, len(text))] if text else []
        self.removed: list[tuple[int, int]] = []
        self._lowered: str | None = None  # the text lowercased when ASCII, else _NOT_ASCII; None: not read yet

    def lacks(self, folded: str) -> bool:
        """Whether the text is ASCII and lacks ``folded`` (lowercase) ignoring case: then
        no match of a rule that needs it can be in it (`pattern_guard._literal_runs`, folded)."""
        if self._lowered is None:
            self._lowered = self.text.lower() if self.text.isascii() else _NOT_ASCII
        return self._lowered is not _NOT_ASCII and folded not in self._lowered

    def splice(self, spans: list[tuple[int, int]], repl: str) -> None:
        old: list[tuple[int, int]] = self.segments
        new: list[tuple[int, int]] = []
        si = off = cursor = 0

        def take(upto: int, keep: bool) -> None:
            nonlocal si, off, cursor
            while cursor < upto:
                src, length = old[si]
                n = min(length - off, upto - cursor)
                start = src + off if src >= 0 else -1
                if keep:
                    if new and start >= 0 and new[-1][0] >= 0 and new[-1][0] + new[-1][1] == start:
                        new[-1] = (new[-1][0], new[-1][1] + n)
                    else:
                        new.append((start, n))
                elif start >= 0:
                    self.removed.append((start, start + n))
                off += n
                cursor += n
                if off == length:
                    si, off = si + 1, 0

        pieces: list[str] = []
        prev = 0
        for start, end in spans:
            take(start, True)
            take(end, False)
            if repl:
                new.append((-1, len(repl)))
            pieces += (self.text[prev:start], repl)
            prev = end
        take(len(self.text), True)
        pieces.append(self.text[prev:])
        self.text, self.segments = "".join(pieces), new
        self._lowered = None


def scan(rules: list[CompiledRule], texts: list[str], deadline: float,
         clock: Callable[[], float] = time.process_time, budget_s: float | None = None) -> ScanResult:
    """Runs every rule over every text before ``deadline`` (a ``clock`` value);
    ``budget_s``, the episode's whole budget, is only quoted in messages."""
    budget = f"{budget_s:g}-second " if budget_s is not None else ""
    records = [_Record(t) for t in texts]
    matches = 0
    errors: list[RedactionError] = []
    for i, rule in enumerate(rules):
        finditer, repl, required, folded = rule.pattern.finditer, rule.replacement, rule.required, rule.folded
        clauses = rule.clauses
        backwards = bool(rule.pattern.flags & regex.REVERSE)  # (?r) yields matches right to left
        for record in records:
            # Texts a match cannot be in: they lack a literal every match needs.
            if (required and required not in record.text) or (folded and record.lacks(folded)):
                continue
            remaining = deadline - clock()
            if remaining <= 0:
                errors.append(rule_error("budget_exhausted", i, f"the episode's {budget}regex time budget (CPU time) "
                                         "ran out before this rule had run on every record"))
                break
            # A branch's literals are searched one by one, up to 4,096 characters of them a
            # rule, in text that replacements can grow to 100 KB: after the deadline check,
            # so rules that skip every record cannot spend CPU past the budget unchecked.
            if clauses and not all(any(map(record.text.__contains__, c)) for c in clauses):
                continue
            try:
                # The timeout bounds the whole iteration, not each match; islice stops a
                # stream of matches at the episode's cap (zero-width ones included).
                spans = [m.span() for m in islice(finditer(record.text, timeout=remaining),
                                                  MAX_MATCHES - matches + 1)]
            except TimeoutError:
                errors.append(rule_error("timeout", i, f"timed out after {remaining:.3f} s, the rest of the "
                                         f"episode's {budget}regex time budget (CPU time)"))
                break
            except Exception as exc:  # noqa: BLE001 - the pattern is hostile input; fail the episode, not the process
                errors.append(rule_error("invalid_regex", i, f"failed while matching ({type(exc).__name__})"))
                break
            if spans:
                if backwards:
                    spans.reverse()
                matches += len(spans)
                if matches > MAX_MATCHES:
                    errors.append(rule_error("excessive_matches", i, f"more than {MAX_MATCHES:,} matches in the "
                                             "episode, counting every rule's (zero-width matches count)"))
                    break
                if any(start > end for start, end in spans):
                    errors.append(rule_error("invalid_regex", i, "a match ends before it starts"))
                    break
                record.splice(spans, repl)
        if errors:
            break
    removed = []
    for text, record in zip(texts, records, strict=False):
        gone = bytearray(len(text))
        for start, end in record.removed:
            gone[start:end] = b"\x01" * (end - start)
        removed.append(gone)
    return ScanResult(removed, [r.text for r in records], matches, errors)
