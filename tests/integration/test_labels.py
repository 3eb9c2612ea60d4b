"""Red team, 2026-12-02: what an unsealed run's labels claim must be what its task data
rebuilds, rescoring charges everything a trace makes it spend, and a few edges of the
readers (`rescore`, `compare`, the report, `audit seal`).

Two runs were laundered against 0.8.0: train tasks relabelled as dev (split, commitment
and seeds copied into ``info.environment``), and a run with more shown records
relabelled with the standard parameters. `rescore` said "reproduced", `compare` paired
them with honest dev runs and the report showed the PUBLIC DEV SPLIT banner or standard
parameters, because each read the labels and rebuilt tasks from ``task.data``, never
asking whether the two agree (`audit verify` did, so archives were safe)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.report import render_report
from redaction_pressure.results.labels import label_problems
from redaction_pressure.run import run_policy
from redaction_pressure.taskset import RedactionConfig
from tests.support import audit_fixtures as fx
from tests.support.util import cli

N = 4


def episodes(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]


def rewrite(run: Path, out: Path, edit) -> Path:
    out.mkdir()
    lines = []
    for episode in episodes(run):
        for trace in episode["traces"]:
            edit(trace)
        lines.append(json.dumps(episode))
    (out / "traces.jsonl").write_text("\n".join(lines) + "\n")
    return out


class Laundering(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="rp-labels-"))
        cls.dev, cls.train, cls.easy = cls.tmp / "dev", cls.tmp / "train", cls.tmp / "easy"
        run_policy("dev", "oracle", N, cls.dev)
        run_policy("train", "oracle", N, cls.train)
        easy = RedactionConfig(id="redaction-pressure", split="dev", n_shown=9)
        run_policy("dev", "oracle", N, cls.easy, config=easy)
        dev_env = {t["info"]["environment"]["task_index"]: t["info"]["environment"]
                   for e in episodes(cls.dev) for t in e["traces"]}

        def as_dev(trace):
            env = trace["info"]["environment"]
            for key in ("split", "split_commitment", "task_seed", "task_id"):
                env[key] = dev_env[env["task_index"]][key]

        def as_standard(trace):
            trace["info"]["environment"]["task_params"]["n_shown"] = 8

        def as_dev_without_data(trace):  # review of 2026-12-02: with no task.data nothing was checked
            as_dev(trace)
            trace["task"]["data"] = None

        def another_task(trace):  # red team, 2026-12-03: a consistent forged id titled the page as another task's
            trace["task"]["data"]["id"] = trace["task"]["data"]["name"] = "dev-000063"
            trace["info"]["environment"]["task_id"] = "dev-000063"

        cls.train_as_dev = rewrite(cls.train, cls.tmp / "train-as-dev", as_dev)
        cls.renamed = rewrite(cls.dev, cls.tmp / "dev-renamed", another_task)
        cls.easy_as_standard = rewrite(cls.easy, cls.tmp / "easy-as-standard", as_standard)
        cls.no_data = rewrite(cls.train, cls.tmp / "train-as-dev-no-data", as_dev_without_data)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_honest_runs_have_no_label_problems(self):
        for run in (self.dev, self.train, self.easy):
            for e in episodes(run):
                self.assertEqual(label_problems(e["traces"][0]), [])

    def test_rescore_names_the_disagreement(self):
        self.assertEqual(cli("rescore", str(self.dev))[0], 0)
        for run, needle in ((self.train_as_dev, "split: info.environment says 'dev', task.data says 'train'"),
                            (self.easy_as_standard, "n_shown: info.environment says 8, task.data says 9"),
                            (self.renamed, "task id: task.data says 'dev-000063', its index is 0")):
            with self.subTest(run=run.name):
                code, out, _ = cli("rescore", str(run))
                self.assertEqual(code, 1, out)
                self.assertTrue(out.strip().splitlines()[-1].startswith(f"0/{N} rewards reproduced"), out)
                self.assertEqual(out.count("its labels do not describe the task its data rebuilds"), N, out)
                self.assertIn(needle, out)

    def test_compare_pairs_nothing_laundered(self):
        for run in (self.train_as_dev, self.easy_as_standard, self.no_data, self.renamed):
            with self.subTest(run=run.name):
                code, _, err = cli("compare", str(self.dev), str(run))
                self.assertEqual(code, 2, err)
                self.assertIn("nothing to pair", err)
                self.assertRegex(err, "its labels do not describe the task its data rebuilds|no task data")

    def test_the_report_establishes_nothing_from_them(self):
        honest = render_report(self.dev)
        self.assertIn("PUBLIC DEV SPLIT", honest.upper())
        self.assertNotIn("LABELS DISAGREE", honest)
        for run in (self.train_as_dev, self.easy_as_standard, self.no_data, self.renamed):
            with self.subTest(run=run.name):
                page = render_report(run)
                self.assertIn(f"LABELS DISAGREE: {N} episode(s)", page)
                self.assertNotIn("PUBLIC DEV SPLIT", page.upper())
                self.assertIn("split NOT ESTABLISHED", page)


class Readers(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="rp-readers-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_rescore_charges_task_builds_to_max_cpu(self):
        """A trace whose prompt is not its task's still costs a build: 0.8.0 built every
        such task outside --max-cpu (0.15 s each for level-5 tasks of 64 shown records)."""
        run = self.tmp / "run"
        run_policy("dev", "oracle", N, run)

        def wrong_prompt(trace):
            trace["task"]["data"]["prompt"] = "x"
        bad = rewrite(run, self.tmp / "bad", wrong_prompt)
        code, out, _ = cli("rescore", str(bad), "--max-cpu", "0.000001")
        self.assertEqual(code, 1, out)
        self.assertEqual(out.count("the recorded prompt is not"), 1, out)  # the first, built within the grant
        self.assertEqual(out.count("not rescored because"), N - 1, out)

    def test_compare_counts_rounding_as_a_tie(self):
        """Three rollouts of each task (a line's copies with their own ids: one trace
        read thrice is refused) average to the same rewards up to ~1e-16: ties."""
        run = self.tmp / "run"
        run_policy("dev", "baseline", N, run)
        tripled = self.tmp / "tripled"
        tripled.mkdir()
        rollouts = []
        for line in (run / "traces.jsonl").read_text().splitlines():
            for k in range(3):
                episode = json.loads(line)
                for trace in episode["traces"]:
                    trace["id"] = f"{trace['id']}-{k}"
                rollouts.append(json.dumps(episode) + "\n")
        (tripled / "traces.jsonl").write_text("".join(rollouts))
        code, out, err = cli("compare", str(tripled), str(run))
        self.assertEqual(code, 0, err)
        self.assertIn(f"B better on 0, tied on {N}, worse on 0", out)

    def test_seal_does_not_follow_a_linked_traces_file(self):
        run = self.tmp / "run"
        run.mkdir()
        (run / "traces.jsonl").symlink_to(fx.dev_run() / "traces.jsonl")
        from audit.cli import main as audit_main
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = audit_main(["seal", str(run), "--key", str(fx.keys("owner")[0]), "--out", str(self.tmp / "archive")])
        self.assertNotEqual(code, 0)
        self.assertIn("symbolic link", err.getvalue())
        self.assertFalse((self.tmp / "archive" / "traces.jsonl").exists())

    def test_report_exit_status_follows_the_verification(self):
        archive = fx.seal_run(fx.dev_run())
        code, _, err = cli("report", str(archive), "--public-key", str(fx.keys("owner")[1]), "--out",
                           str(self.tmp / "ok.html"))
        self.assertEqual((code, err), (0, ""))
        code, _, err = cli("report", str(archive), "--public-key", str(fx.keys("other")[1]), "--out",
                           str(self.tmp / "bad.html"))
        self.assertEqual(code, 1)
        self.assertTrue(err.startswith("NOT VERIFIED: "), err)
        self.assertEqual(err.count("NOT VERIFIED"), 1, err)  # said once (it was said twice)
        self.assertIn("✘ NOT VERIFIED", (self.tmp / "bad.html").read_text())
        bad = self.tmp / "verdict.json"
        bad.write_text("[" * 5000 + "]" * 5000)  # read under the fixed nesting bound, at any stack depth
        code, _, err = cli("report", str(archive), "--verdict", str(bad), "--out", str(self.tmp / "v.html"))
        self.assertEqual(code, 1)
        self.assertTrue(err.startswith("NOT VERIFIED: verdict file verdict.json is not JSON"), err)


if __name__ == "__main__":
    unittest.main()
