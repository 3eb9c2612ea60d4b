"""Run summaries: exact means whatever the order of the traces."""

from __future__ import annotations

import unittest

from audit._manifest import summarize as manifest_summary
from redaction_pressure.results.summary import summarize
from redaction_pressure.scoring.reward import WEIGHTS
from redaction_pressure.task.splits import PUBLIC


def _trace(score: float, clean: float = 0.0, errors: int = 0) -> dict:
    weighted = {"recall": score, "precision": score, "clean": clean}
    return {"rewards": {k: {"score": v, "weight": WEIGHTS[k]} for k, v in weighted.items()},
            "info": {"environment": {"split": "dev", "task_index": 0, "task_params": {"level": 1}},
                     "redaction": {"secret_families": {}, "decoy_families": {}},
                     "redaction_errors": [{"code": "invalid_regex"}] * errors}}


class Summarize(unittest.TestCase):
    def test_means_do_not_depend_on_trace_order(self):
        # Naive left-to-right sums of these give different results in different orders.
        rewards = [1.0] + [1e-16] * 10
        forward = summarize([_trace(r) for r in rewards])
        backward = summarize([_trace(r) for r in reversed(rewards)])
        self.assertNotEqual(sum(rewards), sum(reversed(rewards)))
        self.assertEqual(forward["mean_reward"], backward["mean_reward"])
        self.assertEqual(forward["mean_recall"], backward["mean_recall"])

    def test_the_cli_and_the_signed_manifest_report_the_same_figures(self):
        traces = [_trace(0.5, 1.0), _trace(0.25, 0.0, errors=2), _trace(1.0, 1.0)]
        cli = summarize(traces)
        manifest, _ = manifest_summary(traces, "dev", {"n_shown": 8, "n_eval": 16, "budget_s": 2.0}, [1])
        for key in ("traces", "mean_reward", "mean_recall", "mean_precision", "clean_rate", "invalid", "uncertainty",
                    "secret_classes", "decoy_classes"):
            self.assertEqual(cli[key], manifest[key], key)
        self.assertEqual(cli["invalid"], 1)
        self.assertEqual(cli["errors"], {"invalid_regex": 2})
        self.assertAlmostEqual(cli["mean_reward"], (0.7 * 0.5 + 0.3 + 0.7 * 0.25 + 1.0) / 3, places=15)

    def test_the_split_named_is_the_one_commitment_and_seeds_prove(self):
        dev = PUBLIC["dev"]

        def labelled(split):
            traces = [_trace(0.5) for _ in range(2)]
            for i, t in enumerate(traces):
                t["info"]["environment"].update(split=split, split_commitment=dev.commitment, task_index=i,
                                                task_seed=dev.start + i)
            return summarize(traces)
        self.assertEqual((labelled("dev")["split"], labelled("dev")["split_label"]),
                         ("dev", "public dev split (not a private evaluation)"))
        relabelled = labelled("private_eval")
        self.assertEqual(relabelled["split"], "dev")
        self.assertEqual(relabelled["split_label"], "public dev split (not a private evaluation) — labelled "
                                                    "private_eval, committed as public dev: NOT a private evaluation")


if __name__ == "__main__":
    unittest.main()
