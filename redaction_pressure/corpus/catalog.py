"""The public catalogue: every family the corpus draws from, as plain data.

Users building scanners read it to see which formats the corpus holds, what each
secret family's reference regexes are, and which look-alikes must survive and why.
The output is JSON-serialisable and its order is fixed (secrets, then decoys, each in
table order, then open-world kinds), so it can be diffed between builds.
"""

from __future__ import annotations

import copy
from typing import Any

from .families import DECOYS, SECRETS, Family
from .levels import LEVELS
from .world import open_world_kinds

# Kinds that a stream invents from its seed (house formats, policy categories, context
# secrets) have no fixed format: each is described in words (``drawn``), with examples
# from sample worlds and no oracle. Their kind is "secret", "decoy" or, for policy
# categories, "policy" (secret or kept as the stream's stated policy says).
OPEN_WORLD_KINDS: tuple[dict[str, Any], ...] = open_world_kinds()


def _entry(f: Family) -> dict[str, Any]:
    return {
        "name": f.name,
        "kind": f.kind,
        "contexts": sorted(f.contexts),
        "keys": [k for k in f.keys if k],
        "variants": [v for v in f.variants if v],
        "why": f.why,
        "oracle": list(f.oracle),
        "examples": [{"text": text, "secret": secret} for text, secret in f.examples],
        "negatives": list(f.negatives),
        "levels": list(LEVELS),  # the static catalogue is drawn at every level
    }


def catalog() -> list[dict[str, Any]]:
    """Every family as a dict: name, kind ("secret" or "decoy"), contexts, keys,
    variants, why, oracle (regexes for the Python `regex` module that remove exactly
    the family's secrets), examples (text and the exact secret the oracle removes, ""
    for decoys), negatives (near misses that no secret oracle touches) and levels (the
    difficulty levels that draw it). Open-world kinds follow, with a ``drawn`` field
    saying what each stream draws; kinds only higher levels draw come last. A fresh
    list on every call."""
    return [_entry(f) for f in SECRETS + DECOYS] + [copy.deepcopy(dict(k)) for k in OPEN_WORLD_KINDS]
