"""What a trace recorded, read defensively: the fields a comparison of runs relies on.

A run someone hands over is hostile data: any field may be missing, of another type, or
absurd. `recorded` takes out only what it can read as the taskset writes it (the task's
index and level, split, commitment and seed, the shared task parameters, the build, the
four recorded scores and the class tallies) and returns None for a trace that lacks a
score (a failed rollout, or a mangled one), which the caller counts instead of guessing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..scoring.reward import WEIGHTS
from .classes import DECOY_CLASSES, SECRET_CLASSES, trace_tallies

BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")
METRICS = ("reward", *WEIGHTS)  # reward, recall, precision, clean


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


@dataclass(frozen=True)
class Recorded:
    index: int
    level: int
    split: object
    commitment: object
    seed: object
    params: tuple[object, object, object]  # n_shown, n_eval, budget_s
    build: tuple[object, ...]               # BUILD_KEYS' values
    values: tuple[float, float, float, float]  # METRICS' values
    secret_classes: dict[str, tuple[int, int]]
    decoy_classes: dict[str, tuple[int, int]]


def recorded(trace: object) -> Recorded | None:
    """The trace's record, or None when it holds no usable score or task index."""
    t = _dict(trace)
    env = _dict(_dict(t.get("info")).get("environment"))
    params = _dict(env.get("task_params"))
    index, level = _int(env.get("task_index")), _int(params.get("level", 1))
    rewards = _dict(t.get("rewards"))
    parts, weights = [], []
    for k in WEIGHTS:
        score, weight = _number(_dict(rewards.get(k)).get("score")), _number(_dict(rewards.get(k)).get("weight"))
        if score is None or weight is None:
            return None
        parts.append(score)
        weights.append(weight)
    if index is None or level is None or t.get("ok") is False:
        return None
    reward = sum(p * w for p, w in zip(parts, weights, strict=True))  # as `scoring.summary.trace_reward` adds
    return Recorded(index, level, env.get("split"), env.get("split_commitment"), env.get("task_seed"),
                    (params.get("n_shown"), params.get("n_eval"), params.get("budget_s")),
                    tuple(env.get(k) for k in BUILD_KEYS), (reward, parts[0], parts[1], parts[2]),
                    trace_tallies(t, SECRET_CLASSES), trace_tallies(t, DECOY_CLASSES))
