"""Summaries people read: leaks by class, coverage of the standard evaluation, what was
evaluated, and the 25 lines `eval` prints."""

from __future__ import annotations

import copy
import math
import unittest

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.corpus.catalog import catalog
from redaction_pressure.results.classes import class_summary
from redaction_pressure.results.coverage import STANDARD_EVALUATIONS, coverage_of, label
from redaction_pressure.results.evaluated import describe, evaluated_of
from redaction_pressure.results.summary import summarize
from redaction_pressure.results.text import MAX_LINES, eval_lines
from redaction_pressure.taskset import DEFAULT_COUNTS
from tests.support import audit_fixtures as fx

OPEN_WORLD_CLASSES = {"house_format", "context_secret", "context_lookalike"}


class Classes(unittest.TestCase):
    def test_class_tallies_add_up_to_the_family_tallies(self):
        static = {f["name"] for f in catalog()}
        for index in (0, 3, 17):
            task = load_task("dev", index)
            s = score_completion(task, policies.baseline(task))
            for fams, classes in ((s.secret_families, s.secret_classes), (s.decoy_families, s.decoy_classes)):
                self.assertEqual([sum(v[0] for v in fams.values()), sum(v[1] for v in fams.values())],
                                 [sum(v[0] for v in classes.values()), sum(v[1] for v in classes.values())])
                for name in classes:  # a static family, an open-world class, or a policy category
                    self.assertTrue(name in static or name in OPEN_WORLD_CLASSES or name.startswith("house_")
                                    or name in fams, name)
            invented = [f for f in s.secret_families if f not in static and f not in s.secret_classes]
            self.assertTrue(invented, "a stream invents families of its own")
            self.assertIn("house_format", s.secret_classes)

    def test_a_run_sums_classes_and_falls_back_to_names_for_old_traces(self):
        new = {"info": {"redaction": {"secret_classes": {"house_format": [3, 1]}, "decoy_classes": {},
                                      "secret_families": {"zork_api_key": [3, 1]}, "decoy_families": {}}}}
        old = {"info": {"redaction": {"secret_families": {"gitlab_token": [2, 2]}, "decoy_families": {}}}}
        hostile = {"info": {"redaction": {"secret_classes": {"x": [1, 5], "y": "no", "z": [True, 0]}}}}
        self.assertEqual(class_summary([new, copy.deepcopy(new), old, hostile])["secret_classes"],
                         {"gitlab_token": {"labelled": 2, "removed": 2, "leaked": 0},
                          "house_format": {"labelled": 6, "removed": 2, "leaked": 4}})


class CompareTies(unittest.TestCase):
    def test_a_difference_of_rounding_is_a_tie(self):
        """Three rollouts 0.1, 0.2, 0.3 average to 0.19999999999999998, one of 0.2 is 0.2:
        the same result, 2.8e-17 apart, which 0.8.0 counted as a win for B."""
        from redaction_pressure.results.compare import TIE, Side, compare
        from redaction_pressure.results.recorded import Recorded

        def record(reward: float) -> Recorded:
            return Recorded(0, 1, "dev", "c", 100000, (8, 16, 2.0), ("b",) * 6, (reward,) * 4, {}, {})
        a = Side("A", [record(0.1), record(0.2), record(0.3)], 0, "dev", "")
        b = Side("B", [record(0.2)], 0, "dev", "")
        self.assertNotEqual(math.fsum([0.1, 0.2, 0.3]) / 3, 0.2)
        c = compare(a, b)
        self.assertEqual((c.wins, c.ties, c.losses), (0, 1, 0))
        self.assertEqual(compare(a, Side("B", [record(0.2 + 10 * TIE)], 0, "dev", "")).wins, 1)


class Coverage(unittest.TestCase):
    def test_the_standard_private_evaluation_can_be_complete(self):
        self.assertEqual(STANDARD_EVALUATIONS, {"dev": 64, "private_eval": 64})
        self.assertEqual(DEFAULT_COUNTS["private_eval"], STANDARD_EVALUATIONS["private_eval"])  # what vf-eval runs
        c = coverage_of("private_eval", range(64))
        self.assertEqual((c["complete"], c["label"], c["missing_tasks"]),
                         (True, "complete: the standard private evaluation (private_eval tasks 0–63), 1 rollout "
                                "each", []))
        self.assertEqual(label("private_eval", [0, 1, 2, 3], [1] * 4),
                         "PARTIAL: 4 of the 64 tasks of the standard private evaluation (private_eval tasks 0–63), "
                         "1 rollout each; missing tasks 4–63")
        self.assertEqual(label("private_eval", [*range(64), 100], [1] * 65),
                         "PARTIAL: 64 of the 64 tasks of the standard private evaluation (private_eval tasks 0–63), "
                         "1 rollout each; 1 private_eval task outside it")

    def test_left_out_rollouts_make_a_run_partial(self):
        excluded = {"rollouts": 2, "failed": 2, "task_indices": [3, 9], "reasons": "2 of 64 rollouts failed (...)"}
        c = coverage_of("dev", [i for i in range(64) if i not in (3, 9)], excluded)
        self.assertFalse(c["complete"])
        self.assertEqual(c["missing_tasks"], [3, 9])
        self.assertEqual(c["label"], "PARTIAL: 62 of 64 dev tasks, 1 rollout each; missing tasks 3, 9; 2 failed "
                                     "rollouts not sealed")
        self.assertEqual(coverage_of("train", [5])["label"], "PARTIAL: 1 of 10000000 train tasks, 1 rollout each")


