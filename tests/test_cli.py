"""The `redaction-pressure` command through its real entry point (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure import PRIVATE_SEED_ENV, load_task, policies

CLI = [sys.executable, "-m", "redaction_pressure.cli"]
SECRET = "cli-test private secret that is long enough 0123"


def run(*args, env=None, stdin=None):
    base = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
    return subprocess.run(CLI + list(args), capture_output=True, text=True, input=stdin,
                          env=base | (env or {}), timeout=300)


class Eval(unittest.TestCase):
    def test_eval_writes_traces_and_labelled_summary(self):
        """Two real runs (each imports verifiers, ~10 s): human output into the default
        run directory, then JSON output that replaces it."""
        with tempfile.TemporaryDirectory() as tmp:
            env = os.environ | {"PYTHONPATH": str(Path.cwd())}
            human = subprocess.run(CLI + ["eval", "--policy", "oracle", "-n", "2"], cwd=tmp, env=env,
                                   capture_output=True, text=True, timeout=300)
            self.assertEqual(human.returncode, 0, human.stderr)
            self.assertIn("public dev split (not a private evaluation)", human.stdout)
            self.assertIn("mean reward", human.stdout)
            self.assertIn("leaked", human.stdout)
            p = subprocess.run(CLI + ["eval", "--policy", "oracle", "-n", "3", "--json"], cwd=tmp, env=env,
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            summary = json.loads(p.stdout)
            self.assertEqual((summary["traces"], summary["mean_reward"], summary["invalid"]), (3, 1.0, 0))
            self.assertEqual(summary["split_label"], "public dev split (not a private evaluation)")
            run_dir = Path(tmp) / "runs" / "dev-oracle"
            lines = (run_dir / "traces.jsonl").read_text().splitlines()
            self.assertEqual(len(lines), 3)  # replaced, not appended to the first run's 2
            episode = json.loads(lines[0])
            self.assertEqual(episode["env"]["id"], "redaction-pressure")
            self.assertIn("environment", episode["traces"][0]["info"])
            again = run("eval", "-n", "1", "--out", str(run_dir))  # a named directory is not replaced
            self.assertEqual(again.returncode, 2)
            self.assertIn("--force", again.stderr)
            self.assertEqual(len((run_dir / "traces.jsonl").read_text().splitlines()), 3)

    def test_bad_arguments(self):
        for args, needle in ((["eval", "--policy", "nope"], "invalid choice"), (["eval", "-n", "0"], "at least 1"),
                             (["eval", "-n", "65"], "has 64 tasks"), (["eval", "--split", "test"], "invalid choice"),
                             (["frobnicate"], "invalid choice"), ([], "required")):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, p.stdout)
                self.assertIn(needle, p.stderr)
                self.assertNotIn("Traceback", p.stderr)

    def test_missing_private_secret(self):
        for args in (["eval", "--split", "private_eval", "-n", "1"], ["tasks", "show", "--split", "private_eval"]):
            p = run(*args)
            self.assertEqual(p.returncode, 2)
            self.assertIn(PRIVATE_SEED_ENV, p.stderr)
            self.assertNotIn("Traceback", p.stderr)


class TasksAndScore(unittest.TestCase):
    def test_tasks_show(self):
        p = run("tasks", "show", "--split", "dev", "--index", "4", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        data = json.loads(p.stdout)
        task = load_task("dev", 4)
        self.assertEqual((data["id"], data["prompt"]), (task.id, task.prompt))
        self.assertEqual(len(data["heldout"]), 16)
        human = run("tasks", "show", "--index", "4")
        self.assertIn("held-out records (16)", human.stdout)
        self.assertEqual(run("tasks", "show", "--index", "64").returncode, 2)

    def test_private_tasks_hide_heldout(self):
        p = run("tasks", "show", "--split", "private_eval", "--index", "0", "--json", env={PRIVATE_SEED_ENV: SECRET})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["heldout"], "hidden (private split)")
        self.assertNotIn(SECRET, p.stdout)

    def test_score(self):
        task = load_task("dev", 2)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(policies.oracle(task))
        try:
            p = run("score", "--index", "2", "--json", f.name)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["reward"], 1.0)
        finally:
            os.unlink(f.name)
        bad = run("score", "--index", "2", "-", stdin='{"rules": [{"pattern": "(", "replacement": "\\\\1"}]}')
        self.assertEqual(bad.returncode, 0, bad.stderr)
        self.assertIn("unsafe_replacement", bad.stdout)
        self.assertIn("(rule 0)", bad.stdout)
        missing = run("score", "--index", "2", "/nonexistent/reply.txt")
        self.assertEqual(missing.returncode, 2)
        self.assertIn("cannot read reply file", missing.stderr)


if __name__ == "__main__":
    unittest.main()
