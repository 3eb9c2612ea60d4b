"""What verifiers records about a task beside its identity, checked against it.

Besides ``info.environment`` and ``task.data.identity``, a trace's task is recorded
again where other readers look: verifiers' durable task key (``task.key``: trainers key
curricula, resume and difficulty pools on it), the task's position in its taskset's
iteration (``task.data.idx``), and the Episode's own copy of the task (``Episode.task``,
which a reader of Episodes takes instead of its traces'). Two flags say whether a
rollout succeeded (``Episode.ok``; a trace's ``ok`` and ``errors``), and a reader drops
a rollout flagged as failed. Each is bound here to what the audit verifies, so a signer
cannot make the verified traces say something else to another reader:

* ``task.key`` is the durable key (`durable_key`, SPEC §7) of the split, index and task
  parameters the trace's identity names;
* ``task.hash``, when recorded (verifiers' content hash of the row: `vf-eval --resume`
  matches saved episodes to tasks by it), is the hash this build derives for the task
  data the trace records (`task_hash`); the data itself is bound to the regenerated task
  by rescoring. `redaction-pressure eval` and `vf-eval` record the same hash for the same
  row (a run of either resumes under the other), so no honest run differs here;
* ``task.data.idx``, when set, is a JSON integer from 0 to the task's index, and
  index − idx is one number for the whole archive: verifiers numbers a taskset's tasks
  from 0 in the order it loads them, which is from the run's ``start_index`` (so idx =
  index only for a run that starts at task 0). A row scored without that iteration
  (``offline_trace(to_row(task))``) has none (null), which claims no position;
* ``Episode.task`` is, as a JSON value, the task of every trace the Episode holds;
* ``Episode.ok`` is ``true``, and no sealed trace is a failed rollout (`audit seal`
  seals successful rollouts only; ``--allow-failed`` leaves the others out).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from redaction_pressure.contract import DEFAULT_LEVEL, durable_key, task_hash

from ._canonical import same_json
from ._failures import failed_kind


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def expected_key(trace: dict[str, Any]) -> str:
    """The durable task key of the task ``trace``'s identity names."""
    env = trace["info"]["environment"]
    p = env["task_params"]
    return durable_key(env["split"], env["task_index"], p["n_shown"], p["n_eval"], p["budget_s"],
                       p.get("level", DEFAULT_LEVEL))


def idx_offset(trace: dict[str, Any]) -> int | None:
    """index − idx (the run's start index) of a trace whose idx is set and well formed, else None."""
    idx, index = trace["task"]["data"].get("idx"), trace["info"]["environment"]["task_index"]
    if _integer(idx) and _integer(index) and 0 <= idx <= index:
        return int(index - idx)
    return None


def trace_record_problems(trace: dict[str, Any]) -> list[str]:
    """How a schema-valid trace's task key, idx and success flags disagree with the task
    its identity names and with a scored rollout."""
    env, task = trace["info"]["environment"], trace["task"]
    problems = []
    key = expected_key(trace)
    if not same_json(task.get("key"), key):
        problems.append(f"task.key is {str(task.get('key'))[:80]!r}; the durable key of the task its identity names "
                        f"({env['split']} task {env['task_index']} with its task parameters) is {key}")
    recorded_hash = task.get("hash")
    if recorded_hash is not None:
        try:
            derived: str | None = task_hash(task["data"])
        except (RecursionError, TypeError, ValueError):
            derived = None
        if derived is None:
            problems.append("task.hash cannot be checked: the task data cannot be hashed as verifiers hashes it")
        elif not same_json(recorded_hash, derived):
            problems.append(f"task.hash is {str(recorded_hash)[:80]!r}; the hash of the task data it records (its "
                            f"wire form, as verifiers hashes a row) is {derived}")
    if task["data"].get("idx") is not None and idx_offset(trace) is None:
        idx = task["data"].get("idx")
        problems.append(f"task.data.idx is {str(idx)[:80]}: not the task's position in its taskset (a JSON "
                        f"integer from 0 to the task's index {env['task_index']})")
    failed = failed_kind(trace)
    if failed is not None:
        problems.append(f"the trace is marked as a failed rollout (ok false or errors recorded: {failed[0]}): a "
                        f"reader drops it, yet it is sealed as scored")
    return problems


def episode_problems(episode: dict[str, Any]) -> list[str]:
    """How a schema-valid Episode disagrees with the scored traces it holds."""
    problems = []
    if episode.get("ok") is not True:
        problems.append(f"Episode.ok is {str(episode.get('ok'))[:40]}, but it holds scored traces (a reader takes "
                        f"the Episode for a failed one)")
    task = episode.get("task")
    for position, trace in enumerate(episode["traces"]):
        theirs = trace["task"]
        if same_json(task, theirs):
            continue
        if not isinstance(task, dict):
            problems.append(f"Episode.task is {str(task)[:80]}, not trace {position}'s task")
            continue
        mine_data, their_data = task.get("data"), theirs.get("data")
        keys = [k for k in sorted(set(task) | set(theirs), key=str) if k != "data" and not same_json(task.get(k),
                                                                                                     theirs.get(k))]
        if isinstance(mine_data, dict) and isinstance(their_data, dict):
            keys += [f"data.{k}" for k in sorted(set(mine_data) | set(their_data), key=str)
                     if not same_json(mine_data.get(k), their_data.get(k))]
        elif not same_json(mine_data, their_data):
            keys.append("data")
        problems.append(f"Episode.task differs from trace {position}'s task at {', '.join(keys[:10])[:300]}")
    return problems


def run_record_problems(entries: Iterable[Any], episodes: Iterable[tuple[int, dict[str, Any]]],
                        traces_name: str) -> tuple[list[str], int]:
    """Every record problem of a run's schema-valid traces (``entries``: each with its
    ``trace`` and ``where``) and Episodes (line, Episode), and how many traces, Episodes
    or idx sets have one: what `audit verify` fails and `audit seal` refuses alike."""
    problems: list[str] = []
    differ = 0
    offsets: defaultdict[int, list[str]] = defaultdict(list)
    for e in entries:
        found = trace_record_problems(e.trace)
        differ += bool(found)
        problems += [f"{e.where}: {p}" for p in found]
        offset = idx_offset(e.trace)
        if offset is not None:
            offsets[offset].append(e.where)
    for line, episode in episodes:
        found = episode_problems(episode)
        differ += bool(found)
        problems += [f"{traces_name}:{line}: {p}" for p in found]
    if len(offsets) > 1:  # one run, one start index
        differ += 1
        shown = "; ".join(f"{k} for {len(w)} trace(s) (first {w[0]})" for k, w in sorted(offsets.items()))
        problems.append(f"task.data.idx is not the tasks' position in one taskset: index − idx is {shown}")
    return problems, differ
