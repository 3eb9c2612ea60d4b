"""Tasks the test modules share: one build per (split, index, level) per process.

A shard of the test command runs many modules in one process, and most of them read
the same dev tasks and train ranges; building each once keeps the suite's CPU for the
checks. Tasks are frozen, so sharing them cannot leak one test's changes into another.
"""

from __future__ import annotations

from functools import lru_cache
from unittest import mock

from redaction_pressure import load_task
from redaction_pressure.corpus.stream import Stream, build_stream
from redaction_pressure.task import tasks as _tasks
from redaction_pressure.task.tasks import RedactionTask


@lru_cache(maxsize=4096)
def _built(split: str, index: int, level: int) -> tuple[RedactionTask, Stream]:
    """``load_task(split, index, level=level)`` and the stream its build made (the
    world a test reads beside the task), kept instead of built a second time."""
    streams: list[Stream] = []

    def keep(seed: int, n_shown: int, n_eval: int, level: int = 1) -> Stream:
        stream = build_stream(seed, n_shown, n_eval, level)
        streams.append(stream)
        return stream
    # Built afresh (past load_task's own cache of recent tasks), so the stream is seen.
    with mock.patch.object(_tasks, "build_stream", keep), \
            mock.patch.object(_tasks, "_built", _tasks._built.__wrapped__):
        built = load_task(split, index, level=level)
    assert len(streams) == 1
    return built, streams[0]


def task(split: str, index: int, level: int = 1) -> RedactionTask:
    return _built(split, index, level)[0]


def stream_of(t: RedactionTask) -> Stream:
    """The stream ``t`` was built from: the one `task` kept when ``t`` is a shared
    task, else ``build_stream`` with ``t``'s seed, sizes and level (as `load_task` calls it)."""
    if t.split in ("dev", "train"):
        shared, stream = _built(t.split, t.index, t.level)
        if (shared.seed, shared.n_shown, shared.n_eval) == (t.seed, t.n_shown, t.n_eval):
            return stream
    return build_stream(t.seed, t.n_shown, t.n_eval, t.level)


def dev(count: int = 64, level: int = 1) -> list[RedactionTask]:
    return [task("dev", i, level) for i in range(count)]


# Value families drawn at one length per stream, where a reader may take the length from
# the examples (a look-alike can differ by length alone): every held-out length must be
# one the shown records have. Key blocks and base64 forms vary by construction.
ONE_LENGTH_GROUPS = ("context_secret", "context_lookalike", "scoped_secret", "scoped_lookalike")
_VARYING_HOUSE = ("house_key_block", "house_public_block", "house_format_base64")


def unshown_lengths(t: RedactionTask) -> list[str]:
    """Each held-out value of a one-length family whose length no shown value of its
    family has."""
    def checked(group: str | None) -> bool:
        g = group or ""
        return g in ONE_LENGTH_GROUPS or (g.startswith("house_") and g not in _VARYING_HOUSE)
    shown: dict[str, set[int]] = {}
    for r in t.shown:
        for x in r.secrets + r.decoys:
            if checked(x.group):
                shown.setdefault(x.family, set()).add(x.end - x.start)
    return [f"{x.family}: held-out length {x.end - x.start} never shown"
            for r in t.heldout for x in r.secrets + r.decoys
            if checked(x.group) and x.end - x.start not in shown.get(x.family, ())]
