"""Task seeds for the three splits, and the commitments that bind a trace to its split.

Public splits use fixed, disjoint, documented seed ranges:

    dev    seeds 100_000 .. 100_063 (exactly 64 tasks), seed = 100_000 + index
    train  seeds 1_000_000 .. 10_999_999 (10,000,000 tasks), seed = 1_000_000 + index

``private_eval`` seeds are HMAC-SHA256 keyed by the secret in the environment
variable REDACTION_PRESSURE_PRIVATE_SEED over the message
``b"redaction-pressure/private-seed/v1\\x00" + corpus_version + b"\\x00" + index``
(index as 12 ASCII digits), read as a big-endian integer from the first 8 bytes with
the top bit set, so no private seed can fall in a public range.

Commitments are SHA-256 over domain-separated messages, written with a prefix naming
their kind, so a public commitment can never pass for a private one. `prove_split`
reads the split back from commitments and seeds, not from a label anyone can edit: what
every banner and summary shows, and what the audit's split-labels check names.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeGuard

from ..build.versions import CORPUS_VERSION

PRIVATE_SEED_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
MIN_SECRET_CHARS = 32
SPLITS = ("train", "dev", "private_eval")


@dataclass(frozen=True)
class SeedRange:
    split: str
    start: int
    size: int

    def seed(self, index: int) -> int:
        if not 0 <= index < self.size:
            raise IndexError(f"{self.split} has tasks 0..{self.size - 1}; got index {index}")
        return self.start + index

    @property
    def commitment(self) -> str:
        msg = f"redaction-pressure/public-range/v1\x00{CORPUS_VERSION}\x00{self.split}\x00{self.start}\x00{self.size}"
        return "public-sha256:" + hashlib.sha256(msg.encode()).hexdigest()


PUBLIC = {"dev": SeedRange("dev", 100_000, 64), "train": SeedRange("train", 1_000_000, 10_000_000)}
PRIVATE_SIZE = 1_000_000


# Every private seed has its top bit set (`private_seed`), and every private commitment
# this prefix (`private_commitment`): what a trace must reveal to be rebuilt as private.
PRIVATE_SEEDS = (1 << 63, 1 << 64)
PRIVATE_COMMITMENT_PREFIX = "private-sha256:"


class PrivateSeedError(RuntimeError):
    pass


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _named(env_var: str) -> str:
    """How a message names the variable: ``$NAME``, unless what was given could be the
    secret itself (``--private-seed-env "$SECRET"``, review of 2026-12-04: the error
    printed the secret): no message repeats a value of MIN_SECRET_CHARS characters or
    more, or one no variable name could be."""
    if len(env_var) < MIN_SECRET_CHARS and _VARIABLE_NAME.fullmatch(env_var):
        return f"${env_var}"
    return (f"the variable named (not shown: what was given is {MIN_SECRET_CHARS} characters or more or no "
            f"variable's name, and may be the secret itself; give the name, such as {PRIVATE_SEED_ENV})")


def read_private_secret(env_var: str = PRIVATE_SEED_ENV) -> bytes:
    value = os.environ.get(env_var)
    if value is None:
        raise PrivateSeedError(f"private_eval needs the secret in {_named(env_var)} (at least "
                               f"{MIN_SECRET_CHARS} characters); it is not set")
    if len(value) < MIN_SECRET_CHARS:
        raise PrivateSeedError(f"{_named(env_var)} must hold at least {MIN_SECRET_CHARS} characters "
                               "(use a random one, e.g. secrets.token_urlsafe(32))")
    return value.encode("utf-8", "surrogatepass")


def private_seed(secret: bytes, index: int) -> int:
    if not 0 <= index < PRIVATE_SIZE:
        raise IndexError(f"private_eval has tasks 0..{PRIVATE_SIZE - 1}; got index {index}")
    msg = b"redaction-pressure/private-seed/v1\x00" + CORPUS_VERSION.encode() + b"\x00" + f"{index:012d}".encode()
    digest = hmac.new(secret, msg, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") | PRIVATE_SEEDS[0]


def private_commitment(secret: bytes) -> str:
    msg = b"redaction-pressure/private-secret/v1\x00" + secret
    return PRIVATE_COMMITMENT_PREFIX + hashlib.sha256(msg).hexdigest()


def is_private_seed(value: object) -> TypeGuard[int]:
    """Whether ``value`` (from an untrusted trace: any type) can be a private seed."""
    seed = _whole(value)
    return seed is not None and PRIVATE_SEEDS[0] <= seed < PRIVATE_SEEDS[1]


MAX_PROOF_PROBLEMS = 5


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SplitProof:
    """What traces prove about their split. A split label is only a claim anyone can
    edit; the commitment and the seeds are what bind a trace to a split: a public range's
    commitment with that range's seeds is that public split, whatever the label says; a
    private commitment with no public seed is private_eval by its commitment's kind, never
    proven private here (`private_unproven`: only re-deriving its seeds from the secret
    does that). ``proven`` is None when neither holds (``problems`` say why)."""

    labels: tuple[str, ...]
    proven: str | None
    problems: tuple[str, ...] = ()

    @property
    def private_unproven(self) -> bool:
        """The traces carry a private commitment, which proves nothing private by itself:
        anyone can invent a ``private-sha256:`` commitment and seeds above 2**63 (or
        reveal none), and a task regenerates from any seed. Only re-deriving every seed
        from the secret proves the split (`audit verify --private-seed-env`, in its
        ``private-seeds`` check); this proof never does, so whatever shows a split from it
        must call a private one UNPROVEN (seed derivation not checked), never claim it."""
        return self.proven == "private_eval"

    @property
    def kind(self) -> str:
        return "public" if self.proven in PUBLIC else "private" if self.proven == "private_eval" else "unknown"

    @property
    def agrees(self) -> bool:
        """Every trace is labelled with the split its commitment and seeds prove."""
        return self.proven is not None and self.labels == (self.proven,)

    def disagreement(self) -> str | None:
        """The one line a reader must see when the label is not the proven split, e.g.
        ``labelled private_eval, committed as public dev: NOT a private evaluation``."""
        if self.agrees:
            return None
        labelled = f"labelled {', '.join(self.labels) or 'with no split'}"
        if self.proven is None:
            return f"{labelled}, but the split is NOT ESTABLISHED: {'; '.join(self.problems)}"
        committed = f"public {self.proven}" if self.proven in PUBLIC else self.proven
        return f"{labelled}, committed as {committed}" + (": NOT a private evaluation" if self.kind == "public" else "")


def prove_split(traces: Iterable[tuple[object, object, object, object]]) -> SplitProof:
    """The split that the (label, commitment, task index, revealed seed or None) of each
    trace establish. Values come from untrusted traces and may be of any type."""
    labels: set[str] = set()
    commitments: set[str | None] = set()
    pairs: list[tuple[object, object]] = []
    for label, commitment, index, seed in traces:
        labels.add(label if isinstance(label, str) else f"{label!r}"[:40])
        commitments.add(commitment if isinstance(commitment, str) else None)
        pairs.append((index, seed))
    found = tuple(sorted(labels))
    if not pairs:
        return SplitProof(found, None, ("no traces",))
    if None in commitments:
        return SplitProof(found, None, ("a trace records no split commitment",))
    if len(commitments) > 1:
        return SplitProof(found, None, (f"the traces carry {len(commitments)} different split commitments",))
    (commitment,) = commitments
    assert commitment is not None
    public = next((name for name, r in PUBLIC.items() if r.commitment == commitment), None)
    problems: list[str] = []
    if public is not None:
        r = PUBLIC[public]
        for index, seed in pairs:
            i, s = _whole(index), _whole(seed)
            if i is None or not 0 <= i < r.size:
                problems.append(f"task index {str(index)[:40]} is not one of {public}'s {r.size} tasks")
            elif seed is not None and s != r.start + i:
                problems.append(f"seed {str(seed)[:40]} is not {public}'s seed for task {i}")
        proven: str | None = public
    elif commitment.startswith(PRIVATE_COMMITMENT_PREFIX):
        # Under one secret task i has one seed, HMAC(secret, i), and no two tasks share
        # one: traces that say otherwise are not all of the split, secret or no secret.
        seed_of: dict[int, int] = {}
        task_of: dict[int, int] = {}
        for index, seed in pairs:
            i, s = _whole(index), _whole(seed)
            if i is None or not 0 <= i < PRIVATE_SIZE:
                problems.append(f"task index {str(index)[:40]} is not one of private_eval's {PRIVATE_SIZE} tasks")
            elif seed is not None and not is_private_seed(seed):
                problems.append(f"seed {str(seed)[:40]} of task {i} cannot be a private seed")
            elif s is not None and seed_of.setdefault(i, s) != s:
                problems.append(f"task {i} reveals two seeds ({seed_of[i]} and {s})")
            elif s is not None and task_of.setdefault(s, i) != i:
                problems.append(f"seed {s} is revealed for tasks {task_of[s]} and {i}")
        proven = "private_eval"
    else:
        problems.append(f"commitment {commitment[:80]} is neither a public seed range's nor a private one")
        proven = None
    if problems:
        more = len(problems) - MAX_PROOF_PROBLEMS
        shown = problems[:MAX_PROOF_PROBLEMS] + ([f"{more} more"] if more > 0 else [])
        return SplitProof(found, None, tuple(shown))
    return SplitProof(found, proven)
