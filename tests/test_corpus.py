"""corpus-v1: determinism (golden fingerprints, across processes and hash seeds),
the family and template tables, fairness and solvability of every task."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from redaction_pressure import CORPUS_VERSION, load_task
from redaction_pressure._families import DECOYS, SECRETS
from redaction_pressure._templates import TEMPLATES

from tests._util import fingerprint

ROOT = Path(__file__).resolve().parents[1]

# Changing any of these means the corpus changed: bump CORPUS_VERSION and update them
# in the same commit, saying why.
GOLDEN = {
    ("dev", 0): "9668aa80fb9f2b25f6b593cb604b6802315e85df918570d1c677ddd2aa03715d",
    ("dev", 31): "053735230dc17a3885e8e127fbf00eeca093d308e8fb3775d05ad5806240e1de",
    ("dev", 63): "8554bc72c00aefd3d000095a64f8845a51bde53ac803a0fe62fc7f458abc137f",
    ("train", 0): "df5f5e7a7adb42debbd216c206d8a3ce62704cb14301bc357d5db235420724d0",
    ("train", 123456): "bc587fff336ba7efacb566e54fc920da0b935fa2cfb35204a348790139f9bc72",
}


class GoldenFingerprints(unittest.TestCase):
    def test_version(self):
        self.assertEqual(CORPUS_VERSION, "corpus-v1")

    def test_golden_fingerprints(self):
        for (split, index), want in GOLDEN.items():
            with self.subTest(split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index)), want)

    def test_same_bytes_in_other_processes_and_hash_seeds(self):
        code = ("from redaction_pressure import load_task; from tests._util import fingerprint;"
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
