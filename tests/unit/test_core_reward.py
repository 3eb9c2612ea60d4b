"""reward-v1 on real tasks: oracle 1.0, inaction 0.0, partial-edit exploits earn
nothing, and precision's denominator keeps partial damage (hand-computed)."""

from __future__ import annotations

import unittest

from redaction_pressure import policies, score_completion
from redaction_pressure.corpus.stream import Record, Span
from redaction_pressure.scoring.reward import WEIGHTS, evaluate
from tests.support import tasks as shared
from tests.support.util import positional_rules, reply

DEV = shared.dev()


class RequiredOutcomes(unittest.TestCase):
    def test_oracle_scores_one_on_every_dev_task(self):
        for task in DEV:
            s = score_completion(task, policies.oracle(task))
            self.assertEqual((s.reward, s.errors), (1.0, ()), task.id)

    def test_oracle_scores_one_on_200_train_tasks(self):
        for index in range(0, 200 * 7919, 7919):  # spread over the train range (levels 2-5: test_levels)
            task = shared.task("train", index)
            s = score_completion(task, policies.oracle(task))
            self.assertEqual(s.reward, 1.0, task.id)

    def test_oracle_fits_the_rule_limit(self):
        for task in DEV:
            self.assertLessEqual(policies.oracle(task).count('"pattern"'), 24)

    def test_inaction_scores_zero(self):
        for task in DEV:
            s = score_completion(task, policies.inaction(task))
            self.assertEqual((s.reward, s.valid), (0.0, 1.0), task.id)

    def test_first_character_exploit_scores_zero_on_every_dev_task(self):
        for task in DEV:
            s = score_completion(task, policies.first_char(task))
            self.assertEqual(s.errors, ())
            self.assertEqual(s.reward, 0.0, task.id)
            self.assertGreater(s.outcome.removed_chars, 0)  # it did delete something

    def test_last_character_and_all_but_one_earn_no_recall(self):
        variants = {
            "last": lambda n: (n - 1, n),
            "all_but_first": lambda n: (1, n),
            "all_but_last": lambda n: (0, n - 1),
        }
        for name, cut in variants.items():
            for task in DEV[:16]:
                s = score_completion(task, positional_rules(task, cut))
                self.assertEqual(s.errors, (), (name, task.id))
                self.assertGreater(s.outcome.removed_chars, 0)
                self.assertEqual((s.recall, s.precision, s.clean, s.reward), (0, 0, 0, 0), (name, task.id))

    def test_literal_full_removal_matches_oracle(self):
        """Sanity check of the literal-rule helper the exploit tests rely on."""
        for task in DEV[:8]:
            s = score_completion(task, positional_rules(task, lambda n: (0, n)))
            self.assertEqual(s.reward, 1.0, task.id)

    def test_baseline_is_between(self):
        """A scanner's fixed rules find the vendors' formats and little else: far from 0
        and from 1 (0.229 on corpus-v4's dev, 0.177 on corpus-v5's, which holds more
        files without a secret and more decoys)."""
        mean = sum(score_completion(t, policies.baseline(t)).reward for t in DEV) / len(DEV)
        self.assertGreater(mean, 0.1)
        self.assertLess(mean, 0.9)


class HandComputed(unittest.TestCase):
    """A two-record task built by hand, so the expected values are arithmetic."""

    def setUp(self):
        base = DEV[0]
        r1 = "key=AKIA1234567890ABCDEF end\n"
        r2 = "pw=hunter2hunter2 ok\n"
        records = (Record(r1, "dotenv", (Span(4, 24, "aws_access_key_id"),), ()),
                   Record(r2, "dotenv", (Span(3, 17, "generic_secret_assignment"),), ()))
        import dataclasses
        self.task = dataclasses.replace(base, heldout=records)

    def test_whole_secret_plus_neighbours(self):
        # Rule 1 removes the AWS key plus " end" (20 + 4 chars); rule 2 removes "hunter2h" only
        # (8 chars of a 14-char secret: a partial edit).
        s = score_completion(self.task, reply([(r"AKIA\w+ end", "[REDACTED]"), (r"hunter2h", "")]))
        self.assertEqual(s.recall, 0.5)                 # 1 of 2 spans fully removed
        self.assertEqual(s.precision, 20 / (24 + 8))    # partial damage stays in the denominator
        self.assertEqual(s.clean, 0.0)
        self.assertAlmostEqual(s.reward, 0.35 * 0.5 + 0.35 * 20 / 32)
        self.assertEqual(s.outcome.collateral_chars, 4)

    def test_exact_removal_is_clean(self):
        s = score_completion(self.task, reply([(r"AKIA[0-9A-Z]{16}", "[REDACTED]"), (r"(?<=pw=)\w+", "")]))
        self.assertEqual((s.recall, s.precision, s.clean, s.reward), (1.0, 1.0, 1.0, 1.0))

    def test_later_rule_matching_an_earlier_marker_removes_nothing_more(self):
        rules = [(r"AKIA[0-9A-Z]{16}", "[REDACTED]"), (r"\[REDACTED\]", ""), (r"(?<=pw=)\w+", "")]
        s = score_completion(self.task, reply(rules))
        self.assertEqual(s.reward, 1.0)

    def test_marker_straddling_rule_counts_only_source_characters(self):
        rules = [(r"AKIA[0-9A-Z]{16}", "[REDACTED]"), (r"\] e", ""), (r"(?<=pw=)\w+", "")]
        s = score_completion(self.task, reply(rules))
        self.assertEqual(s.outcome.removed_chars, 20 + 2 + 14)   # " e" are source characters
        self.assertEqual(s.outcome.collateral_chars, 2)
        self.assertEqual(s.clean, 0.0)

    def test_errors_zero_every_reward(self):
        s = score_completion(self.task, reply([(r"AKIA[0-9A-Z]{16}", "[REDACTED]"), ("(", "")]))
        self.assertEqual((s.valid, s.recall, s.precision, s.clean, s.reward), (0, 0, 0, 0, 0))

    def test_weights(self):
        self.assertEqual(WEIGHTS, {"recall": 0.35, "precision": 0.35, "clean": 0.30})
        self.assertEqual(evaluate([bytearray(3)], [[(0, 1)]], False).reward, 0.0)


if __name__ == "__main__":
    unittest.main()
