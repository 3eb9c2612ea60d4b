"""The verifiers v1 adapter, scored offline through the library's own `Task.score`."""

from __future__ import annotations

import asyncio
import gc
import importlib
import os
import re
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import verifiers.v1 as vf

import redaction_pressure as rp
from redaction_pressure import PRIVATE_SEED_ENV, load_task, policies
from redaction_pressure.build.identity import DIGEST_ALGORITHM, source_digest
from redaction_pressure.run import read_traces, run_policy
from redaction_pressure.scoring.reward import WEIGHTS
from redaction_pressure.scoring.scan_pool import prestart as prestart_scan_pool
from redaction_pressure.taskset import RedactionConfig, RedactionRow, RedactionTaskset, offline_trace

SECRET = "taskset-test private secret, long enough: 0123456789"
IDENTITY_KEYS = {"environment_version", "corpus_version", "reward_schema_version", "split",
                 "split_commitment", "source_digest", "source_digest_algorithm", "task_index",
                 "task_params", "task_seed", "regex_version"}


def rows(split="dev", n=3, **kw) -> list[RedactionRow]:
    return list(vf.load_taskset(RedactionConfig(id="redaction-pressure", split=split, num_tasks=n, **kw)))


def scored(row: RedactionRow, reply: str) -> vf.Trace:
    trace = offline_trace(row, reply)
    asyncio.run(row.score(trace))
    return trace


class Discovery(unittest.TestCase):
    def test_exactly_one_taskset_exported(self):
        from verifiers.v1.utils.loaders import _plugin_class
        self.assertIs(_plugin_class(rp, vf.Taskset, "taskset"), RedactionTaskset)
        self.assertIn("RedactionTaskset", rp.__all__)

    def test_config_fields(self):
        fields = set(RedactionConfig.model_fields)
        self.assertLessEqual({"split", "num_tasks", "n_shown", "n_eval", "budget_s"}, fields)

    def test_core_imports_without_verifiers(self):
        import subprocess
        import sys
        code = "import sys, redaction_pressure as r; r.load_task('dev', 0); print('verifiers' in sys.modules)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip(), "False")


