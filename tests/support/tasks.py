"""Tasks the test modules share: one build per (split, index, level) per process.

A shard of the test command runs many modules in one process, and most of them read
the same dev tasks and train ranges; building each once keeps the suite's CPU for the
checks. Tasks are frozen, so sharing them cannot leak one test's changes into another.
"""

from __future__ import annotations

from functools import lru_cache

from redaction_pressure import load_task
from redaction_pressure.task.tasks import RedactionTask


@lru_cache(maxsize=4096)
def task(split: str, index: int, level: int = 1) -> RedactionTask:
    return load_task(split, index, level=level)


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
