"""Integration (slow, ~25 s): verifiers' own CLIs in their bare form, with no platform
login, then `vf-eval --resume` on the runs they and `redaction-pressure eval` write.

`vf-eval redaction-pressure -n 3 -m M --client.base-url URL` runs as a real subprocess
(the console script, in a fresh interpreter) against a local OpenAI-compatible server on
127.0.0.1 with an empty $HOME and no $PRIME_API_KEY: the taskset's own env chooses the
local runtime, and the upload that vf-eval attempts by default fails softly without a
login. Meanwhile `vf-validate redaction-pressure --runtime.type subprocess` (verifiers
gives a taskset no say over vf-validate's runtime) and, later, the resumes run
verifiers' own ``main`` with the same argv in a forked child of this process
(`tests.support.forked`), which has verifiers imported already: a subprocess would
spend ~10 s of CPU importing it again.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import ClassVar

from verifiers.v1.cli.eval.main import main as vf_eval_main
from verifiers.v1.cli.validate import main as vf_validate_main

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.build.identity import source_digest
from redaction_pressure.contract import task_hash
from redaction_pressure.run import read_traces, run_policy
from redaction_pressure.task.prompt import SYSTEM_PROMPT, system_prompt
from redaction_pressure.taskset import RedactionConfig, RedactionTaskset
from tests.support.fake_openai import serve
from tests.support.forked import run_forked

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
N = 3
RESOLVED = "configs/resolved/eval.json"


def _bare_env(home: str) -> dict[str, str]:
    """This process's environment as a user without a Prime login has it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIME_")}
    env["HOME"] = home
    if os.environ.get("UV"):  # `uv run` names its binary; the null harness needs uv on PATH
        env["PATH"] = os.path.dirname(os.environ["UV"]) + os.pathsep + env.get("PATH", "")
    return env


def _resume(run_dir: Path) -> tuple[int, str, str]:
    return run_forked(vf_eval_main, ["@", str(run_dir / RESOLVED), "--resume"], cwd=run_dir.parent)


class BareCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        cls.tasks = [load_task("dev", i) for i in range(N)]
        cls.replies = [policies.oracle(cls.tasks[0]), "I cannot produce JSON today.",
                       "<think>hmm</think>" + policies.baseline(cls.tasks[2])]
        by_prompt = {t.prompt: i for i, t in enumerate(cls.tasks)}
        cls.run_dir = tmp / "out" / "e2e"
        traces = cls.run_dir / "traces.jsonl"

        def reply_for(messages):
            # Task i's reply waits for the first i episodes to be written: vf-eval appends
            # in completion order, and the resume tests need the file in task order.
            i = by_prompt[next(m["content"] for m in messages if m["role"] == "user")]
            deadline = time.monotonic() + 120
            while i and time.monotonic() < deadline:
                if traces.exists() and traces.read_bytes().count(b"\n") >= i:
                    break
                time.sleep(0.05)
            return cls.replies[i]

        cls.server, port, cls.requests = serve(reply_for)
        env = _bare_env(str(tmp / "home"))
        (tmp / "home").mkdir()
        url = f"http://127.0.0.1:{port}/v1"
        evaluate = [str(BIN / "vf-eval"), "redaction-pressure", "-n", str(N), "-m", "fake-model",
                    "--client.base-url", url, "-o", str(tmp / "out"), "--run.name", "e2e",
                    "--sampling.temperature", "0.7", "--sampling.max-tokens", "2048"]
        validate = ["redaction-pressure", "--runtime.type", "subprocess", "-n", "2", "-o", str(tmp / "validate"),
                    "--run.name", "v", "--no-rich"]
        out, err = tmp / "vf-eval.out", tmp / "vf-eval.err"
        with open(out, "w") as stdout, open(err, "w") as stderr:  # files: a full pipe would stall vf-eval
            proc = subprocess.Popen(evaluate, cwd=tmp, env=env, stdout=stdout, stderr=stderr)
        try:
            cls.validate_code, cls.validate_out, cls.validate_err = run_forked(
                vf_validate_main, validate, cwd=tmp, environ={"HOME": env["HOME"], "PRIME_API_KEY": None})
            cls.eval_code = proc.wait(timeout=600)
        except BaseException:
            proc.kill()
            proc.wait()
            cls.tearDownClass()
            raise
        cls.eval_out, cls.eval_err = out.read_text(), err.read_text()
        cls.validate_summary = tmp / "validate" / "v" / "summary.json"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls.tmp.cleanup()

    def test_bare_vf_eval_writes_scored_traces(self):
        self.assertEqual(self.eval_code, 0, self.eval_err[-3000:] + self.eval_out[-3000:])
        self.assertEqual(len(self.requests), N)
        lines = (self.run_dir / "traces.jsonl").read_text().splitlines()
        traces = [json.loads(line)["traces"][0] for line in lines]
        self.assertEqual([t["task"]["data"]["index"] for t in traces], list(range(N)))
        for index, trace in enumerate(traces):
            self.assertTrue(trace["ok"], trace.get("errors"))
            self.assertEqual(trace["agent"]["config"]["runtime"]["type"], "subprocess")
            env = trace["info"]["environment"]
            self.assertEqual((env["split"], env["task_index"], env["source_digest"]), ("dev", index, source_digest()))
            self.assertEqual(env["task_seed"], self.tasks[index].seed)
        reward = lambda t: sum(r["score"] * r["weight"] for r in t["rewards"].values())  # noqa: E731
        self.assertAlmostEqual(reward(traces[0]), 1.0, places=12)
        self.assertEqual(traces[0]["info"]["redaction_errors"], [])
        self.assertEqual(reward(traces[1]), 0.0)
        self.assertEqual([e["code"] for e in traces[1]["info"]["redaction_errors"]], ["malformed_json"])
        expected = score_completion(self.tasks[2], policies.baseline(self.tasks[2])).reward
        self.assertAlmostEqual(reward(traces[2]), expected, places=12)
        # a vf-eval run's labels are its task data's: rescore, compare and the report read it
        from redaction_pressure.results.labels import label_problems
        self.assertEqual([label_problems(t) for t in traces], [[]] * N)
        from redaction_pressure.rescore import rescore
        outcome = rescore(self.run_dir)
        self.assertEqual((outcome.reproduced, outcome.difference_count), (N, 0), outcome.differences)

    def test_the_archive_names_the_model_and_a_tamper_is_caught(self):
        """`audit seal` of a vf-eval run: the manifest, the Statement and `verify` (header and
        JSON) name the model, its sampling settings, the harness and the run, as the traces
        recorded them; a signer who names another model fails the `evaluated` check."""
        from audit._report import console, render_human, render_json
        from audit._verify import FAILED, verify_archive
        from tests.support import audit_fixtures as fx

        self.assertEqual(self.eval_code, 0)
        archive = fx.seal_run(self.run_dir)
        want = {"kind": "model", "model": "fake-model", "sampling": {"max_tokens": 2048, "temperature": 0.7},
                "harness": "redaction-pressure", "run_name": "e2e"}
        evaluated = fx.manifest_of(archive)["evaluated"]
        self.assertEqual({k: evaluated[k] for k in want}, want)
        self.assertTrue(evaluated["run_id"].startswith("disabled-"), evaluated["run_id"])  # upload was off
        self.assertEqual(json.loads(fx.payload_of(archive))["predicate"]["evaluated"], evaluated)
        report = verify_archive(archive, fx.public_key(), None, jobs=1)
        self.assertEqual(report.exit_code, 0, render_json(report)[:3000])
        self.assertEqual(json.loads(render_json(report))["evaluated"], evaluated)
        buf = io.StringIO()
        render_human(report, console(buf))
        shown = " ".join(buf.getvalue().split())  # (rich wraps long lines)
        self.assertIn("split: dev — public dev split (not a private evaluation) evaluated: model fake-model "
                      "(max_tokens=2048, temperature=0.7) · harness redaction-pressure · run e2e (id disabled-", shown)
        manifest = fx.manifest_of(archive)
        manifest["evaluated"]["sampling"]["temperature"] = 0.0
        fx.resign(archive, manifest)
        report = verify_archive(archive, fx.public_key(), None, jobs=1)
        self.assertEqual([c.name for c in report.failed], ["evaluated"])
        self.assertEqual(report.check("evaluated").status, FAILED)
        self.assertIn("evaluated.sampling: manifest says", "\n".join(report.check("evaluated").details))

    def test_bare_vf_validate_passes_gold_and_noop(self):
        self.assertEqual(self.validate_code, 0, self.validate_err[-3000:] + self.validate_out[-3000:])
        self.assertNotIn("Traceback", self.validate_out + self.validate_err)
        summary = json.loads(self.validate_summary.read_text())
        self.assertEqual((summary["total"], summary["outcomes"]["valid"], summary["valid_rate"]), (2, 2, 1.0))
        self.assertEqual(summary["checks"]["gold"]["valid"], 2)  # the oracle earns the full reward
        self.assertEqual(summary["checks"]["noop"]["valid"], 2)  # an untouched task does not

    def test_resume_of_a_complete_vf_eval_run_reruns_nothing(self):
        self.assertEqual(self.eval_code, 0)
        before = (self.run_dir / "traces.jsonl").read_bytes()
        asked = len(self.requests)
        code, out, err = _resume(self.run_dir)
        self.assertEqual(code, 0, err[-3000:])
        self.assertIn(f"nothing to resume in {self.run_dir}: all {N}x1 rollouts already completed", out)
        self.assertEqual(len(self.requests), asked)
        self.assertEqual((self.run_dir / "traces.jsonl").read_bytes(), before)

    def test_resume_keeps_every_line_of_a_run_that_finished_out_of_order(self):
        """verifiers' resume rewrites traces.jsonl in task order (to a new file, then a
        rename): a run whose rollouts finished out of order gets the same lines back."""
        self.assertEqual(self.eval_code, 0)
        copy = Path(self.tmp.name) / "shuffled" / "e2e"
        shutil.copytree(self.run_dir, copy, symlinks=True)
        config = json.loads((copy / RESOLVED).read_text())
        config["output_dir"] = str(copy.parent)
        (copy / RESOLVED).write_text(json.dumps(config, indent=2))
        lines = (copy / "traces.jsonl").read_bytes().splitlines(keepends=True)
        (copy / "traces.jsonl").write_bytes(b"".join(reversed(lines)))
        asked = len(self.requests)
        code, out, err = _resume(copy)
        self.assertEqual(code, 0, err[-3000:])
        self.assertIn("nothing to resume", out)
        self.assertEqual(len(self.requests), asked)
        self.assertEqual((copy / "traces.jsonl").read_bytes(), b"".join(lines))


