"""Splits: disjoint public seed ranges, HMAC-derived private seeds, commitments, and
the private secret never leaking into task data, prompts or errors."""

from __future__ import annotations

import json
import os
import unittest
from unittest import mock

from redaction_pressure import PRIVATE_SEED_ENV, PrivateSeedError, load_task
from redaction_pressure.build.versions import CORPUS_VERSION
from redaction_pressure.task.splits import PUBLIC, private_commitment, private_seed, prove_split

SECRET = "correct horse battery staple / 0123456789abcdef"
OTHER = "another private secret of enough length 9876543210"


def private(index: int, secret: str = SECRET):
    with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: secret}):
        return load_task("private_eval", index)


class PublicSplits(unittest.TestCase):
    def test_dev_has_exactly_64_tasks(self):
        self.assertEqual(PUBLIC["dev"].size, 64)
        load_task("dev", 63)
        with self.assertRaises(IndexError):
            load_task("dev", 64)

    def test_ranges_are_disjoint(self):
        dev, train = PUBLIC["dev"], PUBLIC["train"]
        self.assertTrue(dev.start + dev.size <= train.start or train.start + train.size <= dev.start)

    def test_public_seed_is_in_task_data(self):
        task = load_task("dev", 7)
        self.assertEqual(task.task_data()["identity"]["task_seed"], PUBLIC["dev"].start + 7)
        self.assertEqual(task.identity["split_commitment"], PUBLIC["dev"].commitment)

    def test_commitments_differ_by_split_and_kind(self):
        commitments = {PUBLIC["dev"].commitment, PUBLIC["train"].commitment,
                       private_commitment(SECRET.encode())}
        self.assertEqual(len(commitments), 3)
        self.assertTrue(private_commitment(SECRET.encode()).startswith("private-sha256:"))
        self.assertTrue(PUBLIC["dev"].commitment.startswith("public-sha256:"))

    def test_unknown_split(self):
        with self.assertRaisesRegex(ValueError, "unknown split"):
            load_task("test", 0)


class PrivateSplit(unittest.TestCase):
    def test_same_secret_same_seeds_other_secret_other_seeds(self):
        a = [private(i).seed for i in range(8)]
        self.assertEqual(a, [private(i).seed for i in range(8)])
        b = [private(i, OTHER).seed for i in range(8)]
        self.assertFalse(set(a) & set(b))
        self.assertEqual(len(set(a)), 8)
        self.assertEqual(private(3).prompt, private(3).prompt)
        self.assertNotEqual(private(3).prompt, private(3, OTHER).prompt)

    def test_private_seeds_are_never_public(self):
        for i in range(64):
            self.assertGreaterEqual(private_seed(SECRET.encode(), i), 1 << 63)

    def test_hmac_message_is_domain_separated_and_fixed_width(self):
        import hashlib
        import hmac
        msg = b"redaction-pressure/private-seed/v1\x00" + CORPUS_VERSION.encode() + b"\x00000000000005"
        want = int.from_bytes(hmac.new(SECRET.encode(), msg, hashlib.sha256).digest()[:8], "big") | (1 << 63)
        self.assertEqual(private(5).seed, want)

    def test_short_or_missing_secret_is_a_clear_error(self):
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "too short"}), \
                self.assertRaises(PrivateSeedError) as ctx:
            load_task("private_eval", 0)
        message = str(ctx.exception)
        self.assertIn(PRIVATE_SEED_ENV, message)
        self.assertIn("at least 32 characters", message)
        self.assertNotIn("too short", message)
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        with mock.patch.dict(os.environ, env, clear=True), self.assertRaisesRegex(PrivateSeedError, "not set"):
            load_task("private_eval", 0)

    def test_secret_and_seed_absent_from_task_data_and_prompt(self):
        task = private(2)
        published = json.dumps(task.task_data()) + task.prompt + task.system_prompt
        self.assertNotIn(SECRET, published)
        self.assertNotIn(str(task.seed), published)
        self.assertNotIn("task_seed", json.dumps(task.task_data()))
        self.assertNotIn(SECRET, repr(task))
        self.assertNotIn(str(task.seed), repr(task))
        self.assertEqual(task.identity["split_commitment"], private_commitment(SECRET.encode()))



