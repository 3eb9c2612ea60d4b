"""corpus-v2's open world (SPEC §3): what only the shown records tell, a learner that
reads nothing else, and constant replies that cannot do well."""

from __future__ import annotations

import ast
import json
import random
import re
import statistics
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

import regex

from redaction_pressure import policies, score_completion
from redaction_pressure.corpus import stream
from redaction_pressure.corpus.families import SECRETS
from redaction_pressure.corpus.policy import CATEGORIES
from redaction_pressure.corpus.stream import Record, Span
from redaction_pressure.scoring.answer import parse_reply
from tests.support import tasks as shared

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_adversary import V1_UNION  # noqa: E402

DEV = shared.dev()

_BLOCK = re.compile(r"### Record \d+ \((?P<template>[^)]*)\)\n```text\n(?P<text>.*?)\n```\n"
                    r"Secrets in this record:(?P<labels>(?: none)|(?:\n- [^\n]*)+)", re.S)
_LABEL = re.compile(r"^- (?P<family>\S+) \[(?P<start>\d+):(?P<end>\d+)\): ", re.M)


def shown_from_prompt(prompt: str) -> tuple[Record, ...]:
    """The shown records as a model reads them: the text of each block and its listed
    secret spans; no decoy labels (the prompt has none)."""
    records = []
    for m in _BLOCK.finditer(prompt):
        text = m.group("text") + "\n"
        spans = tuple(Span(int(x["start"]), int(x["end"]), x["family"]) for x in _LABEL.finditer(m.group("labels")))
        records.append(Record(text, m.group("template"), spans, ()))
    return tuple(records)


def prompt_only(task) -> SimpleNamespace:
    """A stand-in task holding only what the model sees: no held-out records, no
    family lists, no seed, identity or oracle."""
    return SimpleNamespace(system_prompt=task.system_prompt, prompt=task.prompt,
                           shown=shown_from_prompt(task.prompt))


def mean_reward(reply_of, tasks) -> float:
    return statistics.fmean(score_completion(t, reply_of(t)).reward for t in tasks)


class InduceIsBlind(unittest.TestCase):
    def test_reply_is_the_same_from_the_prompt_alone(self):
        for task in DEV[:24]:
            with self.subTest(task=task.id):
                stand_in = prompt_only(task)
                self.assertEqual(len(stand_in.shown), len(task.shown))
                self.assertEqual(policies.induce(stand_in), policies.induce(task))

    def test_reply_follows_the_labels(self):
        """The blindness check can fail: the reply does depend on what is shown."""
        changed = 0
        for task in DEV[:8]:
            stand_in = prompt_only(task)
            first = stand_in.shown[0]
            stand_in.shown = (Record(first.text, first.template, (), ()), *stand_in.shown[1:])
            changed += policies.induce(stand_in) != policies.induce(task)
        self.assertGreater(changed, 0)

    def test_the_learner_imports_no_generator_module(self):
        tree = ast.parse((ROOT / "redaction_pressure" / "policies" / "induce.py").read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        generator = {"_families", "_families_base", "_families_make", "_families_secrets", "_families_decoys",
                     "_house", "_policy", "_context", "_world", "_corpus", "_templates", "_names", "_rng", "_task"}
        self.assertFalse({m.lstrip(".").split(".")[-1] for m in imported} & generator, imported)


class Solvable(unittest.TestCase):
    def test_induce_scores_at_least_085_mean_on_dev(self):
        rewards = []
        for t in DEV:
            reply = policies.induce(t)
            rules, errors = parse_reply(reply)
            self.assertEqual((errors, len(rules) <= 24), ([], True), t.id)
            rewards.append(score_completion(t, reply).reward)
        self.assertGreaterEqual(statistics.fmean(rewards), 0.85)

    def test_oracle_is_exact_on_every_dev_task_within_24_rules(self):
        for t in DEV:
            self.assertLessEqual(len(t.oracle_rules), 24, t.id)
            self.assertEqual(score_completion(t, policies.oracle(t)).reward, 1.0, t.id)


class NotSolvableFromMemory(unittest.TestCase):
    """The constant replies a memoriser would try. The adversary's search over 200+
    rules is `benchmarks/bench_adversary.py`; these are its strongest starting points."""

    def test_known_constant_replies(self):
        every_oracle = [p for f in SECRETS for p in f.oracle]
        replies = {
            "delete everything": [r"[\s\S]+"],
            "corpus-v1's 22 oracle patterns (1.0 everywhere on corpus-v1)": list(V1_UNION),
            "first 24 catalogue oracle patterns": every_oracle[:24],
            "last 24 catalogue oracle patterns": every_oracle[-24:],
            "baseline": None,
        }
        for name, rules in replies.items():
            with self.subTest(reply=name):
                reply = (policies.baseline(DEV[0]) if rules is None else
                         json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in rules]}))
                self.assertLessEqual(mean_reward(lambda t, reply=reply: reply, DEV), 0.50)


