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
from tests.support.util import fingerprint

ROOT = Path(__file__).resolve().parents[2]

# Changing any of these means the corpus changed: bump CORPUS_VERSION and update them
# in the same commit, saying why.
GOLDEN = {
    ("dev", 0): "0743ec9d8722aa2c2823510e3bd4eff286a6927ba206e4fe4ff9b199d88319be",
    ("dev", 31): "b4a1c9b506abd73f5363e415a39aefa78407605c8af82956790e6acfd037dd0b",
    ("dev", 63): "163fa59416747eba0639a9e09b8a2be828ea73f5ebfaaf7e25b129f8cbf1fedc",
    ("train", 0): "7e7f2a8bf2dbca6d7252114471a227338788e6ea2441535d2e2b1b0684405c79",
    ("train", 123456): "49b4e8e5c5c3fca0eee410dcab95876adecc50d2c13b939599d64b1b6f4e83b2",
}


class GoldenFingerprints(unittest.TestCase):
    def test_version(self):
        self.assertEqual(CORPUS_VERSION, "corpus-v2")

    def test_golden_fingerprints(self):
        for (split, index), want in GOLDEN.items():
            with self.subTest(split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index)), want)

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
                task = load_task(split, index)
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
