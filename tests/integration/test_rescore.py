"""`redaction-pressure rescore RUN_DIR`: reproduced rewards, each difference, and a run
that is data only (nothing it names is run)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
import statistics
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.cli import main
from redaction_pressure.run import read_traces, run_policy
from redaction_pressure.scoring.summary import trace_reward

N = 6


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


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

        def other_reply(episode):  # a reply other than the one scored
            nodes = episode["traces"][0]["nodes"]
            [n for n in nodes if n.get("sampled")][-1]["message"]["content"] = '{"rules": []}'

        def other_prompt(episode):
            episode["traces"][0]["task"]["data"]["prompt"] += " "

        def failed(episode):  # a rollout that recorded no reward: nothing to reproduce
            episode["traces"][0]["rewards"] = {}
            episode["traces"][0]["ok"] = False

        for line, change in ((0, inflate), (1, other_reply), (2, other_prompt), (3, failed)):
            _edit(traces, line, change)
        with open(traces, "a") as f:
            f.write("{not json\n")
        code, out, err = cli("rescore", str(run))
        self.assertEqual((code, err), (1, ""))
        lines = out.strip().splitlines()
        self.assertRegex(lines[0], r"^dev-000003 \(line 1\): reward recorded 0\.\d{4}, recomputed 0\.\d{4} "
                                   r"\(recall 1\.0000 -> 0\.\d{4}\)$")
        self.assertRegex(lines[1], r"^dev-000004 \(line 2\): reward recorded 0\.\d{4}, recomputed 0\.0000 \(")
        self.assertEqual(lines[2], "line 3: cannot be rescored: the recorded prompt is not dev-000005's "
                                   "(another corpus, or another private secret?)")
        self.assertRegex(lines[3], r"^line 7: not JSON")
        self.assertRegex(lines[4], r"^2/5 rewards reproduced, mean 0\.\d{3} recorded, 0\.\d{3} recomputed; "
                                   r"4 differ \(1 failed rollout recorded no reward\)$")
        self.assertEqual(len(lines), 5)

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
        self.assertEqual(code, 1)
        self.assertIn("line 1: its budget 60 s is above --max-budget 8 s", out)
        self.assertIn(f"{N - 1}/{N} rewards reproduced", out.strip().splitlines()[-1])
        self.assertIn("1 not rescored", out.strip().splitlines()[-1])

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
