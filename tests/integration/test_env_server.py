"""verifiers' env-server pool as the scale-out path (issue 15, item 4), end to end, started
from the training recipe as its README section documents (issue 24, item 4).

Trainers (prime-rl) do not score in process: they ship each row's task data to
verifiers env servers (`serve_env` -> `EnvServerPool`, a ZMQ broker over worker
processes) through `EnvClient.run`, and the worker that runs a rollout also builds
its task and scores it. This loads configs/train-rl.toml (`recipe.load_recipe`, with
the overrides a test needs: the in-process chat harness, a pool of 2 workers on an
OS-assigned port), serves it with `recipe.serve` (what `redaction-pressure serve`
runs), and, as a trainer client would, takes the first 32 rows of the recipe's own
taskset (train, curriculum stage 1) with its sampling settings and drives each x 2
rollouts through `EnvClient` against a fake model on 127.0.0.1
(`tests/support/fake_openai.py`; the model call goes through each worker's
interception server), once with 2 rollouts in flight and once with 32. It checks
that every reward, metric and error equals in-process scoring of the same reply
(`score_completion(load_task(...), reply)`), that the model saw the recipe's sampling
settings, that both workers scored, and that no process outlives the pool.

Each rollout's reply is chosen by (task, rollout) from a mix of built-in policies and
broken replies, passed to the fake model as the sampling ``seed``, so every trace
has exactly one expected verdict.

The broker is forked from this process rather than spawned: it only routes frames,
and a spawned one would first spend seconds importing verifiers again (~7 s here,
where no bytecode cache is written). The workers, which load the env and score, are
spawned by `EnvServerPool` itself, as in production. Slow-ish: 40-60 s on a shared
2-core machine with other jobs on it, about half of it the two workers importing
verifiers (~7 s of CPU each without a bytecode cache).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import queue
import sys
import time
import unittest
from pathlib import Path
from unittest import mock

SUPPORT_DIR = str(Path(__file__).resolve().parents[1] / "support")
if SUPPORT_DIR not in sys.path:  # env-server workers import the harness by its id, `fake_openai` (see its doc)
    sys.path.insert(0, SUPPORT_DIR)

import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.serve import EnvClient  # noqa: E402

from redaction_pressure import load_task, policies, score_completion  # noqa: E402
from redaction_pressure.build.identity import source_digest  # noqa: E402
from redaction_pressure.recipe import load_recipe, rows  # noqa: E402
from redaction_pressure.recipe import serve as serve_recipe  # noqa: E402
from redaction_pressure.scoring.reward import WEIGHTS  # noqa: E402
from tests.support.fake_openai import HARNESS_ID, serve  # noqa: E402

# 32 tasks x 2 rollouts: 64 rollouts, up to 32 in flight (64 tasks took ~10 s more of
# the suite's 3 minutes and tested nothing more)
N_TASKS, ROLLOUTS, WORKERS = 32, 2, 2
STARTUP_TIMEOUT_S = 120.0  # a spawned broker or worker imports verifiers: seconds, more on a loaded host
RUN_TIMEOUT_S = 120.0  # all rollouts of one run (`EnvClient.run` itself waits forever)
STOP_TIMEOUT_S = 30.0
API_KEY_VAR = "RP_ENV_SERVER_TEST_KEY"
RECIPE = Path(__file__).resolve().parents[2] / "configs" / "train-rl.toml"


def _think_baseline(task) -> str:
    return "<think>the shown records first</think>\n" + policies.baseline(task)


REPLIES = (  # (name, reply for a task); rollout k of task i gets REPLIES[(2 i + k) % len]
    ("oracle", policies.oracle),
    ("baseline", policies.baseline),
    ("induce", policies.induce),
    ("malformed", lambda task: "I cannot produce JSON today."),
    ("think+baseline", _think_baseline),
    ("invalid_regex", lambda task: '{"rules": [{"pattern": "(unclosed", "replacement": ""}]}'),
    ("first_char", policies.first_char),
)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``, from /proc (Linux)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            todo.extend(kids - found)
            found |= kids
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The largest number of (start, end) spans open at one instant."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def run_broker(lifeline, recipe, **kwargs) -> None:
    """`recipe.serve` in a forked child, which first drops its copy of the test's end of
    the death pipe, so the test's death (EOF) still stops the broker and its workers."""
    lifeline.close()
    serve_recipe(recipe, **kwargs)