class WhatThePromptSays(unittest.TestCase):
    def test_policy_in_words_formats_never(self):
        for task in DEV:
            with self.subTest(task=task.id):
                outside = _BLOCK.sub("", task.prompt) + task.system_prompt
                self.assertIn("This stream's labelling policy treats as secret:", outside)
                world = _world(task)
                for h in world.house:
                    for shape in (h.secret, *tuple(s for _, s, _ in h.lookalikes)):
                        self.assertNotIn(shape.prefix, outside)
                    self.assertNotIn(h.service, outside)
                for c in world.contexts:
                    self.assertNotIn(c.secret_name, outside)

    def test_policies_differ_between_tasks(self):
        secret_in = {c: 0 for c in CATEGORIES}
        for task in DEV:
            for c in _world(task).policy.secret:
                secret_in[c] += 1
        for c, n in secret_in.items():
            self.assertTrue(5 <= n <= 59, (c, n))


class Fairness(unittest.TestCase):
    def test_every_evaluated_family_is_shown_secrets_in_two_records(self):
        for task in DEV + [shared.task("train", i) for i in range(200)]:
            shown_secrets = [f for r in task.shown for f in {s.family for s in r.secrets}]
            shown_decoys = {d.family for r in task.shown for d in r.decoys}
            for r in task.heldout:
                for s in r.secrets:
                    self.assertGreaterEqual(shown_secrets.count(s.family), 2, (task.id, s.family))
                for d in r.decoys:
                    self.assertIn(d.family, shown_decoys, (task.id, d.family))
            self.assertGreaterEqual(sum(len(r.secrets) for r in task.heldout), 1)

    def test_every_held_out_length_of_a_one_length_family_is_shown(self):
        # House formats, key-scoped and section-scoped values: a reader may take their
        # length from the examples (corpus-v3 drew key-scoped lengths from a range, and in
        # 42 of 64 dev tasks a held-out value was longer or shorter than every shown one).
        for task in DEV + [shared.task("train", i) for i in range(200)]:
            self.assertEqual(shared.unshown_lengths(task), [], task.id)

    def test_house_lookalikes_differ_only_in_marker_or_length(self):
        for task in DEV:
            for h in _world(task).house:
                self.assertGreaterEqual(len(h.lookalikes), 2)
                for _, shape, _ in h.lookalikes:
                    same = (shape.alphabet, shape.checksum) == (h.secret.alphabet, h.secret.checksum)
                    self.assertTrue(same)
                    self.assertNotEqual((shape.prefix, shape.length), (h.secret.prefix, h.secret.length))


