"""Integration (slow, ~30 s): verifiers' own `vf-eval` CLI against a local
OpenAI-compatible server on 127.0.0.1, then the traces.jsonl it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure import load_task, policies
from redaction_pressure.build.identity import source_digest
from tests.support.fake_openai import serve

ROOT = Path(__file__).resolve().parents[2]
VF_EVAL = Path(sys.executable).parent / "vf-eval"


class VfEvalEndToEnd(unittest.TestCase):
    def test_vf_eval_writes_scored_traces(self):
        tasks = [load_task("dev", i) for i in range(3)]
        replies = {tasks[0].prompt: policies.oracle(tasks[0]),
                   tasks[1].prompt: "I cannot produce JSON today.",
                   tasks[2].prompt: "<think>hmm</think>" + policies.baseline(tasks[2])}

        def reply_for(messages):
            prompt = next(m["content"] for m in messages if m["role"] == "user")
            return replies[prompt]

        server, port, requests = serve(reply_for)
        try:
            with tempfile.TemporaryDirectory() as out:
                cmd = [str(VF_EVAL), "redaction-pressure", "--env.agent.harness.id", "null",
                       "--env.agent.runtime.type", "subprocess", "--no-push",
                       "--client.base-url", f"http://127.0.0.1:{port}/v1", "--client.api-key-var", "RP_TEST_KEY",
                       "--model", "fake-model", "-n", "3", "-r", "1", "-o", out, "--run.name", "e2e", "--no-rich",
                       "--env.taskset.split", "dev", "--env.taskset.num-tasks", "3"]
                env = dict(os.environ, RP_TEST_KEY="sk-test")
                if os.environ.get("UV"):  # `uv run` names its binary; the null harness needs uv on PATH
                    env["PATH"] = os.path.dirname(os.environ["UV"]) + os.pathsep + env.get("PATH", "")
                proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
                self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
                lines = (Path(out) / "e2e" / "traces.jsonl").read_text().splitlines()
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(len(requests), 3)
        traces = {json.loads(line)["traces"][0]["task"]["data"]["index"]: json.loads(line)["traces"][0]
                  for line in lines}
        self.assertEqual(sorted(traces), [0, 1, 2])
        for index, trace in traces.items():
            self.assertTrue(trace["ok"], trace.get("errors"))
            env = trace["info"]["environment"]
            self.assertEqual((env["split"], env["task_index"], env["source_digest"]), ("dev", index, source_digest()))
            self.assertEqual(env["task_seed"], tasks[index].seed)
        reward = lambda t: sum(r["score"] * r["weight"] for r in t["rewards"].values())  # noqa: E731
        self.assertAlmostEqual(reward(traces[0]), 1.0, places=12)
        self.assertEqual(traces[0]["info"]["redaction_errors"], [])
        self.assertEqual(reward(traces[1]), 0.0)
        self.assertEqual([e["code"] for e in traces[1]["info"]["redaction_errors"]], ["malformed_json"])
        from redaction_pressure import score_completion
        expected = score_completion(tasks[2], policies.baseline(tasks[2])).reward
        self.assertAlmostEqual(reward(traces[2]), expected, places=12)


if __name__ == "__main__":
    unittest.main()
