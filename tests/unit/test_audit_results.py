"""Manifest v3: what an archive now signs beyond v2, each figure recomputed by `audit
verify` from the traces: uncertainty, leaks by class, each level of a run that mixes
them, what was evaluated, and rollouts left out by `seal --allow-failed`."""

from __future__ import annotations

import json
import random
import shutil
import statistics
import unittest
import uuid

from audit import _dsse, _statement
from audit._report import render_json
from audit._verify import FAILED, PASSED, verify_archive
from redaction_pressure.results.summary import summarize
from redaction_pressure.results.text import eval_lines
from redaction_pressure.scoring.summary import trace_reward
from tests.support import audit_fixtures as fx

human = fx.human


class Case(fx.CheckAssertions, unittest.TestCase):
    def verify(self, archive, owner="owner"):
        return verify_archive(archive, fx.public_key(owner), None, jobs=1)


class Uncertainty(Case):
    def test_figures_are_signed_recomputed_and_shown(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        traces = [t for ep in fx.read_episodes(archive / "traces.jsonl") for t in ep["traces"]]
        self.assertEqual(manifest["summary"]["uncertainty"], summarize(traces)["uncertainty"])
        reward = manifest["summary"]["uncertainty"]["reward"]
        self.assertEqual((reward["n"], reward["tasks"]), (8, 8))
        self.assertGreater(reward["se"], 0)
        report = self.verify(archive)
        self.assertEqual(report.exit_code, 0)
        self.assertCheck(report, "summary", PASSED, f"± {reward['se']:.4f}")
        self.assertIn(f"mean reward {manifest['summary']['mean_reward']:.4f} ± {reward['se']:.4f} (95% CI",
                      human(report))

    def test_a_signer_cannot_shrink_an_interval_or_hide_a_leaking_class(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["summary"]["uncertainty"]["reward"]["se"] /= 2
        manifest["summary"]["uncertainty"]["reward"]["bootstrap95"][0] += 0.01
        leaking = next(k for k, v in manifest["summary"]["secret_classes"].items() if v["leaked"])
        manifest["summary"]["secret_classes"][leaking].update(removed=manifest["summary"]["secret_classes"][leaking]
                                                              ["labelled"], leaked=0)
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "summary")
        self.assertCheck(report, "summary", FAILED, "summary.uncertainty: manifest says", "summary.secret_classes")

    def test_class_tallies_in_the_traces_are_rescored(self):
        def forge(episodes):
            red = episodes[1]["traces"][0]["info"]["redaction"]
            for pair in red["secret_classes"].values():
                pair[1] = pair[0]  # every class fully removed
        report = self.verify(fx.seal_run(fx.tampered_run(fx.dev_run(), forge), owner="attacker"), owner="attacker")
        self.assertCheck(report, "rescoring", FAILED, "info.redaction.secret_classes recorded")


class Evaluated(Case):
    def test_the_policy_is_named_and_checked(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        self.assertEqual(manifest["evaluated"]["kind"], "policy")
        self.assertEqual(manifest["evaluated"]["policy"], "audit-test-dev")
        report = self.verify(archive)
        self.assertCheck(report, "evaluated", PASSED, "built-in policy audit-test-dev (no model)")
        self.assertIn("evaluated: built-in policy audit-test-dev (no model)", human(report))
        self.assertEqual(json.loads(render_json(report))["evaluated"], manifest["evaluated"])
        manifest["evaluated"].update(kind="model", model="frontier-model-9", harness="null")
        del manifest["evaluated"]["policy"]
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "evaluated")
        self.assertCheck(report, "evaluated", FAILED, "evaluated.model: manifest says 'frontier-model-9', the traces "
                                                      "give 'policy:audit-test-dev'")


def v2_archive():
    """An archive as environment 0.3.x sealed it: a manifest-v2 under predicate type run/v2."""
    import hashlib

    archive = fx.seal_run(fx.dev_run())
    m = fx.manifest_of(archive)
    m["manifest_version"] = "manifest-v2"
    m["task_params"]["level"] = m.pop("levels")[0]
    for key in ("evaluated", "by_level"):
        del m[key]
    for key in ("uncertainty", "secret_classes", "decoy_classes"):
        del m["summary"][key]
    for key in ("standard_tasks", "missing_tasks"):
        del m["coverage"][key]
    toml = fx.dumps_manifest(m)
    (archive / "manifest.toml").write_bytes(toml)
    statement = _statement.build(m, hashlib.sha256(toml).hexdigest()) | {"predicateType": _statement.V2_PREDICATE_TYPE}
    fx.resign(archive, _statement.dumps(statement))
    return archive


class OldManifests(Case):
    def test_a_manifest_v2_archive_names_the_release_that_verifies_it(self):
        archive = v2_archive()
        r = fx.audit_in_process("validate", archive)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)  # valid under its own schemas
        report = self.verify(archive)
        self.assertCheck(report, "manifest-schema", FAILED, "made by environment 0.2.x or 0.3.x (manifest v2)")
        self.assertEqual(report.as_dict()["format"], "manifest-v2 (not verified by this release)")
        self.assertIn("NOT VERIFIED: this archive was made by environment 0.2.x or 0.3.x (manifest v2)", human(report))
        self.assertEqual(_dsse.PAYLOAD_TYPE, "application/vnd.in-toto+json")  # the envelope itself is unchanged


