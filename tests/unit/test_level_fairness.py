"""Difficulty levels (SPEC §3), the expensive part: every level fair and exactly
solvable on dev 0..63 and 200 train tasks, and the ladder (what memory earns falls at
every step up) on the 64 dev tasks. Its own module so the test command can deal it to
a shard apart from the rest of the level tests."""

from __future__ import annotations

import itertools
import json
import statistics
import unittest
from collections import Counter
from dataclasses import replace
from types import SimpleNamespace
from unittest import mock

import regex

import redaction_pressure.corpus.stream as stream_module
from redaction_pressure import load_task, policies
from redaction_pressure.contract import LEVELS
from redaction_pressure.corpus.blocks import NEUTRAL_LABELS
from redaction_pressure.corpus.families.base import Fragment
from redaction_pressure.corpus.families.decoys import DECOYS, SHAPES
from redaction_pressure.corpus.levels import level
from redaction_pressure.corpus.rng import Rng
from redaction_pressure.corpus.scoped import NEUTRAL_SECTIONS, OTHER_SECTIONS, SECRET_SECTIONS
from redaction_pressure.corpus.templates import _SECTIONS as TEMPLATE_SECTIONS
from redaction_pressure.scoring import pattern_guard as guard
from redaction_pressure.scoring.answer import parse_reply
from redaction_pressure.scoring.score import score_trusted
from tests.support import tasks as shared
from tests.support.util import common_end, common_start, section_of

HIGHER = tuple(lv for lv in LEVELS if lv > 1)


def _drawn(family, variant: str, draws: int = 64) -> Counter[tuple[str, str | None]]:
    """How often each (value, key) comes out of ``draws`` draws of one variant."""
    made = (family.make(Rng(f"fairness-{family.name}-{variant}", i), variant) for i in range(draws))
    return Counter((m.text, m.key) for m in made)


# Decoy families whose every variant is one value, under one key, that a vendor
# published (a sample key, a test fixture): read from the generators, so a new one is
# checked without being listed.
DOCUMENTED_VALUES = frozenset(f.name for f in DECOYS if f.variants and all(len(_drawn(f, v)) == 1 for v in f.variants))
# Families whose draws repeat fixed values, recognisable as what they are without a
# shown example (a template word, a mask, a setting, a realm, a Secret's configuration
# under its own key; vendor placeholders have checks of their own): any other family
# with a value that recurs must be a documented one.
SELF_EVIDENT = frozenset({"placeholder_value", "already_masked", "keyword_setting", "basic_realm_challenge",
                          "format_valid_placeholder", "k8s_config_data"})
RECURS = 8  # draws of 64 that one (value, key) makes a fixed value
TRAIN_PER_LEVEL = 200
# The decoy groups that stand beside a secret as its look-alike, and how a look-alike's
# family name leads to the secret it contrasts with (same service, same key, or the
# policy category it excepts).
_EXCEPTED = {"support_email": "email_address", "egress_ip": "client_ip", "test_host": "internal_hostname",
             "support_line": "phone_number", "test_account": "customer_id"}


_VENDOR_SHAPES = {vendor: [regex.compile("".join("." if c == "#" else regex.escape(c) for c in shape))
                            for shape in shapes] for vendor, shapes in SHAPES.items()}


def _placeholder_formats(family: str, group: str, text: str) -> set[str]:
    """The secret families a placeholder decoy is a placeholder of (empty for any other
    decoy): a house placeholder's service credential, or every vendor whose shape fits."""
    if group == "house_placeholder":
        return {family.rsplit("_placeholder_", 1)[0] + "_api_key"}
    if family == "format_valid_placeholder":
        return {v for v, shapes in _VENDOR_SHAPES.items() if any(p.fullmatch(text) for p in shapes)}
    return set()


def placeholder_problems(task) -> list[str]:
    """From level 3, every held-out placeholder (house or vendor) is shown, kept, in a
    record that also labels a real secret of its format: the contrasting pair. Each
    placeholder is drawn once per stream and format, so the same text must be shown;
    a fortiori every placeholder kind (fill, repeated character, run, mixed-case run)."""
    paired: set[str] = set()
    for r in task.shown:
        labelled = {s.family for s in r.secrets}
        for d in r.decoys:
            text = r.text[d.start:d.end]
            if _placeholder_formats(d.family, d.group, text) & labelled:
                paired.add(text)
    problems = []
    for r in task.heldout:
        for d in r.decoys:
            text = r.text[d.start:d.end]
            if _placeholder_formats(d.family, d.group, text) and text not in paired:
                problems.append(f"placeholder {text!r} ({d.family}) not shown beside a secret of its format")
    return problems


