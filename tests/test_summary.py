"""Run summaries: exact means whatever the order of the traces."""

from __future__ import annotations

import unittest

from redaction_pressure._summary import summarize


def _trace(reward: float) -> dict:
    return {"info": {"environment": {"split": "dev"},
                     "redaction": {"reward": reward, "recall": reward, "precision": reward, "clean": 0.0,
                                   "valid": 1.0, "secret_families": {}, "decoy_families": {}},
                     "redaction_errors": []}}


class Summarize(unittest.TestCase):
    def test_means_do_not_depend_on_trace_order(self):
        # Naive left-to-right sums of these give different results in different orders.
        rewards = [1.0] + [1e-16] * 10
        forward = summarize([_trace(r) for r in rewards])
        backward = summarize([_trace(r) for r in reversed(rewards)])
        self.assertNotEqual(sum(rewards), sum(reversed(rewards)))
        self.assertEqual(forward["mean_reward"], backward["mean_reward"])
        self.assertEqual(forward["mean_recall"], backward["mean_recall"])


if __name__ == "__main__":
    unittest.main()
