"""redaction-pressure: a verifiers v1 environment for exact, character-level secret
redaction. The scoring core (corpus, rules, scanner, reward) imports without
`verifiers`; the taskset adapter is loaded on first access to `RedactionTaskset`."""

from __future__ import annotations

from typing import Any

from . import policies
from .build.versions import CORPUS_VERSION, ENVIRONMENT_VERSION, REWARD_SCHEMA_VERSION
from .corpus.catalog import catalog
from .corpus.stream import Record, Span
from .scoring.answer import RedactionError
from .scoring.score import Score, score_completion
from .task.splits import PRIVATE_SEED_ENV, PrivateSeedError
from .task.tasks import RedactionTask, load_task

__all__ = [
    "CORPUS_VERSION",
    "ENVIRONMENT_VERSION",
    "PRIVATE_SEED_ENV",
    "REWARD_SCHEMA_VERSION",
    "PrivateSeedError",
    "Record",
    "RedactionEnv",
    "RedactionError",
    "RedactionHarness",
    "RedactionTask",
    "RedactionTaskset",
    "Score",
    "Span",
    "catalog",
    "load_task",
    "policies",
    "score_completion",
]


def __getattr__(name: str) -> Any:
    # The verifiers adapter is loaded on first use: importing verifiers.v1 takes
    # seconds, and the scoring core must not pay for it.
    if name in ("RedactionTaskset", "RedactionHarness"):
        from . import taskset

        return getattr(taskset, name)
    if name == "RedactionEnv":
        from .vf_env import RedactionEnv

        return RedactionEnv
    raise AttributeError(f"module 'redaction_pressure' has no attribute {name!r}")
