"""A stream's own world: the facts it draws from its seed that no model can know
without reading its shown records (SPEC §3, "The open world").

- house formats (``_house``): one to three in-house credential formats, each with
  same-service look-alikes;
- a labelling policy (``_policy``): which of five optional categories are secret;
- context secrets (``_context``): one or two stream-specific keys or flags whose
  values are secret beside same-shaped values under keys that are not.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._context import ContextSecret, draw_context_secret
from ._families import Family
from ._house import HouseFormat, draw_house_format
from ._policy import FIELD_CATEGORIES, Policy, draw_policy
from ._rng import Rng


@dataclass(frozen=True)
class World:
    house: tuple[HouseFormat, ...]
    contexts: tuple[ContextSecret, ...]
    policy: Policy
    house_secrets: tuple[Family, ...]
    house_decoys: tuple[Family, ...]
    context_secrets: tuple[Family, ...]
    context_decoys: tuple[Family, ...]
    categories: dict  # category -> Family (secret or decoy by the policy)

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
    house = []
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
