"""Difficulty levels (SPEC §3, "Difficulty levels"): each level declared once, as data.

A level is a table of named attributes, each the range (inclusive) a stream draws
from. Level 1 is the standard benchmark; higher levels are additive: they draw their
streams under labels of their own and never change a level-1 task. What rises with
the level is what a careful reader of the shown records can still resolve and a
memorised rule cannot: more of the stream's own formats, look-alikes that differ from
the credential by less (one length step, one letter of the marker, the alphabet),
placeholders of the stream's own formats and more kinds of vendor placeholders (each
drawn once and shown beside a real secret of its format), look-alike keys that contain
the secret's own key name (``public_ledger_seal`` beside ``ledger_seal``), values secret
only in one section of a file (at the top level, in sections whose names say nothing
of which is live), policy categories with a stated
exception, credentials that reappear base64-encoded in a Kubernetes Secret, invented
multi-line key blocks, key- and section-scoped secrets tested in file types other than
those that showed them, more decoys and filler lines around them, and more held-out
files that hold no secret at all (most files in a real repository hold none). Every attribute
that separates a secret from its look-alike is shown by the generator with a
contrasting pair (fairness is a property of the generator, tested at every level).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

Range = tuple[int, int]


@dataclass(frozen=True)
class Level:
    house_formats: Range  # credential formats of the stream's own services
    lookalikes_per_format: Range  # same-service look-alikes of each format
    lookalike_kinds: tuple[str, ...]  # which look-alikes a format draws from
    length_step: Range  # how many characters a key id's body differs by
    house_placeholders: Range  # house formats that also appear as placeholders of their own prefix and length
    # Placeholder kinds (fill, repeat, run, mixed) of each placeholder format, house or
    # vendor, each drawn once per stream and shown beside its credential (corpus-v5: from
    # level 1; corpus-v4's levels 1-2 drew a kind per value, so a held-out placeholder
    # could be of a kind no shown record kept, and model replies removed them).
    placeholder_kinds: Range
    context_secrets: Range  # key- or flag-scoped secrets
    context_lookalikes: Range  # same-shaped values under the service's other keys, per context secret
    # How many of those keys contain the secret's own key name (public_{key}, {key}_id):
    # a rule that does not bound the key name at that end takes them too (one: one end,
    # drawn per secret; two: both ends).
    affixed_lookalikes: Range
    scoped_secrets: Range  # values secret in one section of a file, kept in another
    neutral_sections: Range  # 1: its scoped secrets sit in sections named by words that say nothing of their role
    policy_exceptions: Range  # secret policy categories stated with an exception
    encodings: Range  # house credentials that reappear base64-encoded in a Kubernetes Secret
    multiline: Range  # invented multi-line key blocks (a secret label beside a public one)
    neutral_block_labels: Range  # 1: a stream's key blocks are named by words that say nothing of their role
    records_shown: Range  # shown records (the n_shown task parameter's default)
    lines_per_record: Range  # filler lines or entries of a record
    decoy_density: Range  # decoy values per held-out record
    quiet_records: Range  # held-out records planned with no secret value, only decoys and filler (per 16)
    static_secrets: Range  # vendor families of the static catalogue (a file for one kind of credential adds its own)
    heldout_coverage: Range  # held-out records each of the stream's own secrets is put in at least (0: as drawn)
    lookalike_coverage: Range  # held-out records each drawn decoy is put in at least (0: as drawn)
    # 1: each key- or section-scoped secret is also tested in a held-out file of a type
    # no shown record shows it in (one the stream shows with other values), where one
    # has room: a rule written for the layouts it was shown in (``key: value``) misses
    # ``KEY="value"`` or a JSON member. A stream then has a second file type that holds
    # section-scoped values where its templates leave room for one (after the files
    # its scoped, encoded and multi-line secrets need).
    layout_coverage: Range
    # 1: a stream with a Kubernetes Secret always draws the configuration such a Secret
    # carries beside its credentials (a user name, a host, a CA certificate: base64 like
    # the password, and kept); drawn as the catalogue's other decoys, it was in a held-out
    # file of 6 of 64 level-5 dev streams, and each model reply given one removed it.
    config_values: Range
    # Prefix length of the stated egress range (the client-address exception): 16 keeps
    # two whole octets; a longer one splits an octet, and the level then states that
    # exception in every stream, with secret addresses just outside the range.
    egress_prefix: Range

    def as_table(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


_BASE = Level(
    house_formats=(1, 3), lookalikes_per_format=(3, 3), lookalike_kinds=("public", "length", "sandbox"),
    length_step=(4, 10), house_placeholders=(0, 0), placeholder_kinds=(1, 1), context_secrets=(1, 2),
    context_lookalikes=(2, 3), affixed_lookalikes=(0, 0), scoped_secrets=(0, 0), neutral_sections=(0, 0),
    policy_exceptions=(0, 0), encodings=(0, 0), multiline=(0, 0),
    neutral_block_labels=(0, 0), records_shown=(8, 8), lines_per_record=(1, 4), decoy_density=(4, 6),
    quiet_records=(4, 5), static_secrets=(2, 3),
    heldout_coverage=(0, 0), lookalike_coverage=(0, 0), layout_coverage=(0, 0), config_values=(0, 0),
    egress_prefix=(16, 16))

LEVEL_1 = _BASE
_ALL_KINDS = ("public", "length", "sandbox", "near", "alphabet")
TABLE: dict[int, Level] = {
    1: LEVEL_1,
    2: replace(_BASE, house_formats=(2, 3), length_step=(2, 4), context_secrets=(2, 2),
               policy_exceptions=(0, 1), lines_per_record=(2, 5), decoy_density=(5, 7), quiet_records=(6, 7)),
    3: replace(_BASE, house_formats=(3, 4), lookalikes_per_format=(3, 4), lookalike_kinds=_ALL_KINDS,
               length_step=(1, 3), house_placeholders=(1, 2), placeholder_kinds=(1, 2), context_secrets=(2, 3),
               context_lookalikes=(3, 4), scoped_secrets=(1, 1),
               policy_exceptions=(1, 2), multiline=(0, 1), lines_per_record=(3, 6), decoy_density=(5, 7),
               quiet_records=(7, 8), static_secrets=(1, 3)),
    4: replace(_BASE, house_formats=(3, 4), lookalikes_per_format=(4, 4), lookalike_kinds=_ALL_KINDS,
               length_step=(1, 2), house_placeholders=(2, 3), placeholder_kinds=(2, 3), context_secrets=(2, 3),
               context_lookalikes=(4, 5), affixed_lookalikes=(1, 1), scoped_secrets=(1, 2),
               policy_exceptions=(1, 2), encodings=(1, 1), multiline=(1, 1), neutral_block_labels=(1, 1),
               lines_per_record=(3, 7), decoy_density=(8, 11), quiet_records=(10, 11), static_secrets=(1, 2),
               heldout_coverage=(1, 1), lookalike_coverage=(3, 3)),
    5: replace(_BASE, house_formats=(5, 6), lookalikes_per_format=(5, 5), lookalike_kinds=_ALL_KINDS,
               length_step=(1, 1), house_placeholders=(4, 5), placeholder_kinds=(3, 4), context_secrets=(4, 5),
               context_lookalikes=(5, 6), affixed_lookalikes=(2, 2), scoped_secrets=(4, 5), neutral_sections=(1, 1),
               policy_exceptions=(1, 2), encodings=(2, 2), multiline=(1, 1), neutral_block_labels=(1, 1),
               lines_per_record=(4, 8), decoy_density=(8, 11), quiet_records=(11, 12), static_secrets=(1, 2),
               heldout_coverage=(1, 1), lookalike_coverage=(3, 3), layout_coverage=(1, 1), config_values=(1, 1),
               egress_prefix=(19, 28)),
}

LEVELS: tuple[int, ...] = tuple(sorted(TABLE))
ATTRIBUTES: tuple[str, ...] = tuple(f.name for f in fields(Level))


def level(n: int) -> Level:
    try:
        return TABLE[n]
    except KeyError:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, got {n!r}") from None
