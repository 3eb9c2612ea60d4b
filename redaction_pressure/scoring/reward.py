"""The reward contract, reward-v1 (SPEC §5; the design note's "Reward contract").

    recall    (0.35)  labelled secret spans whose every original character is gone,
                      over all labelled secret spans. A partial edit counts as not removed.
    precision (0.35)  source characters of fully removed secret spans, over all removed
                      source characters (0 when nothing was removed). Characters removed
                      from partially edited spans stay in the denominator only.
    clean     (0.30)  1 only if every secret is fully removed, no other source character
                      (decoys included) is removed, and there were no errors.
    reward = valid * (0.35 * recall + 0.35 * precision + 0.30 * clean)
    valid = 1 when the episode has no errors, else 0 (every reward is multiplied by it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WEIGHTS = {"recall": 0.35, "precision": 0.35, "clean": 0.30}


@dataclass(frozen=True)
class Outcome:
    valid: float
    recall: float
    precision: float
    clean: float
    secrets_total: int
    secrets_removed: int
    secret_chars_removed: int
    removed_chars: int
    collateral_chars: int  # removed characters outside every secret span

    @property
    def reward(self) -> float:
        reward: float = self.valid * sum(w * getattr(self, k) for k, w in WEIGHTS.items())
        return reward


def evaluate(removed: Sequence[bytearray], secret_spans: Sequence[Sequence[tuple[int, int]]],
             has_errors: bool) -> Outcome:
    """``removed[r][i]`` is 1 when source character ``i`` of record ``r`` is gone;
    ``secret_spans[r]`` are the labelled secret spans of record ``r``."""
    total = full = full_chars = removed_chars = secret_removed_any = 0
    for gone, spans in zip(removed, secret_spans, strict=False):
        gone_here = gone.count(1)
        removed_chars += gone_here
        for start, end in spans:
            total += 1
            if gone.count(1, start, end) == end - start:
                full += 1
                full_chars += end - start
        if gone_here:  # (a record that lost nothing has no overlap to count)
            in_secret = bytearray(len(gone))
            for start, end in spans:
                in_secret[start:end] = b"\x01" * (end - start)
            # Bytes are 0/1, so the AND of the two masks as integers counts their overlap.
            secret_removed_any += (int.from_bytes(gone, "big") & int.from_bytes(in_secret, "big")).bit_count()
    collateral = removed_chars - secret_removed_any
    valid = 0.0 if has_errors else 1.0
    recall = full / total if total else 0.0
    precision = full_chars / removed_chars if removed_chars else 0.0
    clean = 1.0 if (not has_errors and total and full == total and collateral == 0) else 0.0
    return Outcome(valid, valid * recall, valid * precision, valid * clean, total, full,
                   full_chars, removed_chars, collateral)
