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

from .blocks import draw_key_block
from .context import ContextSecret, draw_context_secret
from .families import Family
from .house import (
    HouseFormat,
    draw_house_format,
    encoded_family,
    encoded_lookalike,
    encoding_ends,
    encoding_keys,
    with_placeholders,
)
from .levels import LEVEL_1, LEVELS, Level, level
from .policy import CATEGORIES, DESCRIPTIONS, EXCEPTION_NAMES, FIELD_CATEGORIES, Policy, draw_exceptions, draw_policy
from .rng import Rng
from .scoped import draw_scoped_secret, neutral_slots


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
    lv: Level = LEVEL_1
    # Drawn above level 1 only: section-scoped secrets and their look-alikes, key blocks
    # and their public halves, credentials base64-encoded, the policy's stated exceptions.
    extra_secrets: tuple[Family, ...] = ()
    extra_decoys: tuple[Family, ...] = ()
    neutral_block_labels: bool = False  # its key blocks' labels name no role
    neutral_sections: bool = False  # its scoped secrets' section names name no role
    # (family, leading, trailing): the characters every value of an encoded credential
    # shares at each end (`house.encoding_ends`); its shown values share no more.
    encoded_ends: tuple[tuple[str, int, int], ...] = ()

    @property
    def secret_families(self) -> tuple[Family, ...]:
        return (self.house_secrets + self.context_secrets
                + tuple(f for f in self.categories.values() if f.kind == "secret") + self.extra_secrets)

    @property
    def decoy_families(self) -> tuple[Family, ...]:
        return (self.house_decoys + self.context_decoys
                + tuple(f for f in self.categories.values() if f.kind == "decoy") + self.extra_decoys)

    def field(self, name: str, r: Rng) -> tuple[str, Family] | None:
        """A filler field that draws a policy category (``{host}``, ``{ip}``): its
        value and the family that labels it; None for other fields."""
        category = FIELD_CATEGORIES.get(name)
        if category is None:
            return None
        exceptions = dict(self.policy.exceptions)
        # A category with a stated exception fills half its fields with kept values (the
        # excepted hosts and addresses turn up in logs as often as the others).
        if category in exceptions and r.chance(1, 2):
            exempt = next(f for f in self.extra_decoys if f.name == EXCEPTION_NAMES[category])
            return self.policy.exception_value(category, r), exempt
        return self.policy.value(category, r), self.categories[category]


