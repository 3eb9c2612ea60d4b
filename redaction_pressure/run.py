"""The embedded default job: a built-in policy over a split, scored through verifiers'
own `Task.score`, and written as a vf-eval run directory by verifiers' own writers
(`traces.jsonl`, one Episode per line, and the resolved config under
``configs/resolved/eval.json``), so `audit seal`, `audit verify` and `vf-replay` treat
it like any vf-eval run."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.cli.output import write_config
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.utils.trace_store import write_episode

from . import policies
from .boundary.files import RUN_DIR_WRITES, refuse_links
from .task.tasks import RedactionTask, check_level_mix
from .taskset import RedactionConfig, RedactionRow, RedactionTaskset, core_task, offline_trace

TRACES = "traces.jsonl"


def run_id(split: str, policy: str, n: int, start: int, params: dict[str, Any] | None = None) -> str:
    tail = "" if not params else "\x00" + json.dumps(params, sort_keys=True)
    return "rp-" + hashlib.sha256(f"{split}\x00{policy}\x00{n}\x00{start}{tail}".encode()).hexdigest()[:16]


# What a policy run's resolved config names instead of a model endpoint: a loopback
# address with nothing behind it (the discard port) and a key variable nobody sets, so
# even a config stripped of its ``env.policy`` refusal can reach no hosted endpoint and
# send no key (see `vf_env`).
NO_MODEL_CLIENT = {"base_url": "http://127.0.0.1:9/v1", "api_key_var": "REDACTION_PRESSURE_POLICY_RUN_HAS_NO_KEY"}


def _build(row: RedactionRow) -> RedactionTask:
    return core_task(row.data)


async def _score_all(policy: str, config: RedactionConfig, run: vf.EvalRunInfo,
                     on_done: Callable[[], None]) -> list[vf.Episode]:
    """Scores the rows vf-eval would run for ``config``, taken from the taskset's own
    iteration (which numbers them, ``task.data.idx``), so each trace carries the task
    data and hash vf-eval records for the same task and its resume sees them as done."""
    make_reply = policies.POLICIES[policy]
    loop = asyncio.get_running_loop()

    async def one(row: RedactionRow) -> vf.Episode:
        task = await loop.run_in_executor(None, _build, row)
        trace = offline_trace(row, make_reply(task), model=f"policy:{policy}")
        await row.score(trace)
        on_done()
        return vf.Episode(env=vf.EnvInfo(id="redaction-pressure"), task=trace.task, traces=[trace],
                          ok=trace.ok, run=run)

    return list(await asyncio.gather(*(one(row) for row in RedactionTaskset(config))))


def eval_config(split: str, policy: str, n: int, start: int, out_dir: Path,
                taskset: RedactionConfig | None = None) -> EvalConfig:
    """The config vf-eval would have resolved for this run: the taskset over the same
    tasks, the null harness, a model named ``policy:NAME``, and ``output_dir/run.dir``
    naming ``out_dir``, so vf-replay re-scores the run from it and ``vf-eval --resume``
    finds it complete. It names no model endpoint (`NO_MODEL_CLIENT`) and marks the run
    as a policy's (``env.policy``), so a resume that finds rollouts owed refuses instead
    of calling out. ``taskset`` carries non-standard task parameters (n_shown, n_eval,
    budget_s, level, level_mix)."""
    params = {} if taskset is None else taskset.model_dump(include={"n_shown", "n_eval", "budget_s", "level",
                                                                    "level_mix"}, exclude_none=True)
    return EvalConfig.model_validate({
        "model": f"policy:{policy}", "push": False, "output_dir": str(out_dir.parent),
        "run": {"name": out_dir.name}, "client": NO_MODEL_CLIENT,
        "env": {"taskset": {"id": "redaction-pressure", "split": split, "num_tasks": n, "start_index": start,
                            **params},
                "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}},
                "policy": policy},
    })


def run_policy(split: str, policy: str, n: int, out_dir: Path, *, start: int = 0,
               config: RedactionConfig | None = None, on_done: Callable[[], None] = lambda: None) -> Path:
    """Scores ``n`` tasks of ``split`` and writes the run directory ``out_dir``. The
    traces are staged, flushed to disk and renamed into place whole, so a partial run
    never leaves a ``traces.jsonl`` that looks complete, and a run it replaces stays
    whole until the new one is. Raises `boundary.files.LinkedOutputError`, writing
    nothing, when ``out_dir`` is or holds a symbolic link (checked before scoring and
    again before writing): verifiers writes the config by path, through any link."""
    if policy not in policies.POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(policies.POLICIES)}")
    run_config = eval_config(split, policy, n, start, out_dir, config)
    taskset = run_config.env.taskset
    check_level_mix(taskset.level_mix)
    params = taskset.model_dump(include={"n_shown", "n_eval", "budget_s", "level", "level_mix"}, exclude_none=True)
    standard = RedactionConfig().model_dump(include=set(params), exclude_none=True)
    run = vf.EvalRunInfo(id=run_id(split, policy, n, start, None if params == standard else params),
                         name=f"{split}-{policy}")
    refuse_links(out_dir, RUN_DIR_WRITES, what="run directory")
    episodes = asyncio.run(_score_all(policy, taskset, run, on_done))
    refuse_links(out_dir, RUN_DIR_WRITES, what="run directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=out_dir))
    try:
        for ep in episodes:
            write_episode(staging, ep)
        with open(staging / TRACES, "rb") as f:
            os.fsync(f.fileno())
        os.replace(staging / TRACES, out_dir / TRACES)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    write_config(run_config, out_dir)
    return out_dir / TRACES


def read_traces(path: Path) -> list[dict[str, Any]]:
    """The trace dicts of a traces.jsonl (every trace of every Episode line)."""
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.extend(json.loads(line)["traces"])
    return out
