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
# Secrets as JSON.
GOLDEN = {
    ("dev", 0): "dd4645c31af66e7b9eeeff426dc132d5598e743276118cead7bf964a025e5769",
    ("dev", 31): "0e0d9ac64ac66dd7c5de6607064ceffcc2af55eff9b5b7d0c0920b9c5367b10d",
    ("dev", 63): "fe1445a050063b3d9a9aa1328989c51225cff1b7315ae0232078763399ba1703",
    ("train", 0): "6268425b8d10425f66aa5c4dd871de24d28d57f5214bebb678c9e6844af9ce44",
    ("train", 123456): "face04a976e84d51e0bde909390cd34fbdecc860bc7d4ee53ebd738bee5d6ccd",
}


# Higher levels (corpus-v3, part 2): their own streams, additive over level 1. Moved
# once since: every file a level needs kept (scoped, k8s, block), one length per scoped
# secret, smaller key blocks, more quiet files at levels 2-4. Moved again at levels 3-5
# only (levels 1 and 2 byte-identical): placeholders of the stream's own formats
# (house_placeholders) and of every vendor with a placeholder shape, in
# placeholder_kinds kinds, each drawn once and shown beside a real secret of its format;
# those formats' credentials never look like placeholders and their oracle leaves them.
GOLDEN_LEVELS = {
    (2, "dev", 0): "7f35de7e075116ad910802572ccaea1a7698a2368f8606e164299dcc8c659496",
    (2, "train", 77): "0a498fb100e2a5c077f640c1610fc0849537459b3f8c21f27086751fc99fd578",
    (3, "dev", 0): "33d70fe5ca34665334fdf849ba44fc3378f0a9047201c6b51c47f9f5d6955dc5",
    (3, "train", 77): "1ac77608cc805cf2633f8757223ba925c38d8b91ffa011b97f59002756b1775f",
    (4, "dev", 0): "cba5c501e1d2e0a10a3163f28e24b06e77d75b5364825723319ba20cd6aa9c67",
    (4, "train", 77): "b1866f557593fcda308d0c788ac4b8503832134094cce68c08e08c6606387f9e",
    (5, "dev", 0): "c8f81841717ac6060d2b811e83d7a73b62a8cfcea2b54c5b50429042242f6c54",
    (5, "train", 77): "d44551473a535f405e12639e2e8901d06dc4a0fc330bb5413366fd90ddc2fb3e",
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