class ConfigRanges(unittest.TestCase):
    def test_out_of_range_parameters_are_config_errors(self):
        """Review of 2026-12-03: `vf-eval --env.taskset.level 6` (or n-shown 0, budget-s
        100, a bad level mix) passed the config and raised in load(), a 27-line
        traceback; a validation error is what verifiers prints as a config error."""
        import pydantic

        for bad, needle in (({"level": 6}, "level must be one of 1, 2, 3, 4, 5"), ({"n_shown": 0}, "n_shown"),
                            ({"budget_s": 100}, "budget_s must be in (0, 60]"), ({"level_mix": {9: 1}}, "9")):
            with self.subTest(bad=bad), self.assertRaisesRegex(pydantic.ValidationError, re.escape(needle)):
                RedactionConfig(**bad)
        self.assertEqual(RedactionConfig(level=5, level_mix={1: 2, 3: 1}, budget_s=8).level, 5)

    def test_a_private_split_without_its_secret_is_a_config_error(self):
        """New-user walkthrough, 2026-12-04: vf-eval and vf-validate on private_eval with
        the secret unset printed a 28-line traceback from inside the run."""
        import pydantic

        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        with mock.patch.dict(os.environ, env, clear=True):
            with self.assertRaisesRegex(pydantic.ValidationError, re.escape(f"${PRIVATE_SEED_ENV} (at least 32 "
                                                                            "characters); it is not set")):
                RedactionConfig(split="private_eval")
            RedactionConfig(split="dev")  # public splits need no secret
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: "short"}), \
                self.assertRaisesRegex(pydantic.ValidationError, "must hold at least 32 characters"):
            RedactionConfig(split="private_eval")
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET}):
            self.assertEqual(RedactionConfig(split="private_eval").split, "private_eval")

    def test_a_secret_given_where_its_variable_name_belongs_is_never_repeated(self):
        """New-user walkthrough, 2026-12-04: `audit verify --private-seed-env "$SECRET"`
        printed the secret in its error ("needs the secret in $<the secret>")."""
        from redaction_pressure.task.splits import PrivateSeedError, read_private_secret

        for given in (SECRET, "x" * 40, "not-a-name", "A B"):
            with self.subTest(given=given), self.assertRaises(PrivateSeedError) as caught:
                read_private_secret(given)
            self.assertNotIn(given, str(caught.exception))
            self.assertIn(f"give the name, such as {PRIVATE_SEED_ENV}", str(caught.exception))
        with self.assertRaisesRegex(PrivateSeedError, r"\$MY_SEED \(at least 32"):
            read_private_secret("MY_SEED")

    def test_the_task_range_stays_in_the_split(self):
        """New-user walkthrough, 2026-12-03: start_index 62 with num_tasks 4 on dev raised
        IndexError from load(), and num_tasks -3 silently loaded nothing."""
        import pydantic

        for bad, needle in (({"start_index": 62, "num_tasks": 4}, "dev has tasks 0..63; start_index 62 with "
                                                                   "num_tasks 4 runs past its end"),
                            ({"num_tasks": -3}, "num_tasks must be an integer >= 1"),
                            ({"num_tasks": 0}, "num_tasks must be an integer >= 1"),
                            ({"start_index": -1}, "start_index must be an integer >= 0"),
                            ({"start_index": 64}, "start_index 64 is past its end")):
            with self.subTest(bad=bad), self.assertRaisesRegex(pydantic.ValidationError, re.escape(needle)):
                RedactionConfig(split="dev", **bad)
        rows = list(RedactionTaskset(RedactionConfig(split="dev", start_index=60)).load())
        self.assertEqual([r.data.index for r in rows], [60, 61, 62, 63])  # the default count, cut at the end


