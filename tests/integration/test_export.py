"""`redaction-pressure export`: chat-messages JSONL for supervised warm starts.

Every line is validated against its schema and checked against the task it names;
the bytes are the same with one worker process or two, through a file or stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import jsonschema

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.build.schemas import load_schema
from redaction_pressure.task.tasks import durable_key
from tests.support.util import cli

ROOT = Path(__file__).resolve().parents[2]


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        cls.runs = {}
        for jobs in ("1", "2"):
            path = cls.dir / f"train-jobs{jobs}.jsonl"
            cls.runs[jobs] = (cli("export", "--split", "train", "--start", "40", "-n", "12", "--jobs", jobs,
                                  "--out", str(path)), path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_line_is_valid_and_true_to_its_task(self):
        (code, _, err), path = self.runs["2"]
        self.assertEqual(code, 0, err)
        self.assertIn("wrote 12 examples (train 40..51, level 1, policy oracle; mean reward 1.000)", err)
        validator = jsonschema.Draft202012Validator(load_schema("sft-example-v1"))
        lines = path.read_bytes().split(b"\n")
        self.assertEqual(lines[-1], b"")  # newline-terminated
        self.assertEqual(len(lines) - 1, 12)
        for number, raw in enumerate(lines[:-1]):
            with self.subTest(line=number):
                example = json.loads(raw)
                self.assertEqual(sorted(validator.iter_errors(example), key=str), [])
                task = load_task("train", 40 + number)
                reply = policies.oracle(task)
                self.assertEqual(example["messages"], [{"role": "system", "content": task.system_prompt},
                                                       {"role": "user", "content": task.prompt},
                                                       {"role": "assistant", "content": reply}])
                self.assertEqual((example["split"], example["index"], example["level"]), ("train", 40 + number, 1))
                self.assertEqual(example["key"], durable_key("train", 40 + number, task.n_shown, task.n_eval,
                                                             task.budget_s, 1))
                self.assertEqual(example["reward"], score_completion(task, reply).reward)

    def test_the_schema_refuses_what_trainers_would_misread(self):
        validator = jsonschema.Draft202012Validator(load_schema("sft-example-v1"))
        good = json.loads(self.runs["1"][1].read_bytes().split(b"\n")[0])
        bad = [dict(good, messages=good["messages"][::-1]), dict(good, messages=good["messages"][:2]),
               dict(good, split="private_eval"), dict(good, reward=1.5), dict(good, extra=1),
               {k: v for k, v in good.items() if k != "key"}]
        for example in bad:
            with self.subTest(example=str(example)[:80]):
                self.assertTrue(list(validator.iter_errors(example)))

    def test_bytes_do_not_depend_on_workers_or_the_sink(self):
        (code, _, err), one = self.runs["1"]
        self.assertEqual(code, 0, err)
        self.assertEqual(one.read_bytes(), self.runs["2"][1].read_bytes())
        # stdout, through the real entry point
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        p = subprocess.run([sys.executable, "-m", "redaction_pressure.cli", "export", "--start", "40", "-n", "3",
                            "--jobs", "2"], capture_output=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, b"".join(one.read_bytes().split(b"\n")[i] + b"\n" for i in range(3)))

    def test_induce_replies_and_their_rewards(self):
        path = self.dir / "induce.jsonl"
        code, _, err = cli("export", "--policy", "induce", "--split", "dev", "--start", "10", "-n", "3",
                           "--jobs", "1", "--out", str(path))
        self.assertEqual(code, 0, err)
        self.assertIn("warning: dev is the evaluation split", err)
        for number, raw in enumerate(path.read_text().splitlines()):
            example = json.loads(raw)
            task = load_task("dev", 10 + number)
            self.assertEqual(example["messages"][2]["content"], policies.induce(task))
            self.assertEqual(example["reward"], score_completion(task, policies.induce(task)).reward)

    def test_a_failed_export_keeps_the_old_file(self):
        path = self.dir / "kept.jsonl"
        previous = (b'{"messages": [{"role": "system", "content": "the previous export"}], "split": "dev", '
                    b'"index": 0, "level": 1, "key": "k", "reward": 1.0}\n')
        path.write_bytes(previous)
        from redaction_pressure import export as module

        real = module.example

        def failing(split, policy, level, index):
            if index == 3:
                raise module.ExportError("dev-000003: scoring ran out of time")
            return real(split, policy, level, index)

        with mock.patch.object(module, "example", failing):
            code, _, err = cli("export", "--split", "dev", "-n", "6", "--jobs", "1", "--out", str(path))
        self.assertEqual(code, 1)
        self.assertEqual(err.strip().splitlines()[-1], "redaction-pressure: error: dev-000003: scoring ran out of time")
        self.assertEqual(path.read_bytes(), previous)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir() if "kept" in p.name), ["kept.jsonl"])

    def test_usage_errors_are_one_line(self):
        cases = [(["--split", "private_eval"], "private_eval split is for evaluation only"),
                 (["-n", "0"], "-n must be at least 1"),
                 (["--split", "dev", "--start", "60", "-n", "5"], "the dev split has 64 tasks"),
                 (["--out", str(self.dir / "train-jobs1.jsonl" / "f.jsonl")], "cannot create the directory of --out"),
                 (["--out", str(self.dir)], "is a directory"),
                 (["--jobs", "0", "--out", str(self.dir / "x.jsonl")], "--jobs must be at least 1")]
        for argv, needle in cases:
            with self.subTest(argv=argv):
                code, out, err = cli("export", *argv)
                self.assertEqual(code, 2)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(needle, err)
                self.assertEqual(out, "")


if __name__ == "__main__":
    unittest.main()
