"""Difficulty levels (SPEC §3): declared as data, additive over level 1, fair and
exactly solvable at every level, solvable from the prompt alone, and deterministic."""

from __future__ import annotations

import base64
import ipaddress
import itertools
import json
import random
import statistics
import unittest
from dataclasses import fields
from typing import ClassVar

import regex

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.contract import LEVELS
from redaction_pressure.corpus.families import SECRETS
from redaction_pressure.corpus.families.decoys import PLACEHOLDER_KINDS, placeholder_run
from redaction_pressure.corpus.house import ALPHABETS, Shape, encoding_ends
from redaction_pressure.corpus.levels import ATTRIBUTES, LEVEL_1, Level, level
from redaction_pressure.corpus.rng import Rng
from redaction_pressure.corpus.stream import _JOINABLE, _oracle_rules, build_stream
from redaction_pressure.policies.induce import induce_rules, stated_ranges
from redaction_pressure.scoring.cidr import number_range, within
from redaction_pressure.scoring.score import scan_rules
from redaction_pressure.task.tasks import durable_key
from tests.support import tasks as shared
from tests.support.util import common_end, common_start, fingerprint, section_of
from tests.unit.test_open_world import prompt_only

HIGHER = tuple(lv for lv in LEVELS if lv > 1)


class Declared(unittest.TestCase):
    def test_every_level_is_a_table_of_named_ranges(self):
        self.assertEqual(LEVELS, (1, 2, 3, 4, 5))
        self.assertIs(level(1), LEVEL_1)
        self.assertEqual(ATTRIBUTES, tuple(f.name for f in fields(Level)))
        for lv in LEVELS:
            table = level(lv).as_table()
            self.assertEqual(tuple(table), ATTRIBUTES)
            for name, value in table.items():
                if name != "lookalike_kinds":
                    lo, hi = value
                    self.assertLessEqual(lo, hi, (lv, name))
                    self.assertGreaterEqual(lo, 0, (lv, name))

    def test_no_level_is_easier_than_the_one_below(self):
        rising = ("house_formats", "lookalikes_per_format", "house_placeholders", "placeholder_kinds",
                  "context_secrets", "context_lookalikes", "affixed_lookalikes",
                  "scoped_secrets", "policy_exceptions", "encodings", "multiline", "decoy_density",
                  "quiet_records", "lines_per_record", "heldout_coverage", "egress_prefix", "neutral_block_labels",
                  "neutral_sections",
                  "lookalike_coverage")
        for lo, hi in itertools.pairwise(LEVELS):
            a, b = level(lo), level(hi)
            for name in rising:  # both bounds, each on its own (a tuple compares its first differing one)
                for end in (0, 1):
                    self.assertLessEqual(getattr(a, name)[end], getattr(b, name)[end], (lo, hi, name, end))
            self.assertGreaterEqual(a.length_step[1], b.length_step[1], (lo, hi))
            for end in (0, 1):  # what memory alone finds
                self.assertGreaterEqual(a.static_secrets[end], b.static_secrets[end], (lo, hi, end))
            self.assertLessEqual(set(a.lookalike_kinds), set(b.lookalike_kinds), (lo, hi))

    def test_unknown_levels_are_refused_with_the_valid_ones(self):
        for bad in (0, 6, -1):
            with self.assertRaisesRegex(ValueError, "level must be one of 1, 2, 3, 4, 5"):
                load_task("dev", 0, level=bad)

    def test_a_task_names_its_level_and_its_drawn_attributes(self):
        for lv in LEVELS:
            task = load_task("dev", 5, level=lv)
            self.assertEqual((task.level, task.identity["task_params"]["level"]), (lv, lv))
            drawn = build_stream(task.seed, task.n_shown, task.n_eval, lv).attributes()
            self.assertEqual(drawn["level"], lv)
            table = level(lv)
            self.assertTrue(table.house_formats[0] <= drawn["house_formats"] <= table.house_formats[1])
            self.assertTrue(table.scoped_secrets[0] <= drawn["scoped_secrets"] <= table.scoped_secrets[1])
            self.assertTrue(table.house_placeholders[0] <= drawn["house_placeholders"]
                            <= table.house_placeholders[1])
            for kinds in drawn["placeholder_kinds"]:
                self.assertTrue(table.placeholder_kinds[0] <= kinds <= table.placeholder_kinds[1])
            self.assertTrue(set(drawn["lookalike_kinds"]) <= set(table.lookalike_kinds))
            for affixed in drawn["affixed_lookalikes"]:
                self.assertTrue(table.affixed_lookalikes[0] <= affixed <= table.affixed_lookalikes[1])
            if drawn["scoped_secrets"]:
                self.assertTrue(table.neutral_sections[0] <= drawn["neutral_sections"] <= table.neutral_sections[1])
            if drawn["multiline"]:
                self.assertTrue(table.neutral_block_labels[0] <= drawn["neutral_block_labels"]
                                <= table.neutral_block_labels[1])
            self.assertEqual(drawn["records_shown"], len(task.shown))

    def test_quiet_files_are_counted_as_planned(self):
        # A quiet file stays quiet when a look-alike is put in it, and stops being quiet
        # only when a secret no other file can hold needs it: a few per stream at most.
        for lv in HIGHER:
            lo, hi = level(lv).quiet_records
            counts = [t.attributes["quiet_records"] for t in shared.dev(16, lv)]
            with self.subTest(level=lv, counts=counts):
                self.assertTrue(all(lo - 3 <= c <= hi for c in counts))
                self.assertGreaterEqual(statistics.median(counts), lo - 1)