_KEPT_SECTIONS = frozenset(OTHER_SECTIONS + NEUTRAL_SECTIONS)  # a look-alike is {key}_{section}


def _contrasted(decoy: str, group: str, secrets: set[str]) -> bool:
    if group == "policy_exception":
        return _EXCEPTED[decoy] in secrets
    if group == "scoped_lookalike":
        return any(decoy.startswith(s + "_") and decoy[len(s) + 1:] in _KEPT_SECTIONS for s in secrets)
    if group == "context_lookalike":  # the same service's key, affixed or not (public_x_seal, x_seal_id)
        return any(s.split("_")[0] in decoy.split("_")[:2] for s in secrets)
    if group.startswith("house_"):
        return any(s.split("_")[0] == decoy.split("_")[0] for s in secrets)
    return True


def documented_problems(task) -> list[str]:
    """A vendor's documented value (a published sample key, a test fixture) is kept for
    what it is, not for its shape: each held-out one is shown (corpus-v6 tested Stripe's
    sample secret key in streams that showed only its publishable sample)."""
    shown = {r.text[d.start:d.end] for r in task.shown for d in r.decoys if d.family in DOCUMENTED_VALUES}
    return [f"documented value {r.text[d.start:d.end]!r} ({d.family}) never shown"
            for r in task.heldout for d in r.decoys
            if d.family in DOCUMENTED_VALUES and r.text[d.start:d.end] not in shown]


def encoded_problems(task) -> list[str]:
    """Every held-out encoding of a base64-encoded credential starts and ends as all its
    shown encodings do (levels-v11): a reader who copies what the shown ones share at
    either end takes every held-out one (on levels-v10 a third of the level-5 dev streams
    showed two encodings agreeing past what a held-out one kept)."""
    values: dict[str, tuple[list[str], list[str]]] = {}
    for k, records in enumerate((task.shown, task.heldout)):
        for r in records:
            for s in r.secrets:
                if s.group == "house_format_base64":
                    values.setdefault(s.family, ([], []))[k].append(r.text[s.start:s.end])
    problems = []
    for name, (shown, held) in values.items():
        head, tail = common_start(shown), common_end(shown)
        problems += [f"held-out encoding {v!r} of {name} outside the shown ones' common ends {head!r}...{tail!r}"
                     for v in held if not (v.startswith(head) and v.endswith(tail))]
    return problems


def check_task(split: str, index: int, lv: int) -> list[str]:
    """Every problem of one task at one level (an empty list when it is sound)."""
    task = shared.task(split, index, lv) if split == "dev" else load_task(split, index, level=lv)
    problems = []
    reply = policies.oracle(task)
    rules, errors = parse_reply(reply)
    if errors or len(rules) > 24:
        problems.append(f"oracle reply invalid: {len(rules)} rules, {[e.code for e in errors]}")
    # The oracle is a built-in policy's reply: scored by the public path's parse, rules
    # and scan in this process (`score_trusted`, export's scorer), without a scan
    # worker's round trip per task; test_verdict_purity.TrustedScoring holds it to
    # `score_completion`'s verdict, and test_open_world scores level 1's oracle there.
    reward = score_trusted(task, reply).reward
    if reward != 1.0:
        problems.append(f"oracle reward {reward}")
    shown_s = {s.family for r in task.shown for s in r.secrets}
    shown_d = {d.family for r in task.shown for d in r.decoys}
    held_s = {s.family for r in task.heldout for s in r.secrets}
    held_d = {d.family for r in task.heldout for d in r.decoys}
    if not held_s <= shown_s or not held_d <= shown_d:
        problems.append(f"held-out families not shown: {sorted((held_s - shown_s) | (held_d - shown_d))}")
    if not held_s:
        problems.append("no held-out secret")
    problems += documented_problems(task)
    problems += encoded_problems(task)
    for r in task.heldout:
        for d in r.decoys:
            if d.group and not _contrasted(d.family, d.group, shown_s):
                problems.append(f"look-alike {d.family} ({d.group}) without its secret in the shown records")
    # A look-alike that differs by length only is fair only if every held-out length
    # of the credential and of the look-alike was shown; a key-scoped value's too, or a
    # reader who takes its length from the examples misses it.
    problems += shared.unshown_lengths(task)
    # What the level table promises is in the records, not only drawn: every scoped
    # secret, encoded credential and key block the lower bound asks for.
    table = level(lv)
    if table.placeholder_kinds[1]:
        problems += placeholder_problems(task)
    for attribute in ("house_formats", "house_placeholders", "scoped_secrets", "encodings", "multiline",
                      "policy_exceptions"):
        if task.attributes[attribute] < getattr(table, attribute)[0]:
            problems.append(f"{attribute} {task.attributes[attribute]} below the level's {getattr(table, attribute)}")
    return [f"{task.id} level {lv}: {p}" for p in problems]