def sampled_reply(trace) -> str:
    (node,) = [n for n in trace.nodes if n.sampled]
    return node.message.content


@unittest.skipUnless(sys.platform == "linux", "forks the broker and reads /proc for its processes")
class EnvServerPoolEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.recipe = load_recipe(RECIPE, stage=1, overrides={
            "env": {"agent": {"harness": {"id": HARNESS_ID}}},
            "serve": {"address": "tcp://127.0.0.1:0", "pool": {"type": "static", "num_workers": WORKERS}}})
        cls.rows = [row.wire_data() for row in rows(cls.recipe, N_TASKS)]
        cls.split = cls.recipe.env.taskset.split
        cls.tasks = [load_task(cls.split, row["index"], level=row["level"]) for row in cls.rows]
        cls.reply = {(i, k): REPLIES[(2 * i + k) % len(REPLIES)][1](task)
                     for i, task in enumerate(cls.tasks) for k in range(ROLLOUTS)}
        by_prompt = {task.prompt: i for i, task in enumerate(cls.tasks)}

        def reply_for(body: dict) -> str:
            prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
            return cls.reply[(by_prompt[prompt], body["seed"])]

        cls.model, port, cls.requests = serve(reply_for, whole_body=True)
        cls.client_config = vf.EvalClientConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key_var=API_KEY_VAR)
        cls.pool_processes: set[int] = set()  # every process below the broker we have seen
        ctx = mp.get_context("fork")
        addresses = ctx.Queue()
        cls.lifeline, death_pipe = ctx.Pipe()
        cls.broker = ctx.Process(target=run_broker, args=(cls.lifeline, cls.recipe), daemon=False,
                                 kwargs=dict(address_queue=addresses, death_pipe=death_pipe))
        # One scan worker per env-server worker: 2 env workers x 1 = the 2 CPUs of a CI runner (README).
        with mock.patch.dict(os.environ, {"REDACTION_PRESSURE_SCAN_WORKERS": "1", API_KEY_VAR: "sk-test"}):
            cls.broker.start()
        death_pipe.close()
        try:
            # While the pool boots: the expected verdicts, scored here, in process.
            cls.expected = {key: score_completion(cls.tasks[key[0]], reply) for key, reply in cls.reply.items()}
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while True:
                try:
                    cls.address = addresses.get(timeout=0.5)
                    break
                except queue.Empty:
                    if not cls.broker.is_alive() or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"the env-server broker did not bind (exit code {cls.broker.exitcode})") from None
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        """Stops the broker the way a trainer does (SIGTERM: it terminates its workers,
        whose scan workers exit on EOF) and checks that nothing it started lives on."""
        if cls.broker.is_alive():
            cls.pool_processes |= descendants(cls.broker.pid)
        cls.broker.terminate()
        cls.broker.join(STOP_TIMEOUT_S)
        if cls.broker.is_alive():
            cls.broker.kill()
            cls.broker.join(5)
        cls.lifeline.close()
        cls.model.shutdown()
        cls.model.server_close()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while any(alive(p) for p in cls.pool_processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = sorted(p for p in cls.pool_processes if alive(p))
        for pid in survivors:  # never leave them behind, but fail: cleanup is part of the contract
            os.kill(pid, 9)
        assert cls.broker.exitcode == 0, f"env-server broker exit code {cls.broker.exitcode}"
        assert not survivors, f"processes outlived the env-server pool: {survivors}"

    def drive(self, concurrency: int) -> dict:
        """All rows x ROLLOUTS through one `EnvClient`, at most ``concurrency`` in
        flight; returns {(task index, rollout): episode}."""

        async def run_all() -> dict:
            client = EnvClient(self.address)
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int, k: int):
                async with gate:  # the recipe's sampling settings, and the seed that picks the reply
                    sampling = self.recipe.sampling.model_copy(update={"seed": k})
                    return (i, k), await client.run(self.client_config, "fake-model", sampling, self.rows[i])

            try:
                await client.wait_for_server_startup(timeout=STARTUP_TIMEOUT_S, interval=0.2)
                pairs = [(i, k) for i in range(N_TASKS) for k in range(ROLLOUTS)]
                return dict(await asyncio.wait_for(asyncio.gather(*(one(i, k) for i, k in pairs)), RUN_TIMEOUT_S))
            finally:
                await client.close()

        asked = len(self.requests)
        episodes = asyncio.run(run_all())
        self.__class__.pool_processes |= descendants(self.broker.pid)
        self.assertEqual(len(self.requests) - asked, N_TASKS * ROLLOUTS, "one model call per rollout")
        want = self.recipe.sampling
        for body in self.requests[asked:]:
            self.assertEqual((body.get("temperature"), body.get("top_p"),
                              body.get("max_tokens", body.get("max_completion_tokens"))),
                             (want.temperature, want.top_p, want.max_tokens))
        return episodes

    def check(self, episodes: dict) -> tuple[set[int], int]:
        """Every trace equals in-process scoring of its reply; returns the pids of
        the processes that ran (and scored) the rollouts and the most rollouts that
        were in the pool at one instant (from each trace's start to its scoring's end)."""
        self.assertEqual(sorted(episodes), sorted(self.reply))
        pids, spans = set(), []
        for (i, k), episode in sorted(episodes.items()):
            with self.subTest(task=i, rollout=k, reply=REPLIES[(2 * i + k) % len(REPLIES)][0]):
                self.assertTrue(episode.ok, episode.errors)
                (trace,) = episode.traces
                self.assertTrue(trace.ok, trace.errors)
                self.assertEqual(sampled_reply(trace), self.reply[(i, k)])
                want = self.expected[(i, k)]
                self.assertEqual({name: (r.score, r.weight) for name, r in trace.rewards.items()},
                                 {"recall": (want.recall, WEIGHTS["recall"]),
                                  "precision": (want.precision, WEIGHTS["precision"]),
                                  "clean": (want.clean, WEIGHTS["clean"])})
                self.assertAlmostEqual(trace.reward, want.reward, places=12)
                self.assertEqual(trace.metrics, {name: float(v) for name, v in want.metrics().items()})
                info = trace.info
                self.assertEqual(info["redaction_errors"], [e.as_dict() for e in want.errors])
                self.assertEqual(info["redaction"]["secret_families"], want.secret_families)
                self.assertEqual(info["redaction"]["decoy_families"], want.decoy_families)
                env = info["environment"]
                self.assertEqual((env["split"], env["task_index"], env["task_seed"], env["source_digest"]),
                                 (self.split, self.rows[i]["index"], self.tasks[i].seed, source_digest()))
                self.assertEqual(env["task_params"]["level"], self.rows[i]["level"])
                pids.add(info["harness_pid"])
                spans.append((trace.timing.start, trace.timing.scoring.end))
        self.assertNotIn(os.getpid(), pids, "rollouts must run in the pool, not here")
        self.assertNotIn(self.broker.pid, pids, "the broker only routes")
        self.assertLessEqual(pids, descendants(self.broker.pid), "the rollouts ran in the pool's workers")
        return pids, most_at_once(spans)

    def test_the_rows_are_the_recipes(self):
        """What a trainer ships: the recipe's split from its first index, each row at a
        level of the stage's mix."""
        self.assertEqual(self.split, "train")
        self.assertEqual([r["index"] for r in self.rows], list(range(N_TASKS)))
        self.assertEqual({r["split"] for r in self.rows}, {"train"})
        self.assertLessEqual({r["level"] for r in self.rows}, set(self.recipe.curriculum.stages[0].level_mix))

    def test_expected_verdicts_are_varied(self):
        """Equality with in-process scoring means something only if the verdicts
        differ from task to task and from reply to reply."""
        rewards = [s.reward for s in self.expected.values()]
        # 64 rollouts, two of seven replies broken (reward 0): 19 distinct rewards today
        self.assertGreaterEqual(len(set(rewards)), 15)
        self.assertIn(1.0, rewards)
        codes = {e.code for s in self.expected.values() for e in s.errors}
        self.assertEqual(codes, {"malformed_json", "invalid_regex"})

    def test_two_workers_one_rollout_each(self):
        pids, most = self.check(self.drive(concurrency=WORKERS))
        self.assertEqual(len(pids), WORKERS, "least-busy dispatch gives each worker one of the 2 in flight")
        self.assertLessEqual(most, WORKERS)

    def test_concurrency_32(self):
        pids, most = self.check(self.drive(concurrency=32))
        self.assertEqual(len(pids), WORKERS)
        self.assertGreater(most, 8 * WORKERS, "rollouts were scored while many others were in flight")


if __name__ == "__main__":
    unittest.main()