class LevelOne(unittest.TestCase):
    def test_level_one_is_byte_identical_given_or_defaulted(self):
        for split, index in (("dev", 0), ("dev", 17), ("train", 4242)):
            self.assertEqual(fingerprint(load_task(split, index)), fingerprint(load_task(split, index, level=1)))
            self.assertEqual(load_task(split, index).identity, load_task(split, index, level=1).identity)

    def test_each_level_is_a_different_task(self):
        prints = {fingerprint(load_task("dev", 3, level=lv)) for lv in LEVELS}
        self.assertEqual(len(prints), len(LEVELS))
        keys = {durable_key("dev", 3, 8, 16, 2.0, lv) for lv in LEVELS}
        self.assertEqual(len(keys), len(LEVELS))
        self.assertEqual(durable_key("dev", 3, 8, 16, 2.0, 1), durable_key("dev", 3, 8, 16, 2.0))


_CATALOGUE = {f.name for f in SECRETS}


def coverage(task, times: int, kind: str = "secrets") -> float:
    """The share of the families shown (``kind``: "secrets" or "decoys"; the
    catalogue's vendor secrets stay as drawn) that at least ``times`` held-out records
    hold."""
    shown = {s.family for r in task.shown for s in getattr(r, kind)} - _CATALOGUE
    held = [{s.family for s in getattr(r, kind)} for r in task.heldout]
    return sum(sum(f in h for h in held) >= times for f in shown) / len(shown)


