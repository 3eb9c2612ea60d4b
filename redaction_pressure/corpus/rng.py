"""A portable deterministic random stream.

`random.Random` is not used: its derived methods (`randrange`, `choice`, `shuffle`)
have changed between CPython releases, and the corpus must be byte-identical on every
CPython >= 3.11. This stream is SHA-256 in counter mode over a labelled seed, and every
draw uses rejection sampling, so it is defined entirely by this file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Rng:
    __slots__ = ("_counter", "_key", "_pool", "_pool_bits")

    def __init__(self, label: str, seed: int) -> None:
        self._key = hashlib.sha256(f"{label}\x00{seed:d}".encode()).digest()
        self._counter = 0
        self._pool = 0  # bits are consumed from an integer pool, 256 at a time
        self._pool_bits = 0

    def fork(self, label: str) -> Rng:
        """An independent child stream, so adding draws in one part of the generator
        does not shift every later draw of another part."""
        return Rng(label, int.from_bytes(self._key, "big"))

    def _bits(self, k: int) -> int:
        while self._pool_bits < k:
            block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._pool = (self._pool << 256) | int.from_bytes(block, "big")
            self._pool_bits += 256
        self._pool_bits -= k
        value = self._pool >> self._pool_bits
        self._pool &= (1 << self._pool_bits) - 1
        return value

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        k = (n - 1).bit_length() or 1
        while True:
            # `_bits(k)` inlined: this is the generator's hottest call.
            if self._pool_bits < k:
                v = self._bits(k)
            else:
                left = self._pool_bits - k
                v = self._pool >> left
                self._pool &= (1 << left) - 1
                self._pool_bits = left
            if v < n:
                return v

    def between(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def chance(self, numerator: int, denominator: int) -> bool:
        return self.below(denominator) < numerator

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def shuffled(self, seq: Sequence[T]) -> list[T]:
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        return self.shuffled(seq)[:k]

    def chars(self, alphabet: str, n: int) -> str:
        size = len(alphabet)
        if n > 0 and size > 1 and size & (size - 1) == 0:
            # No rejection for a power-of-two alphabet: n draws of k bits are exactly
            # the next k*n bits, so take them at once (same stream, several times faster).
            k = size.bit_length() - 1
            v, mask = self._bits(k * n), size - 1
            return "".join(alphabet[(v >> (k * i)) & mask] for i in range(n - 1, -1, -1))
        return "".join(alphabet[self.below(size)] for _ in range(n))