class FairAndExactAtEveryLevel(unittest.TestCase):
    """Oracle 1.0 within the answer limits, every held-out family shown, every
    look-alike beside its secret, every held-out house length shown: dev 0..63 and 200
    train tasks per level (level 1 also in test_corpus and test_open_world)."""

    def test_dev_and_train_at_every_level(self):
        # In this process (the test command already runs a shard per CPU), so the dev
        # tasks built here serve the other level tests too.
        step = 10_000_000 // TRAIN_PER_LEVEL
        # Level 1's dev tasks too: corpus-v5 shows each vendor placeholder beside its
        # credential from level 1 (placeholder_problems).
        jobs = [("dev", i, lv) for lv in LEVELS for i in range(64)]
        jobs += [("train", i * step + lv, lv) for lv in HIGHER for i in range(TRAIN_PER_LEVEL)]
        # As `export` scores the oracle (`share_trusted_compiles`): the build's compile of
        # each oracle pattern, bounded as a reply's is, is the one the scan reads from the
        # compile cache, not a second compile of it. A shared compile is what a fresh one
        # gives (test_verdict_purity.CompileCache); a pattern over a reply's bound is not
        # shared, and is refused when scored, as before.
        with mock.patch.object(guard, "_share_trusted", True):
            problems = [p for job in jobs for p in check_task(*job)]
        self.assertEqual(problems, [])

    def test_the_check_can_fail(self):
        self.assertFalse(_contrasted("vorlex_key_id", "house_key_id", {"other_api_key"}))
        self.assertFalse(_contrasted("egress_ip", "policy_exception", {"email_address"}))
        self.assertTrue(_contrasted("vorlex_key_id", "house_key_id", {"vorlex_api_key"}))
        task = shared.task("dev", 0, 4)
        self.assertEqual(placeholder_problems(task), [])
        # Without the pairs (every shown secret label dropped), every held-out placeholder fails.
        unpaired = type(task.shown[0])
        bare = SimpleNamespace(shown=[unpaired(r.text, r.template, (), r.decoys) for r in task.shown],
                               heldout=task.heldout)
        held = sum(bool(_placeholder_formats(d.family, d.group, r.text[d.start:d.end]))
                   for r in task.heldout for d in r.decoys)
        self.assertGreater(held, 0)
        self.assertEqual(len(placeholder_problems(bare)), held)
        # Without the shown decoys, every held-out documented value fails.
        task = next(t for t in shared.dev(64, 3)
                    if any(d.family in DOCUMENTED_VALUES for r in t.heldout for d in r.decoys))
        self.assertEqual(documented_problems(task), [])
        bare = SimpleNamespace(shown=[unpaired(r.text, r.template, r.secrets, ()) for r in task.shown],
                               heldout=task.heldout)
        self.assertGreater(len(documented_problems(bare)), 0)

    def test_the_encoding_check_can_fail(self):
        # Shown encodings drawn as levels-v10 drew them (no second draw): level 5 dev 37,
        # 53 and 59 are the tasks careful readers lost on 0.19.0 by copying them.
        from redaction_pressure.task import tasks as tasks_module

        with mock.patch.object(stream_module, "_spread", lambda family, variant, r, frag, *ends: frag), \
                mock.patch.object(tasks_module, "_built", tasks_module._built.__wrapped__):  # past its cache
            found = {i: encoded_problems(load_task("dev", i, level=5)) for i in (37, 53, 59)}
        self.assertTrue(all(found.values()), found)
        self.assertEqual([encoded_problems(shared.task("dev", i, 5)) for i in (37, 53, 59)], [[], [], []])

    def test_every_few_valued_decoy_is_drawn_once_per_stream(self):
        # corpus-v7 drew one of AWS's three documentation keys per record: a family of
        # fixed values that is not one value per variant escapes documented_problems.
        self.assertLessEqual({"aws_documented_example", "vendor_published_example", "test_fixture"},
                             DOCUMENTED_VALUES)
        self.assertTrue(all(f.variants for f in DECOYS))
        fixed = {f.name for f in DECOYS for v in f.variants if _drawn(f, v).most_common(1)[0][1] >= RECURS}
        self.assertEqual(fixed - DOCUMENTED_VALUES - SELF_EVIDENT, set())
        # A family of fixed values drawn per record (corpus-v7's AWS examples), even with a
        # random branch beside them, recurs, is not documented, and is caught.
        v7 = replace(DECOYS[0], name="v7_examples", variants=("",),
                     make=lambda r, v: Fragment(r.choice(("AKIAIOSFODNN7EXAMPLE", "AKIA" + r.chars("ABC", 16))),
                                                ((0, 20),), None))
        self.assertGreaterEqual(_drawn(v7, "").most_common(1)[0][1], RECURS)
        self.assertNotIn("v7_examples", DOCUMENTED_VALUES | SELF_EVIDENT)


