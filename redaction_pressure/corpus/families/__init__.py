"""Secret and decoy families of corpus-v2, declared as tables.

A family makes a *fragment*: a value as it would sit in a record, plus the spans of
it that are secret (secret families) or that must survive (decoy families). Secret
families also carry the oracle: the regexes that remove exactly their spans and
nothing else; the generator checks every record against them, so the oracle is
right by construction. Decoys say, character by character, why they are not secret.

Contexts say where a fragment can be placed: ``kv`` (the value of a key in a config,
log or source line), ``block`` (a multi-line PEM block), ``shell`` (a whole command
line) and ``k8s`` (a value under ``data:`` in a Kubernetes Secret).

The tables live in ``secrets`` and ``decoys``; generators in
``make``; examples and near misses in ``examples``.
"""

from __future__ import annotations

from .base import (
    ALNUM,
    B64,
    B64URL,
    DIGITS,
    GENERIC,
    HEX,
    HOSTS,
    LOWER,
    PASSWORD,
    UPPER32,
    USERS,
    Family,
    Fragment,
)
from .decoys import DECOYS
from .secrets import SECRETS

FAMILIES: dict[str, Family] = {f.name: f for f in SECRETS + DECOYS}

__all__ = ["ALNUM", "B64", "B64URL", "DECOYS", "DIGITS", "FAMILIES", "GENERIC", "HEX", "HOSTS", "LOWER",
           "PASSWORD", "SECRETS", "UPPER32", "USERS", "Family", "Fragment"]