class OfflineScoring(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = rows(n=3)
        cls.tasks = [load_task("dev", r.data.index) for r in cls.rows]

    def test_oracle_one(self):
        """Exactly 1.0 through verifiers' own scoring path: its hooks add the weighted
        rewards in the contract's order (by name alone, 0.30 + 0.35 + 0.35 gave
        0.9999999999999999)."""
        trace = scored(self.rows[0], policies.oracle(self.tasks[0]))
        self.assertEqual(trace.reward, 1.0)
        self.assertEqual(list(trace.rewards), list(WEIGHTS))
        self.assertEqual({k: (v.score, v.weight) for k, v in trace.rewards.items()},
                         {"recall": (1.0, 0.35), "precision": (1.0, 0.35), "clean": (1.0, 0.30)})
        self.assertEqual(trace.metrics["valid"], 1.0)
        self.assertEqual(trace.info["redaction_errors"], [])

    def test_inaction_zero(self):
        trace = scored(self.rows[1], policies.inaction(self.tasks[1]))
        self.assertEqual(trace.reward, 0.0)
        self.assertEqual(trace.info["redaction_errors"], [])

    def test_invalid_reply_zero_with_code(self):
        trace = scored(self.rows[2], '{"rules": [{"pattern": "(a{1000}){1000}", "replacement": ""}]}')
        self.assertEqual(trace.reward, 0.0)
        self.assertEqual(trace.metrics["valid"], 0.0)
        self.assertEqual([e["code"] for e in trace.info["redaction_errors"]], ["invalid_regex"])

    def test_trace_reward_equals_core_reward(self):
        for row, task in zip(self.rows, self.tasks, strict=False):
            trace = scored(row, policies.baseline(task))
            self.assertEqual(trace.reward, rp.score_completion(task, policies.baseline(task)).reward)

    def test_identity_in_task_data_and_trace(self):
        row = self.rows[0]
        self.assertEqual(row.data.identity["source_digest"], source_digest())
        trace = scored(row, policies.inaction(self.tasks[0]))
        env = trace.info["environment"]
        self.assertLessEqual(IDENTITY_KEYS, set(env))
        self.assertEqual(env["source_digest_algorithm"], DIGEST_ALGORITHM)
        self.assertEqual(env["split"], "dev")
        self.assertEqual(env["task_seed"], self.tasks[0].seed)

    def test_single_turn_stop(self):
        trace = offline_trace(self.rows[0], "x")
        self.assertTrue(asyncio.run(self.rows[0].single_turn(trace)))


class TaskHash(unittest.TestCase):
    def test_the_contracts_task_hash_is_verifiers_hash_of_the_row(self):
        """`audit verify` checks a recorded task.hash with `contract.task_hash` of the task
        data the trace records; that is verifiers' own `Task.hash` of the row (task_key of
        its wire form) for rows of every kind: standard, non-standard budget (its own
        system prompt), another level, a run from start index 5, and a row built outside
        a taskset's iteration (no idx)."""
        import json

        from redaction_pressure.contract import task_hash
        from redaction_pressure.taskset import to_row

        rows = []
        for config in (RedactionConfig(num_tasks=1), RedactionConfig(num_tasks=1, budget_s=3.0),
                       RedactionConfig(num_tasks=1, level=3, start_index=5, n_eval=4)):
            taskset = RedactionTaskset(config)
            rows += [row.with_data(idx=k) for k, row in enumerate(taskset.load())]
        rows.append(to_row(load_task("dev", 7)))
        for row in rows:
            with self.subTest(row=row.key):
                fresh = row.hash  # before anything read row.data (a resume compares this one)
                trace = offline_trace(row, "{}")  # the data and hash a trace records
                recorded = json.loads(trace.model_dump_json())["task"]
                self.assertEqual(recorded["hash"], row.hash)
                self.assertEqual(recorded["hash"], fresh)
                self.assertEqual(task_hash(recorded["data"]), row.hash)

    def test_a_rows_hash_does_not_change_when_its_data_is_read(self):
        """A fresh row holds no prompt and no system prompt; reading ``row.data`` builds
        them. Its hash (and its wire form) must not move when that happens, or the row
        has two hashes: traces record the one after the read, and `vf-eval --resume`
        matches them against fresh rows. It moved for every non-standard budget (the
        budget is in the system prompt), so a resume of such a run found nothing done.
        The standard budget's rows keep the wire form they always had: no system prompt
        (their traces' hashes are unchanged), any other budget's carries its own."""
        from redaction_pressure.contract import task_hash
        from redaction_pressure.task.prompt import SYSTEM_PROMPT, system_prompt
        from redaction_pressure.taskset import RedactionData

        for budget in (2.0, 4.0, 0.5, 60.0):
            for level in (1, 2, 3, 4, 5):
                with self.subTest(budget=budget, level=level):
                    row = rows(n=1, start_index=3, budget_s=budget, level=level)[0]
                    self.assertIsNone(row.__dict__["_data"].prompt)  # fresh: nothing built yet
                    fresh_hash, fresh_wire = row.hash, row.wire_data()
                    self.assertEqual(fresh_wire.get("system_prompt"),
                                     None if budget == 2.0 else system_prompt(budget))
                    self.assertEqual(task_hash(fresh_wire), fresh_hash)
                    rebuilt = RedactionRow(RedactionData.model_validate(fresh_wire))  # an env server's copy
                    self.assertEqual(rebuilt.hash, fresh_hash)
                    data = row.data
                    task = load_task("dev", 3, budget_s=budget, level=level)
                    self.assertEqual(data.system_prompt, task.system_prompt)
                    self.assertEqual(data.system_prompt == SYSTEM_PROMPT, budget == 2.0)
                    self.assertEqual((row.hash, row.wire_data()), (fresh_hash, fresh_wire))
                    self.assertEqual(rebuilt.data.system_prompt, data.system_prompt)
                    self.assertEqual(rebuilt.hash, fresh_hash)
                    self.assertEqual(task_hash(data.model_dump(mode="json")), fresh_hash)


class EventLoop(unittest.TestCase):
    def test_hostile_scan_does_not_block_the_loop(self):
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
        from bench_concurrency import measure
        # The objects earlier tests left in this process (~500k) make a full garbage
        # collection take up to ~0.5 s, which stalls any event loop whatever it runs;
        # freezing them measures what scoring adds, as in a fresh env-server worker.
        gc.collect()
        gc.freeze()
        # Workers started now, not by the first scans: a worker's start-up (~0.3 s quiet,
        # over a second beside the other shard) is not what this measures.
        prestart_scan_pool()
        try:
            out = asyncio.run(measure(n_benign=20, budget_s=1.0))
        finally:
            gc.unfreeze()
        # Every benign rollout is scored while the hostile scan still spends its budget
        # (0.17 s against 1.02 s on a quiet machine).
        self.assertLess(out["benign_all_done_s"], out["hostile_done_s"])
        # Its CPU is bounded by the budget (test_taskset_load); its wall time only by the ceiling.
        self.assertLess(out["hostile_done_s"], 10 * 1.0)
        self.assertLess(out["worst_loop_delay_ms"], 250)  # generous: shared CI machines are noisy

    def test_the_scoring_threads_follow_the_scan_pool(self):
        """The threads that wait on scan workers are as many as the pool has workers,
        also after the pool is resized: sized once, by a first scan under a one-worker
        pool, they once made every later rollout queue behind a hostile one."""
        from redaction_pressure import taskset
        from redaction_pressure.scoring import scan_pool
        small = scan_pool.ScanPool(1)
        try:
            with mock.patch.object(scan_pool, "_pool", small):
                self.assertEqual(taskset._executor()._max_workers, 1)
        finally:
            small.close()
        self.assertEqual(taskset._executor()._max_workers, scan_pool.get_pool().size)


class PrivateRun(unittest.TestCase):
    def test_secret_never_written_seed_only_in_scored_trace(self):
        with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET}):
            path = run_policy("private_eval", "oracle", 3, Path(tmp))
            private_rows = rows("private_eval", n=3)
            for f in Path(tmp).rglob("*"):
                if f.is_file():
                    self.assertNotIn(SECRET.encode(), f.read_bytes(), f)
            traces = read_traces(path)
        self.assertEqual(len(traces), 3)
        for trace, row in zip(traces, private_rows, strict=False):
            seed = trace["info"]["environment"]["task_seed"]
            self.assertGreaterEqual(seed, 1 << 63)
            self.assertNotIn(str(seed), row.data.model_dump_json())
            self.assertNotIn(str(seed), str(trace["task"]["data"]))
            self.assertEqual(trace["info"]["environment"]["split"], "private_eval")
            self.assertAlmostEqual(sum(r["score"] * r["weight"] for r in trace["rewards"].values()), 1.0)

    def test_scoring_private_without_secret_fails_clearly(self):
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET}):
            row = rows("private_eval", n=1)[0]
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        with mock.patch.dict(os.environ, env, clear=True):
            importlib.import_module("redaction_pressure.taskset")._tasks.clear()
            with self.assertRaisesRegex(Exception, PRIVATE_SEED_ENV):
                from redaction_pressure.taskset import core_task
                core_task(row.data)


class ResumeRefusalMessage(unittest.TestCase):
    def test_a_recorded_value_is_cut_in_the_refusal(self):
        from redaction_pressure.vf_env import _recorded_build, _short

        self.assertEqual(_short("0" * 40), repr("0" * 40))
        self.assertEqual(len(_short("0" * 5_000_000)), 103)
        # An episode that names no identity (or not as a mapping) claims no build.
        for data in (None, {"identity": None}, {"identity": [1]}, {}):
            episode = type("E", (), {"task": type("T", (), {"data": data})()})()
            self.assertIsNone(_recorded_build(episode))


if __name__ == "__main__":
    unittest.main()
