"""The verifiers v1 adapter: one taskset over a split, one single-turn task per seed.

Importing this module imports `verifiers.v1` (slow); the scoring core does not. The
scan runs once per trace, in a metric (metrics finish before rewards start); the
calling thread waits on a scan worker process (`scoring.scan_pool`) so the event loop keeps
serving other rollouts. The three rewards read its result and are summed in the
contract's order, so ``trace.reward`` is exactly reward-v1's reward: 0.35 recall + 0.35
precision + 0.30 clean, each already multiplied by validity (a perfect reply earns 1.0,
not 0.9999999999999999).

Rows are cheap: `load` yields rows carrying split, index, parameters and identity, no
records and no prompt, so listing a million rows builds nothing. A row's task is built
on first use of ``row.data`` (the prompt) or of its score, where that happens (an
env-server worker when the trainer ships `RedactionRow.wire_data`), and kept in a
bounded, thread-safe LRU cache.
"""

from __future__ import annotations

import asyncio
import copy
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import pydantic
import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.task import task_key

from . import policies
from .build.identity import build_identity
from .scoring.answer import reply_notes
from .scoring.reward import WEIGHTS
from .scoring.scan_pool import ScanInfrastructureError, get_pool
from .scoring.scanner import DEFAULT_BUDGET_S
from .scoring.score import score_completion
from .task.prompt import SYSTEM_PROMPT, system_prompt
from .task.splits import PRIVATE_SEED_ENV, PUBLIC, PrivateSeedError, private_commitment, read_private_secret
from .task.tasks import (
    DEFAULT_LEVEL,
    DEFAULT_N_EVAL,
    DEFAULT_N_SHOWN,
    RedactionTask,
    check_level_mix,
    check_params,
    durable_key,
    level_for,
    load_task,
    task_id,
    task_identity,
)

DEFAULT_COUNTS = {"dev": 64, "train": 1000, "private_eval": 64}
# Hook priorities that make verifiers add the weighted rewards in WEIGHTS' order (see
# RedactionRow.recall): the first name gets the highest priority.
REWARD_PRIORITY = {name: len(WEIGHTS) - i for i, name in enumerate(WEIGHTS)}
# What must match between the build that issued a row and the build that scores it.
BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")


class BuildMismatchError(RuntimeError):
    """A row issued by another build of the environment: scoring it here would put two
    builds in one trace."""


class RedactionData(vf.TaskData):
    split: str
    index: int
    n_shown: int
    n_eval: int
    budget_s: float
    level: int = DEFAULT_LEVEL
    identity: dict[Any, Any]  # what pydantic makes of a bare dict: the same validation and schema


# (split, index, n_shown, n_eval, budget_s, level, split commitment)
TaskKey = tuple[str, int, int, int, float, int, str]


class TaskCache:
    """A true LRU of built tasks, safe under any number of threads. Two threads missing
    the same key may both build it (builds are deterministic); one copy is kept."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[TaskKey, RedactionTask] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: TaskKey) -> RedactionTask | None:
        with self._lock:
            task = self._items.get(key)
            if task is not None:
                self._items.move_to_end(key)
            return task

    def put(self, key: TaskKey, task: RedactionTask) -> RedactionTask:
        with self._lock:
            kept = self._items.setdefault(key, task)
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
            return kept

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


_tasks = TaskCache(1024)


def _key(split: str, index: int, n_shown: int, n_eval: int, budget_s: float, level: int,
         commitment: str) -> TaskKey:
    # The commitment keys private tasks by secret without putting the secret in the key.
    return (split, index, n_shown, n_eval, float(budget_s), level, commitment)


def check_build(data: RedactionData) -> None:
    """Refuses a row whose identity names another build than this process's."""
    here = build_identity()
    theirs = data.identity
    diff = [f"{k}: row {theirs.get(k)!r}, here {here[k]!r}" for k in BUILD_KEYS if theirs.get(k) != here[k]]
    if diff:
        raise BuildMismatchError(f"task {data.id} was issued by another build of redaction-pressure than the "
                                 f"one scoring it ({'; '.join(diff)}); install the same wheel everywhere")


def core_task(data: RedactionData) -> RedactionTask:
    """The core task behind a row: cached when this process built it before, else
    built here (a private one from the secret this process holds)."""
    commitment = data.identity["split_commitment"]
    key = _key(data.split, data.index, data.n_shown, data.n_eval, data.budget_s, data.level, commitment)
    task = _tasks.get(key)
    if task is None:
        if data.split == "private_eval" and private_commitment(read_private_secret()) != commitment:
            raise RuntimeError(f"task {data.id} was issued under another private secret than the "
                               f"one in ${PRIVATE_SEED_ENV}")
        task = _tasks.put(key, load_task(data.split, data.index, data.n_shown, data.n_eval, data.budget_s,
                                         level=data.level))
    return task