def draw_world(r: Rng, shell: bool, lv: Level = LEVEL_1) -> World:
    """``shell``: whether the stream has a template with command lines, where a
    context secret may be a flag. ``lv``: how much of each kind the stream draws."""
    taken: set[str] = set()
    house: list[HouseFormat] = []
    for _ in range(r.between(*lv.house_formats)):
        h = draw_house_format(r.fork(f"house/{len(house)}"), taken, lv)
        taken.add(h.secret.prefix)
        house.append(h)
    contexts = []
    names = {h.service for h in house}
    for i in range(r.between(*lv.context_secrets)):
        kind = "flag" if shell and r.chance(1, 3) else "kv"
        c = draw_context_secret(r.fork(f"context/{i}"), kind, names, lv.context_lookalikes,
                                r.between(*lv.affixed_lookalikes))
        names.add(c.service)
        contexts.append(c)
    policy = draw_policy(r.fork("policy"))
    if lv.house_placeholders[1]:  # from level 3, from a fork of its own
        ph = r.fork("level").fork("placeholders")
        for i in ph.sample(range(len(house)), ph.between(*lv.house_placeholders)):
            house[i] = with_placeholders(house[i], ph.fork(f"house/{i}"), ph.between(*lv.placeholder_kinds))
    hs, hd, cs, cd = [], [], [], []
    for h in house:
        s, d = h.families()
        hs.append(s)
        hd += d
    for c in contexts:
        s, d = c.families()
        cs.append(s)
        cd += d
    extra_s: list[Family] = []
    extra_d: list[Family] = []
    ends: list[tuple[str, int, int]] = []
    if lv is not LEVEL_1:  # every draw below comes from forks of their own: level 1 is untouched
        more = r.fork("level")
        policy = draw_exceptions(more.fork("exceptions"), policy, more.between(*lv.policy_exceptions), lv.egress_prefix)
        extra_d += policy.exception_families()
        names_fork = more.fork("section-names")
        neutral_sections = bool(names_fork.between(*lv.neutral_sections))
        slots = neutral_slots(names_fork) if neutral_sections else None
        for i in range(more.between(*lv.scoped_secrets)):
            scoped = draw_scoped_secret(more.fork(f"scoped/{i}"), names, neutral=slots)
            names.add(scoped.service)
            secret, *kept = scoped.families()
            extra_s.append(secret)
            extra_d += kept
        neutral = bool(more.fork("block-labels").between(*lv.neutral_block_labels))
        for i in range(more.between(*lv.multiline)):
            block = draw_key_block(more.fork(f"block/{i}"), names, neutral=neutral)
            names.add(block.service)
            extra_s.append(block.families()[0])
            extra_d.append(block.families()[1])
        for h in house[:more.between(*lv.encodings)]:
            secret_key, kept_key = encoding_keys(h, more.fork(f"encoding/{h.service}"))
            extra_s.append(encoded_family(h, secret_key))
            ends.append((extra_s[-1].name, *encoding_ends(h.secret)))
            encoded = encoded_lookalike(h, kept_key)
            if encoded is not None:
                extra_d.append(encoded)
    else:
        neutral = neutral_sections = False
    return World(tuple(house), tuple(contexts), policy, tuple(hs), tuple(hd), tuple(cs), tuple(cd),
                 policy.families(), lv, tuple(extra_s), tuple(extra_d), neutral, neutral_sections, tuple(ends))


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
              contexts: Iterable[str] = ("kv",), levels: Iterable[int] = LEVELS) -> dict[str, Any]:
        return {"name": name, "kind": kind, "contexts": sorted(contexts), "keys": [], "variants": [], "why": why,
                "oracle": [], "examples": examples, "negatives": [], "drawn": drawn, "levels": list(levels)}

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
                     "1-2 per stream: an invented key or flag of a service; values of one alphabet and "
                     "one length (14-30) drawn per stream", [kv(w.context_secrets[0], True) for w in worlds],
                     ("kv", "shell")))
    out.append(entry("context_lookalike", "decoy",
                     "a value of exactly the same shape under another key of the same service, "
                     "which the stream does not treat as secret",
                     "2-3 per context secret at level 1 (up to 5 at level 5); from level 4 some sit under "
                     "keys that contain the secret's own key name (public_{key}, {key}_id)",
                     [kv(w.context_decoys[0], False) for w in worlds], ("kv", "shell")))
    for category in CATEGORIES:
        fams = [w.categories[category] for w in worlds]
        out.append(entry(category, "policy",
                         f"{DESCRIPTIONS[category]}: secret or kept as the stream's labelling policy says "
                         "(stated in words in the prompt)",
                         "secret with probability 1/3 per stream; domains, hosts, phone style and id format "
                         "drawn per stream", [kv(f, f.kind == "secret") for f in fams]))
    out += _level_kinds(entry, kv)
    return tuple(out)


def _from(attribute: str) -> list[int]:
    """The levels whose table lets a stream draw ``attribute`` (upper bound above 0)."""
    return [n for n in LEVELS if getattr(level(n), attribute)[1] > 0]


