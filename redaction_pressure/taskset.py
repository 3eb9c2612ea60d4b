"""The verifiers v1 adapter: one taskset over a split, one single-turn task per seed.

Importing this module imports `verifiers.v1` (slow); the scoring core does not. The
scan runs once per trace, in a metric (metrics finish before rewards start), in a
worker thread so the event loop keeps serving other rollouts; `regex` releases the
GIL while matching. The three rewards read its result, so ``trace.reward`` is exactly
reward-v1: 0.35 recall + 0.35 precision + 0.30 clean, each already multiplied by
validity.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness

from ._reward import WEIGHTS
from ._scoring import score_completion
from ._splits import PRIVATE_SEED_ENV, private_commitment, read_private_secret
from ._task import DEFAULT_N_EVAL, DEFAULT_N_SHOWN, RedactionTask, load_task
from ._scanner import DEFAULT_BUDGET_S

DEFAULT_COUNTS = {"dev": 64, "train": 1000, "private_eval": 64}


class RedactionData(vf.TaskData):
    split: str
    index: int
    n_shown: int
    n_eval: int
    budget_s: float
    identity: dict


_CACHE_SIZE = 4096
_tasks: OrderedDict[tuple, RedactionTask] = OrderedDict()


def _remember(key: tuple, task: RedactionTask) -> RedactionTask:
    _tasks[key] = task
    _tasks.move_to_end(key)
    while len(_tasks) > _CACHE_SIZE:
        _tasks.popitem(last=False)
    return task


def _key(split: str, index: int, n_shown: int, n_eval: int, budget_s: float, commitment: str) -> tuple:
    # The commitment keys private tasks by secret without putting the secret in the key.
    return (split, index, n_shown, n_eval, float(budget_s), commitment)


def core_task(data: RedactionData) -> RedactionTask:
    """The core task behind a row: the one `load` built when it is still cached, else
    rebuilt (a private one from the secret this process holds)."""
    commitment = data.identity["split_commitment"]
    key = _key(data.split, data.index, data.n_shown, data.n_eval, data.budget_s, commitment)
    task = _tasks.get(key)
    if task is None:
        if data.split == "private_eval" and private_commitment(read_private_secret()) != commitment:
            raise RuntimeError(f"task {data.id} was issued under another private secret than the "
                               f"one in ${PRIVATE_SEED_ENV}")
        task = _remember(key, load_task(data.split, data.index, data.n_shown, data.n_eval, data.budget_s))
    return task


_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    """Scans run in their own pool, one thread per core: `regex` releases the GIL while
    matching, so more threads than cores only queue on the GIL and delay the event
    loop (measured in benchmarks/bench_concurrency.py), while a hostile reply can hold
    one thread for its whole budget and the others keep scoring."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=min(8, max(2, os.cpu_count() or 2)),
                                   thread_name_prefix="redaction-scan")
    return _pool


def score_trace_info(data: RedactionData, reply: str) -> dict:
    """Scores ``reply`` and returns what goes into ``trace.info``."""
    task = core_task(data)
    score = score_completion(task, reply)
    environment = dict(task.identity, task_id=task.id, task_seed=task.seed)
    return {
        "environment": environment,
        "redaction_errors": [e.as_dict() for e in score.errors],
        "redaction": {
            "reward": score.reward, "recall": score.recall, "precision": score.precision,
            "clean": score.clean, "valid": score.valid, **score.metrics(),
            "secret_families": score.secret_families, "decoy_families": score.decoy_families,
        },
    }


class RedactionRow(vf.Task[RedactionData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.metric
    async def redaction(self, trace: vf.Trace) -> dict[str, float]:
        loop = asyncio.get_running_loop()
        info = await loop.run_in_executor(_executor(), score_trace_info, self.data, _reply(trace))
        trace.info.update(info)
        r = info["redaction"]
        return {k: float(r[k]) for k in ("valid", "secrets_total", "secrets_removed", "removed_chars",
                                         "collateral_chars", "matches", "errors")}

    @vf.reward(weight=WEIGHTS["recall"])
    async def recall(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["recall"])

    @vf.reward(weight=WEIGHTS["precision"])
    async def precision(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["precision"])

    @vf.reward(weight=WEIGHTS["clean"])
    async def clean(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["clean"])


def _reply(trace: vf.Trace) -> str:
    """The model's single reply, unstripped (character positions matter to nobody
    here, but the parser should see exactly what the model sent)."""
    replies = [n.message for n in trace.nodes if n.sampled]
    if not replies:
        return ""
    content = replies[-1].content
    if isinstance(content, str):
        return content
    return "".join(getattr(part, "text", "") or "" for part in content or [])


class RedactionConfig(vf.TasksetConfig):
    split: Literal["train", "dev", "private_eval"] = "dev"
    """Which split: train, dev (64 public tasks) or private_eval (seeds from $REDACTION_PRESSURE_PRIVATE_SEED)."""
    num_tasks: int | None = None
    """How many tasks to load, from start_index (default: 64 for dev and private_eval, 1000 for train)."""
    start_index: int = 0
    """Index of the first task."""
    n_shown: int = DEFAULT_N_SHOWN
    """Labelled records shown to the model."""
    n_eval: int = DEFAULT_N_EVAL
    """Held-out records the rules are scored on."""
    budget_s: float = DEFAULT_BUDGET_S
    """Shared regex time budget of one episode, in seconds."""


def to_row(task: RedactionTask, config: vf.TaskConfig | None = None) -> RedactionRow:
    _remember(_key(task.split, task.index, task.n_shown, task.n_eval, task.budget_s,
                   task.identity["split_commitment"]), task)
    published = task.task_data()
    data = RedactionData(id=task.id, name=task.id, prompt=task.prompt, system_prompt=task.system_prompt,
                         split=task.split, index=task.index, n_shown=task.n_shown, n_eval=task.n_eval,
                         budget_s=task.budget_s, identity=published["identity"])
    return RedactionRow(data, config)


class RedactionTaskset(vf.Taskset[RedactionRow, RedactionConfig]):
    def load(self):
        cfg = self.config
        count = DEFAULT_COUNTS[cfg.split] if cfg.num_tasks is None else cfg.num_tasks
        for index in range(cfg.start_index, cfg.start_index + count):
            yield to_row(load_task(cfg.split, index, cfg.n_shown, cfg.n_eval, cfg.budget_s), cfg.task)


class RedactionHarness(NullHarness):
    """The default harness for this taskset: one tool-less chat turn."""


def offline_trace(row: RedactionRow, reply: str, model: str = "offline") -> vf.Trace:
    """A completed one-turn trace holding ``reply``, for scoring through
    `Task.score` with no model: the path `redaction-pressure eval` and the tests use."""
    d = row.data
    nodes = [vf.MessageNode(message=vf.SystemMessage(content=d.system_prompt)),
             vf.MessageNode(parent=0, message=vf.UserMessage(content=d.prompt)),
             vf.MessageNode(parent=1, sampled=True, message=vf.AssistantMessage(content=reply))]
    return vf.Trace(task=vf.TraceTask(type=type(row).__name__, data=d, key=row.key, hash=row.hash),
                    agent=vf.AgentInfo(config=vf.AgentConfig(model=model)),
                    nodes=nodes, is_completed=True, ok=True, stop_condition="single_turn")
