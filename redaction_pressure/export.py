"""`redaction-pressure export`: supervised warm-start data from a built-in policy.

A model starting RL from nothing rarely answers with valid rules at all; a few
thousand (prompt, good reply) pairs fix that cheaply. Each line is one task's chat as
supervised fine-tuning trainers read it — ``{"messages": [system, user, assistant]}``
— with the task's split, index, level and durable key and the reply's reward beside
it (`schemas/sft-example-v1.schema.json`), so a trainer can filter on the reward and
join the lines with RL traces by key.

The bytes are a function of the arguments alone: lines come in task order whatever
the number of worker processes, every value is computed from its task, and a reward
that depends on the machine (a scan that ran out of its time budget) is never
written: the scan is retried with the budget extended 4x, then the export fails.
Rewards are scored by `score_trusted`: the public path's rules and scan, run in the
worker process that built the task (a built-in policy's reply needs no scan worker's
isolation), which compiles each of the stream's oracle patterns once for both the
build's check and the scan. The tests compare every reward with `score_completion`.

Only public splits are exported: the private split's prompts and answers must never
become training data.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO, Any

from . import policies
from .boundary.files import give_mode
from .boundary.launch import fork_context, scrub_environment
from .scoring.pattern_guard import share_trusted_compiles
from .scoring.score import score_trusted
from .task.tasks import durable_key, load_task

SCHEMA = "sft-example-v1"
EXPORTABLE_SPLITS = ("train", "dev")
TIME_CODES = frozenset({"timeout", "budget_exhausted"})
BUDGET_EXTENSION = 4.0
CHUNK = 16  # tasks per round trip to a worker: ~0.2 s of work, small against 10,000


class ExportError(RuntimeError):
    """The export cannot produce an honest line (the machine kept a scan from finishing)."""


def example(split: str, policy: str, level: int, index: int) -> tuple[bytes, float]:
    """One JSONL line: task ``index``'s messages with ``policy``'s reply, and its reward."""
    task = load_task(split, index, level=level)
    reply = policies.POLICIES[policy](task)
    score = score_trusted(task, reply)
    if TIME_CODES.intersection(e.code for e in score.errors):
        score = score_trusted(task, reply, budget_s=task.budget_s * BUDGET_EXTENSION)
        if TIME_CODES.intersection(e.code for e in score.errors):
            raise ExportError(f"{task.id}: scoring the {policy} reply ran out of time even with the budget "
                              f"extended {BUDGET_EXTENSION:g}x; the machine is too loaded for a reward that "
                              "does not depend on it")
    line = {
        "messages": [{"role": "system", "content": task.system_prompt},
                     {"role": "user", "content": task.prompt},
                     {"role": "assistant", "content": reply}],
        "split": task.split, "index": task.index, "level": task.level,
        "key": durable_key(task.split, task.index, task.n_shown, task.n_eval, task.budget_s, task.level),
        "reward": score.reward,
    }
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n", score.reward


def _worker_init() -> None:
    # Export reads public splits only: no worker needs the private secret.
    scrub_environment()
    share_trusted_compiles()


def lines(split: str, policy: str, level: int, start: int, n: int, jobs: int) -> Iterator[tuple[bytes, float]]:
    """The export's (line, reward) pairs in task order, from ``jobs`` worker processes
    (this one when 1)."""
    make = partial(example, split, policy, level)
    indices = range(start, start + n)
    # Workers are forked, never spawned (a spawned child starts with the current
    # directory on its path); where fork is unsafe the export runs in this process.
    context = fork_context()
    if jobs <= 1 or context is None:
        share_trusted_compiles()
        yield from map(make, indices)
        return
    pool = context.Pool(jobs, initializer=_worker_init)
    try:
        yield from pool.imap(make, indices, chunksize=CHUNK)
        pool.close()
        pool.join()
    finally:
        pool.terminate()
        pool.join()


@contextmanager
def _sink(out: Path | None) -> Iterator[IO[bytes]]:
    """stdout, or a new file beside ``out`` renamed over it once complete (an older
    export there stays whole until then)."""
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    try:
        give_mode(fd)  # not mkstemp's 0600: an export is a file like any other (red team, 2026-12-03)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export(split: str, policy: str, level: int, start: int, n: int, out: Path | None, jobs: int,
           on_line: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Writes the export to ``out`` (stdout when None); returns what it wrote."""
    total = 0.0
    with _sink(out) as sink:
        for line, reward in lines(split, policy, level, start, n, jobs):
            sink.write(line)
            total += reward
            on_line()
    return {"examples": n, "mean_reward": total / n, "split": split, "policy": policy, "level": level,
            "start": start}
