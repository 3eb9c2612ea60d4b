"""A task: one seed's stream cut into shown and held-out records, with its identity."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..build.identity import build_identity
from ..build.versions import CORPUS_VERSION
from ..corpus.stream import Record, build_stream
from ..scoring.scanner import DEFAULT_BUDGET_S
from .prompt import SYSTEM_PROMPT, render_prompt
from .splits import PUBLIC, SPLITS, private_commitment, private_seed, read_private_secret

DEFAULT_N_SHOWN = 8
DEFAULT_N_EVAL = 16


@dataclass(frozen=True)
class RedactionTask:
    id: str
    split: str
    index: int
    n_shown: int
    n_eval: int
    budget_s: float
    shown: tuple[Record, ...]
    heldout: tuple[Record, ...]
    secret_families: tuple[str, ...]
    decoy_families: tuple[str, ...]
    templates: tuple[str, ...]
    oracle_rules: tuple[str, ...]  # generator knowledge: the stream's exact oracle, in order
    prompt: str
    system_prompt: str
    identity: dict[str, Any]
    seed: int = field(repr=False)  # private splits: never put this in task data

    @property
    def params(self) -> dict[str, Any]:
        return {"n_shown": self.n_shown, "n_eval": self.n_eval, "budget_s": self.budget_s}

    def task_data(self) -> dict[str, Any]:
        """What a task publishes before it is scored. The seed of a private task is
        absent: it is revealed only by the scored trace."""
        data: dict[str, Any] = {"id": self.id, "identity": dict(self.identity)}
        if self.split != "private_eval":
            data["identity"]["task_seed"] = self.seed
        return data


def check_params(split: str, n_shown: int, n_eval: int, budget_s: float) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if not (isinstance(budget_s, (int, float)) and 0 < budget_s <= 60):
        raise ValueError("budget_s must be in (0, 60] seconds")
    if not (1 <= n_shown <= 64 and 1 <= n_eval <= 256):
        raise ValueError("n_shown must be in 1..64 and n_eval in 1..256")


def task_identity(split: str, index: int, commitment: str, n_shown: int, n_eval: int,
                  budget_s: float) -> dict[str, Any]:
    """The identity of a task, known without building it (cheap rows carry it)."""
    return build_identity() | {
        "split": split, "split_commitment": commitment, "task_index": index,
        "task_params": {"n_shown": n_shown, "n_eval": n_eval, "budget_s": float(budget_s)},
    }


def durable_key(split: str, index: int, n_shown: int, n_eval: int, budget_s: float) -> str:
    """A task's `Task.key` (SPEC §7): split, index, corpus version and task parameters,
    nothing about the build, so a code edit or a dependency upgrade that leaves the
    task alone keeps it. Trainers key curricula and resume on it."""
    blob = json.dumps({"split": split, "index": index, "corpus_version": CORPUS_VERSION,
                       "n_shown": n_shown, "n_eval": n_eval, "budget_s": float(budget_s)},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def task_id(split: str, index: int) -> str:
    return f"{split}-{index:06d}"


def load_task(split: str, index: int, n_shown: int = DEFAULT_N_SHOWN, n_eval: int = DEFAULT_N_EVAL,
              budget_s: float = DEFAULT_BUDGET_S, *, private_secret: bytes | None = None) -> RedactionTask:
    """Builds task ``index`` of ``split``. ``private_eval`` reads its secret from
    REDACTION_PRESSURE_PRIVATE_SEED unless ``private_secret`` is given."""
    check_params(split, n_shown, n_eval, budget_s)
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError("index must be an int")
    if split == "private_eval":
        secret = private_secret if private_secret is not None else read_private_secret()
        seed, commitment = private_seed(secret, index), private_commitment(secret)
    else:
        seed, commitment = PUBLIC[split].seed(index), PUBLIC[split].commitment
    return task_from_seed(split, index, seed, commitment, n_shown, n_eval, budget_s)


def task_from_seed(split: str, index: int, seed: int, commitment: str, n_shown: int = DEFAULT_N_SHOWN,
                   n_eval: int = DEFAULT_N_EVAL, budget_s: float = DEFAULT_BUDGET_S) -> RedactionTask:
    """Rebuilds a task from a seed a scored trace revealed: how an auditor without the
    private secret regenerates a private episode. It does not check that the seed
    belongs to the split; the audit does that separately."""
    stream = build_stream(seed, n_shown, n_eval)
    identity = task_identity(split, index, commitment, n_shown, n_eval, budget_s)
    return RedactionTask(
        id=task_id(split, index), split=split, index=index, n_shown=n_shown, n_eval=n_eval,
        budget_s=float(budget_s), shown=stream.shown, heldout=stream.heldout,
        secret_families=stream.secret_families, decoy_families=stream.decoy_families,
        templates=stream.templates, oracle_rules=stream.oracle,
        prompt=render_prompt(stream.shown, n_eval, stream.world.policy.describe()),
        system_prompt=SYSTEM_PROMPT, identity=identity, seed=seed)
