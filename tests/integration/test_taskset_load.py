"""Scoring under load (issue 15): verdicts that do not depend on what else runs, the
starvation ceiling, pool sizing and fork safety, cheap rows, one build per trace,
the durable key and the oracle as `Task.validate`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import verifiers.v1 as vf

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.scoring import scan_pool
from redaction_pressure.scoring.scan_pool import ScanInfrastructureError, ScanPool
from redaction_pressure.scoring.score import score_with_cost
from redaction_pressure.taskset import (
    RedactionConfig,
    RedactionData,
    RedactionRow,
    TaskCache,
    _tasks,
    offline_trace,
    score_trace_info,
)
from tests.support.load_child import score_in_child

ROOT = Path(__file__).resolve().parents[2]
BUDGET_S = 0.4
TASK = load_task("dev", 0, budget_s=BUDGET_S)


def with_ballast(reply: str, n: int) -> str:
    """The reply plus one rule that never matches and costs ~n^2 steps per position
    (no required literal, so every record is scanned): valid, and as slow as we like."""
    body = reply.split("```json\n", 1)[1].rsplit("```", 1)[0] if "```" in reply else reply
    rules = json.loads(body)["rules"]
    rules.append({"pattern": f"[\\s\\S]{{0,{n}}}[\\s\\S]{{0,{n}}}[\\x00\\x01]", "replacement": ""})
    return json.dumps({"rules": rules})


# About a fifth of the budget alone: CPU time itself grows under heavy contention on
# shared cores (measured up to ~2x on a 2-core VM running four test suites), and these
# tests are about load, not about replies at the edge of their budget.
NEAR = with_ballast(policies.oracle(TASK), 22)
OVER = with_ballast(policies.oracle(TASK), 150)  # about three budgets alone


# Which of the two out-of-time codes a reply over its budget gets depends on where the
# budget ran out (inside a regex call, or between two), so on timing: they are one
# verdict, as the audit reads them (audit._rescore.TIME_CODES).
_OUT_OF_TIME = {"timeout": "out_of_time", "budget_exhausted": "out_of_time"}


def verdict(s) -> tuple:
    return (s.reward, tuple((_OUT_OF_TIME.get(e.code, e.code), e.rule) for e in s.errors))


class LoadIndependentBudget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        score_completion(TASK, NEAR)  # start the workers
        cls.near, cls.near_cpu, _ = score_with_cost(TASK, NEAR)
        cls.over, cls.over_cpu, _ = score_with_cost(TASK, OVER)

    def test_alone(self):
        self.assertLess(self.near_cpu, 0.8 * BUDGET_S, "the near-budget reply must fit its budget alone")
        self.assertEqual(verdict(self.near), (1.0, ()))
        self.assertEqual([e.code for e in self.over.errors], ["timeout"])
        self.assertLessEqual(self.over_cpu, BUDGET_S + 0.15)  # ends within budget + 0.15 s of its own CPU

    def test_same_verdict_beside_concurrent_threads(self):
        replies = [NEAR, OVER] * 4
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda r: score_with_cost(TASK, r), replies))
        for reply, (s, cpu, _) in zip(replies, got, strict=False):
            self.assertEqual(verdict(s), verdict(self.near if reply is NEAR else self.over))
            self.assertLessEqual(cpu, BUDGET_S + 0.15)

    def test_same_verdict_beside_cpu_burners(self):
        burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
        try:
            time.sleep(0.1)
            for reply, expected in ((NEAR, self.near), (OVER, self.over)):
                self.assertEqual(verdict(score_completion(TASK, reply)), verdict(expected))
        finally:
            for p in burners:
                p.kill()
                p.wait()

    def test_same_verdict_from_concurrent_processes(self):
        code = ("import sys, json; from redaction_pressure import load_task, score_completion\n"
                f"t = load_task('dev', 0, budget_s={BUDGET_S}); r = sys.stdin.read()\n"
                "s = score_completion(t, r); print(json.dumps([s.reward, [e.code for e in s.errors]]))")
        procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=dict(os.environ, REDACTION_PRESSURE_SCAN_WORKERS="1"))
                 for _ in range(4)]
        outs = [json.loads(p.communicate(NEAR, timeout=120)[0]) for p in procs]
        self.assertEqual(outs, [[1.0, []]] * 4)

    def test_a_thousand_fresh_replies_on_eight_threads_never_score_zero(self):
        """Frequent thread switching, every reply a pattern never seen before: no
        cache or pool race can turn a valid reply into a false zero."""
        base = json.loads(policies.oracle(TASK).split("```json\n", 1)[1].rsplit("```", 1)[0])["rules"]
        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            def one(i):
                rules = [*base, {"pattern": f"never_{i}_[\\x00\\x01]", "replacement": ""}]
                return score_completion(TASK, json.dumps({"rules": rules})).reward
            with ThreadPoolExecutor(8) as pool:
                rewards = list(pool.map(one, range(1000)))
        finally:
            sys.setswitchinterval(old)
        self.assertEqual(rewards.count(1.0), 1000)


class Ceiling(unittest.TestCase):
    def test_starved_worker_is_an_infrastructure_error(self):
        pool = ScanPool(1, ceiling_min_s=0.5)
        try:
            texts = [r.text for r in TASK.heldout]
            pool.run(texts, [("AKIA", "")], BUDGET_S)
            pid = pool._idle[0].pid
            os.kill(pid, signal.SIGSTOP)  # the machine gives this worker no CPU at all
            start = time.perf_counter()
            with self.assertRaisesRegex(ScanInfrastructureError, "starved"):
                pool.run(texts, [("AKIA", "")], 0.01)
            self.assertLess(time.perf_counter() - start, 5)
            self.assertEqual(pool._live, 0)  # the stuck worker was replaced, not reused
            self.assertEqual(pool.run(texts, [("AKIA", "")], BUDGET_S)[2], [])
        finally:
            pool.close()

    def test_dead_worker_is_an_infrastructure_error_and_the_rollout_fails(self):
        pool = ScanPool(1)
        try:
            texts = [r.text for r in TASK.heldout]
            pool.run(texts, [("AKIA", "")], BUDGET_S)
            threading.Timer(0.3, os.kill, (pool._idle[0].pid, signal.SIGKILL)).start()
            with mock.patch.object(scan_pool, "_pool", pool):
                row = next(iter(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="dev", num_tasks=1,
                                                           budget_s=BUDGET_S))))
                trace = offline_trace(row, OVER)
                with self.assertRaisesRegex(vf.TaskError, "ScanInfrastructureError: scan worker .* died"):
                    asyncio.run(row.score(trace))
            self.assertIn("no verdict", trace.info["redaction_infrastructure_error"])
            self.assertNotIn("redaction", trace.info)
        finally:
            pool.close()


class PoolSizing(unittest.TestCase):
    def test_cgroup_quota_tightest_on_the_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "a" / "b").mkdir(parents=True)
            (root / "cpu.max").write_text("max 100000\n")
            (root / "a" / "cpu.max").write_text("150000 100000\n")
            (root / "a" / "b" / "cpu.max").write_text("400000 100000\n")
            proc = root / "cgroup"
            proc.write_text("0::/a/b\n")
            self.assertEqual(scan_pool._cgroup_cpus(root, proc), 1.5)
            proc.write_text("0::/\n")
            self.assertIsNone(scan_pool._cgroup_cpus(root, proc))
        with mock.patch.object(scan_pool, "_cgroup_cpus", return_value=1.5):
            self.assertEqual(scan_pool.available_cpus(), min(2, len(os.sched_getaffinity(0))))
        with mock.patch.object(scan_pool, "_cgroup_cpus", return_value=0.2):
            self.assertEqual(scan_pool.available_cpus(), 1)

    def test_env_var(self):
        with mock.patch.dict(os.environ, {scan_pool.WORKERS_ENV: "3"}):
            self.assertEqual(scan_pool.pool_size(), 3)
        for bad in ("0", "-1", "two", "1000"):
            with mock.patch.dict(os.environ, {scan_pool.WORKERS_ENV: bad}), \
                    self.assertRaisesRegex(ValueError, scan_pool.WORKERS_ENV):
                scan_pool.pool_size()
        with mock.patch.dict(os.environ, {scan_pool.WORKERS_ENV: ""}):
            self.assertEqual(scan_pool.pool_size(), scan_pool.available_cpus())


class ForkAndSpawn(unittest.TestCase):
    def test_scoring_works_in_a_forked_child(self):
        expected = verdict(score_completion(TASK, NEAR))  # the parent's pool is live
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: must not reuse (or hang on) the parent's workers
            try:
                os.write(write, json.dumps(verdict(score_completion(TASK, NEAR))).encode())
            finally:
                os._exit(0)
        os.close(write)
        deadline = time.monotonic() + 60
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                self.fail("scoring in a forked child hung")
            time.sleep(0.05)
        with os.fdopen(read) as f:
            self.assertEqual(json.loads(f.read()), json.loads(json.dumps(expected)))
        self.assertEqual(verdict(score_completion(TASK, NEAR)), expected)  # the parent's pool still works

    def test_scoring_works_in_a_spawned_child(self):
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=score_in_child, args=(queue, "dev", 0, BUDGET_S, NEAR))
        proc.start()
        got = queue.get(timeout=120)
        proc.join(30)
        self.assertEqual(got, verdict(score_completion(TASK, NEAR)))


class CheapRows(unittest.TestCase):
    def test_listing_builds_no_task(self):
        _tasks.clear()
        with mock.patch("redaction_pressure.taskset.load_task", side_effect=AssertionError("built")):
            start = time.perf_counter()
            rows = list(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="train",
                                                        num_tasks=100_000)))
            elapsed = time.perf_counter() - start
            keys = {rows[i].key for i in range(0, 100_000, 997)}
        self.assertEqual(len(rows), 100_000)
        self.assertEqual(len(_tasks), 0)
        self.assertEqual(len(keys), len(range(0, 100_000, 997)))
        self.assertLess(elapsed, 20, "100,000 rows (bench_load prints the figure; target < 10 s)")
        self.assertIsNone(rows[7].wire_data().get("prompt"))
        self.assertEqual(rows[7].data.prompt, load_task("train", 7).prompt)  # built on first use

    def test_lru_is_true_lru_and_thread_safe(self):
        cache = TaskCache(3)
        for k in "abc":
            cache.put((k,), k)
        cache.get(("a",))
        cache.put(("d",), "d")
        self.assertIsNone(cache.get(("b",)))  # least recently used, not first inserted
        self.assertEqual(cache.get(("a",)), "a")
        cache = TaskCache(16)
        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            def churn(t):
                for i in range(3000):
                    key = ((t * 7 + i) % 40,)
                    if cache.get(key) is None:
                        cache.put(key, key)
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(churn, range(8)))
        finally:
            sys.setswitchinterval(old)
        self.assertLessEqual(len(cache), 16)

    def test_server_side_rebuild_from_wire_data(self):
        row = list(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="dev", num_tasks=3)))[2]
        rebuilt = RedactionRow(RedactionData.model_validate(row.wire_data()))
        task = load_task("dev", 2)
        self.assertEqual((rebuilt.data.prompt, rebuilt.data.system_prompt), (task.prompt, task.system_prompt))
        self.assertEqual((rebuilt.key, rebuilt.hash), (row.key, row.hash))
        trace = offline_trace(rebuilt, policies.oracle(task))
        asyncio.run(rebuilt.score(trace))
        self.assertAlmostEqual(trace.reward, 1.0, places=12)


class OneBuildPerTrace(unittest.TestCase):
    def test_identity_mismatch_fails_the_rollout(self):
        row = next(iter(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="dev", num_tasks=1))))
        task = load_task("dev", 0)
        for field, value in (("source_digest", "0" * 64), ("corpus_version", "corpus-v0"),
                             ("reward_schema_version", "reward-v0")):
            with self.subTest(field=field):
                data = row.data.model_copy(update={"identity": {**row.data.identity, field: value}})
                other = RedactionRow(data)
                trace = offline_trace(other, policies.oracle(task))
                with self.assertRaisesRegex(vf.TaskError, f"another build.*{field}"):
                    asyncio.run(other.score(trace))
                self.assertIn("BuildMismatchError", trace.info["redaction_infrastructure_error"])
                self.assertEqual(trace.rewards.get("recall"), None)
        self.assertEqual(score_trace_info(row.data, policies.oracle(task))["redaction"]["reward"], 1.0)


class DurableKeyAndValidate(unittest.TestCase):
    def test_key_names_split_index_corpus_and_parameters_only(self):
        def key(**kw):
            cfg = dict(id="redaction-pressure", split="dev", num_tasks=2) | kw
            return [r.key for r in vf.load_taskset(RedactionConfig(**cfg))]
        base = key()
        self.assertEqual(len(set(base)), 2)
        self.assertNotEqual(key(n_eval=17), base)
        self.assertNotEqual(key(budget_s=1.0), base)
        self.assertNotEqual(key(split="train"), base)
        self.assertEqual(key(), base)
        with mock.patch("regex.__version__", "0.0.0"):
            self.assertEqual(key(), base)

    def test_a_change_of_the_higher_levels_changes_their_keys_only(self):
        """Levels 2-5 changed under one corpus version (level 1 byte-identical): their
        keys name the levels version, so a resume or a curriculum never takes a new
        level-5 task for an old one; level 1's keys stay as they were."""
        from redaction_pressure.task import tasks
        before = [tasks.durable_key("dev", 0, 8, 16, 2.0, level) for level in (1, 2, 5)]
        with mock.patch.object(tasks, "LEVELS_VERSION", "levels-v0"):
            after = [tasks.durable_key("dev", 0, 8, 16, 2.0, level) for level in (1, 2, 5)]
        self.assertEqual(after[0], before[0])
        self.assertNotEqual(after[1], before[1])
        self.assertNotEqual(after[2], before[2])
        self.assertEqual(len(set(before)), 3)

    def test_key_survives_a_source_edit(self):
        code = ("import json; from redaction_pressure.task.tasks import durable_key\n"
                "from redaction_pressure.build.identity import source_digest\n"
                "print(json.dumps([durable_key('dev', i, 8, 16, 2.0) for i in range(3)] + [source_digest()]))")

        def run(package_root: Path):
            env = dict(os.environ, PYTHONPATH=str(package_root))
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                 cwd=package_root, timeout=120, check=True)
            return json.loads(out.stdout)

        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(ROOT / "redaction_pressure", Path(tmp) / "redaction_pressure",
                            ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copytree(ROOT / "schemas", Path(tmp) / "schemas")
            with open(Path(tmp) / "redaction_pressure" / "scoring" / "scanner.py", "a") as f:
                f.write("\n# an edit that changes nothing about any task\n")
            edited = run(Path(tmp))
        here = run(ROOT)
        self.assertNotEqual(edited[-1], here[-1])  # the build changed
        self.assertEqual(edited[:-1], here[:-1])  # the keys did not
        rows = list(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="dev", num_tasks=3)))
        self.assertEqual([r.key for r in rows], here[:-1])  # and they are what Task.key says
        other = RedactionRow(rows[0].data.model_copy(
            update={"identity": {**rows[0].data.identity, "source_digest": "0" * 64, "regex_version": "0"}}))
        self.assertEqual(other.key, rows[0].key)
        self.assertNotEqual(other.hash, rows[0].hash)  # the content hash does see the build

    def test_validate_is_the_oracle(self):
        rows = list(vf.load_taskset(RedactionConfig(id="redaction-pressure", split="dev", num_tasks=3)))
        for row in rows:
            self.assertIs(asyncio.run(row.validate(None)), True)
        with mock.patch.object(policies, "oracle", policies.first_char):
            self.assertIs(asyncio.run(rows[0].validate(None)), False)


if __name__ == "__main__":
    unittest.main()