class AllowFailed(Case):
    @staticmethod
    def break_rollouts(episodes, which=(1, 4)):
        for k in which:
            t = episodes[k]["traces"][0]
            t["ok"] = False
            t["errors"] = [{"type": "ProviderError", "message": "503 upstream connect error"}]
            t["rewards"], t["metrics"] = {}, {}
            t["info"].pop("redaction", None)

    def test_seals_the_successful_rollouts_as_a_partial_archive(self):
        run = fx.tampered_run(fx.dev_run(), self.break_rollouts)
        key = fx.keys("owner")[0]
        out = fx.fresh_dir("partial")
        refused = fx.audit_in_process("seal", run, "--key", key, "--out", fx.fresh_dir("x"))
        self.assertEqual(refused.returncode, 1)
        self.assertIn("2 of 8 rollouts failed (ProviderError: 503 upstream connect error)", refused.stderr)
        self.assertIn("`audit seal --allow-failed` seals the 6 successful rollouts as a PARTIAL archive",
                      refused.stderr)
        r = fx.audit_in_process("seal", run, "--key", key, "--out", out, "--allow-failed")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"sealed 6 of 8 rollouts as a PARTIAL archive into {out}: 2 of 8 rollouts failed "
                      "(ProviderError: 503 upstream connect error) left out", r.stdout)
        lines = (run / "traces.jsonl").read_bytes().splitlines(keepends=True)
        kept = b"".join(x for k, x in enumerate(lines) if k not in (1, 4))
        self.assertEqual((out / "traces.jsonl").read_bytes(), kept)
        coverage = fx.manifest_of(out)["coverage"]
        self.assertEqual(coverage["excluded"], {"rollouts": 2, "failed": 2, "task_indices": [1, 4],
                                                "reasons": "2 of 8 rollouts failed (ProviderError: 503 upstream "
                                                           "connect error)"})
        self.assertEqual(coverage["missing_tasks"], [1, 4, *range(8, 64)])
        report = self.verify(out)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        want = "PARTIAL: 6 of 64 dev tasks, 1 rollout each; missing tasks 1, 4, 8–63; 2 failed rollouts not sealed"
        self.assertEqual(report.as_dict()["coverage"]["label"], want)
        self.assertIn(want, human(report))
        # the signer cannot drop the note: the coverage is then not the one recomputed with it
        manifest = fx.manifest_of(out)
        del manifest["coverage"]["excluded"]
        fx.resign(out, manifest)
        self.assertCheck(self.verify(out), "coverage", FAILED, "coverage.label")

    def test_an_episode_marked_failed_is_left_out_like_a_failed_rollout(self):
        """Red team, 2026-12-04, second round: an Episode with ok false that still holds a
        scored trace (verifiers leaves one after an episode-level time-out) was refused
        even with --allow-failed, as "not one result of one build"; verifiers' resume runs such
        an Episode, so it is a failed rollout to the sealer too."""
        def episode_timed_out(episodes):
            episodes[2]["ok"] = False
            episodes[2]["errors"] = [{"type": "EpisodeTimeout", "message": "episode exceeded 600 s"}]
        run = fx.tampered_run(fx.dev_run(), episode_timed_out)
        key = fx.keys("owner")[0]
        refused = fx.audit_in_process("seal", run, "--key", key, "--out", fx.fresh_dir("x"))
        self.assertEqual(refused.returncode, 1)
        self.assertIn("1 of 8 Episodes marked failed though their traces were scored (EpisodeTimeout: episode "
                      "exceeded 600 s)", refused.stderr)
        self.assertIn("`audit seal --allow-failed` seals the 7 successful rollouts", refused.stderr)
        out = fx.fresh_dir("partial")
        r = fx.audit_in_process("seal", run, "--key", key, "--out", out, "--allow-failed")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(fx.manifest_of(out)["coverage"]["excluded"]["task_indices"], [2])
        self.assertEqual(self.verify(out).exit_code, 0)

    def test_nothing_to_seal_when_every_rollout_failed(self):
        run = fx.tampered_run(fx.dev_run(), lambda eps: self.break_rollouts(eps, range(8)))
        r = fx.audit_in_process("seal", run, "--key", fx.keys("owner")[0], "--out", fx.fresh_dir("x"),
                                "--allow-failed")
        self.assertEqual(r.returncode, 1)
        self.assertIn("all 8 rollouts failed", r.stderr)
        self.assertIn("nothing to seal", r.stderr)


