"""`redaction-pressure rescore RUN_DIR`: reproduced rewards, each difference, and a run
that is data only (nothing it names is run)."""

from __future__ import annotations

import json
import math
import re
import shutil
import statistics
import tempfile
import unittest
from pathlib import Path

from redaction_pressure import load_task, score_completion
from redaction_pressure.run import read_traces, run_policy
from redaction_pressure.scoring.summary import trace_reward
from tests.support.util import cli

N = 6
_WIPE = json.dumps({"rules": [{"pattern": r"[\s\S]+", "replacement": "[REDACTED]"}]})


def _edit(path: Path, line: int, change) -> None:
    lines = path.read_text().splitlines()
    episode = json.loads(lines[line])
    change(episode)
    lines[line] = json.dumps(episode)
    path.write_text("\n".join(lines) + "\n")


class Rescore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = Path(cls.tmp.name) / "dev-baseline"
        run_policy("dev", "baseline", N, cls.run_dir, start=3)
        cls.rewards = [trace_reward(t) for t in read_traces(cls.run_dir / "traces.jsonl")]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def copy(self, name: str) -> Path:
        target = Path(self.tmp.name) / name
        shutil.copytree(self.run_dir, target, symlinks=True)
        return target

    def test_a_terminal_without_the_characters_gets_escapes_not_a_traceback(self):
        """Review of 2026-12-04: under an ASCII locale "±" raised (a traceback, exit 1)."""
        import os
        import subprocess
        import sys

        p = subprocess.run([sys.executable, "-m", "redaction_pressure.cli", "rescore", str(self.run_dir)],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONIOENCODING="ascii"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("rewards reproduced", p.stdout)
        self.assertIn("\\xb1", p.stdout)
        self.assertNotIn("Traceback", p.stderr)

    def test_an_honest_run_is_reproduced(self):
        self.assertGreater(len(set(self.rewards)), 2)  # the rewards differ from task to task
        code, out, err = cli("rescore", str(self.run_dir))
        self.assertEqual((code, err), (0, ""))
        se = statistics.stdev(self.rewards) / math.sqrt(N)  # one rollout per task: the textbook error
        self.assertEqual(out.strip().splitlines(), [f"{N}/{N} rewards reproduced, mean "
                                                    f"{math.fsum(self.rewards) / N:.3f} ± {se:.3f}"])
        code, out, _ = cli("rescore", str(self.run_dir / "traces.jsonl"), "--json")
        outcome = json.loads(out)
        self.assertEqual((code, outcome["reproduced"], outcome["recorded_rewards"]), (0, N, self.rewards))
        self.assertEqual(outcome["recomputed_rewards"], self.rewards)

    def test_each_difference_is_listed(self):
        run = self.copy("tampered")
        traces = run / "traces.jsonl"

        def inflate(episode):  # a recorded score that the reply does not earn
            episode["traces"][0]["rewards"]["recall"]["score"] = 1.0

        def other_reply(episode):  # a reply other than the one scored: delete everything
            nodes = episode["traces"][0]["nodes"]
            [n for n in nodes if n.get("sampled")][-1]["message"]["content"] = _WIPE

        def other_prompt(episode):
            episode["traces"][0]["task"]["data"]["prompt"] += " "

        def failed(episode):  # a rollout that recorded no reward: nothing to reproduce
            episode["traces"][0]["rewards"] = {}
            del episode["traces"][0]["info"]["redaction"]
            episode["traces"][0]["ok"] = False

        for line, change in ((0, inflate), (1, other_reply), (2, other_prompt), (3, failed)):
            _edit(traces, line, change)
        with open(traces, "a") as f:
            f.write("{not json\n")
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        lines = out.strip().splitlines()
        self.assertRegex(lines[0], r"^dev-000003 \(line 1\): reward recorded 0\.\d{4}, recomputed 0\.\d{4} "
                                   r"\(recall 1\.0000 -> 0\.\d{4}; info\.redaction records reward 0\.\d{4}, "
                                   r"recall 0\.\d{4}\)$")
        wiped = score_completion(load_task("dev", 4), _WIPE).reward
        self.assertNotEqual(round(wiped, 4), round(self.rewards[1], 4))
        self.assertRegex(lines[1], rf"^dev-000004 \(line 2\): reward recorded 0\.\d{{4}}, recomputed {wiped:.4f} \(")
        self.assertEqual(lines[2], "line 3: cannot be rescored: the recorded prompt is not dev-000005's "
                                   "(another corpus, or another private secret?)")
        self.assertRegex(lines[3], r"^line 7 is not JSON")
        self.assertRegex(lines[4], r"^2/5 rewards reproduced, mean 0\.\d{3} recorded, 0\.\d{3} recomputed over the 4 "
                                   r"rescored; "
                                   r"4 differ \(1 failed rollout, not counted\)$")
        self.assertEqual(len(lines), 5)

    def test_a_run_whose_every_rollout_failed_is_not_a_pass(self):
        """Review of 2026-12-03: a run of failed rollouts only (an endpoint that never
        answered) printed "0/0 rewards reproduced" and exited 0, so `rescore && publish`
        went ahead."""
        run = self.copy("all-failed")
        traces = run / "traces.jsonl"

        def failed(episode):
            episode["traces"][0]["rewards"] = {}
            del episode["traces"][0]["info"]["redaction"]
            episode["traces"][0]["ok"] = False

        for line in range(N):
            _edit(traces, line, failed)
        code, out, _ = cli("rescore", str(run))
        self.assertEqual(code, 3)
        self.assertEqual(out.strip().splitlines()[-1], f"0/0 rewards reproduced, mean 0.000 ({N} failed rollouts, "
                                                        "not counted): nothing was checked (NOT CHECKED)")

    def test_a_scored_trace_of_an_episode_marked_failed_is_a_failed_rollout_to_every_reader(self):
        """Red team, 2026-12-04: an Episode with ok false around a scored trace (verifiers
        leaves one after an episode-level time-out; its resume runs the Episode again) was
        a failed rollout to `audit seal` and a counted score to rescore, compare and report."""
        run = self.copy("episode-failed")

        def timed_out(episode):
            episode["ok"] = False
            episode["errors"] = [{"type": "EpisodeTimeout", "message": "episode exceeded 600 s"}]
            episode["traces"][0]["info"]["redaction_errors"] = [{"code": "timeout", "message": "timed out"}]

        _edit(run / "traces.jsonl", 1, timed_out)
        kept = [r for k, r in enumerate(self.rewards) if k != 1]
        code, out, _ = cli("rescore", str(run), "--json")
        outcome = json.loads(out)
        self.assertEqual((code, outcome["reproduced"], outcome["failed_rollouts"]), (0, N - 1, 1))
        self.assertEqual(outcome["recorded_rewards"], kept)
        self.assertIn(f"{N - 1}/{N - 1} rewards reproduced", outcome["headline"])
        self.assertIn("(1 failed rollout, not counted)", outcome["headline"])
        code, out, _ = cli("compare", str(self.run_dir), str(run), "--json")
        self.assertEqual(code, 0, out)
        self.assertEqual(sorted(t["index"] for t in json.loads(out)["tasks"]), [3, 5, 6, 7, 8])
        page = Path(self.tmp.name) / "episode-failed.html"
        code, _, err = cli("report", str(run), "--out", str(page), "--jobs", "1")
        self.assertEqual(code, 0, err)
        html = page.read_text()
        self.assertIn("FAILED: 1 of 6 rollout(s) failed (episodes 2; the first: EpisodeTimeout: episode exceeded "
                      "600 s); what they record is left out of every figure on this page", html)
        self.assertIn("PARTIAL: 5 of 64 dev tasks, 1 rollout each; missing tasks 0–2, 4, 9–63; 1 failed rollout not "
                      "counted", html)  # as the archive `audit seal --allow-failed` makes of it
        self.assertIn(f"{math.fsum(kept) / len(kept):.3f}", html)
        # the mean with the failed rollout, as a figure: not inside a record's number
        # (corpus-v14's dev 3 holds a CI log time "13:40:00.180Z")
        self.assertIsNone(re.search(rf"(?<![\d.:]){re.escape(f'{math.fsum(self.rewards) / N:.3f}')}(?!\d)", html))
        self.assertIn("<b>0</b><span>invalid (errors)</span>", html)  # what a failed rollout records is not counted

    def test_every_rollout_of_an_episode_one_of_whose_rollouts_failed_is_left_out(self):
        """Red team, 2026-12-04, on the above: `seal --allow-failed` leaves out the whole
        Episode line of a failed rollout, and the readers left out only the failed trace,
        so a group whose worst rollouts were marked failed read as complete to them."""
        import copy

        run = self.copy("group-failed")

        def one_of_two_failed(episode):
            second = copy.deepcopy(episode["traces"][0])
            second["ok"], second["errors"] = False, [{"type": "ProviderError", "message": "503"}]
            episode["traces"].append(second)

        _edit(run / "traces.jsonl", 2, one_of_two_failed)
        code, out, _ = cli("rescore", str(run), "--json")
        outcome = json.loads(out)
        self.assertEqual((code, outcome["reproduced"], outcome["failed_rollouts"]), (0, N - 1, 2))
        page = Path(self.tmp.name) / "group-failed.html"
        self.assertEqual(cli("report", str(run), "--out", str(page), "--jobs", "1")[0], 0)
        self.assertIn("missing tasks 0–2, 5, 9–63; 2 failed rollouts not counted", page.read_text())

    def test_rescoring_in_worker_processes_gives_the_serial_outcome(self):
        """--jobs spreads the rescoring of `rescore` and `compare` over forked workers:
        the same outcome, every difference and reading problem in the same order."""
        import os
        from unittest import mock

        import redaction_pressure.rescore as rescore_module

        run = self.copy("parallel")
        traces = run / "traces.jsonl"

        def inflate(episode):
            episode["traces"][0]["rewards"]["recall"]["score"] = 1.0

        def other_prompt(episode):
            episode["traces"][0]["task"]["data"]["prompt"] += " "

        def failed(episode):
            episode["ok"] = False

        for line, change in ((0, inflate), (2, other_prompt), (3, failed)):
            _edit(traces, line, change)
        lines = traces.read_text().splitlines(keepends=True)
        traces.write_text("".join(lines[:2]) + "{not json\n" + "".join(lines[2:]) + "[]\n")
        pids = Path(self.tmp.name) / "pids"
        pids.mkdir()
        real = rescore_module._start_worker

        def start(*args):
            (pids / str(os.getpid())).touch()
            real(*args)

        serial = [cli("rescore", str(run), "--json", "--jobs", "1"),
                  cli("compare", str(self.run_dir), str(run), "--json", "--jobs", "1")]
        with mock.patch.object(rescore_module, "PARALLEL_FROM", 2), \
                mock.patch.object(rescore_module, "available_cpus", lambda: 2), \
                mock.patch.object(rescore_module, "_start_worker", start):
            parallel = [cli("rescore", str(run), "--json", "--jobs", "2"),
                        cli("compare", str(self.run_dir), str(run), "--json", "--jobs", "2")]
        self.assertEqual(parallel, serial)
        self.assertEqual(serial[0][0], 1)
        outcome = json.loads(serial[0][1])
        self.assertEqual([d.split(":")[0].split(" (")[0] for d in outcome["differences"]],
                         ["dev-000003", "line 3 is not JSON", "line 4",
                          "line 8 is not an Episode with a list of traces; it is not read"])
        self.assertEqual(outcome["failed_rollouts"], 1)
        workers = {int(p.name) for p in pids.iterdir()}
        self.assertEqual(len(workers), 6)  # two for rescore, two for each of the runs compare rescored
        self.assertNotIn(os.getpid(), workers)

    def test_workers_are_capped_read_as_they_work_and_a_dead_one_is_no_verdict(self):
        """Red team, 2026-12-04: --jobs 200 forked 200 workers; the run was read whole before
        forking (705 MB for a 158 MB run with 2 jobs); a killed worker gave a traceback and
        exit 1, the code of a difference."""
        import os
        from unittest import mock

        import redaction_pressure.rescore as rescore_module

        pids = Path(tempfile.mkdtemp(dir=self.tmp.name))
        real = rescore_module._start_worker

        def start(*args):
            (pids / str(os.getpid())).touch()
            real(*args)

        traces = list(rescore_module.episode_traces(self.run_dir / "traces.jsonl", print))
        read_when_first_merged: list[int] = []
        yielded = [0]

        def read(problem):
            for item in traces * 4:  # 24 traces: more than a window of 2 workers x 4 chunks of 1
                yielded[0] += 1
                yield item

        with mock.patch.object(rescore_module, "PARALLEL_FROM", 2), \
                mock.patch.object(rescore_module, "CHUNK", 1), \
                mock.patch.object(rescore_module, "available_cpus", lambda: 2), \
                mock.patch.object(rescore_module, "_start_worker", start):
            out = rescore_module.rescore_in_parallel(
                read, 500, on_trace=lambda: read_when_first_merged.append(yielded[0]))
        self.assertEqual((out.traces, out.reproduced), (4 * N, 4 * N))
        self.assertEqual(len(list(pids.iterdir())), 2)  # --jobs 500 on 2 CPUs: 2 workers
        self.assertLessEqual(read_when_first_merged[0], 2 * 4 + 1)  # a window ahead, not the whole run

        def dies(*args):
            os._exit(3)

        with mock.patch.object(rescore_module, "PARALLEL_FROM", 2), \
                mock.patch.object(rescore_module, "available_cpus", lambda: 2), \
                mock.patch.object(rescore_module, "_start_worker", dies):
            code, out, err = cli("rescore", str(self.run_dir), "--jobs", "2")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("a rescoring worker process died (killed, or out of memory) before giving its verdicts: "
                      "there is no verdict", err)
        self.assertNotIn("Traceback", err)

    def test_nothing_a_run_names_is_run_and_budgets_are_capped(self):
        run = self.copy("hostile")
        marker = Path(self.tmp.name) / "executed"
        plugin = Path(self.tmp.name) / "evil.py"
        plugin.write_text(f"open({str(marker)!r}, 'w').close()\nasync def fn(trace):\n    return 1.0\n")
        config = json.loads((run / "configs/resolved/eval.json").read_text())
        config["env"]["taskset"]["task"]["rewards"] = {"evil": {"fn": f"{plugin}:fn"}}
        (run / "configs/resolved/eval.json").write_text(json.dumps(config))

        def slow(episode):
            episode["traces"][0]["task"]["data"]["budget_s"] = 60.0

        _edit(run / "traces.jsonl", 0, slow)
        code, out, _ = cli("rescore", str(run))
        self.assertFalse(marker.exists())
        self.assertEqual(code, 3)  # NOT CHECKED is not a pass, nor a difference
        self.assertIn("line 1: its budget 60 s is above --max-budget 8 s", out)
        self.assertIn(f"{N - 1}/{N} rewards reproduced", out.strip().splitlines()[-1])
        self.assertIn("1 not rescored (NOT CHECKED)", out.strip().splitlines()[-1])

    def test_all_rescoring_stops_at_the_cpu_granted(self):
        """Attack (red team a03): rescore had no total CPU cap; every hostile trace of an
        unsealed run cost its budget (up to --max-budget) and a 4x retry. Now what is not
        granted is NOT CHECKED, and that exits 3, never 0."""
        code, out, err = cli("rescore", str(self.run_dir), "--max-cpu", "1e-9")
        self.assertEqual((code, err), (3, ""))
        lines = out.strip().splitlines()
        self.assertEqual(len(lines), N)  # the first trace's scan spent it; the other N - 1 are listed
        self.assertIn("NOT CHECKED, not rescored because the 1e-09 s of scan CPU this reader grants all traces "
                      "were spent (--max-cpu)", lines[0])
        self.assertEqual(lines[-1].split(",")[0], "1/6 rewards reproduced")
        self.assertIn(f"{N - 1} not rescored (NOT CHECKED)", lines[-1])
        code, out, _ = cli("rescore", str(self.run_dir), "--max-cpu", "1e-9", "--json")
        self.assertEqual((code, json.loads(out)["not_rescored_count"], json.loads(out)["ok"]), (3, N - 1, False))

    def test_a_linked_traces_file_in_a_run_directory_is_not_followed(self):
        """Attack (red team a05): a run directory whose traces.jsonl links to a file of the
        reader's (here another run): report and compare refused it, rescore read the
        reader's file and reported its result as the run's."""
        run = Path(self.tmp.name) / "linked"
        run.mkdir()
        (run / "traces.jsonl").symlink_to(self.run_dir / "traces.jsonl")
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, out), (2, ""))
        self.assertIn("traces.jsonl is a symbolic link; it must be a regular file (links are not followed)", err)
        self.assertEqual(len(err.strip().splitlines()), 1)
        code, _, _ = cli("rescore", str(run / "traces.jsonl"))  # a file the user names may be a link they made
        self.assertEqual(code, 0)

    def test_both_recorded_copies_are_checked(self):
        """Attack (red team a10): honest rewards.* but info.redaction's reward, recall,
        precision and clean forged to 1.0 (what the report's headline reads): rescore
        checked rewards.* only and said 6/6 reproduced, exit 0."""
        run = self.copy("second-copy")

        def forge(episode):
            episode["traces"][0]["info"]["redaction"].update(reward=1.0, recall=1.0, precision=1.0, clean=1.0)
        _edit(run / "traces.jsonl", 2, forge)
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        lines = out.strip().splitlines()
        self.assertRegex(lines[0], r"^dev-000005 \(line 3\): reward recorded 0\.\d{4}, recomputed 0\.\d{4} "
                                   r"\(info\.redaction records reward 1\.0000, recall 1\.0000, precision 1\.0000, "
                                   r"clean 1\.0000\)$")
        self.assertTrue(lines[-1].startswith(f"{N - 1}/{N} rewards reproduced"), lines[-1])

    def test_the_same_reward_from_other_errors_is_a_difference(self):
        """Review of 2026-12-04: rescore compared rewards only, so a reply voided for one
        reason recorded as voided for another (both 0) was "reproduced" where `audit
        verify` fails it on the error codes."""
        run = self.copy("other-errors")
        broken = json.dumps({"rules": [{"pattern": "(", "replacement": "[REDACTED]"}]})

        def voided(codes):
            def change(episode):
                trace = episode["traces"][0]
                [n for n in trace["nodes"] if n.get("sampled")][-1]["message"]["content"] = broken
                for part in trace["rewards"].values():
                    part["score"] = 0.0
                trace["info"]["redaction"].update(reward=0.0, recall=0.0, precision=0.0, clean=0.0)
                trace["info"]["redaction_errors"] = codes
            return change

        _edit(run / "traces.jsonl", 2, voided([{"code": "malformed_json", "message": "no answer"}]))
        _edit(run / "traces.jsonl", 3, voided([{"code": "invalid_regex", "message": "rule 1: ...", "rule": 0}]))
        _edit(run / "traces.jsonl", 4, voided("none"))

        def unrecorded(episode):
            del episode["traces"][0]["info"]["redaction_errors"]
        _edit(run / "traces.jsonl", 5, unrecorded)
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        lines = out.strip().splitlines()
        self.assertEqual(lines[:4], [
            "dev-000005 (line 3): reward reproduced (0.0000), but its errors are not: recorded [malformed_json], "
            "recomputed [invalid_regex (rule 0)]",
            # line 4's reward and errors match, but its tallies are the replaced reply's (the
            # counts the report's and compare's tables read): a difference too
            "dev-000006 (line 4): reward reproduced (0.0000), but the counts recorded beside it are not: "
            "secret_families, decoy_families, secret_classes, decoy_classes, info.redaction.valid, "
            "info.redaction.secrets_removed ...",
            "line 5: cannot be rescored: its info.redaction_errors is not a list of error objects with a code",
            "line 6: cannot be rescored: it records rewards but not info.redaction_errors, which the scorer writes "
            "beside them"])
        self.assertTrue(lines[-1].startswith(f"{N - 4}/{N} rewards reproduced"), lines[-1])

        # Review of 2026-12-04: the rule counts too (audit compares (code, rule) pairs),
        # and a hostile list of errors is named in a few entries, not printed whole.
        _edit(run / "traces.jsonl", 3, voided([{"code": "invalid_regex", "message": "rule 2: ...", "rule": 1}]))
        _edit(run / "traces.jsonl", 4, voided([{"code": "c" * 60, "message": "m", "rule": k} for k in range(5000)]))
        code, out, err = cli("rescore", str(run))
        lines = out.strip().splitlines()
        self.assertEqual(lines[1], "dev-000006 (line 4): reward reproduced (0.0000), but its errors are not: "
                                   "recorded [invalid_regex (rule 1)], recomputed [invalid_regex (rule 0)]")
        self.assertEqual(lines[2], "dev-000007 (line 5): reward reproduced (0.0000), but its errors are not: "
                                   f"recorded [{', '.join(f'{chr(99) * 60} (rule {k})' for k in range(4))}, and "
                                   "4,996 more], recomputed [invalid_regex (rule 0)]")

    def test_time_outs_stand_for_each_other_and_for_a_finished_scan(self):
        """As `audit verify` compares errors: where a slow scan stops, and whether a scan
        that timed out on a slower machine finishes here, depends on the machine (the
        reward says what the time-out cost; review of 2026-12-04: a recorded time-out
        whose reply scores 0 here too was a difference, where audit tolerates it)."""
        from redaction_pressure.rescore import _errors_differ
        self.assertFalse(_errors_differ([("timeout", 3)], [("budget_exhausted", 3)]))
        self.assertFalse(_errors_differ([("timeout", 0)], []))
        self.assertTrue(_errors_differ([], [("timeout", 0)]))  # the recording finished: this scan must too
        self.assertTrue(_errors_differ([("invalid_regex", 0), ("timeout", 1)], [("invalid_json", None)]))
        self.assertTrue(_errors_differ([("invalid_regex", 0)], [("invalid_regex", None)]))

    def test_a_private_run_without_its_secret_is_rescored_on_its_revealed_seeds(self):
        """Without the secret, each private trace is rescored on the task the seed it
        reveals builds (as `audit verify` and the report rebuild it); that the seed is
        the split's stays NOT CHECKED (exit 3), and a reply that does not reproduce is a
        difference (exit 1). Before 0.20.0 every such trace was NOT CHECKED, and a
        walkthrough of 2026-12-04 found the headline said "mean 0.000 recorded" of them."""
        import os
        from unittest import mock

        from redaction_pressure.task.splits import PRIVATE_SEED_ENV
        run = Path(self.tmp.name) / "private"
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "s" * 40}):
            run_policy("private_eval", "baseline", 3, run)
            code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (0, ""))  # with the secret: every seed is the split's
        recorded = statistics.fmean(trace_reward(t) for t in read_traces(run / "traces.jsonl"))
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        with mock.patch.dict(os.environ, env, clear=True):
            code, out, err = cli("rescore", str(run))
            self.assertEqual((code, err), (3, ""))
            self.assertEqual(out.strip().splitlines(), [
                f"3/3 rewards reproduced, mean {recorded:.3f} ± "
                f"{statistics.stdev(trace_reward(t) for t in read_traces(run / 'traces.jsonl')) / 3 ** 0.5:.3f}; "
                "3 private tasks rebuilt from the seeds their traces reveal, not proven the split's (NOT CHECKED: "
                f"private_eval needs the secret in ${PRIVATE_SEED_ENV} (at least 32 characters); it is not set)"])

            # A reply that scores otherwise is found without the secret; a trace whose
            # seed is gone (or not a private seed) is not rescored, as before.
            _edit(run / "traces.jsonl", 0, lambda e: [n for n in e["traces"][0]["nodes"] if n.get("sampled")][-1]
                  ["message"].update(content=_WIPE))
            _edit(run / "traces.jsonl", 1, lambda e: e["traces"][0]["info"]["environment"].pop("task_seed"))
            _edit(run / "traces.jsonl", 2, lambda e: e["traces"][0]["info"]["environment"].update(task_seed=5))
            code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        lines = out.strip().splitlines()
        self.assertRegex(lines[0], r"^private_eval-000000 \(line 1\): reward recorded 0\.\d{4}, recomputed 0\.\d{4} \(")
        self.assertEqual(sum(f"private_eval needs the secret in ${PRIVATE_SEED_ENV}" in line for line in lines[1:3]), 2)
        self.assertRegex(lines[-1], r"^0/3 rewards reproduced, mean 0\.\d{3} recorded, 0\.\d{3} recomputed over the 1 "
                                    r"rescored; 1 differs, 2 not rescored \(NOT CHECKED\); the run's split: labelled "
                                    r"private_eval, but the split is NOT ESTABLISHED: seed 5 of task 2 cannot be a "
                                    r"private seed \(NOT CHECKED\); 1 private task rebuilt from the seed its trace "
                                    r"reveals, not proven the split's \(NOT CHECKED: ")
        self.assertIn("the trace reveals no private seed to rebuild its task from (task_seed 5, not an integer in "
                      "2^63..2^64)", out)

    def test_a_run_that_is_not_one_split_is_not_a_pass(self):
        """Red team, 2026-12-04: with the secret, a private run with dev traces mixed in
        said "8/8 rewards reproduced", exit 0 (each reproduced on the split it names); a
        private-labelled trace committing to dev was rebuilt as a private task."""
        import os
        from unittest import mock

        from redaction_pressure.task.splits import PRIVATE_SEED_ENV
        private = Path(self.tmp.name) / "private-mixed"
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "s" * 40}):
            run_policy("private_eval", "baseline", 2, private)
            mixed = (private / "traces.jsonl").read_text() + (self.run_dir / "traces.jsonl").read_text()
            (private / "traces.jsonl").write_text(mixed)
            code, out, err = cli("rescore", str(private))
        self.assertEqual((code, err), (3, ""))
        self.assertIn(f"{2 + N}/{2 + N} rewards reproduced, mean ", out)
        self.assertIn("; the run's split: labelled dev, private_eval, but the split is NOT ESTABLISHED: the traces "
                      "carry 2 different split commitments (NOT CHECKED)", out)

        def dev_commitment(episode):
            env = episode["traces"][0]["info"]["environment"]
            env["split_commitment"] = json.loads((self.run_dir / "traces.jsonl").read_text().splitlines()[0])[
                "traces"][0]["info"]["environment"]["split_commitment"]
            episode["traces"][0]["task"]["data"]["identity"]["split_commitment"] = env["split_commitment"]
        run = Path(self.tmp.name) / "private-dev-commitment"
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "s" * 40}):
            run_policy("private_eval", "baseline", 1, run)
        _edit(run / "traces.jsonl", 0, dev_commitment)
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        with mock.patch.dict(os.environ, env, clear=True):
            code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        self.assertIn("cannot be rescored: it is labelled private_eval but commits to public-sha256:", out)

    def test_a_line_naming_a_key_twice_is_a_difference(self):
        """Readers disagree on such a line's values (Python takes the last key); `audit`
        refuses it, and so does every reader of an unsealed run."""
        run = self.copy("twice")
        lines = (run / "traces.jsonl").read_text().splitlines()
        self.assertIn('"redaction":{"reward":', lines[1])
        lines[1] = lines[1].replace('"redaction":{"reward":', '"redaction":{"reward":1.0,"reward":', 1)
        (run / "traces.jsonl").write_text("\n".join(lines) + "\n")
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        self.assertRegex(out, r"line 2 is ambiguous JSON \(an object names the key 'reward' twice: readers disagree "
                              r"on its value\); it is not read")
        self.assertTrue(out.strip().splitlines()[-1].startswith(f"{N - 1}/{N - 1} rewards reproduced"), out)

    def test_a_line_opening_with_a_byte_order_mark_is_a_difference(self):
        """Red team, 2026-12-04: `rescore`, `report` and `compare` read such a line
        (json.loads of bytes skips the mark) where `audit validate` and `seal` refuse it."""
        run = self.copy("bom")
        data = (run / "traces.jsonl").read_bytes()
        (run / "traces.jsonl").write_bytes(b"\xef\xbb\xbf" + data)
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        self.assertIn("line 1 starts with a byte order mark (U+FEFF), which JSON text must not; it is not read", out)
        self.assertTrue(out.strip().splitlines()[-1].startswith(f"{N - 1}/{N - 1} rewards reproduced"), out)
        # compare and report read runs through the same reader: the line is a problem there too
        code, out, err = cli("compare", str(run), str(run), "--json")
        self.assertIn("starts with a byte order mark", json.dumps(json.loads(out)["a"]["problems"]))
        from redaction_pressure.report import render_report

        self.assertIn("starts with a byte order mark", render_report(run))

    def test_a_missing_copy_is_a_difference(self):
        """Red team, 2026-12-03: with info.redaction null (or without its scores) rescore
        compared the one copy left and said every reward reproduced, exit 0."""
        run = self.copy("missing-copy")

        def drop(episode):
            episode["traces"][0]["info"]["redaction"] = None

        def strip(episode):
            for key in ("reward", "clean"):
                episode["traces"][0]["info"]["redaction"].pop(key)
        _edit(run / "traces.jsonl", 2, drop)
        _edit(run / "traces.jsonl", 4, strip)
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        self.assertIn("line 3: cannot be rescored: it records rewards but not info.redaction.reward, "
                      "info.redaction.recall, info.redaction.precision, info.redaction.clean", out)
        self.assertIn("line 5: cannot be rescored: it records rewards but not info.redaction.reward, "
                      "info.redaction.clean", out)
        self.assertTrue(out.strip().splitlines()[-1].startswith(f"{N - 2}/{N} rewards reproduced"), out)

    def test_absurd_numbers_are_malformed_never_a_traceback(self):
        """Attacks (red team a02, a09): a score and weight of 1e308, integers of 4,299
        digits: float() raised OverflowError. Each is a difference with its reason."""
        run = self.copy("absurd")
        big = 10 ** 4299
        edits = [lambda t: t["rewards"].__setitem__("recall", {"score": 1e308, "weight": 1e308}),
                 lambda t: t["rewards"]["recall"].__setitem__("score", big),
                 lambda t: t["info"]["redaction"].__setitem__("reward", big),
                 lambda t: t["task"]["data"].__setitem__("budget_s", big),
                 lambda t: t["task"]["data"].__setitem__("index", big)]
        for line, edit in enumerate(edits):
            _edit(run / "traces.jsonl", line, lambda ep, edit=edit: edit(ep["traces"][0]))
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""), out)
        lines = out.strip().splitlines()
        self.assertEqual(lines[0], "line 1: cannot be rescored: its recorded scores are malformed: "
                                   "rewards.recall.score is missing or not a number in [0, 1]")
        # a literal over 40 characters is never converted: it reads as not a number, said once per line
        for k in (1, 3, 5, 7):
            self.assertEqual(lines[k], f"line {k // 2 + 2} holds 1 number literal longer than 40 characters (the "
                                       f"longest 4,300); it is read as not a number")
        self.assertIn("rewards.recall.score is missing or not a number in [0, 1]", lines[2])
        self.assertIn("info.redaction.reward is not a number in [0, 1]", lines[4])
        # both copies of a task's parameters are compared before any is used
        self.assertEqual(lines[6], "line 4: cannot be rescored: its labels do not describe the task its data "
                                   "rebuilds: budget_s: info.environment says 2.0, task.data says nan")
        self.assertTrue(lines[8].startswith("line 5: cannot be rescored: its labels do not describe the task its "
                                            "data rebuilds: task index: info.environment says 7, task.data says nan"),
                        lines[8])

    def test_what_a_file_makes_it_hold_is_bounded_by_its_bytes(self):
        """Attack (red team a07): lines of ``{"traces": [{}, {}, ...]}`` (3 bytes a trace)
        made rescore hold ~0.8 GB for 16 MiB, one difference line per empty object."""
        import tracemalloc

        run = Path(self.tmp.name) / "empty-traces"
        run.mkdir()
        honest = (self.run_dir / "traces.jsonl").read_text().splitlines(keepends=True)
        padded = json.loads(honest[0])
        padded["traces"] += [{}] * 5
        line = '{"traces": [' + ",".join(["{}"] * 100_000) + "]}\n"
        (run / "traces.jsonl").write_text(line * 7 + json.dumps(padded) + "\n" + "".join(honest[1:]))
        tracemalloc.start()
        try:
            code, out, _ = cli("rescore", str(run), "--json")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        outcome = json.loads(out)
        self.assertEqual((code, outcome["traces"], outcome["reproduced"], outcome["difference_count"]), (1, N, N, 8))
        # (since 0.16.0 refused before it is decoded: a value per 3 bytes)
        self.assertEqual(outcome["differences"][0], "line 1 holds too many values for its 300,014 bytes (it may hold "
                                                    "100,002 arrays and objects; at most one per 32 bytes are read; a "
                                                    "real trace has an array or object per 300 bytes or more, a string "
                                                    "per 100); it is not read")
        self.assertEqual(outcome["differences"][-1], "5 trace entries are not a trace object (an object holding a "
                                                     "task or info object; the first in line 8); they are not read")
        self.assertLess(peak, 64 << 20)

    def test_usage_errors_are_one_line(self):
        empty = Path(self.tmp.name) / "empty"
        empty.mkdir()
        for argv, needle in ((["/no/such/run"], "/no/such/run does not exist"),
                             ([str(empty)], "holds no traces.jsonl"),
                             ([str(self.run_dir), "--max-budget", "0"], "--max-budget must be in (0, 60]")):
            with self.subTest(argv=argv):
                code, out, err = cli("rescore", *argv)
                self.assertEqual((code, out), (2, ""))
                self.assertEqual(len(err.strip().splitlines()), 1)
                self.assertIn(needle, err)


if __name__ == "__main__":
    unittest.main()