class WhatIsShownIsTested(unittest.TestCase):
    """From level 4, every family the stream draws is put into held-out records
    (``heldout_coverage``): drawn at random, most of a level-5 stream's families were
    never tested, and a reader's slip on them cost nothing."""

    def test_held_out_records_hold_what_was_shown(self):
        for lv in (4, 5):
            for kind, times in (("secrets", level(lv).heldout_coverage[0]),
                                ("decoys", level(lv).lookalike_coverage[0])):
                covered = statistics.fmean(coverage(t, times, kind) for t in shared.dev(24, lv))
                with self.subTest(level=lv, kind=kind):
                    # Not all decoys: a decoy whose file type no held-out record has
                    # (a Kubernetes Secret's config data) is not given a file of its own.
                    self.assertGreaterEqual(covered, 0.9)
        # Every one of the stream's own formats, scoped values, key blocks and base64
        # forms is tested (a quiet file of the right type takes one that no other file can
        # hold, and when none is of that type, a quiet file becomes one: a credential's
        # base64 form needs a Kubernetes Secret).
        for lv in (4, 5):
            for t in shared.dev(24, lv):
                shown = {s.family for r in t.shown for s in r.secrets
                         if s.group in ("house_format", "context_secret", "scoped_secret", "house_key_block",
                                        "house_format_base64")}
                held = {s.family for r in t.heldout for s in r.secrets}
                with self.subTest(level=lv, task=t.id):
                    self.assertEqual(shown - held, set())
        # The check can fail: level 3 draws held-out families at random.
        self.assertLess(statistics.fmean(coverage(t, 1) for t in shared.dev(24, 3)), 0.8)
        self.assertLess(statistics.fmean(coverage(t, 3, "decoys") for t in shared.dev(24, 3)), 0.6)

    def test_the_oracle_joins_formats_to_stay_within_24_rules(self):
        """No level-5 stream draws more than 24 oracle patterns today; the families of
        three together do (their catalogue and own formats; policy categories are
        per-stream), and the joined oracle removes exactly what each stream labels with
        them, nothing else."""
        streams = [build_stream(shared.task("dev", i, 5).seed, 8, 16, 5) for i in (0, 1, 2)]
        catalogue = {f.name: f for f in SECRETS}
        chosen = {f.name: f for s in streams for f in (*[catalogue[n] for n in s.secret_families if n in catalogue],
                                                       *[f for f in s.world.secret_families if f.group in _JOINABLE])}
        order = {f.name: i for i, f in enumerate(SECRETS)}  # as build_stream orders them
        active = sorted(chosen.values(), key=lambda f: (0, order[f.name]) if f.name in order else (1, 0))
        self.assertGreater(sum(len(f.oracle) for f in active), 24)
        rules = _oracle_rules(active)
        self.assertLessEqual(len(rules), 24)
        self.assertTrue(any(p.startswith("(?:") for p in rules))
        for s in streams:
            removed, _, errors = scan_rules([r.text for r in s.heldout], [(p, "[REDACTED]") for p in rules], 30.0)
            self.assertEqual(errors, [])
            for r, gone in zip(s.heldout, removed, strict=True):
                want = bytearray(len(r.text))
                for x in r.secrets:
                    if x.family in chosen:
                        want[x.start:x.end] = b"\x01" * (x.end - x.start)
                self.assertEqual(bytes(gone), bytes(want))