class MixedLevels(Case):
    @classmethod
    def setUpClass(cls):
        from redaction_pressure import policies
        from redaction_pressure.taskset import RedactionConfig

        config = RedactionConfig(id="redaction-pressure", split="dev", level_mix={1: 1.0, 2: 1.0})
        cls.mixed = fx._run("dev", policies.baseline, 8, config=config, tag="-mixed")

    def test_a_mixed_run_reports_each_level(self):
        traces = [t for ep in fx.read_episodes(self.mixed / "traces.jsonl") for t in ep["traces"]]
        levels = {t["info"]["environment"]["task_params"]["level"] for t in traces}
        self.assertEqual(levels, {1, 2})
        summary = summarize(traces)
        self.assertEqual(summary["levels"], [1, 2])
        self.assertEqual([lv["level"] for lv in summary["by_level"]], [1, 2])
        self.assertEqual(sum(lv["traces"] for lv in summary["by_level"]), 8)
        lines = eval_lines(summary, "runs/x/traces.jsonl", "baseline", 1.0)
        self.assertLessEqual(len(lines), 25)
        self.assertIn("levels 1, 2 (mixed)", lines[0])
        self.assertTrue(any(line.startswith("  level 2: ") for line in lines))

    def test_seal_and_verify_a_mixed_run(self):
        archive = fx.seal_run(self.mixed)
        manifest = fx.manifest_of(archive)
        self.assertEqual(manifest["levels"], [1, 2])
        self.assertEqual(manifest["task_params"], {"n_shown": 8, "n_eval": 16, "budget_s": 2.0})
        by_level = manifest["by_level"]
        self.assertEqual(sorted(i for lv in by_level for i in lv["coverage"]["task_indices"]), list(range(8)))
        self.assertIn("difficulty levels 1, 2 mixed", manifest["summary"]["label"])
        report = self.verify(archive)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        self.assertIs(report.standard_task_params, False)
        shown = human(report)
        self.assertIn("VERIFIED — LEVELS 1, 2 (MIXED), NOT THE STANDARD BENCHMARK", shown)
        self.assertIn("level 2: ", shown)
        manifest["by_level"][1]["summary"]["mean_reward"] = 1.0
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "summary")
        self.assertCheck(report, "summary", FAILED, "by_level: level 2's figures are not its traces'")


    def test_the_uneven_note_counts_rollouts_per_task_at_its_level(self):
        """Review, 2026-12-04: the note read the run's coverage (rollouts per index), so a
        run holding indices 0-3 once at each of two levels was called uneven, and one
        with index 0 twice at level 1 and index 1 once at each level was not."""
        from audit._manifest import MEAN_OVER_TASKS, mean_note

        self.assertEqual(mean_note(fx.manifest_of(fx.seal_run(self.mixed))), "")
        even_keys = {"coverage": {"rollouts": [2, 2, 2, 2]},
                     "by_level": [{"coverage": {"rollouts": [1, 1, 1, 1]}}, {"coverage": {"rollouts": [1, 1, 1, 1]}}]}
        uneven_keys = {"coverage": {"rollouts": [2, 2]},
                       "by_level": [{"coverage": {"rollouts": [2, 1]}}, {"coverage": {"rollouts": [1]}}]}
        self.assertEqual(mean_note(even_keys), "")
        self.assertEqual(mean_note(uneven_keys), f" ({MEAN_OVER_TASKS})")