class ResumeOfEvalRuns(unittest.TestCase):
    """`redaction-pressure eval` runs carry vf-eval's task identity (a complete one
    resumes to nothing), and a resume that would have to call a model refuses."""

    config: ClassVar[RedactionConfig | None] = None  # the standard task parameters

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = Path(cls.tmp.name) / "runs" / "dev-oracle"
        run_policy("dev", "oracle", 3, cls.run_dir, start=2, config=cls.config)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_resume_of_a_complete_eval_run_reruns_nothing(self):
        before = (self.run_dir / "traces.jsonl").read_bytes()
        code, out, err = _resume(self.run_dir)
        self.assertEqual(code, 0, err[-3000:])
        self.assertIn(f"nothing to resume in {self.run_dir}: all 3x1 rollouts already completed", out)
        self.assertEqual((self.run_dir / "traces.jsonl").read_bytes(), before)
        self.assertFalse(list(self.run_dir.glob("*.tmp")))

    def test_resume_of_a_partial_eval_run_refuses_and_keeps_it(self):
        run = Path(self.tmp.name) / "partial" / "dev-oracle"
        shutil.copytree(self.run_dir, run, symlinks=True)
        config = json.loads((run / RESOLVED).read_text())
        config["output_dir"] = str(run.parent)
        (run / RESOLVED).write_text(json.dumps(config, indent=2))
        kept = (run / "traces.jsonl").read_bytes().splitlines(keepends=True)[:2]
        (run / "traces.jsonl").write_bytes(b"".join(kept))
        code, out, err = _resume(run)
        self.assertEqual(code, 1, out[-2000:])
        self.assertIn("this run directory was written by `redaction-pressure eval --policy oracle`", err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("rollout start", out + err)  # refused before any rollout
        self.assertEqual((run / "traces.jsonl").read_bytes(), b"".join(kept))



    def test_resume_of_a_run_of_another_build_refuses_and_keeps_it(self):
        """A task's hash names its build: resumed under another build, verifiers would
        match none of the run's lines and rewrite traces.jsonl without them. The env's
        keep-verdict refuses first."""
        run = Path(self.tmp.name) / "other-build" / "dev-oracle"
        shutil.copytree(self.run_dir, run, symlinks=True)
        config = json.loads((run / RESOLVED).read_text())
        config["output_dir"] = str(run.parent)
        (run / RESOLVED).write_text(json.dumps(config, indent=2))
        lines = []
        for line in (run / "traces.jsonl").read_bytes().splitlines():
            episode = json.loads(line)
            for task in [episode["task"]] + [t["task"] for t in episode["traces"]]:
                task["data"]["identity"]["source_digest"] = "0" * 64
                if "hash" in task:  # as that build hashed its tasks
                    task["hash"] = task_hash(task["data"])
            lines.append(json.dumps(episode).encode() + b"\n")
        (run / "traces.jsonl").write_bytes(b"".join(lines))
        code, out, err = _resume(run)
        self.assertEqual(code, 1, out[-2000:])
        self.assertIn("this run was recorded by another build of redaction-pressure (source_digest: recorded "
                      f"'{'0' * 64}', here '{source_digest()}')", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual((run / "traces.jsonl").read_bytes(), b"".join(lines))
        self.assertFalse(list(run.glob("*.tmp")))


class ResumeOfNonStandardEvalRuns(ResumeOfEvalRuns):
    """The same, for a run of a non-standard budget (4 s) at level 3, whose rows have a
    system prompt of their own (it states the budget). A fresh row's hash once left that
    prompt out until the row's data was read, and traces record the hash after the read:
    `vf-eval --resume`, which compares them with fresh rows, found none of the run's
    rollouts done, rewrote ``traces.jsonl`` with none of its lines (an empty file), then
    refused (a policy run) or would have re-run every rollout (a model run)."""

    config = RedactionConfig(budget_s=4.0, level=3)

    def test_traces_record_the_hash_of_the_fresh_rows_a_resume_compares(self):
        traces = read_traces(self.run_dir / "traces.jsonl")
        fresh = list(RedactionTaskset(RedactionConfig(num_tasks=3, start_index=2, budget_s=4.0, level=3)))
        self.assertTrue(all(row.__dict__["_data"].prompt is None for row in fresh))  # never read
        self.assertEqual([t["task"]["data"]["budget_s"] for t in traces], [4.0] * 3)
        self.assertEqual([t["task"]["data"]["level"] for t in traces], [3] * 3)
        self.assertEqual({t["task"]["data"]["system_prompt"] for t in traces}, {system_prompt(4.0)})
        self.assertNotEqual(system_prompt(4.0), SYSTEM_PROMPT)
        self.assertEqual([t["task"]["hash"] for t in traces], [row.hash for row in fresh])
        self.assertEqual([t["task"]["hash"] for t in traces], [task_hash(t["task"]["data"]) for t in traces])


if __name__ == "__main__":
    unittest.main()
