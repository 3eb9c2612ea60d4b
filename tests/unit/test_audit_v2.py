"""Manifest v2 beyond the Statement: coverage, machine speed (time-dependent episodes,
the 4x budget retry), `verify --jobs`, manifest-v1 archives, and the messages for a
run directory and for a run whose rollouts failed."""

from __future__ import annotations

import json
import unittest
from concurrent.futures import wait as real_wait
from unittest import mock

from audit import _parallel, _rescore
from audit._coverage import coverage_of, label
from audit._verify import FAILED, PASSED, SKIPPED, verify_archive
from tests.support import audit_fixtures as fx

human = fx.human


class Case(fx.CheckAssertions, unittest.TestCase):
    def verify(self, archive, owner="owner", jobs=1):
        return verify_archive(archive, fx.public_key(owner), None, jobs=jobs)


class Coverage(Case):
    def test_labels(self):
        self.assertEqual(label("dev", list(range(64)), [1] * 64), "complete: all 64 dev tasks, 1 rollout each")
        self.assertEqual(label("dev", list(range(64)), [3] * 64), "complete: all 64 dev tasks, 3 rollouts each")
        self.assertEqual(label("dev", [0, 1, 2], [1, 1, 1]),
                         "PARTIAL: 3 of 64 dev tasks, 1 rollout each; missing tasks 3–63")
        self.assertEqual(label("dev", [0, 2, 5], [1, 1, 1]),
                         "PARTIAL: 3 of 64 dev tasks, 1 rollout each; missing tasks 1, 3–4, 6–63")
        self.assertEqual(label("dev", list(range(64)), [1] * 63 + [2]),
                         "complete: all 64 dev tasks, 1 to 2 rollouts each (uneven)")
        c = coverage_of("dev", [5, 3, 5, 5])
        self.assertEqual((c["task_indices"], c["rollouts"], c["tasks"], c["complete"]), ([3, 5], [1, 3], 2, False))

    def test_partial_run_says_so_everywhere(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        self.assertEqual(manifest["coverage"]["task_indices"], list(range(8)))
        self.assertEqual(manifest["coverage"]["rollouts"], [1] * 8)
        self.assertEqual(manifest["summary"]["coverage"], "PARTIAL: 8 of 64 dev tasks, 1 rollout each; missing tasks "
                                                          "8–63")
        self.assertEqual(manifest["coverage"]["missing_tasks"], list(range(8, 64)))
        report = self.verify(archive)
        self.assertEqual(report.exit_code, 0)
        as_dict = report.as_dict()
        self.assertEqual(as_dict["coverage"]["label"], "PARTIAL: 8 of 64 dev tasks, 1 rollout each; missing tasks "
                                                       "8–63")
        self.assertIs(as_dict["coverage"]["complete"], False)
        self.assertIn("VERIFIED: every check that ran passed — public dev split (not a private evaluation); "
                      "PARTIAL: 8 of 64 dev tasks", human(report))

    def test_complete_dev_split(self):
        report = self.verify(fx.seal_run(fx.full_dev_run()))
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        self.assertEqual(report.as_dict()["coverage"]["label"], "complete: all 64 dev tasks, 1 rollout each")
        self.assertIs(report.as_dict()["coverage"]["complete"], True)
        self.assertIn("complete: all 64 dev tasks, 1 rollout each", human(report))

    def test_a_signer_cannot_claim_more_coverage(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["coverage"].update(task_indices=list(range(64)), rollouts=[1] * 64, tasks=64, complete=True,
                                    missing_tasks=[], label="complete: all 64 dev tasks, 1 rollout each")
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertEqual(sorted(c.name for c in report.failed), ["coverage"])
        self.assertCheck(report, "coverage", FAILED, "coverage.label: manifest says complete", "PARTIAL: 8 of 64")
        self.assertEqual(report.as_dict()["coverage"]["label"], "PARTIAL: 8 of 64 dev tasks, 1 rollout each; missing "
                                                                "tasks 8–63")
        manifest = fx.manifest_of(fx.seal_run(fx.dev_run()))
        manifest["summary"]["coverage"] = "complete: all 64 dev tasks, 1 rollout each"
        fx.resign(archive, manifest)
        self.assertCheck(self.verify(archive), "summary", FAILED, "summary.coverage")


def _timed_out_recording(trace):
    """``trace`` as a machine too slow for its budget records it: the real scorer's own
    time-out (with no budget left), written as the adapter writes a score."""
    task = _rescore.task_of(trace)
    score = _rescore.score_completion(task, _rescore.recorded_reply(trace), budget_s=0.0)
    assert {e.code for e in score.errors} & _rescore.TIME_CODES, score.errors
    fx.record(trace, score)


def slower_machine(factor: float, need: float = 0.9):
    """``score_completion`` on a machine ``factor`` times slower than the sealing one,
    for episodes that needed ``need`` of their budget there: out of time unless the
    budget is at least factor * need * the task's budget."""
    real = _rescore.score_completion

    def score(task, reply, budget_s=None):
        budget = task.budget_s if budget_s is None else budget_s
        return real(task, reply, budget_s=budget if budget >= factor * need * task.budget_s else 0.0)
    return score


class MachineSpeed(Case):
    def test_recorded_timeout_that_this_machine_finishes_is_time_dependent(self):
        def slow_sealer(episodes):
            for i in (1, 3):  # baseline and first-char replies: both scan
                _timed_out_recording(episodes[i]["traces"][0])
        archive = fx.seal_run(fx.tampered_run(fx.dev_run(), slow_sealer))
        with fx.scans_cost(1.0):  # half the 2 s budget here: the sealing machine was 2x slower
            report = self.verify(archive)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        self.assertCheck(report, "rescoring", PASSED, "2 TIME-DEPENDENT", "time-dependent: line 2 trace 0")
        self.assertEqual(report.as_dict()["time_dependent"], 2)
        self.assertIn("2 TIME-DEPENDENT episode(s)", human(report))
        self.assertIn("at least 1/4 of their budget", human(report))

    def test_a_timeout_this_machine_finishes_in_under_a_quarter_of_the_budget_fails(self):
        """A signer records `timeout` on replies they want to look worse (reward 0):
        tolerated as TIME-DEPENDENT whatever the scan cost here. A scan that takes less
        than budget/4 of CPU here could only time out on a machine more than 4x slower,
        outside the stated tolerance: a mismatch, not a machine-speed difference."""
        def laundered(episodes):
            for i in (1, 3):
                _timed_out_recording(episodes[i]["traces"][0])
        archive = fx.seal_run(fx.tampered_run(fx.dev_run(), laundered))
        report = self.verify(archive)  # these replies scan in milliseconds here
        self.assertOnlyFailures(report, "rescoring")
        self.assertCheck(report, "rescoring", FAILED, "2 of 8 traces",
                         "line 2 trace 0 (dev-000001): recorded a time-out", "less than 1/4 of the 2 s budget",
                         "more than 4x slower, outside the tolerance")
        self.assertEqual(report.time_dependent, 0)
        self.assertEqual(report.exit_code, 1)
        with fx.scans_cost(0.49):  # just under the line
            self.assertCheck(self.verify(archive), "rescoring", FAILED, "less than 1/4 of the 2 s budget")
        with fx.scans_cost(0.5):  # on it: a sealing machine 4x slower
            self.assertEqual(self.verify(archive).time_dependent, 2)

    def test_the_tolerance_holds_exactly_at_its_boundaries(self):
        """The 4x tolerance, at its two edges (SECURITY.md, "Machine speed and
        time-dependent episodes"), on the rescoring of one trace (`verify` runs it for
        each: the tests above). A recorded time-out this machine finishes is
        TIME-DEPENDENT when the scan here took at least budget/4 of CPU, exactly a quarter
        included, and a failure one float below it. A recording this machine reproduces
        only past the budget is confirmed when the reply needs at most 4x the budget here,
        exactly 4x included, and fails one float above it."""
        import math

        honest = fx.read_episodes(fx.dev_run() / "traces.jsonl")[1]["traces"][0]  # the baseline's reply scans
        timed_out = json.loads(json.dumps(honest))
        _timed_out_recording(timed_out)
        with fx.scans_cost(0.5):  # exactly 2 s / 4
            result = _rescore.rescore_trace(timed_out)
        self.assertEqual((result.problems, result.time_dependent), ([], True))
        with fx.scans_cost(math.nextafter(0.5, 0.0)):
            result = _rescore.rescore_trace(timed_out)
        self.assertFalse(result.time_dependent)
        self.assertEqual(len(result.problems), 1, result.problems)
        self.assertIn("less than 1/4 of the 2 s budget (0.5 s of CPU)", result.problems[0])

        with mock.patch.object(_rescore, "score_completion", slower_machine(4.0, need=1.0)):  # needs exactly 8 s
            result = _rescore.rescore_trace(honest)
        self.assertEqual((result.problems, result.extended), ([], True))
        with mock.patch.object(_rescore, "score_completion", slower_machine(4.0, need=math.nextafter(1.0, 2.0))):
            result = _rescore.rescore_trace(honest)
        self.assertEqual(len(result.problems), 1, result.problems)
        self.assertIn("ran out of time even with the budget extended 4x (8 s)", result.problems[0])

    def test_a_forged_timeout_still_fails(self):
        def forge(episodes):
            trace = episodes[1]["traces"][0]
            _timed_out_recording(trace)
            trace["rewards"]["recall"]["score"] = 1.0  # a time-out voids the episode
            trace = episodes[3]["traces"][0]
            _timed_out_recording(trace)
            trace["info"]["redaction"]["secrets_total"] += 1  # does not depend on the machine
            trace = episodes[0]["traces"][0]  # the oracle: scans fine
            trace["info"]["redaction_errors"].append({"code": "timeout", "message": "m", "rule": 0})
        report = self.verify(fx.seal_run(fx.tampered_run(fx.dev_run(), forge)))
        self.assertCheck(report, "rescoring", FAILED, "3 of 8 traces",
                         "line 2 trace 0 (dev-000001): recall recorded 1.0, recomputed 0.0",
                         "line 4 trace 0 (dev-000003): info.redaction.secrets_total recorded",
                         "line 1 trace 0 (dev-000000): metrics.valid recorded 1.0, recomputed 0.0")
        self.assertEqual(report.time_dependent, 0)

    def test_a_slower_verifier_retries_with_the_budget_extended(self):
        archive = fx.seal_run(fx.dev_run())
        with mock.patch.object(_rescore, "score_completion", slower_machine(3.0)):
            report = self.verify(archive)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        self.assertCheck(report, "rescoring", PASSED, "reproduced exactly with the budget extended 4x")
        self.assertGreater(report.budget_extended, 0)
        with mock.patch.object(_rescore, "score_completion", slower_machine(5.0)):
            report = self.verify(archive)
        self.assertCheck(report, "rescoring", FAILED, "ran out of time even with the budget extended 4x (8 s)")

    def test_a_forgery_is_not_excused_by_the_retry(self):
        def inflate(episodes):
            episodes[1]["traces"][0]["rewards"]["precision"]["score"] = 1.0
        archive = fx.seal_run(fx.tampered_run(fx.dev_run(), inflate))
        with mock.patch.object(_rescore, "score_completion", slower_machine(3.0)):
            report = self.verify(archive)
        self.assertCheck(report, "rescoring", FAILED, "1 of 8", "precision recorded 1.0, recomputed")


class Jobs(Case):
    def test_same_verdict_with_one_and_two_processes(self):
        def inflate(episodes):
            for i in (3, 40, 63):
                episodes[i]["traces"][0]["rewards"]["clean"]["score"] = 0.5
        for run in (fx.full_dev_run(), fx.tampered_run(fx.full_dev_run(), inflate)):
            archive = fx.seal_run(run)
            in_flight: list[int] = []

            def counting_wait(fs, return_when, in_flight=in_flight):
                in_flight.append(len(fs))
                return real_wait(fs, return_when=return_when)
            one = self.verify(archive, jobs=1)
            with mock.patch.object(_parallel, "wait", counting_wait):
                two = self.verify(archive, jobs=2)
            self.assertTrue(in_flight, "the pool was not used")
            self.assertLessEqual(max(in_flight), 4)  # 2 * jobs chunks at most: memory bounded by N
            strip = [{k: v for k, v in c.items() if k not in ("seconds", "summary")} | {
                "summary": c["summary"]} for c in one.as_dict()["checks"]]
            self.assertEqual(strip, [{k: v for k, v in c.items() if k != "seconds"} for c in two.as_dict()["checks"]])
            self.assertEqual(one.exit_code, two.exit_code)
            self.assertEqual(two.as_dict()["jobs"], 2)
        self.assertCheck(two, "rescoring", FAILED, "3 of 64", "line 41 trace 0 (dev-000040): clean recorded 0.5")

    def test_schema_errors_are_the_same_with_two_processes(self):
        archive = fx.seal_run(fx.full_dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        for i in range(0, 64, 3):
            episodes[i]["traces"][0]["rewards"]["recall"]["score"] = "high"
            episodes[i]["traces"][0]["nodes"] = {"n": i}
        fx.write_episodes(archive / "traces.jsonl", episodes)
        fx.resign(archive, fx.redigest(archive, fx.manifest_of(archive)))
        one, two = self.verify(archive, jobs=1), self.verify(archive, jobs=2)
        self.assertCheck(one, "trace-schemas", FAILED, "traces.jsonl:4 $.traces[0].nodes")
        self.assertEqual(one.check("trace-schemas").as_dict() | {"seconds": 0},
                         two.check("trace-schemas").as_dict() | {"seconds": 0})
        self.assertEqual([c.status for c in one.checks], [c.status for c in two.checks])

    def test_jobs_through_the_entry_point(self):
        archive = fx.seal_run(fx.full_dev_run())
        pub = fx.keys("owner")[1]
        r = fx.audit("verify", archive, "--public-key", pub, "--jobs", "2", "--json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout)["jobs"], 2)
        r = fx.audit_in_process("verify", archive, "--public-key", pub, "--jobs", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--jobs must be at least 1", r.stderr)


class OldArchivesAndRunDirectories(Case):
    def test_manifest_v1_archive_gets_a_clear_message(self):
        archive = fx.v1_archive(fx.dev_run())
        report = self.verify(archive)
        self.assertEqual(report.exit_code, 1)
        self.assertCheck(report, "signature", PASSED)
        self.assertCheck(report, "payload-type", FAILED, "made by environment 0.1.x (manifest v1): verify it with "
                                                         "that release")
        self.assertCheck(report, "rescoring", SKIPPED, "made by environment 0.1.x")
        self.assertIn("NOT VERIFIED: this archive was made by environment 0.1.x (manifest v1): verify it with that "
                      "release", human(report))
        r = fx.audit_in_process("verify", archive, "--public-key", fx.keys("owner")[1], "--json")
        self.assertEqual(r.returncode, 1)
        self.assertIn("made by environment 0.1.x (manifest v1)", json.loads(r.stdout)["note"])
        self.assertNotIn("Traceback", r.stdout + r.stderr)
        r = fx.audit_in_process("validate", archive)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_verify_on_a_run_directory_says_seal_it_first(self):
        r = fx.audit("verify", fx.dev_run(), "--public-key", fx.keys("owner")[1])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("is a run directory, not a sealed archive: seal it first with `audit seal", lines[0])

    def test_seal_of_failed_rollouts_summarises_them_first(self):
        def provider_down(episodes, kinds):
            for ep, kind in zip(episodes, kinds, strict=False):
                for t in ep["traces"]:
                    t["ok"] = False
                    t["errors"] = [{"type": kind, "message": f"{kind} says: Error code 401\n - bad key\x1b[2J"}]
                    t["rewards"], t["metrics"] = {}, {}
                    t["info"].pop("redaction", None)
        key = fx.keys("owner")[0]
        run = fx.tampered_run(fx.dev_run(), lambda eps: provider_down(eps, ["ProviderError"] * 8))
        r = fx.audit_in_process("seal", run, "--key", key, "--out", fx.fresh_dir("x"))
        self.assertEqual(r.returncode, 1)
        first = r.stderr.splitlines()[0]
        self.assertEqual(first, "audit: error: refusing to seal: all 8 rollouts failed (ProviderError: ProviderError "
                                "says: Error code 401 - bad key\\x1b[2J): nothing to seal")
        self.assertIn("$.", r.stderr)  # the schema detail follows
        kinds = ["ProviderError"] * 5 + ["TunnelError"] * 2
        run = fx.tampered_run(fx.dev_run(), lambda eps: provider_down(eps, kinds))
        r = fx.audit_in_process("seal", run, "--key", key, "--out", fx.fresh_dir("x"))
        self.assertIn("7 of 8 rollouts failed (5 × ProviderError: ProviderError says", r.stderr.splitlines()[0])
        self.assertIn("2 × TunnelError: TunnelError says", r.stderr.splitlines()[0])


class ResumedRuns(Case):
    def test_a_resumed_run_seals_and_verifies(self):
        """New-user walkthrough, 2026-12-03: `vf-eval --resume` gives each invocation its
        own run id under the run's one name, so a run resumed after a failed rollout
        could not be sealed ("the traces name 2 different run ids"), though the seal's
        own advice was to resume. One name is one run; the manifest names the first id."""
        from audit._seal import SealRefused

        def resumed(episodes):
            for ep in episodes[len(episodes) // 2:]:
                ep["run"]["id"] = "disabled-resumed"
        run = fx.tampered_run(fx.dev_run(), resumed)
        archive = fx.seal_run(run)
        first = fx.read_episodes(run / "traces.jsonl")[0]["run"]["id"]
        self.assertNotEqual(first, "disabled-resumed")
        manifest = (archive / "manifest.toml").read_text(encoding="utf-8")
        self.assertIn(f'run_id = "{first}"', manifest)
        self.assertEqual(verify_archive(archive, fx.public_key()).exit_code, 0)

        def renamed(episodes):
            for ep in episodes[len(episodes) // 2:]:
                ep["run"].update(id="other-id", name="another-run")
        with self.assertRaises(SealRefused):
            fx.seal_run(fx.tampered_run(fx.dev_run(), renamed))

        def pasted(episodes):  # two runs of one name: some tasks twice, under another id
            extra = json.loads(json.dumps(episodes[:3]))
            for ep in extra:
                ep["run"]["id"] = "another-invocation"
            episodes.extend(extra)
        with self.assertRaises(SealRefused) as refused:
            fx.seal_run(fx.tampered_run(fx.dev_run(), pasted))
        self.assertIn('the traces name 2 different run ids: "another-invocation"', " ".join(refused.exception.reasons))


if __name__ == "__main__":
    unittest.main()
