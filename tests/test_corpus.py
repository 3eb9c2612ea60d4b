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
    ("dev", 0): "767382a7a9a8d064ccba01a766ed854c0209fadb2b311db69f84c1a5b86c81b6",
    ("dev", 31): "f91c279b98293a86c102ed372ad3cd8f7cb2858b563588e55f68141e466a5c02",
    ("dev", 63): "fec9634e25faef27995d037099c524d4f30ca6e1d744cab1d544e148b4a4c150",
    ("train", 0): "83bc0f046ddca3bda00b8c54d6c0d149d5fe51a49a1313b89d099701b3afd796",
    ("train", 123456): "3275375e536ae2e2894b238a8da9881e7fd4d01364967f21e97d10cb7919d9ba",
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
        self.assertGreaterEqual(len(SECRETS), 15)
        self.assertGreaterEqual(len(DECOYS), 10)
        self.assertLessEqual(sum(len(f.oracle) for f in SECRETS), 24)

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
