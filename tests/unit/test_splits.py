"""Splits: disjoint public seed ranges, HMAC-derived private seeds, commitments, and
the private secret never leaking into task data, prompts or errors."""

from __future__ import annotations

import json
import os
import unittest
from unittest import mock

from redaction_pressure import PRIVATE_SEED_ENV, PrivateSeedError, load_task
from redaction_pressure.build.versions import CORPUS_VERSION
from redaction_pressure.task.splits import PUBLIC, private_commitment, private_seed

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


if __name__ == "__main__":
    unittest.main()