class EncodedEnds(unittest.TestCase):
    """A credential that reappears base64-encoded (levels 4-5) is shown in encodings
    that share exactly what every encoding of it shares at each end: on levels-v10 the
    shown pair often agreed one character further (the first the body decides), a held-out
    encoding did not, and readers who copied the shown start missed it."""

    @staticmethod
    def sampled_ends(shape: Shape, draws: int = 2000) -> tuple[int, int]:
        encoded = [base64.b64encode(shape.make(Rng("encoded-ends", i)).encode()).decode() for i in range(draws)]
        return len(common_start(encoded)), len(common_end(encoded))

    def test_the_shared_ends_are_those_of_every_encoding(self):
        shapes = [Shape("sgm_xuq_", "0123456789abcdef", "[0-9a-f]", 32, ""),  # dev 37's, 0.19.0
                  Shape("krr-si-", ALPHABETS[3][1], ALPHABETS[3][2], 24, "")]  # dev 53's
        self.assertEqual([encoding_ends(s) for s in shapes], [(10, 2), (9, 2)])
        # Every alphabet, each prefix length modulo 3, with and without a checksum, with
        # and without the placeholder-free bodies of level 3 up.
        for (_, alphabet, cls), prefix, checksum, real in itertools.product(
                ALPHABETS, ("ab_", "ab_c_", "abc_d_", "LDR.vaz."), ("", "_"), (False, True)):
            for length in (20, 21, 22):
                shape = Shape(prefix, alphabet, cls, length, checksum, real)
                with self.subTest(shape=shape):
                    self.assertEqual(encoding_ends(shape), self.sampled_ends(shape, 400))

    def test_shown_encodings_share_exactly_those_ends(self):
        checked = 0
        for lv, index in itertools.product((4, 5), range(16)):
            stream = shared.stream_of(shared.task("dev", index, lv))
            ends = {name: (lead, trail) for name, lead, trail in stream.world.encoded_ends}
            self.assertEqual(len(ends), stream.attributes()["encodings"])
            for name, (lead, trail) in ends.items():
                shown = [r.text[s.start:s.end] for r in stream.shown for s in r.secrets if s.family == name]
                held = [r.text[s.start:s.end] for r in stream.heldout for s in r.secrets if s.family == name]
                self.assertGreaterEqual(len(shown), 2)
                every = shown + held
                self.assertGreaterEqual(len(common_start(every)), lead)
                self.assertGreaterEqual(len(common_end(every)), trail)
                self.assertEqual(len(common_start(shown)), lead, (lv, index, name))
                self.assertEqual(len(common_end(shown)), trail, (lv, index, name))
                checked += 1
        self.assertGreaterEqual(checked, 40)


class AffixedKeys(unittest.TestCase):
    """Levels 4-5: look-alike keys that contain the secret's own key name
    (``public_ledger_seal``, ``ledger_seal_id``) are shown and tested, and a rule that
    does not bound the key name at one end takes the look-alikes at that end."""

    # The secret's key read loosely at one end; each still requires a separator and a value.
    _VALUE = r"""["']?\s*[:= ]\s*["']?\K[A-Za-z0-9]+"""
    _LOOSE: ClassVar[dict[str, str]] = {"before": r"(?i:[\w-]*{name})" + _VALUE,
                                        "after": r"(?<![\w])(?<![A-Za-z0-9]-)(?i:{name}[\w-]*)" + _VALUE}

    def test_shown_tested_and_each_end_of_the_key_matters(self):
        ends: dict[int, set[str]] = {4: set(), 5: set()}
        for lv in (4, 5):
            for t in shared.dev(16, lv):
                contexts = shared.stream_of(t).world.contexts
                # family name -> (the secret's key, which end of it the look-alike adds to)
                affixed = {d.replace("-", "_"): (c.secret_name, "before" if d.endswith(c.secret_name) else "after")
                           for c in contexts for d in c.decoy_names if c.secret_name in d}
                per_secret = [sum(c.secret_name in d for d in c.decoy_names) for c in contexts]
                self.assertEqual(per_secret, [level(lv).affixed_lookalikes[0]] * len(contexts))
                shown = {d.family for r in t.shown for d in r.decoys}
                held = {d.family for r in t.heldout for d in r.decoys}
                with self.subTest(task=t.id):
                    self.assertLessEqual(set(affixed), shown & held)
                    self.assertEqual(score_completion(t, policies.oracle(t)).reward, 1.0)
                for end, loose in self._LOOSE.items():
                    names = sorted({name for name, e in affixed.values() if e == end})
                    rules = [{"pattern": loose.format(name=regex.escape(n)), "replacement": "[REDACTED]"}
                             for n in names]
                    score = score_completion(t, json.dumps({"rules": rules})) if rules else None
                    for family, (_, e) in affixed.items():
                        if score is None:
                            continue
                        present, hit = score.decoy_families[family]
                        if e == end:  # every look-alike at the loose end is taken ...
                            self.assertEqual((hit, present > 0), (present, True), (t.id, family, end))
                            ends[lv].add(end)
                        else:  # ... and none at the other end, which the rule still bounds
                            self.assertEqual(hit, 0, (t.id, family, end))
                if lv == 5:  # both ends in every stream
                    self.assertEqual({e for _, e in affixed.values()}, {"before", "after"}, t.id)
        self.assertEqual(ends, {4: {"before", "after"}, 5: {"before", "after"}})