def _padded(episodes: list[dict], task: int, copies: int = 50) -> None:
    """``copies`` more rollouts of the Episode of dev task ``task``: genuine copies, each
    with fresh Episode and trace ids and the same run id, appended to the file."""
    rng = random.Random(2026_12_04)
    source = next(ep for ep in episodes if ep["traces"][0]["info"]["environment"]["task_index"] == task)
    for _ in range(copies):
        ep = json.loads(json.dumps(source))
        ep["id"] = uuid.UUID(int=rng.getrandbits(128)).hex
        for trace in ep["traces"]:
            trace["id"] = uuid.UUID(int=rng.getrandbits(128)).hex
        episodes.append(ep)


class TaskWeightedMean(Case):
    """Red team, 2026-12-04 (MEDIUM): the mean counted rollouts, so 50 more genuine
    rollouts of a good task raised a verified, sealed, rescored and reported mean (an
    8-task baseline run went from 0.134 to 0.320, outside its own interval). Every task
    now weighs the same: the padded run shows the honest run's figures."""

    @classmethod
    def setUpClass(cls):
        honest = fx.dev_run()
        traces = [t for ep in fx.read_episodes(honest / "traces.jsonl") for t in ep["traces"]]
        cls.honest = summarize(traces)
        best = max(traces, key=trace_reward)["info"]["environment"]["task_index"]
        cls.padded = fx.tampered_run(honest, lambda episodes: _padded(episodes, best))
        shutil.copytree(honest / "configs", cls.padded / "configs")
        cls.archive = fx.seal_run(cls.padded)

    def assertHonest(self, mean, interval=None):
        want = self.honest["mean_reward"]
        self.assertAlmostEqual(mean, want, places=12)
        if interval is not None:
            self.assertLessEqual(interval[0], want)
            self.assertLessEqual(want, interval[1])

    def test_the_sealed_and_verified_mean_is_the_mean_over_tasks(self):
        summary = fx.manifest_of(self.archive)["summary"]
        self.assertEqual(summary["traces"], 58)
        self.assertLess(summary["mean_reward"], statistics.fmean(
            trace_reward(t) for ep in fx.read_episodes(self.padded / "traces.jsonl") for t in ep["traces"]))
        reward = summary["uncertainty"]["reward"]
        self.assertEqual((reward["n"], reward["tasks"]), (58, 8))
        self.assertHonest(summary["mean_reward"], reward["ci95"])
        self.assertHonest(reward["mean"], reward["bootstrap95"])
        # the honest run's figures, but for an ulp: 51 copies of a reward need not average to it to the bit
        want = self.honest["uncertainty"]["reward"]
        for found, expected in zip([reward["se"], *reward["ci95"], *reward["bootstrap95"]],
                                   [want["se"], *want["ci95"], *want["bootstrap95"]], strict=True):
            self.assertAlmostEqual(found, expected, places=12)
        report = self.verify(self.archive)
        self.assertEqual(report.exit_code, 0)
        self.assertCheck(report, "summary", PASSED, f"mean reward {self.honest['mean_reward']:.4f}",
                         "mean over tasks: each task's rollouts averaged first")
        self.assertIn(f"mean reward {self.honest['mean_reward']:.4f}", human(report))

    def test_the_run_summary_rescore_and_report_show_the_mean_over_tasks(self):
        from redaction_pressure.report import render_report
        from redaction_pressure.rescore import rescore

        traces = [t for ep in fx.read_episodes(self.padded / "traces.jsonl") for t in ep["traces"]]
        summary = summarize(traces)
        self.assertHonest(summary["mean_reward"], summary["uncertainty"]["reward"]["ci95"])
        self.assertIn("uneven rollouts per task", "\n".join(eval_lines(summary, "t", "p", 0.0)))
        headline = rescore(self.padded).headline()
        self.assertIn(f"58/58 rewards reproduced, mean {self.honest['mean_reward']:.3f}", headline)
        self.assertIn("mean over tasks", headline)
        page = render_report(self.archive, jobs=1)  # figures from the traces; `verify` is tested above
        est = self.honest["uncertainty"]["reward"]
        self.assertIn(f"{self.honest['mean_reward']:.3f} ± {est['se']:.3f}", page)
        self.assertIn(f"bootstrap {est['bootstrap95'][0]:.3f} to {est['bootstrap95'][1]:.3f}", page)
        self.assertIn("Uneven rollouts per task", page)


if __name__ == "__main__":
    unittest.main()
