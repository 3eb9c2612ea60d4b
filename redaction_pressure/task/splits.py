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
their kind, so a public commitment can never pass for a private one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

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


class PrivateSeedError(RuntimeError):
    pass


def read_private_secret(env_var: str = PRIVATE_SEED_ENV) -> bytes:
    value = os.environ.get(env_var)
    if value is None:
        raise PrivateSeedError(f"private_eval needs the secret in ${env_var} (at least "
                               f"{MIN_SECRET_CHARS} characters); it is not set")
    if len(value) < MIN_SECRET_CHARS:
        raise PrivateSeedError(f"${env_var} must hold at least {MIN_SECRET_CHARS} characters "
                               "(use a random one, e.g. secrets.token_urlsafe(32))")
    return value.encode("utf-8", "surrogatepass")


def private_seed(secret: bytes, index: int) -> int:
    if not 0 <= index < PRIVATE_SIZE:
        raise IndexError(f"private_eval has tasks 0..{PRIVATE_SIZE - 1}; got index {index}")
    msg = b"redaction-pressure/private-seed/v1\x00" + CORPUS_VERSION.encode() + b"\x00" + f"{index:012d}".encode()
    digest = hmac.new(secret, msg, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") | (1 << 63)


def private_commitment(secret: bytes) -> str:
    msg = b"redaction-pressure/private-secret/v1\x00" + secret
    return "private-sha256:" + hashlib.sha256(msg).hexdigest()