_PRODUCTION_VALUE = regex.compile(
    r"(?m)(?<=(?:^\[(?:production|live|prod)\]\n(?:(?!\[)[^\n]*\n)*[a-z]+_[a-z]+ ?= ?|"
    r"^(?:production|live|prod):\n(?:  [^\n]*\n)*  [a-z]+_[a-z]+: |"
    r"^  \"(?:production|live|prod)\": \{\n(?:    [^\n]*\n)*    \"[a-z]+_[a-z]+\": )[\"']?)"
    r"[A-Za-z0-9]{18,30}(?![A-Za-z0-9_-])")
_CREDENTIAL_VALUE = regex.compile(r"(?<=-credential\"?:[ \t]*\"?)[A-Za-z0-9+/]{12,}={0,2}")


class NoKeyNameOrSectionTells(unittest.TestCase):
    """What a constant reply read on levels-v5, each exact there: any value under a
    production header, any base64 under a ``-credential`` Secret key, any value whose
    key's affixed twin was in the record. On levels-v6 each takes kept values too, in
    the held-out records of level-5 dev 0..23 (190 kept beside 65 secret, 77 beside 56,
    86 twins; on environment 0.10.0 16 beside 61, none beside 59, no twin)."""

    def _taken(self, pattern: regex.Pattern[str], lv: int = 5) -> tuple[int, int]:
        secret = kept = 0
        for t in shared.dev(24, lv):
            for r in t.heldout:
                spans = {(s.start, s.end) for s in r.secrets}
                for m in pattern.finditer(r.text):
                    inside = any(a <= m.start() and m.end() <= b for a, b in spans)
                    secret += inside
                    kept += not inside
        return secret, kept

    def test_a_production_header_does_not_make_a_value_secret(self):
        # Level 4: level 5 names its sections by role-free words (levels-v10), where a
        # production header holds a scoped secret only by chance.
        secret, kept = self._taken(_PRODUCTION_VALUE, 4)
        self.assertGreater(secret, 10)
        self.assertGreater(kept, secret / 2)
        # Level 5: no scoped secret sits under a production header in any layout (a
        # key-scoped secret may, by chance: the templates' own section pool has one).
        under = [section_of(r.text, s.start) for t in shared.dev(24, 5) for r in t.shown + t.heldout
                 for s in r.secrets if s.group == "scoped_secret"]
        self.assertGreater(len(under), 100)
        self.assertFalse(set(under) & {"production", "live", "prod"})

    def test_a_credential_key_does_not_make_a_value_secret(self):
        secret, kept = self._taken(_CREDENTIAL_VALUE)
        self.assertGreater(secret, 10)
        self.assertGreater(kept, secret / 3)

    def test_kept_keys_have_affixed_twins_too(self):
        twins = 0
        for t in shared.dev(24, 5):
            for c in _world_of(t).contexts:
                kept = [d for d in c.decoy_names if c.secret_name not in d]
                twins += any(a != b and b in a for a in kept for b in kept)
        self.assertGreaterEqual(twins, 24)


def _world_of(task):
    return shared.stream_of(task).world


