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
    ("dev", 0): "efedff088fbae930eb2a086f54828f853c70dda1a5bf116ced2636d13d72edf7",
    ("dev", 31): "2074c14a701c06626d48c99478cde7841db3cba3a230d56c729388404d8605a4",
    ("dev", 63): "2677aa6ed8514231e15d60471adf7eb336888c8b672fcd7d3e7af7201a187297",
    ("train", 0): "52e57c59be4ab4e967a8583fda709ada96952e36be8386839b0e344f39957bcf",
    ("train", 123456): "d387254e266241c8620f6f999615d8297f9a89b47517ea2510d3c8feca1a716b",
}


class GoldenFingerprints(unittest.TestCase):
    def test_version(self):
        self.assertEqual(CORPUS_VERSION, "corpus-v2")

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