class Evaluated(unittest.TestCase):
    def trace(self, model="m", sampling=None, harness="null"):
        return {"agent": {"config": {"model": model, "sampling": sampling or {}, "harness": {"id": harness}}}}

    def test_model_sampling_harness_and_run(self):
        runs = [{"name": "e2e", "id": "disabled-55723a6eab484e09"}] * 2
        sampling = {"temperature": 0.7, "top_p": None, "max_tokens": 2048, "extra": {"a": [1]}}
        found, problems = evaluated_of([self.trace("gpt", sampling), self.trace("gpt", sampling)], runs)
        self.assertEqual(problems, [])
        self.assertEqual(found, {"kind": "model", "model": "gpt", "harness": "null", "run_name": "e2e",
                                 "run_id": "disabled-55723a6eab484e09",
                                 "sampling": {"extra": '{"a":[1]}', "max_tokens": 2048, "temperature": 0.7}})
        self.assertEqual(describe(found), 'model gpt (extra={"a":[1]}, max_tokens=2048, temperature=0.7) · harness '
                                          'null · run e2e (id disabled-55723a6eab484e0…, not uploaded)')

    def test_a_built_in_policy_and_a_run_that_mixes_models(self):
        policy = {"agent": {"config": {"model": "policy:baseline"}}}
        found, problems = evaluated_of([policy], [{"name": "dev-baseline", "id": "rp-1"}])
        self.assertEqual((found["kind"], found["policy"], problems), ("policy", "baseline", []))
        self.assertEqual(describe(found), "built-in policy baseline (no model) · run dev-baseline (id rp-1)")
        _, problems = evaluated_of([self.trace("a"), self.trace("b", {"temperature": 1})], [{}, {}])
        self.assertEqual(len(problems), 2)
        self.assertIn("2 different models", problems[0])
        hostile, _ = evaluated_of([{"agent": {"config": {"model": "x" * 999, "sampling": [1]}}}], ["no"])
        self.assertEqual((len(hostile["model"]), hostile["sampling"], hostile["run_name"]), (256, {}, ""))


class EvalOutput(unittest.TestCase):
    """`eval` on dev: at most 25 lines, the headline first and last, every mean with ±."""

    @classmethod
    def setUpClass(cls):
        cls.traces = [t for ep in fx.read_episodes(fx.full_dev_run() / "traces.jsonl") for t in ep["traces"]]

    def test_the_footer_names_the_bootstrap_only_when_there_is_one(self):
        """A run above the bootstrap's task bound has no bootstrap interval; its footer
        said it had one (a last review of 2026-12-03)."""
        from unittest import mock

        from redaction_pressure.results import stats
        self.assertIn("and a seeded bootstrap over tasks", "\n".join(eval_lines(summarize(self.traces), "t", "o", 1.0)))
        with mock.patch.object(stats, "MAX_BOOTSTRAP_TASKS", 10):
            summary = summarize(self.traces)
        self.assertNotIn("bootstrap95", summary["uncertainty"]["reward"])
        footer = "\n".join(eval_lines(summary, "t", "o", 1.0))
        self.assertNotIn("and a seeded bootstrap", footer)
        self.assertIn("normal approximation (no bootstrap: it runs for at most 2,000 tasks)", footer)

    def test_shape(self):
        for traces, size in ((self.traces, "64 tasks"), (self.baseline_like(), "64 tasks, 128 rollouts")):
            summary = summarize(traces)
            lines = eval_lines(summary, "runs/dev-x/traces.jsonl", "oracle", 1.0)
            with self.subTest(size=size):
                self.assertLessEqual(len(lines), MAX_LINES, "\n".join(lines))
                self.assertEqual(lines[0], lines[-1])
                self.assertTrue(lines[0].startswith(f"public dev split (not a private evaluation), {size}, "
                                                    "level 1: reward "), lines[0])
                self.assertIn(" ± ", lines[0])
                self.assertIn("traces runs/dev-x/traces.jsonl", lines[0])
                for metric in ("reward", "recall", "precision", "clean"):
                    self.assertTrue(any(line.startswith(f"  {metric} ") and " ± " in line for line in lines), metric)
                self.assertTrue(any(line.startswith("secrets leaked, by class") for line in lines))
        self.assertTrue(any(line.startswith("  rollouts: 64 tasks with 2: best-of-2 ") for line in lines))
        full = eval_lines(summarize(self.traces, families=True), "t", "oracle", 1.0, families=True)
        self.assertGreater(len(full), MAX_LINES)
        self.assertTrue(any(line.startswith("secret families (by name)") for line in full))

    def baseline_like(self):
        """The oracle's traces, with rollouts doubled and leaks: the spread line shows."""
        out = []
        for t in self.traces:
            for k in range(2):
                t2 = copy.deepcopy(t)
                t2["rewards"]["recall"]["score"] = 0.5 * k
                for pair in t2["info"]["redaction"]["secret_classes"].values():
                    pair[1] = pair[0] // 2
                out.append(t2)
        return out

    def test_json_summary_is_by_class_with_uncertainty(self):
        summary = summarize(self.traces)
        self.assertNotIn("secret_families", summary)
        self.assertIn("secret_families", summarize(self.traces, families=True))
        self.assertEqual(summary["levels"], [1])
        self.assertEqual(len(summary["by_level"]), 1)
        self.assertEqual(summary["uncertainty"]["reward"]["mean"], summary["mean_reward"])
        self.assertEqual(summary["uncertainty"]["reward"]["se"], 0.0)  # the oracle: 1.0 everywhere
        self.assertLess(len(summary["secret_classes"]), 80)


if __name__ == "__main__":
    unittest.main()
