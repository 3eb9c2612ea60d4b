"""Key blocks of a stream's own services: multi-line secrets with an invented label.

A service signs with keys it writes out in a PEM-like armour of its own,
``-----BEGIN VORLEX SIGNING KEY-----`` … ``-----END VORLEX SIGNING KEY-----``, and
publishes the matching ``VERIFYING KEY`` block beside it. A rule that knows PEM
private keys misses the first and a rule that takes every armoured block destroys the
second: only the shown records say which label is secret. The block spans lines (and,
in YAML, carries the indentation of its block scalar). From level 4 a stream names
both blocks with words that say nothing of their role (``VORLEX LEDGER KEY`` beside
``VORLEX BEACON KEY``): a rule that knows signing keys are secret and verifying keys
public then has nothing to go on but the shown pair.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import regex

from .families import Family, Fragment
from .families.base import Make, rbytes, wrap
from .names import new_service_name
from .rng import Rng

_SECRET_LABELS = ("SIGNING KEY", "SEALING KEY", "MASTER KEY")
_PUBLIC_LABELS = ("VERIFYING KEY", "PUBLIC KEY", "CERTIFICATE")
NEUTRAL_LABELS = ("LEDGER KEY", "BEACON KEY", "RELAY KEY", "HARBOR KEY", "ORBIT KEY", "CHANNEL KEY", "BRIDGE KEY",
                   "ROUTE KEY")


@dataclass(frozen=True)
class KeyBlock:
    service: str
    secret_label: str
    public_label: str
    width: int

    def _armour(self, label: str) -> str:
        return f"{self.service.upper()} {label}"

    def _maker(self, label: str) -> Make:
        def make(r: Rng, variant: str = "") -> Fragment:
            body = wrap(base64.b64encode(rbytes(r, r.between(48, 112))).decode(), self.width)
            armour = self._armour(label)
            text = f"-----BEGIN {armour}-----\n{body}\n-----END {armour}-----"
            return Fragment(text, ((0, len(text)),))
        return make

    def families(self) -> tuple[Family, Family]:
        secret_armour = regex.escape(self._armour(self.secret_label))
        secret = Family(f"{self.service}_{self.secret_label.split()[0].lower()}_key", "secret", frozenset({"block"}),
                        (f"{self.service}_{self.secret_label.split()[0].lower()}_key",), self._maker(self.secret_label),
                        oracle=(rf"-----BEGIN {secret_armour}-----\n[\s\S]*?-----END {secret_armour}-----",),
                        group="house_key_block",
                        why=f"the stream's own {self._armour(self.secret_label)} block: it signs as the service")
        decoy = Family(f"{self.service}_{self.public_label.split()[0].lower()}_block", "decoy", frozenset({"block"}),
                       (f"{self.service}_{self.public_label.split()[0].lower()}_key",), self._maker(self.public_label),
                       group="house_public_block",
                       why=(f"the {self._armour(self.public_label)} block is public by design; only the "
                            f"{self.secret_label} block is secret") if self.public_label in _PUBLIC_LABELS else
                           (f"the {self._armour(self.public_label)} block is kept: the shown records label only the "
                            f"{self.secret_label} block"))
        return secret, decoy


def draw_key_block(r: Rng, taken: set[str], neutral: bool = False) -> KeyBlock:
    """``neutral``: both labels from words that name no role (drawn from a fork, so a
    stream drawing none keeps its bytes)."""
    service = new_service_name(r, taken)
    # 64 columns, as RFC 7468 writes every PEM-style block
    block = KeyBlock(service, r.choice(_SECRET_LABELS), r.choice(_PUBLIC_LABELS), 64)
    if neutral:
        secret, public = r.fork("neutral").sample(NEUTRAL_LABELS, 2)
        block = KeyBlock(service, secret, public, block.width)
    return block
