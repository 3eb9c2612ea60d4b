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
from functools import partial
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.cli.output import write_config
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.utils.trace_store import write_episode

from . import policies
from .task.tasks import check_level_mix, level_for, load_task
from .taskset import RedactionConfig, offline_trace, to_row

TRACES = "traces.jsonl"


def run_id(split: str, policy: str, n: int, start: int, params: dict[str, Any] | None = None) -> str:
    tail = "" if not params else "\x00" + json.dumps(params, sort_keys=True)
    return "rp-" + hashlib.sha256(f"{split}\x00{policy}\x00{n}\x00{start}{tail}".encode()).hexdigest()[:16]


async def _score_all(split: str, policy: str, n: int, start: int, config: RedactionConfig,
                     on_done: Callable[[], None]) -> list[vf.Episode]:
    make_reply = policies.POLICIES[policy]
    mix = check_level_mix(config.level_mix)
    params = config.model_dump(include={"n_shown", "n_eval", "budget_s", "level", "level_mix"}, exclude_none=True)
    standard = RedactionConfig().model_dump(include=set(params), exclude_none=True)
    run = vf.EvalRunInfo(id=run_id(split, policy, n, start, None if params == standard else params),
                         name=f"{split}-{policy}")
    loop = asyncio.get_running_loop()

    async def one(index: int) -> vf.Episode:
        level = config.level if mix is None else level_for(split, index, mix)
        task = await loop.run_in_executor(None, partial(load_task, split, index, config.n_shown, config.n_eval,
                                                        config.budget_s, level=level))
        row = to_row(task, config.task)
        trace = offline_trace(row, make_reply(task), model=f"policy:{policy}")
        await row.score(trace)
        on_done()
        return vf.Episode(env=vf.EnvInfo(id="redaction-pressure"), task=trace.task, traces=[trace],
                          ok=trace.ok, run=run)

    return list(await asyncio.gather(*(one(i) for i in range(start, start + n))))


def eval_config(split: str, policy: str, n: int, start: int, out_dir: Path,
                taskset: RedactionConfig | None = None) -> EvalConfig:
    """The config vf-eval would have resolved for this run: the taskset over the same
    tasks, the null harness, a model named ``policy:NAME``, and ``output_dir/run.dir``
    naming ``out_dir``. vf-replay re-scores a run from it; ``vf-eval @ .../eval.json``
    re-runs the same tasks against a real model. ``taskset`` carries non-standard task
    parameters (n_shown, n_eval, budget_s, level, level_mix)."""
    params = {} if taskset is None else taskset.model_dump(include={"n_shown", "n_eval", "budget_s", "level",
                                                                    "level_mix"}, exclude_none=True)
    return EvalConfig.model_validate({
        "model": f"policy:{policy}", "push": False, "output_dir": str(out_dir.parent),
        "run": {"name": out_dir.name},
        "env": {"taskset": {"id": "redaction-pressure", "split": split, "num_tasks": n, "start_index": start,
                            **params},
                "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}},
    })


def run_policy(split: str, policy: str, n: int, out_dir: Path, *, start: int = 0,
               config: RedactionConfig | None = None, on_done: Callable[[], None] = lambda: None) -> Path:
    """Scores ``n`` tasks of ``split`` and writes the run directory ``out_dir``. The
    traces are staged and moved into place whole, so a partial run never leaves a
    ``traces.jsonl`` that looks complete."""
    if policy not in policies.POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(policies.POLICIES)}")
    run_config = eval_config(split, policy, n, start, out_dir, config)
    episodes = asyncio.run(_score_all(split, policy, n, start, run_config.env.taskset, on_done))
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=out_dir))
    try:
        for ep in episodes:
            write_episode(staging, ep)
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