class OracleHints(unittest.TestCase):
    def test_hints_and_line_gates_never_skip_a_match(self):
        """The generator skips an oracle on texts without any of its hints, runs one
        with a line gate only on lines the gate matches, and tries an anchored one only
        right after a hint and separators. On every record of dev and 64 train tasks,
        of 32 dev tasks at levels 3 and 5 (scoped and context secrets), and on the
        families' own examples and near misses, every match of such an oracle lies in a
        text holding a hint, on one line that the gate matches, and (anchored) right
        after a hint and separators only; and the generator's marks with its shortcuts
        equal a plain scan's (so none of the shortcuts can hide a disagreement)."""
        checked = {"hints": 0, "line_gate": 0, "hints_anchor": 0, "shortcut_marks": 0}
        tasks = DEV + [shared.task("train", i * 7919) for i in range(64)]
        tasks += [shared.task("dev", i, level) for level in (3, 5) for i in range(0, 64, 2)]
        separators = "".join(sorted(stream.ANCHOR_SEPARATORS))
        for task in tasks:
            world = _world(task)
            families = [f for f in SECRETS + world.secret_families if f.hints or f.line_gate]
            texts = [r.text for r in task.shown + task.heldout]
            texts += [text for f in families for text, _ in f.examples] + [n for f in families for n in f.negatives]
            for f in families:
                for p in f.oracle:
                    oracle = stream._compiled(p, f.hints, f.line_gate, f.hints_anchor)
                    for text in texts:
                        lower = text.lower()
                        plain = bytearray(len(text))
                        for m in regex.finditer(p, text):
                            plain[m.start():m.end()] = b"\x01" * (m.end() - m.start())
                            if f.hints:
                                checked["hints"] += 1
                                self.assertTrue(any(h in lower for h in f.hints), (f.name, text))
                            if f.hints_anchor:
                                checked["hints_anchor"] += 1
                                before = lower[:m.start()].rstrip(separators)
                                self.assertTrue(any(before.endswith(h) for h in f.hints), (f.name, text, m.start()))
                            if f.line_gate:
                                checked["line_gate"] += 1
                                self.assertNotIn("\n", m.group(), f.name)
                                start = text.rfind("\n", 0, m.start()) + 1
                                end = text.find("\n", m.end())
                                line = text[start:len(text) if end < 0 else end]
                                self.assertTrue(regex.search(f.line_gate, line), (f.name, line))
                        if any(plain):
                            checked["shortcut_marks"] += 1
                        self.assertEqual(stream.oracle_marks(text, (oracle,)), plain, (f.name, text))
        for kind, count in checked.items():
            self.assertGreater(count, 200, kind)

    def test_start_rules_never_skip_a_match(self):
        """The catalogue's oracles are also tried only at the starts their parse allows
        (right after the literal their leading lookbehind ends with, then separators;
        after a character its last item takes; at a character their first item takes)
        and only in texts holding a literal every match opens with
        (`stream._start_rules`). On every record of dev, 32 train tasks and 32 dev tasks
        at levels 3 and 5, the families' examples and near misses, and each of those
        with a non-ASCII character in front (no lowercased offsets: the plain scan for
        a case-blind literal) or upper-cased, the marks with these rules equal a plain
        scan's, for each such oracle alone and for the catalogue at once."""
        catalogue = stream._catalogue_oracles()
        plain_oracles = stream._oracles(SECRETS)
        ruled = [(o, p) for o, p in zip(catalogue, plain_oracles, strict=True) if o[7:] != (None,) * 3
                 or o[3] != p[3]]
        kinds = {"anchor": 0, "anchor_folded": 0, "before_first": 0, "openers": 0}
        tasks = DEV[::2] + [shared.task("train", i * 7919) for i in range(32)]
        tasks += [shared.task("dev", i, level) for level in (3, 5) for i in range(0, 64, 4)]
        texts = [r.text for task in tasks for r in task.shown + task.heldout]
        texts += [t for f in SECRETS for t, _ in f.examples] + [n for f in SECRETS for n in f.negatives]
        # "\u0130" lowercases to two characters: offsets in ``text.lower()`` would shift
        texts += ["\u00e9" + t for t in texts[::4]] + ["\u0130" + t for t in texts[2::4]]
        texts += [t.upper() for t in texts[1::4]]
        for oracle, unruled in ruled:
            pattern = oracle[0]
            for text in texts:
                if oracle[1] not in text:
                    continue
                plain = bytearray(len(text))
                for m in pattern.finditer(text):
                    plain[m.start():m.end()] = b"\x01" * (m.end() - m.start())
                self.assertEqual(stream.oracle_marks(text, (oracle,)), plain, (pattern.pattern, text))
                if any(plain):
                    if oracle[7] is not None:
                        kinds["anchor_folded" if oracle[7][1] else "anchor"] += 1
                    if oracle[6] and (oracle[8] or oracle[9]):
                        kinds["before_first"] += 1
                    if oracle[3] != unruled[3]:
                        kinds["openers"] += 1
        for text in texts[::5]:
            plain = bytearray(len(text))
            for oracle in plain_oracles:
                for m in oracle[0].finditer(text):
                    plain[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            self.assertEqual(stream.oracle_marks(text, catalogue), plain, text)
        for kind, count in kinds.items():
            self.assertGreater(count, 20, kind)

    def test_start_rules_read_off_the_parse(self):
        """What `_start_rules` reads: the literal a leading lookbehind ends with before
        only separators (exact or case-blind), the characters before and at a match's
        start, the literals a match opens with; nothing where the pattern does not say
        (a class like \\s in the tail, a negated or case-blind set, an optional item, a
        branch, a reversed pattern). On texts made of the pieces these patterns look
        for, the marks with the rules equal a plain scan's."""
        letters = frozenset("abcdefghijklmnopqrstuvwxyz")
        cases = {
            r"(?<=\bBasic )[a-z]{3,}": (("Basic ", False), frozenset(" "), letters, ()),
            r"(?<=(?<![a-z])(?i:key)[\"']?[ \t]*[:=][ \t]*[\"']?)[a-z]+": (("key", True), None, letters, ()),
            r"(?<=[=:])(?<=tok(?:en)?\s*[:=])[a-z]+": (None, frozenset("=:"), letters, ()),
            r"(?<=key\s)[a-z]": (None, None, letters, ()),
            r"(?<=key:(?=\S))[^a-z]+": (("key:", False), frozenset(":"), None, ()),
            r"(?<=key|pwd)=[a-z]": (None, None, frozenset("="), ("=",)),
            r"(?<=key[a-z]?)[a-z]": (None, None, letters, ()),
            r"(?i:ab)x": (None, None, None, ()),
            r"(?<=(?i:k\u00e9y))[a-z]+": (None, None, letters, ()),
            r"(?<=(?i:a)b=)[a-z]+": (("b=", False), frozenset("="), letters, ()),
            r"\bA(?:KIA|SIA|3T[A-Z0-9])[A-Z0-9]{4}": (None, None, None, ("AKIA", "ASIA", "A3T")),
            r"\b[rs]k_(?:live|test)_[a-z]+": (None, None, None, ("rk_live_", "rk_test_", "sk_live_", "sk_test_")),
            r"xox(?:b|e\.xoxb)-[0-9]": (None, None, frozenset("x"), ("xoxb-",)),
            r"[a-z]+@example": (None, None, letters, ()),
            r"(?r)(?<=key=)[a-z]+": (None, None, None, ()),
        }
        for pattern, want in cases.items():
            self.assertEqual(stream._start_rules(pattern), want, pattern)
        pieces = ["key", "KEY", "Key", "tok", "token", "Basic ", "AKIA", "A3TX", "sk_live_", "rk_test_", "xoxb-",
                  "xoxe.xoxb-", " ", "  ", "=", ":", "\"", "'", "\t", "\n", "ab", "zz", "x", "1", "\u00e9", "\u0130",
                  "@example", "pwd", "K\u00e9y", "Ab"]
        rng = random.Random(7)
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(1500)]
        matched = {}
        for pattern in cases:
            oracle = stream._compiled(pattern, (), "", False, True)
            compiled = oracle[0]
            matched[pattern] = 0
            for text in texts:
                plain = bytearray(len(text))
                for m in compiled.finditer(text):
                    plain[m.start():m.end()] = b"\x01" * (m.end() - m.start())
                matched[pattern] += any(plain)
                self.assertEqual(stream.oracle_marks(text, (oracle,)), plain, (pattern, text))
        self.assertGreater(min(matched.values()), 8, matched)
        hinted = stream._compiled(r"(?<=[=:])(?<=(?i:pass(?:word)?|key)[ \t]*[:=])[a-z0-9]+",
                                  ("pass", "password", "key"), "", True, True)
        self.assertEqual((hinted[8], hinted[9]), (frozenset("=:"), letters | frozenset("0123456789")))
        found = 0
        for text in texts:
            text = text.replace("tok", "pass").replace("ab", "PassWord")
            plain = bytearray(len(text))
            for m in hinted[0].finditer(text):
                plain[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            found += any(plain)
            self.assertEqual(stream.oracle_marks(text, (hinted,)), plain, text)
        self.assertGreater(found, 20)

    def test_anchor_starts_finds_each_hint_once_and_filters(self):
        """A hint another extends is searched for once; ``before`` and ``first`` keep
        the starts after and at a character they hold."""
        text = 'password = "v"; pass: x; passwd=y'
        lower = text.lower()
        hints = ("pass", "password", "passwd")
        everything = sorted({q for h in hints for at in range(len(lower)) if lower.startswith(h, at)
                             for q in range(at + len(h), len(text) + 1)
                             if all(c in stream.ANCHOR_SEPARATORS for c in text[at + len(h):q])})
        self.assertEqual(stream.anchor_starts(text, lower, hints), everything)
        self.assertEqual(stream._hint_roots(hints), (("pass", ("pass", "password", "passwd")),))
        kept = stream.anchor_starts(text, lower, hints, frozenset("=:\" "), frozenset("vxy"))
        self.assertEqual([text[q] for q in kept], ["v", "x", "y"])

    def test_anchored_spans_are_finditers(self):
        """Trying a pattern at each anchor gives finditer's spans, overlapping and
        adjacent candidates included, and declines a pattern that can match empty."""
        text = 'ab_key = "v1v2" ab_key=v3 key:  v4 KEY="v5"'
        pattern = regex.compile(r"(?<=(?i:key)[\"']?\s*[:=]\s*[\"']?)[a-z0-9]+")
        starts = stream.anchor_starts(text, text.lower(), ("key",))
        want = [m.span() for m in pattern.finditer(text)]
        self.assertEqual(len(want), 4)
        self.assertEqual(stream._anchored_spans(pattern, text, starts), want)
        self.assertIsNone(stream._anchored_spans(regex.compile(r"(?<=key)[a-z0-9]*"), "key=1", [3]))


def _world(task):
    return shared.stream_of(task).world  # the stream the shared task was built from


if __name__ == "__main__":
    unittest.main()