_WIPE = json.dumps({"rules": [{"pattern": r"[\s\S]+", "replacement": ""}]})


class Ladder(unittest.TestCase):
    """What memory earns falls at every step up (the issue's monotone ladder): the
    baseline's scanner-style rules and delete-everything, on the 64 dev tasks of each
    level (the calibration table's tasks; bench_levels adds the searched best constant)."""

    def test_memorised_replies_do_worse_at_every_step_up(self):
        for name, reply in (("baseline", policies.baseline), ("delete everything", lambda t: _WIPE)):
            # Replies this test writes, scored in this process as the oracle is (check_task).
            means = [statistics.fmean(score_trusted(t, reply(t)).reward for t in shared.dev(64, lv))
                     for lv in LEVELS]
            with self.subTest(reply=name):
                self.assertTrue(all(a > b for a, b in itertools.pairwise(means)), means)

    def test_key_blocks_name_no_role_from_level_4(self):
        """From level 4 a key block's label says nothing of its role (so knowing that
        signing keys are secret earns nothing); below level 4 every label does."""
        def labels(lv: int) -> set[str]:
            return {r.text[s.start:s.end].split("\n", 1)[0].split(" ", 2)[2].rstrip("-")
                    for t in shared.dev(24, lv) for r in t.shown + t.heldout for s in r.secrets + r.decoys
                    if s.group in ("house_key_block", "house_public_block")}
        top, middle, low = labels(5), labels(4), labels(3)
        self.assertTrue(top and middle and low)
        self.assertLessEqual(top | middle, set(NEUTRAL_LABELS))
        self.assertFalse(low & set(NEUTRAL_LABELS))

    def test_sections_name_no_role_at_level_5(self):
        """At level 5 both sections of a scoped secret are role-free words (so knowing
        that production is live earns nothing, only the shown pair tells), drawn per
        secret from the stream's live and test slots: a section is live for every key
        of a stream or for none (review, 2026-12-04: one name was live for one key and
        kept for another in 46 of 64 streams). Below level 5 the secret section is
        production, live or prod. Scoped secrets sit in JSON configs' objects too,
        from level 3."""
        self.assertFalse(set(NEUTRAL_SECTIONS) & set(SECRET_SECTIONS + OTHER_SECTIONS + TEMPLATE_SECTIONS))

        def sections(lv: int) -> tuple[list[tuple[set[str], set[str]]], set[str]]:
            streams, layouts = [], set()
            for t in shared.dev(24, lv):
                live, kept = set(), set()
                for r in t.shown + t.heldout:
                    for s in r.secrets + r.decoys:
                        if s.group in ("scoped_secret", "scoped_lookalike"):
                            (live if s.group == "scoped_secret" else kept).add(section_of(r.text, s.start))
                            layouts.add(r.template)
                streams.append((live, kept))
            return streams, layouts
        top, top_layouts = sections(5)
        low, low_layouts = sections(3)
        for live, kept in top:
            self.assertLessEqual(live | kept, set(NEUTRAL_SECTIONS))
            self.assertFalse(live & kept)  # a slot is live or test for the whole stream
        self.assertTrue(any(len(live) > 1 for live, _ in top))  # per secret, not one name per stream
        for live, kept in low:
            self.assertLessEqual(live, {"production", "live", "prod"})
            self.assertLessEqual(kept, set(OTHER_SECTIONS))
        self.assertIn("json_config", top_layouts & low_layouts)



if __name__ == "__main__":
    unittest.main()