_executor_lock = threading.Lock()
_executor_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    """Threads that wait on the scan workers (one per worker: a thread beyond that
    would only queue), off the event loop. Rebuilt when the scan pool is resized (so a
    pool that grew is not served by the threads of a smaller one) and in a forked
    child, whose copy has no threads behind it."""
    global _executor_pool
    size = get_pool().size
    with _executor_lock:
        old = _executor_pool
        if old is None or old._max_workers != size:
            _executor_pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="redaction-scan")
            if old is not None:
                old.shutdown(wait=False)  # its running calls finish; it takes no new ones
        assert _executor_pool is not None
        return _executor_pool


def _forget_executor_after_fork() -> None:
    global _executor_pool, _executor_lock
    _executor_lock, _executor_pool = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_executor_after_fork)


def score_trace_info(data: RedactionData, reply: str) -> dict[str, Any]:
    """Scores ``reply`` and returns what goes into ``trace.info``. Raises (the rollout
    then fails, it does not score 0) on a row from another build or when the
    machine kept the scan from finishing."""
    check_build(data)
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
            "secret_classes": score.secret_classes, "decoy_classes": score.decoy_classes,
            "notes": reply_notes(reply),  # advisory, never part of the verdict
        },
    }


class RedactionRow(vf.Task[RedactionData]):
    """A row; ``row.data`` is its full task data (prompt included), built on first
    access. `wire_data` is the cheap form to ship to env servers."""

    @property
    def data(self) -> RedactionData:
        d: RedactionData = self.__dict__["_data"]
        if d.prompt is None:
            d = d.model_copy(update={"prompt": core_task(d).prompt, "system_prompt": _system_prompt(d)})
            self.__dict__["_data"] = d
        return d

    @data.setter
    def data(self, value: RedactionData) -> None:
        self.__dict__["_data"] = value

    def with_data(self, **update: Any) -> RedactionRow:
        clone = copy.copy(self)
        clone.__dict__["_data"] = self.__dict__["_data"].model_copy(update=update)
        return clone

    def wire_data(self) -> dict[str, Any]:
        """The row without its prompt (and without the default system prompt): what
        a trainer ships to env servers, which build the task where it is scored.

        It is the same whether or not ``row.data`` was read: a fresh row holds no system
        prompt, a read one holds its budget's (`_system_prompt`), and the wire form
        carries that one in both cases when it is not the default. (It once carried
        nothing for a fresh row and the budget's prompt after a read, so a row of a
        non-standard budget had two hashes, and `vf-eval --resume`, matching a run's
        recorded hashes against fresh rows, found none of its rollouts done.)"""
        d = self.__dict__["_data"]
        prompt = _system_prompt(d)
        wire: dict[str, Any] = d.model_dump(mode="json", exclude_none=True, exclude={"prompt", "system_prompt"})
        if prompt != SYSTEM_PROMPT:
            wire["system_prompt"] = prompt
        return wire

    @property
    def hash(self) -> str:
        """verifiers' content hash of `wire_data`: one value for the row's whole life,
        the one its traces record (`contract.task_hash` of their task data)."""
        key: str = task_key(self.wire_data())
        return key

    @property
    def key(self) -> str:
        d = self.__dict__["_data"]
        return durable_key(d.split, d.index, d.n_shown, d.n_eval, d.budget_s, d.level)

    async def validate(self, runtime: Any = None) -> bool:
        """The gold check `vf-validate` runs: the oracle's reply, scored exactly as a
        rollout's, earns the full reward."""
        task = await asyncio.get_running_loop().run_in_executor(_executor(), core_task, self.data)
        trace = offline_trace(self, policies.oracle(task), model="policy:oracle")
        await self.score(trace)
        full: bool = trace.reward == 1.0
        return full

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        done: bool = trace.num_turns >= 1
        return done

    @vf.metric
    async def redaction(self, trace: vf.Trace) -> dict[str, float]:
        loop = asyncio.get_running_loop()
        try:
            info = await loop.run_in_executor(_executor(), score_trace_info, self.data, _reply(trace))
        except (ScanInfrastructureError, BuildMismatchError) as exc:
            trace.info["redaction_infrastructure_error"] = f"{type(exc).__name__}: {exc}"
            raise
        trace.info.update(info)
        r = info["redaction"]
        return {k: float(r[k]) for k in ("valid", "secrets_total", "secrets_removed", "removed_chars",
                                         "collateral_chars", "matches", "errors")}

    # verifiers records rewards, and sums them into trace.reward, in hook order: by
    # descending priority, then by name. By name alone that is clean, precision, recall,
    # and 0.30 + 0.35 + 0.35 is 0.9999999999999999 in floating point; the contract adds
    # recall, precision, clean (WEIGHTS' order), which is exactly 1.0 for a perfect reply.
    # The priorities put the hooks in the contract's order, so the sums are the same
    # additions and trace.reward is bit for bit reward-v1's reward.
    @vf.reward(weight=WEIGHTS["recall"], priority=REWARD_PRIORITY["recall"])
    async def recall(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["recall"])

    @vf.reward(weight=WEIGHTS["precision"], priority=REWARD_PRIORITY["precision"])
    async def precision(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["precision"])

    @vf.reward(weight=WEIGHTS["clean"], priority=REWARD_PRIORITY["clean"])
    async def clean(self, trace: vf.Trace) -> float:
        return float(trace.info["redaction"]["clean"])


