"""A stream's own world: the facts it draws from its seed that no model can know
without reading its shown records (SPEC §3, "The open world").

- house formats (``house``): one to three in-house credential formats, each with
  same-service look-alikes;
- a labelling policy (``policy``): which of five optional categories are secret;
- context secrets (``context``): one or two stream-specific keys or flags whose
  values are secret beside same-shaped values under keys that are not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .context import ContextSecret, draw_context_secret
from .families import Family
from .house import HouseFormat, draw_house_format
from .policy import CATEGORIES, DESCRIPTIONS, FIELD_CATEGORIES, Policy, draw_policy
from .rng import Rng


@dataclass(frozen=True)
class World:
    house: tuple[HouseFormat, ...]
    contexts: tuple[ContextSecret, ...]
    policy: Policy
    house_secrets: tuple[Family, ...]
    house_decoys: tuple[Family, ...]
    context_secrets: tuple[Family, ...]
    context_decoys: tuple[Family, ...]
    categories: dict[str, Family]  # category -> Family (secret or decoy by the policy)

    @property
    def secret_families(self) -> tuple[Family, ...]:
        return (self.house_secrets + self.context_secrets
                + tuple(f for f in self.categories.values() if f.kind == "secret"))

    @property
    def decoy_families(self) -> tuple[Family, ...]:
        return (self.house_decoys + self.context_decoys
                + tuple(f for f in self.categories.values() if f.kind == "decoy"))

    def field(self, name: str, r: Rng) -> tuple[str, Family] | None:
        """A filler field that draws a policy category (``{host}``, ``{ip}``): its
        value and the family that labels it; None for other fields."""
        category = FIELD_CATEGORIES.get(name)
        if category is None:
            return None
        return self.policy.value(category, r), self.categories[category]


def draw_world(r: Rng, shell: bool) -> World:
    """``shell``: whether the stream has a template with command lines, where a
    context secret may be a flag."""
    taken: set[str] = set()
    house: list[HouseFormat] = []
    for _ in range(r.between(1, 3)):
        h = draw_house_format(r.fork(f"house/{len(house)}"), taken)
        taken.add(h.secret.prefix)
        house.append(h)
    contexts = []
    names = {h.service for h in house}
    for i in range(r.between(1, 2)):
        kind = "flag" if shell and r.chance(1, 3) else "kv"
        c = draw_context_secret(r.fork(f"context/{i}"), kind, names)
        names.add(c.service)
        contexts.append(c)
    policy = draw_policy(r.fork("policy"))
    hs, hd, cs, cd = [], [], [], []
    for h in house:
        s, d = h.families()
        hs.append(s)
        hd += d
    for c in contexts:
        s, d = c.families()
        cs.append(s)
        cd += d
    return World(tuple(house), tuple(contexts), policy, tuple(hs), tuple(hd), tuple(cs), tuple(cd),
                 policy.families())


def _sample_worlds(n: int = 3) -> list[World]:
    return [draw_world(Rng("redaction-pressure/catalog", i), shell=True) for i in range(n)]


def open_world_kinds() -> tuple[dict[str, Any], ...]:
    """The catalogue's open-world entries: what a stream draws from its seed, described
    in words, with examples from three sample worlds. They have no oracle: a stream's
    oracle exists only once its seed has drawn the format (``task.oracle_rules``)."""
    worlds = _sample_worlds()
    r = Rng("redaction-pressure/catalog/examples", 0)

    def kv(family: Family, secret: bool) -> dict[str, str]:
        frag = family.make(r, "")
        key = frag.key or family.keys[0]
        return {"text": f"{key}={frag.text}", "secret": frag.text if secret else ""}

    def entry(name: str, kind: str, why: str, drawn: str, examples: list[dict[str, str]],
              contexts: Iterable[str] = ("kv",)) -> dict[str, Any]:
        return {"name": name, "kind": kind, "contexts": sorted(contexts), "keys": [], "variants": [], "why": why,
                "oracle": [], "examples": examples, "negatives": [], "drawn": drawn}

    lookalike_names = (("client_id", "a publishable client id: the same prefix shape with another marker"),
                       ("key_id", "a key id: the same prefix with a body of another length"),
                       ("sandbox_key", "a sandbox key: the same prefix shape with another marker"))
    out = [entry("house_format", "secret",
                 "the credential of one of the stream's in-house services; its format exists only in this stream",
                 "1-3 per stream: a prefix (service abbreviation, separator, marker, separator), a body "
                 "alphabet (hex, base32, lowercase alphanumerics or base62) of one exact length (16-44), "
                 "optionally a 6-character CRC-32 suffix; found under two keys of the service",
                 [kv(w.house_secrets[0], True) for w in worlds])]
    for suffix, why in lookalike_names:
        found = [kv(f, False) for w in worlds for f in w.house_decoys if f.name.endswith("_" + suffix)]
        out.append(entry(f"house_{suffix}", "decoy", why + ", under the same keys; it grants nothing",
                         "2-3 look-alikes per house format, each differing only in marker or length", found[:3]))
    out.append(entry("context_secret", "secret",
                     "a value secret only because of the key or command-line flag it sits under",
                     "1-2 per stream: an invented key or flag of a service; values of one alphabet and a "
                     "length range drawn per stream", [kv(w.context_secrets[0], True) for w in worlds],
                     ("kv", "shell")))
    out.append(entry("context_lookalike", "decoy",
                     "a value of exactly the same shape under another key of the same service, "
                     "which the stream does not treat as secret",
                     "2-3 per context secret", [kv(w.context_decoys[0], False) for w in worlds], ("kv", "shell")))
    for category in CATEGORIES:
        fams = [w.categories[category] for w in worlds]
        out.append(entry(category, "policy",
                         f"{DESCRIPTIONS[category]}: secret or kept as the stream's labelling policy says "
                         "(stated in words in the prompt)",
                         "secret with probability 1/3 per stream; domains, hosts, phone style and id format "
                         "drawn per stream", [kv(f, f.kind == "secret") for f in fams]))
    return tuple(out)
