"""corpus-v1: determinism (golden fingerprints, across processes and hash seeds),
the family and template tables, fairness and solvability of every task."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from redaction_pressure import CORPUS_VERSION, load_task
from redaction_pressure.corpus.families import DECOYS, SECRETS
from redaction_pressure.corpus.templates import TEMPLATES
from tests.support import tasks as shared
from tests.support.util import fingerprint

ROOT = Path(__file__).resolve().parents[2]

# Changing any of these means the corpus changed: bump CORPUS_VERSION and update them
# in the same commit, saying why. (They cover the prompt's text too.) corpus-v3: every
# structured record a valid file of its format, vendor structure (npm CRC32, Slack
# configuration tokens, Azure secret versions), percent-encoded URL passwords,
# placeholders of the stream's vendors, Datadog keys in the environment, Kubernetes
# Secrets as JSON. Environment 0.5.0 changed the system prompt's text only (every
# record, label and user prompt byte-identical): limits stated as the validator now
# applies them (thinking not counted, sets charged once per member, compiling outside
# the budget). Environment 0.6.0 changed levels 4-5 only (GOLDEN_LEVELS; levels 1-3
# byte-identical): held-out records hold every family the stream shows
# (heldout_coverage), level 5 draws more of each kind and states an egress range that
# splits an octet (egress_prefix), and an oracle over 24 rules joins a group's patterns
# into one alternation. Environment 0.7.0 changed levels 4-5 only (levels 1-3
# byte-identical), so that memorised replies do worse at every step up: the catalogue's
# vendor secrets stay as drawn (heldout_coverage places the stream's own families
# only), levels 4-5 draw fewer of them, level 4 has one quiet file fewer, level 5
# covers each family once and draws one key block, key blocks are named by words
# that say nothing of their role (neutral_block_labels), each look-alike is tested in
# two (level 4) or three (level 5) held-out records (lookalike_coverage), and a quiet
# file takes a secret no other held-out file can hold; LEVELS_VERSION levels-v3 names
# it in the keys.
GOLDEN = {
    ("dev", 0): "4d4f9b6f2589ef37e74c52f1b038613d3cbd885671e7f5f264a618c77fa75bec",
    ("dev", 31): "02e14d39775acfbc8a93f32660b1f2b1494f3385aad0d43d9181244491cc17e8",
    ("dev", 63): "f4dbf06d36322abd2003a921d864c62565c25a7a37e387fb9614cea7ca247c78",
    ("train", 0): "3cc0495c7d86b7e771b6c9d2c9aca4645db632b3f08282b88303c3101f014792",
    ("train", 123456): "2446fad55d6928da321bed8fccb5fd2d445ee5f340e3243a5679734b1151657e",
}


# Higher levels (corpus-v3, part 2): their own streams, additive over level 1. Moved
# once since: every file a level needs kept (scoped, k8s, block), one length per scoped
# secret, smaller key blocks, more quiet files at levels 2-4. Moved again at levels 3-5
# only (levels 1 and 2 byte-identical): placeholders of the stream's own formats
# (house_placeholders) and of every vendor with a placeholder shape, in
# placeholder_kinds kinds, each drawn once and shown beside a real secret of its format;
# those formats' credentials never look like placeholders and their oracle leaves them.
GOLDEN_LEVELS = {
    (2, "dev", 0): "8b9e471268de19944efd5006907417f9d1665a9f75a08bd0bb62e3fb7c722b94",
    (2, "train", 77): "09af86034f4e85a920eb4450ef3f45a01462bacc1a872d0225edbf6482f719e9",
    (3, "dev", 0): "3867040c6e3a892de3479828fcd785b43eefb18341f1ac71c1afe80c38d200b2",
    (3, "train", 77): "19d13e227d0b5b77b3bc1a89e1676fb516099dcde99866868adad900a3017b9e",
    (4, "dev", 0): "aeab3a8fe1789e81c77bfd13e01dc2b313b53129ec2740399ec5a85c89f95390",
    (4, "train", 77): "62f4c1a6157816e8e66fbd3ad6b7f050cbc51e9af235f3cf9937ebb458f60785",
    (5, "dev", 0): "489e3d4072391cc6c764db4582b05f5976ec38da95490ba1575aec08a6d874fb",
    (5, "train", 77): "b405db3658e7b0a4e5bb14400b1126a2d77f1873caff08e0cffdc673c8464793",
}


class GoldenFingerprints(unittest.TestCase):
    def test_version(self):
        self.assertEqual(CORPUS_VERSION, "corpus-v3")

    def test_golden_fingerprints(self):
        for (split, index), want in GOLDEN.items():
            with self.subTest(split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index)), want)

    def test_golden_fingerprints_of_every_level(self):
        for (lv, split, index), want in GOLDEN_LEVELS.items():
            with self.subTest(level=lv, split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index, level=lv)), want)

    def test_same_bytes_in_other_processes_and_hash_seeds(self):
        code = ("from redaction_pressure import load_task; from tests.support.util import fingerprint;"
                "print(fingerprint(load_task('dev', 5)), fingerprint(load_task('train', 77)))")
        here = f"{fingerprint(load_task('dev', 5))} {fingerprint(load_task('train', 77))}"
        for hashseed in ("0", "1", "4242", "random"):
            env = dict(os.environ, PYTHONHASHSEED=hashseed, LC_ALL="C")
            out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
            self.assertEqual(out, here, hashseed)


class Tables(unittest.TestCase):
    def test_sizes(self):
        self.assertGreaterEqual(len(TEMPLATES), 12)
        self.assertGreaterEqual(len(SECRETS), 40)
        self.assertGreaterEqual(len(DECOYS), 10)
        # corpus-v2 has more families than a reply has rules: each family's oracle stays
        # small, and test_core_reward checks that every task's oracle fits in 24 rules.
        self.assertLessEqual(max(len(f.oracle) for f in SECRETS), 2)

    def test_every_decoy_says_why(self):
        for d in DECOYS:
            self.assertGreater(len(d.why), 40, d.name)
            self.assertFalse(d.oracle, d.name)

    def test_names_unique(self):
        names = [f.name for f in SECRETS + DECOYS]
        self.assertEqual(len(names), len(set(names)))


class TaskShape(unittest.TestCase):
    def test_fair_and_nonempty_on_many_tasks(self):
        for split, count in (("dev", 64), ("train", 300)):
            for index in range(count):
                task = shared.task(split, index)
                shown = {s.family for r in task.shown for s in r.secrets + r.decoys}
                evaluated = {s.family for r in task.heldout for s in r.secrets + r.decoys}
                self.assertLessEqual(evaluated, shown, task.id)
                self.assertGreaterEqual(sum(len(r.secrets) for r in task.heldout), 1, task.id)
                for r in task.shown + task.heldout:
                    for s in r.secrets + r.decoys:
                        self.assertTrue(0 <= s.start < s.end <= len(r.text))

    def test_tasks_differ_in_their_mix(self):
        mixes = {(load_task("dev", i).templates, load_task("dev", i).secret_families) for i in range(16)}
        self.assertGreater(len(mixes), 12)


if __name__ == "__main__":
    unittest.main()