def _system_prompt(d: RedactionData) -> str:
    """The system prompt a row's data holds once read: the one it was given (a harness's,
    or a materialised row's), else its budget's, which is the built task's
    (`load_task` writes ``system_prompt(budget_s)``) and needs no build."""
    return d.system_prompt or system_prompt(float(d.budget_s))


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
    """Regex budget of one episode: seconds of CPU time spent on this episode's scan."""
    level: int = DEFAULT_LEVEL
    """Difficulty level of every task (1, the standard benchmark, up to 5); see level_mix."""
    level_mix: dict[int, float] | None = None
    """A weighted mix of levels instead of one, e.g. {1: 2, 3: 1}: each task's level is drawn from
    these weights by its split and index alone (deterministic; the same task always gets the same level)."""

    @pydantic.model_validator(mode="after")
    def _in_range(self) -> RedactionConfig:
        """Out-of-range parameters fail as a config error (verifiers prints it in its box)
        rather than as a traceback when the taskset loads."""
        check_params(self.split, self.n_shown, self.n_eval, self.budget_s, self.level)
        check_level_mix(self.level_mix)
        task_range(self.split, self.start_index, self.num_tasks)
        if self.split == "private_eval":
            # A missing or short secret too (review of 2026-12-04: vf-eval and
            # vf-validate printed a 28-line traceback from inside the run).
            try:
                read_private_secret()
            except PrivateSeedError as exc:
                raise ValueError(str(exc)) from None
        return self


def task_range(split: str, start: int, num_tasks: int | None) -> range:
    """The indices a config loads; raises ValueError when they leave the split (a
    traceback from the first row past its end, before: new-user walkthrough, 2026-12-03).
    With num_tasks unset, the split's default count, cut at its end."""
    size = PUBLIC[split].size if split in PUBLIC else None
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start_index must be an integer >= 0, got {start!r}")
    if num_tasks is not None and (isinstance(num_tasks, bool) or not isinstance(num_tasks, int) or num_tasks < 1):
        raise ValueError(f"num_tasks must be an integer >= 1, got {num_tasks!r}")
    if size is not None and start >= size:
        raise ValueError(f"{split} has tasks 0..{size - 1}; start_index {start} is past its end")
    count = num_tasks if num_tasks is not None else DEFAULT_COUNTS[split] if size is None else \
        max(0, min(DEFAULT_COUNTS[split], size - start))
    if size is not None and start + count > size:
        raise ValueError(f"{split} has tasks 0..{size - 1}; start_index {start} with num_tasks {count} runs past "
                         "its end")
    return range(start, start + count)


def to_row(task: RedactionTask, config: vf.TaskConfig | None = None) -> RedactionRow:
    """A materialised row for a task built here (it joins the cache)."""
    _tasks.put(_key(task.split, task.index, task.n_shown, task.n_eval, task.budget_s, task.level,
                    task.identity["split_commitment"]), task)
    published = task.task_data()
    data = RedactionData(id=task.id, name=task.id, prompt=task.prompt, system_prompt=task.system_prompt,
                         split=task.split, index=task.index, n_shown=task.n_shown, n_eval=task.n_eval,
                         budget_s=task.budget_s, level=task.level, identity=published["identity"])
    return RedactionRow(data, config)


class RedactionTaskset(vf.Taskset[RedactionRow, RedactionConfig]):
    def load(self) -> Iterator[RedactionRow]:
        """Cheap rows: identity and parameters, no records (see the module doc)."""
        cfg = self.config
        check_params(cfg.split, cfg.n_shown, cfg.n_eval, cfg.budget_s, cfg.level)
        mix = check_level_mix(cfg.level_mix)
        indices = task_range(cfg.split, cfg.start_index, cfg.num_tasks)
        if cfg.split == "private_eval":
            commitment, seeds = private_commitment(read_private_secret()), None
        else:
            commitment, seeds = PUBLIC[cfg.split].commitment, PUBLIC[cfg.split]
        budget = float(cfg.budget_s)
        for index in indices:
            level = cfg.level if mix is None else level_for(cfg.split, index, mix)
            identity = task_identity(cfg.split, index, commitment, cfg.n_shown, cfg.n_eval, budget, level)
            if seeds is not None:
                identity["task_seed"] = seeds.seed(index)
            name = task_id(cfg.split, index)
            yield RedactionRow(RedactionData(id=name, name=name, split=cfg.split, index=index,
                                             n_shown=cfg.n_shown, n_eval=cfg.n_eval, budget_s=budget,
                                             level=level, identity=identity), cfg.task)


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