class EgressRange(unittest.TestCase):
    """A level-5 stream that states a client-address exception states an egress range
    whose boundary splits an octet (``egress_prefix``), with secret addresses just
    outside it (levels-v6: exceptions go to categories already secret, so not every
    stream states one)."""

    def test_the_range_as_a_regex_is_exact(self):
        rng = random.Random(5)
        for net in ("66.94.32.0/19", "10.1.2.64/27", "66.94.0.0/16", "1.2.3.4/32", "10.128.0.0/9"):
            inside = regex.compile(rf"(?<![0-9.]){within(net)}(?![.])")
            network = ipaddress.IPv4Network(net)
            edges = [network.network_address - 1, network.network_address, network.broadcast_address,
                     network.broadcast_address + 1] if network.prefixlen < 32 else [network.network_address]
            for address in edges + [ipaddress.IPv4Address(rng.getrandbits(32)) for _ in range(500)]:
                self.assertEqual(bool(inside.fullmatch(str(address))), address in network, (net, address))

    def test_every_level_5_stream_states_a_split_range_with_near_misses(self):
        near = stating = 0
        for task in shared.dev(64, 5):
            ranges = stated_ranges(task.prompt)
            self.assertLessEqual(len(ranges), 1, task.id)
            if not ranges:
                self.assertNotIn("egress", task.prompt, task.id)
                continue
            stating += 1
            (stated,) = ranges
            net = ipaddress.IPv4Network(stated)
            self.assertTrue(19 <= net.prefixlen <= 28, stated)
            block = ipaddress.IPv4Network((int(net.network_address) & 0xFFFF0000, 16))
            for r in task.shown + task.heldout:
                for span in r.secrets + r.decoys:
                    if span.family in ("client_ip", "egress_ip"):
                        address = ipaddress.IPv4Address(r.text[span.start:span.end])
                        self.assertEqual(address in net, span.family == "egress_ip", (task.id, address))
                        near += span.family == "client_ip" and address in block
        self.assertGreaterEqual(stating, 8)
        self.assertGreater(near, 2 * stating)
        # Below level 5 the range keeps two whole octets.
        for task in shared.dev(24, 4):
            self.assertTrue(all(r.endswith("/16") for r in stated_ranges(task.prompt)), task.id)

    def test_a_number_range_as_a_regex_is_exact(self):
        ranges = [(a, b) for a in range(0, 256, 7) for b in range(a, 256, 5)] + [(0, 255), (9, 10), (99, 100)]
        for lo, hi in ranges:
            pattern = regex.compile(number_range(lo, hi))
            self.assertEqual([v for v in range(1000) if pattern.fullmatch(str(v))], list(range(lo, hi + 1)), (lo, hi))
        self.assertEqual(number_range(128, 255), "(?:12[8-9]|1[3-9][0-9]|2[0-4][0-9]|25[0-5])")
        with self.assertRaises(ValueError):
            number_range(5, 4)

    def test_a_malformed_stated_range_is_ignored(self):
        prompt = ("except addresses in 999.1.2.0/19, the egress range; addresses in 10.1.2.3/24, "
                  "addresses in 10.1.2.0/33, addresses in 66.94.32.0/19, the stream's own egress range")
        self.assertEqual(stated_ranges(prompt), ("66.94.32.0/19",))

    def test_induce_reads_the_stated_range(self):
        task = next(t for t in shared.dev(64, 5) if stated_ranges(t.prompt))
        (stated,) = stated_ranges(task.prompt)
        self.assertIn(within(stated), policies.induce(task).replace("\\\\", "\\"))


