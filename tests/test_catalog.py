"""`redaction_pressure.catalog()`: every family as plain, deterministic, JSON-ready data."""

from __future__ import annotations

import json
import unittest
from unittest import mock

import regex

import redaction_pressure
from redaction_pressure import _catalog
from redaction_pressure._families import DECOYS, SECRETS

FIELDS = {"name", "kind", "contexts", "keys", "variants", "why", "oracle", "examples", "negatives"}


class Catalog(unittest.TestCase):
    def test_every_family_in_table_order_with_its_fields(self):
        entries = redaction_pressure.catalog()
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

    def test_published_oracles_take_the_published_examples(self):
        for e in redaction_pressure.catalog():
            if e["kind"] != "secret":
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


if __name__ == "__main__":
    unittest.main()
