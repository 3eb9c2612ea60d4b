"""The training recipe, configs/train-rl.toml: every block loads through verifiers' own
config types, every curriculum stage is valid now or refused with the levels it waits
for, and `redaction-pressure serve` passes the file, stage and flags to the server.
The servers themselves are started from it and driven in test_env_server."""

from __future__ import annotations

import tempfile
import tomllib
import unittest
from pathlib import Path
from unittest import mock

from redaction_pressure.corpus.levels import LEVELS
from redaction_pressure.recipe import RecipeError, load_recipe, rows
from tests.support.util import cli

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "configs" / "train-rl.toml"


class Recipe(unittest.TestCase):
    def test_the_committed_recipe_loads(self):
        recipe = load_recipe(RECIPE)
        taskset = recipe.env.taskset
        self.assertEqual((type(recipe.env).__name__, taskset.id, taskset.split), ("RedactionEnvConfig",
                                                                                   "redaction-pressure", "train"))
        self.assertEqual(taskset.level_mix, {1: 1.0})
        self.assertEqual(recipe.env.agent.runtime.type, "subprocess")
        self.assertEqual((recipe.serve.pool.type, recipe.serve.pool.num_workers), ("static", 2))
        self.assertEqual((recipe.sampling.temperature, recipe.sampling.top_p, recipe.sampling.max_tokens),
                         (1.0, 1.0, 8192))
        self.assertEqual(recipe.group_size, 8)
        first = [(r.data.split, r.data.index, r.data.level) for r in rows(recipe, 3)]
        self.assertEqual(first, [("train", 0, 1), ("train", 1, 1), ("train", 2, 1)])

    def test_every_stage_runs_or_names_the_levels_it_waits_for(self):
        stages = tomllib.loads(RECIPE.read_text())["curriculum"]["stages"]
        self.assertGreaterEqual(len(stages), 3)
        self.assertEqual({int(k) for s in stages for k in s["level_mix"]}, {1, 2, 3, 4, 5})  # the whole range
        for number, stage in enumerate(stages, 1):
            mix = {int(k): v for k, v in stage["level_mix"].items()}
            with self.subTest(stage=number):
                missing = sorted(set(mix) - set(LEVELS))
                if missing:
                    with self.assertRaises(RecipeError) as caught:
                        load_recipe(RECIPE, stage=number)
                    self.assertIn(f"stage {number} ({stage['name']}) needs level(s) "
                                  f"{', '.join(map(str, missing))}, which this build does not have yet",
                                  str(caught.exception))
                else:
                    recipe = load_recipe(RECIPE, stage=number)
                    self.assertEqual(recipe.env.taskset.level_mix, mix)
                    self.assertLessEqual({r.data.level for r in rows(recipe, 50)}, set(mix))

    def test_a_broken_recipe_is_one_clear_error(self):
        text = RECIPE.read_text()
        cases = [(text.replace('level_mix = {1 = 0.5, 2 = 0.5}', 'level_mix = {1 = 0.5, 6 = 0.5}'),
                  "curriculum.stages.1.level_mix: Value error, level 6 is outside 1..5"),
                 (text.replace('level_mix = {1 = 0.5, 2 = 0.5}', 'level_mix = {1 = 1e308, 2 = 1e308}'),
                  "curriculum.stages.1.level_mix: Value error, the level weights sum past the largest float"),
                 (text.replace("num_workers = 2", "num_workers = 0"), "serve.pool.static.num_workers"),
                 (text.replace('split = "train"', 'split = "test"'), "env.taskset.split"),
                 (text.replace("group_size = 8", "group_sise = 8"), "group_size: Field required (and 1 more)"),
                 (text + "\n[curriculum\n", "is not valid TOML")]
        with tempfile.TemporaryDirectory() as tmp:
            for number, (content, needle) in enumerate(cases):
                path = Path(tmp) / f"r{number}.toml"
                path.write_text(content)
                with self.subTest(needle=needle), self.assertRaises(RecipeError) as caught:
                    load_recipe(path)
                self.assertIn(needle, str(caught.exception))
                self.assertNotIn("\n", str(caught.exception))

    def test_serve_passes_the_recipe_stage_and_flags(self):
        served = []

        def fake_serve(recipe, address_queue=None, death_pipe=None, log_setup=None):
            served.append(recipe)
            address_queue.put("tcp://127.0.0.1:5999")

        with mock.patch("redaction_pressure.recipe.serve", fake_serve):
            code, out, err = cli("serve", str(RECIPE), "--workers", "3", "--address", "tcp://127.0.0.1:0")
        self.assertEqual((code, err), (0, ""))
        (recipe,) = served
        self.assertEqual((recipe.serve.address, recipe.serve.pool.num_workers), ("tcp://127.0.0.1:0", 3))
        self.assertEqual(out, "serving redaction-pressure train (stage 1: level 1: 1) on tcp://127.0.0.1:5999; "
                              "Ctrl-C stops\n")

    def test_served_workers_never_import_the_current_directory_nor_get_the_secret(self):
        """Red team, 2026-12-02: verifiers' pool spawns its workers (``python -c``, the
        current directory first on its path), so a ``multiprocessing/`` beside the
        recipe ran in every worker, with the private secret in its environment."""
        import os
        import subprocess
        import sys

        from redaction_pressure import PRIVATE_SEED_ENV
        from redaction_pressure.recipe import serve

        seen = {}

        def fake_serve_env(**kwargs):
            seen.update(safe=os.environ.get("PYTHONSAFEPATH"), secret=os.environ.get(PRIVATE_SEED_ENV))

        recipe = load_recipe(RECIPE)
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "s" * 32}), \
                mock.patch("redaction_pressure.recipe.serve_env", fake_serve_env):
            serve(recipe)
        self.assertEqual(seen, {"safe": "1", "secret": None})  # a train recipe needs no private seed
        # What the flag does for a spawned child, started as the console script starts
        # (its own directory on the path, not the current one); without it the child
        # imports the hostile package, so this check can fail.
        with tempfile.TemporaryDirectory() as tmp:
            hostile, marks, safe = Path(tmp, "cwd"), Path(tmp, "marks"), Path(tmp, "bin")
            for d in (hostile / "multiprocessing", marks, safe):
                d.mkdir(parents=True)
            (hostile / "multiprocessing" / "__init__.py").write_text(
                f"import os\nopen(os.path.join({str(marks)!r}, str(os.getpid())), 'w').close()\n")
            starter = safe / "start.py"
            starter.write_text(
                "import os, sys\n"
                "if sys.argv[1] == 'safe':\n"
                "    from redaction_pressure.boundary.launch import safe_spawned_paths\n"
                "    safe_spawned_paths()\n"
                "import multiprocessing as mp\n"
                "if __name__ == '__main__':\n"
                "    p = mp.get_context('spawn').Process(target=os.getpid)\n"
                "    p.start(); p.join()\n")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
            for mode, ran in (("unsafe", True), ("safe", False)):
                with self.subTest(mode=mode):
                    for m in marks.iterdir():
                        m.unlink()
                    subprocess.run([sys.executable, str(starter), mode], cwd=hostile, env=env, timeout=120,
                                   capture_output=True)
                    self.assertEqual(any(marks.iterdir()), ran)

    def test_serve_usage_errors_are_one_line(self):
        cases = [([str(RECIPE), "--stage", "9"], "stage 9 does not exist"),
                 (["no-such.toml"], "recipe no-such.toml is not a file"),
                 ([str(RECIPE), "--workers", "0"], "--workers must be at least 1")]
        for argv, needle in cases:
            with self.subTest(argv=argv):
                code, out, err = cli("serve", *argv)
                self.assertEqual((code, out), (2, ""))
                self.assertEqual(len(err.strip().splitlines()), 1)
                self.assertIn(needle, err)


if __name__ == "__main__":
    unittest.main()