def _level_kinds(entry: Any, kv: Any) -> list[dict[str, Any]]:
    """Kinds that only higher levels draw, each with the levels it appears at and
    examples from sample worlds of the top level."""
    worlds = [draw_world(Rng("redaction-pressure/catalog/levels", i), shell=True, lv=level(LEVELS[-1]))
              for i in range(3)]

    def of(group: str, secret: bool) -> list[dict[str, str]]:
        fams = [f for w in worlds for f in (w.extra_secrets if secret else w.extra_decoys + w.house_decoys)
                if f.group == group]
        return [kv(f, secret) for f in fams[:3]]

    near = [n for n in LEVELS if {"near", "alphabet"} & set(level(n).lookalike_kinds)]
    return [
        entry("house_preview_key", "decoy", "a preview key: the same prefix with a marker one letter away, under the "
              "same keys; it grants nothing", "a look-alike kind of house formats from the levels shown",
              of("house_preview_key", False), levels=near),
        entry("house_webhook_id", "decoy", "a webhook id: the credential's prefix, length and separators with "
              "another body alphabet, under the same keys; it grants nothing",
              "a look-alike kind of house formats from the levels shown", of("house_webhook_id", False), levels=near),
        entry("house_placeholder", "decoy", "a placeholder of a house credential: its prefix and length with a body "
              "of x, X, 0 or * throughout, one repeated character of its alphabet, a run of its alphabet in one "
              "case, or a run through both cases, under the same keys; it authenticates nothing",
              "house_placeholders formats per stream, placeholder_kinds kinds each (see the level table), each "
              "drawn once and shown beside the credential", of("house_placeholder", False),
              levels=_from("house_placeholders")),
        entry("house_lookalike_placeholder", "decoy", "a placeholder of a house look-alike (a client id, sandbox "
              "key or key id): its prefix and length with a placeholder body, beside the credential's own; it "
              "authenticates nothing", "one per such look-alike of a format with placeholders",
              of("house_lookalike_placeholder", False), levels=_from("house_placeholders")),
        entry("scoped_secret", "secret", "a service key's value in the production section of a config file "
              "([production], live:, \"prod\": {...} in JSON; from level 5 a role-free name such as [cobalt] "
              "or jade:, which only the shown pair tells apart): the live credential",
              "scoped_secrets per stream (see the level table): a key, a secret section and a value alphabet "
              "and length", of("scoped_secret", True), ("scoped",), _from("scoped_secrets")),
        entry("scoped_lookalike", "decoy", "the same key's value in another section (staging, sandbox, test, "
              "preview; from level 5 another role-free name): it reaches a test environment",
              "one per scoped secret", of("scoped_lookalike", False), ("scoped",), _from("scoped_secrets")),
        entry("scoped_sibling", "decoy", "another key of the same service in the production section and the "
              "other one, its value of the same shape: a public reference, kept", "two per scoped secret",
              of("scoped_sibling", False), ("scoped",), _from("scoped_secrets")),
        entry("house_key_block", "secret", "a multi-line key block in a service's own armour (SIGNING, SEALING or "
              "MASTER KEY; from level 4 a role-free word such as LEDGER or BEACON KEY, which only the "
              "shown pair tells apart): it signs as the service", "multiline per stream (see the level table)",
              of("house_key_block", True), ("block",), _from("multiline")),
        entry("house_public_block", "decoy", "the same service's VERIFYING KEY, PUBLIC KEY or CERTIFICATE block "
              "(from level 4 another role-free word): public by design, kept", "one per key block",
              of("house_public_block", False), ("block",),
              _from("multiline")),
        entry("house_format_base64", "secret", "a house credential base64-encoded under data: of a Kubernetes "
              "Secret ({service}-{word}-credential): encoding hides nothing",
              "encodings per stream (see the level table)", of("house_format_base64", True), ("k8s",),
              _from("encodings")),
        entry("house_format_base64_lookalike", "decoy", "a look-alike of that credential (its sandbox key, key id, "
              "client id, ...), base64-encoded under a data key of the same form "
              "({service}-{word}-credential, the words drawn per stream): kept",
              "one per base64 form whose format has a look-alike the form's oracle cannot take",
              of("house_format_base64_lookalike", False), ("k8s",), _from("encodings")),
        entry("policy_exception", "decoy", "a value of a secret policy category that the policy's stated "
              "exception keeps (a support desk's addresses, an egress range, test hosts, a public support "
              "line, a test account)", "policy_exceptions per stream (see the level table), stated in words "
              "in the prompt", of("policy_exception", False), levels=_from("policy_exceptions")),
    ]