class ProveSplit(unittest.TestCase):
    """The split is read from commitments and seeds; a label proves nothing."""

    def rows(self, label, split="dev", indices=range(3)):
        r = PUBLIC[split]
        return [(label, r.commitment, i, r.start + i) for i in indices]

    def test_public_commitment_and_seeds_prove_the_public_split_whatever_the_label(self):
        honest = prove_split(self.rows("dev"))
        self.assertEqual((honest.proven, honest.kind, honest.agrees, honest.disagreement()),
                         ("dev", "public", True, None))
        relabelled = prove_split(self.rows("private_eval"))
        self.assertEqual((relabelled.proven, relabelled.kind, relabelled.agrees), ("dev", "public", False))
        self.assertEqual(relabelled.disagreement(),
                         "labelled private_eval, committed as public dev: NOT a private evaluation")
        self.assertEqual(prove_split(self.rows("train", "train")).proven, "train")

    def test_a_private_commitment_with_private_seeds(self):
        secret = b"s" * 40
        rows = [("private_eval", private_commitment(secret), i, private_seed(secret, i)) for i in range(2)]
        proof = prove_split(rows)
        self.assertEqual((proof.proven, proof.kind, proof.agrees), ("private_eval", "private", True))
        relabelled = prove_split([("dev", *row[1:]) for row in rows])
        self.assertEqual(relabelled.disagreement(), "labelled dev, committed as private_eval")

    def test_private_seeds_no_secret_could_derive_are_no_split(self):
        """Red team, 2026-12-04: a task revealing two seeds under one commitment, or one
        seed revealed for every task, passed for private_eval (UNPROVEN, not refused),
        though HMAC gives task i one seed and no two tasks the same: either is NOT
        ESTABLISHED without the secret."""
        secret = b"s" * 40
        commitment = private_commitment(secret)
        honest = [("private_eval", commitment, i, private_seed(secret, i)) for i in range(3)]
        self.assertTrue(prove_split(honest + honest[:1]).agrees)  # a task rolled out twice
        two = prove_split([*honest, ("private_eval", commitment, 0, private_seed(secret, 7))])
        self.assertIsNone(two.proven)
        self.assertIn(f"task 0 reveals two seeds ({private_seed(secret, 0)} and {private_seed(secret, 7)})",
                      two.disagreement())
        shared = prove_split([("private_eval", commitment, i, private_seed(secret, 0)) for i in range(3)])
        self.assertEqual(shared.problems, (f"seed {private_seed(secret, 0)} is revealed for tasks 0 and 1",
                                           f"seed {private_seed(secret, 0)} is revealed for tasks 0 and 2"))

    def test_a_private_split_is_proven_only_when_its_seeds_are_re_derived(self):
        """Attack (red team a19): an invented ``private-sha256:`` commitment with the seeds
        removed (or invented above 2**63) passed for private_eval, and the report's banner
        said PRIVATE EVALUATION SPLIT. A proof from commitments and seeds alone never
        re-derives a seed, so a private split is always UNPROVEN by it."""
        secret = b"s" * 40
        honest = [("private_eval", private_commitment(secret), i, private_seed(secret, i)) for i in range(2)]
        invented = [("private_eval", "private-sha256:" + "ab" * 32, i, None) for i in range(2)]
        invented_seeds = [("private_eval", "private-sha256:" + "cd" * 32, i, (1 << 63) + i) for i in range(2)]
        for rows in (honest, invented, invented_seeds):
            proof = prove_split(rows)
            self.assertEqual((proof.proven, proof.private_unproven), ("private_eval", True))
        self.assertFalse(prove_split(self.rows("dev")).private_unproven)  # public seeds are checked against the range

    def test_nothing_is_proven_by_inconsistent_or_hostile_traces(self):
        fake = private_commitment(b"f" * 40)
        dev = PUBLIC["dev"]
        cases = {
            "cannot be a private seed": [("private_eval", fake, 0, dev.start)],
            "is not dev's seed for task 1": [("dev", dev.commitment, 1, dev.start)],
            "2 different split commitments": [("dev", dev.commitment, 0, dev.start), ("dev", fake, 1, None)],
            "records no split commitment": [("dev", None, 0, dev.start)],
            "neither a public seed range's nor a private one": [("dev", "sha256:abc", 0, 1)],
            "is not one of dev's 64 tasks": [("dev", dev.commitment, True, dev.start)],
            "no traces": [],
        }
        for needle, rows in cases.items():
            proof = prove_split(rows)
            self.assertIsNone(proof.proven, needle)
            self.assertEqual(proof.kind, "unknown")
            self.assertIn(needle, proof.disagreement() or "", needle)
        self.assertEqual(prove_split([("x", fake, i, 5) for i in range(6)]).problems[-1], "1 more")  # capped at 5


if __name__ == "__main__":
    unittest.main()
