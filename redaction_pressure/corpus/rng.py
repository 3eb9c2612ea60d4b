"""A portable deterministic random stream.

`random.Random` is not used: its derived methods (`randrange`, `choice`, `shuffle`)
have changed between CPython releases, and the corpus must be byte-identical on every
CPython >= 3.11. This stream is SHA-256 in counter mode over a labelled seed, and every
draw uses rejection sampling, so it is defined entirely by this file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")


# Power-of-two alphabets whose n k-bit draws Python writes at C speed: the k*n bits as
# n hex, octal or binary digits (most significant first, zero-padded: the draws in order),
# or a byte per draw (`byte_per_draw`) mapped by bytes.translate.
_DIGITS = {4: ("0123456789abcdef", "x"), 3: ("01234567", "o"), 1: ("01", "b")}
_TRANSLATIONS: dict[tuple[str, str], dict[int, int]] = {}
_DRAW_TABLES: dict[str, bytes | None] = {}


def _translation(digits: str, alphabet: str) -> dict[int, int]:
    table = _TRANSLATIONS.get((digits, alphabet))
    if table is None:
        table = _TRANSLATIONS[(digits, alphabet)] = str.maketrans(digits, alphabet)
    return table


def _draw_table(alphabet: str) -> bytes | None:
    """A bytes.translate table from byte i to ``alphabet[i]``; None beyond latin-1."""
    if alphabet not in _DRAW_TABLES:
        _DRAW_TABLES[alphabet] = (bytes(map(ord, alphabet)) + bytes(range(len(alphabet), 256))
                                  if len(alphabet) <= 256 and all(ord(c) < 256 for c in alphabet) else None)
    return _DRAW_TABLES[alphabet]


@lru_cache(maxsize=512)
def _lane_steps(k: int, m: int) -> tuple[tuple[int, int], ...]:
    """(mask, shift) steps that move each of m k-bit groups of an integer (group i at
    bit k*i) to a byte of its own (bit 8*i): group i moves 8-k bits per unit of i, one
    bit of i at a time from the highest, so each step moves whole runs of groups."""
    spread, steps = 8 - k, []
    at = [k * i for i in range(m)]
    for b in range((m - 1).bit_length() - 1, -1, -1):
        mask = 0
        for i in range(m):
            if i >> b & 1:
                mask |= ((1 << k) - 1) << at[i]
                at[i] += spread << b
        steps.append((mask, spread << b))
    return tuple(steps)


def byte_per_draw(v: int, k: int, m: int) -> bytes:
    """The m k-bit draws of ``v`` (its k*m bits, the first draw the most significant; k
    at most 8), a byte each, in order: a few integer operations instead of a Python
    step per draw."""
    if k != 8:
        for mask, shift in _lane_steps(k, m):
            high = v & mask
            v = (v ^ high) | (high << shift)
    return v.to_bytes(m, "big")


class Rng:
    """Bits are drawn from the top of ``_pool``, which holds ``_pool_bits`` unread bits
    (its higher bits are read already and cleared when the pool is refilled); every draw
    takes the next bits of the stream, so the draws define the stream's use exactly.
    `below` and `shuffled` inline the pool read (`_bits`): they are the generator's hottest calls."""
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
        """The stream's next ``k`` bits, as an integer."""
        bits = self._pool_bits
        if bits < k:
            pool = self._pool & ((1 << bits) - 1)
            key, counter = self._key, self._counter
            while bits < k:
                block = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
                counter += 1
                pool = (pool << 256) | int.from_bytes(block, "big")
                bits += 256
            self._counter = counter
            self._pool = pool
        bits -= k
        self._pool_bits = bits
        return (self._pool >> bits) & ((1 << k) - 1)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        k = (n - 1).bit_length() or 1
        while True:
            left = self._pool_bits - k
            if left < 0:
                v = self._bits(k)
            else:
                self._pool_bits = left
                v = (self._pool >> left) & ((1 << k) - 1)
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
            k = i.bit_length()  # j = below(i + 1), inlined
            while True:
                left = self._pool_bits - k
                if left < 0:
                    j = self._bits(k)
                else:
                    self._pool_bits = left
                    j = (self._pool >> left) & ((1 << k) - 1)
                if j <= i:
                    break
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
            v = self._bits(k * n)
            written = _DIGITS.get(k)
            if written is not None:
                digits, spec = written
                text = format(v, f"0{n}{spec}")
                return text if alphabet == digits else text.translate(_translation(digits, alphabet))
            table = _draw_table(alphabet) if k <= 8 else None
            if table is not None:
                return byte_per_draw(v, k, n).translate(table).decode("latin-1")
            mask = size - 1
            return "".join(alphabet[(v >> (k * i)) & mask] for i in range(n - 1, -1, -1))
        return "".join(alphabet[self.below(size)] for _ in range(n))