class HousePlaceholders(unittest.TestCase):
    def test_the_house_oracle_leaves_every_placeholder_kind_and_takes_every_credential(self):
        r = Rng("test/house-placeholders", 0)
        for (_, alphabet, cls), length, checksum in itertools.product(ALPHABETS, (16, 17, 31, 44), ("", "_")):
            shape = Shape("ab_cd_", alphabet, cls, length, checksum, real=True)
            oracle = regex.compile(shape.pattern())
            for kind in PLACEHOLDER_KINDS:
                for _ in range(8):
                    text = shape.placeholder(placeholder_run(r, kind, alphabet))
                    self.assertIsNone(oracle.search(f"key={text}\n"), (shape, kind, text))
            for _ in range(32):
                value = shape.make(r)
                self.assertEqual(oracle.search(f"key={value}\n").group(), value, shape)
            # In the credential's own alphabet, a careless rule (prefix, class, length) takes them.
            careless = regex.compile(regex.escape(shape.prefix) + cls + f"{{{length}}}")
            for kind in ("repeat", "run"):
                self.assertIsNotNone(careless.match(shape.placeholder(placeholder_run(r, kind, alphabet))), kind)

    def test_a_credential_body_never_looks_like_a_placeholder(self):
        # Over two characters most random bodies hold six equal ones in a row: a format
        # with placeholders draws again, one without them does not.
        r = Rng("test/house-bodies", 0)
        looks = regex.compile(r"(.)\1{5}")
        real, plain = (Shape("ab_cd_", "01", "[01]", 16, "", real=flag) for flag in (True, False))
        self.assertFalse([v for v in (real.make(r) for _ in range(200)) if looks.search(v)])
        self.assertTrue([v for v in (plain.make(r) for _ in range(200)) if looks.search(v)])
        self.assertTrue(all(regex.fullmatch(real.pattern(), real.make(r)) for _ in range(50)))


class SolvableFromThePrompt(unittest.TestCase):
    def test_induce_at_least_085_at_every_higher_level(self):
        for lv in HIGHER:
            rewards = [score_completion(t, policies.induce(t)).reward
                       for t in shared.dev(16, lv)]  # bench_levels: the 64 dev tasks
            with self.subTest(level=lv):
                self.assertGreaterEqual(statistics.fmean(rewards), 0.85)

    def test_induce_learns_a_placeholder_exclusion_from_the_shown_pair(self):
        """A body and its checksum beside a look-alike of another alphabet: the rule by
        parts is what is exact. Once a shown record keeps a placeholder that it takes
        (zeros throughout), induce excludes placeholder bodies; without one, it does not."""
        r = Rng("test/induce-placeholder", 0)
        secret, webhook = (Shape("ab_cd_", alphabet, cls, 21, ".", real=True)
                           for _, alphabet, cls in (ALPHABETS[3], ALPHABETS[2]))
        zeros = secret.placeholder("0")

        def record(*others: str) -> tuple[str, list[tuple[int, int, str]]]:
            value = secret.make(r)
            text = f"A={value}\n" + "".join(f"B{i}={o}\n" for i, o in enumerate(others))
            return text, [(2, 2 + len(value), "svc_api_key")]

        plain = induce_rules([record(webhook.make(r)), record(webhook.make(r))])
        learned = induce_rules([record(webhook.make(r)), record(webhook.make(r), zeros)])
        self.assertEqual(len(plain), 1)
        self.assertEqual(len(learned), 1)
        self.assertNotIn("\\1{5}", plain[0])
        self.assertIsNotNone(regex.search(plain[0], zeros))
        self.assertIsNone(regex.search(learned[0], zeros))
        for _ in range(20):
            value = secret.make(r)
            self.assertEqual(regex.search(learned[0], f"A={value}\n").group(), value)
            self.assertIsNone(regex.search(learned[0], f"B={webhook.make(r)}\n"))

    def test_induce_is_blind_at_every_level(self):
        def json_scoped(lv: int) -> int:
            """The first dev task whose shown records hold a scoped secret in a JSON config
            (induce's JSON section reading; dev 0..2 hold none: review, 2026-12-04)."""
            return next(i for i in range(32) for r in shared.task("dev", i, lv).shown
                        if r.template == "json_config" and any(s.group == "scoped_secret" for s in r.secrets))
        for lv in HIGHER:
            for i in (0, 1, 2) + ((json_scoped(lv),) if lv >= 3 else ()):
                task = shared.task("dev", i, lv)
                with self.subTest(level=lv, task=task.id):
                    self.assertEqual(policies.induce(prompt_only(task)), policies.induce(task))


if __name__ == "__main__":
    unittest.main()
