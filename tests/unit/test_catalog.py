"""`redaction_pressure.catalog()`: every family as plain, deterministic, JSON-ready data."""

from __future__ import annotations

import json
import unittest
from unittest import mock

import regex

import redaction_pressure
from redaction_pressure.corpus import catalog as _catalog
from redaction_pressure.corpus.families import DECOYS, SECRETS

FIELDS = {"name", "kind", "contexts", "keys", "variants", "why", "oracle", "examples", "negatives", "levels"}


class Catalog(unittest.TestCase):
    def test_every_family_in_table_order_with_its_fields(self):
        entries = redaction_pressure.catalog()[:len(SECRETS + DECOYS)]
        self.assertEqual([e["name"] for e in entries], [f.name for f in SECRETS + DECOYS])
        for e in entries:
            self.assertEqual(set(e), FIELDS)
            self.assertIn(e["kind"], ("secret", "decoy"))
            self.assertTrue(e["why"])
            self.assertEqual(e["contexts"], sorted(e["contexts"]))
            self.assertGreaterEqual(len(e["examples"]), 3)
            self.assertGreaterEqual(len(e["negatives"]), 2)
            self.assertEqual(bool(e["oracle"]), e["kind"] == "secret")

    def test_json_serialisable_and_deterministic(self):
        a = json.dumps(redaction_pressure.catalog(), sort_keys=True)
        b = json.dumps(redaction_pressure.catalog(), sort_keys=True)
        self.assertEqual(a, b)
        self.assertEqual(json.loads(a), redaction_pressure.catalog())

    def test_open_world_kinds_follow_described_with_generated_examples(self):
        """After the static families: house formats and their look-alikes, context
        secrets, and the five policy categories, each saying what a stream draws, with
        no oracle (a stream's oracle exists only once its seed drew the format) and
        examples the generator made, which the sample world's own oracle agrees with."""
        from redaction_pressure.corpus.world import _sample_worlds
        tail = redaction_pressure.catalog()[len(SECRETS + DECOYS):]
        self.assertEqual([e["name"] for e in tail],
                         ["house_format", "house_client_id", "house_key_id", "house_sandbox_key", "context_secret",
                          "context_lookalike", "email_address", "phone_number", "client_ip", "internal_hostname",
                          "customer_id", "house_preview_key", "house_webhook_id", "house_placeholder",
                          "house_lookalike_placeholder", "scoped_secret",
                          "scoped_lookalike", "scoped_sibling",
                          "house_key_block", "house_public_block", "house_format_base64",
                          "house_format_base64_lookalike", "policy_exception"])
        self.assertEqual({e["name"]: e["levels"] for e in tail if e["levels"] != [1, 2, 3, 4, 5]},
                         {"house_preview_key": [3, 4, 5], "house_webhook_id": [3, 4, 5], "house_placeholder": [3, 4, 5],
                          "house_lookalike_placeholder": [3, 4, 5],
                          "scoped_secret": [3, 4, 5],
                          "scoped_lookalike": [3, 4, 5], "scoped_sibling": [3, 4, 5], "house_key_block": [3, 4, 5],
                          "house_public_block": [3, 4, 5], "house_format_base64": [4, 5],
                          "house_format_base64_lookalike": [4, 5],
                          "policy_exception": [2, 3, 4, 5]})
        for e in tail:
            self.assertEqual(set(e), FIELDS | {"drawn"})
            self.assertIn(e["kind"], ("secret", "decoy", "policy"))
            self.assertEqual(e["oracle"], [])
            self.assertTrue(e["examples"], e["name"])
            for ex in e["examples"]:
                self.assertIn(ex["secret"], ex["text"])
                if e["kind"] != "policy":
                    self.assertEqual(bool(ex["secret"]), e["kind"] == "secret")
        worlds = _sample_worlds()
        for e, families in ((tail[0], [w.house_secrets[0] for w in worlds]),
                            (tail[4], [w.context_secrets[0] for w in worlds])):
            for ex, family in zip(e["examples"], families, strict=False):
                found = [m.group() for p in family.oracle for m in regex.finditer(p, ex["text"])]
                self.assertEqual(found, [ex["secret"]], ex)
        decoy_texts = [ex["text"] for e in tail if e["kind"] == "decoy" for ex in e["examples"]]
        house_oracles = [p for w in worlds for f in w.house_secrets + w.context_secrets for p in f.oracle]
        for text in decoy_texts:  # every look-alike survives every sample world's oracle
            self.assertFalse([m.group() for p in house_oracles for m in regex.finditer(p, text)], text)

    def test_published_oracles_take_the_published_examples(self):
        for e in redaction_pressure.catalog():
            if e["kind"] != "secret" or "drawn" in e:
                continue
            patterns = [regex.compile(p) for p in e["oracle"]]
            for ex in e["examples"]:
                found = [m.group() for p in patterns for m in p.finditer(ex["text"])]
                self.assertEqual(found, [ex["secret"]], e["name"])

    def test_callers_cannot_change_the_tables(self):
        first = redaction_pressure.catalog()
        first[0]["oracle"].append("x")
        first[0]["examples"].clear()
        self.assertEqual(redaction_pressure.catalog()[0]["oracle"], list(SECRETS[0].oracle))
        self.assertTrue(redaction_pressure.catalog()[0]["examples"])

    def test_open_world_kinds_are_appended(self):
        kind = {"name": "house_format", "kind": "secret", "contexts": ["kv"], "why": "per stream", "oracle": [],
                "examples": [], "negatives": [], "keys": [], "variants": []}
        with mock.patch.object(_catalog, "OPEN_WORLD_KINDS", (kind,)):
            entries = redaction_pressure.catalog()
            entries[-1]["contexts"].append("shell")
            self.assertEqual(redaction_pressure.catalog()[-1], kind)
        self.assertEqual(len(entries), len(SECRETS) + len(DECOYS) + 1)
        self.assertEqual(len(redaction_pressure.catalog()), len(SECRETS) + len(DECOYS) + len(_catalog.OPEN_WORLD_KINDS))


if __name__ == "__main__":
    unittest.main()
