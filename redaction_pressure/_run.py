"""The embedded default job: a built-in policy over a split, scored through verifiers'
own `Task.score`, written as a ``traces.jsonl`` shaped like vf-eval's (one Episode per
line), so `audit seal` and `audit verify` treat it like any vf-eval run."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Callable

import verifiers.v1 as vf

from . import policies
from ._task import load_task
from .taskset import RedactionConfig, offline_trace, to_row

TRACES = "traces.jsonl"


def run_id(split: str, policy: str, n: int, start: int) -> str:
    return "rp-" + hashlib.sha256(f"{split}\x00{policy}\x00{n}\x00{start}".encode()).hexdigest()[:16]


async def _score_all(split: str, policy: str, n: int, start: int, config: RedactionConfig,
                     on_done: Callable[[], None]) -> list[vf.Episode]:
    make_reply = policies.POLICIES[policy]
    run = vf.EvalRunInfo(id=run_id(split, policy, n, start), name=f"{split}-{policy}")
    loop = asyncio.get_running_loop()

    async def one(index: int) -> vf.Episode:
        task = await loop.run_in_executor(None, load_task, split, index, config.n_shown,
                                          config.n_eval, config.budget_s)
        row = to_row(task, config.task)
        trace = offline_trace(row, make_reply(task), model=f"policy:{policy}")
        await row.score(trace)
        on_done()
        return vf.Episode(env=vf.EnvInfo(id="redaction-pressure"), task=trace.task, traces=[trace],
                          ok=trace.ok, run=run)

    return list(await asyncio.gather(*(one(i) for i in range(start, start + n))))


def run_policy(split: str, policy: str, n: int, out_dir: Path, *, start: int = 0,
               config: RedactionConfig | None = None,
               on_done: Callable[[], None] = lambda: None) -> Path:
    """Scores ``n`` tasks of ``split`` and writes ``out_dir/traces.jsonl`` atomically
    (a partial run never leaves a file that looks complete)."""
    if policy not in policies.POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(policies.POLICIES)}")
    config = config or RedactionConfig(id="redaction-pressure", split=split)
    episodes = asyncio.run(_score_all(split, policy, n, start, config, on_done))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / TRACES
    tmp = path.with_suffix(".jsonl.partial")
    with open(tmp, "wb") as f:
        for ep in episodes:
            f.write(ep.model_dump_json(exclude_none=True).encode() + b"\n")
    os.replace(tmp, path)
    return path


def read_traces(path: Path) -> list[dict]:
    """The trace dicts of a traces.jsonl (every trace of every Episode line)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.extend(json.loads(line)["traces"])
    return out
