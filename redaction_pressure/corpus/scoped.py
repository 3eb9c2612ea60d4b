"""Scoped secrets: values secret in one section of a file and not in another.

A stream's own service keeps one key in every environment block of its config files
(``[production]``, ``[staging]``, ``sandbox:``); the value under the production block
is the live credential, the same key's value under any other block reaches a test
environment and is kept. Key, value shape and file are the same: only the section a
value sits in separates the secret from its look-alike, so a rule has to read the
section header before the key. Sections are INI/TOML tables, top-level YAML keys and
(levels-v10) the top-level objects of a JSON config, each a layout of its own that a
rule reading only one of them misses.

From level 5 (``Level.neutral_sections``) the two sections are named by words that say
nothing of their role (``[cobalt]`` beside ``[amber]``): knowing that production is live
earns nothing, only the shown pair says which block holds the credential (as neutral
key-block labels do). A stream splits the names into its live and its test slots once,
and each scoped secret draws one of each, so a section is live for every key or for
none, as a real deployment's environment is.

Every block also holds another key of the same service with a value of the same shape
that is no credential (a public reference): the section alone does not make a value
secret either, nor a key found in two blocks (on levels-v5 every ``service_noun`` value
under a production header was the secret, and a constant rule taking them all was exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from .context import _NOUNS
from .families import Family, Fragment
from .families.base import Make, fast_chars
from .house import ALPHABETS
from .names import new_service_name
from .rng import Rng

SECRET_SECTIONS = ("production", "live", "prod")
OTHER_SECTIONS = ("staging", "sandbox", "test", "preview")
# Role-free names, as deployment slots are named: none is a word of the templates' own
# section pool, and none says live or test (tested).
NEUTRAL_SECTIONS = ("amber", "cobalt", "jade", "slate", "coral", "ivory", "blue", "green", "indigo", "olive",
                    "onyx", "pearl")


@dataclass(frozen=True)
class ScopedSecret:
    service: str
    key: str
    secret_section: str
    other_section: str
    alphabet: str
    char_class: str
    lo: int
    hi: int
    sibling_key: str  # the same service's other key, in both sections: a kept value

    def _maker(self, section: str, key: str = "") -> Make:
        def make(r: Rng, variant: str = "") -> Fragment:
            text = fast_chars(r, self.alphabet, r.between(self.lo, self.hi))
            return Fragment(text, ((0, len(text)),), key=key or self.key, section=section)
        return make

    def pattern(self) -> str:
        """The value under ``key`` in the secret section: an INI/TOML table's header, a
        top-level YAML key or a JSON config's top-level object before it, no other
        section between (a JSON object's members are indented four spaces, its closing
        brace two)."""
        s, k = regex.escape(self.secret_section), regex.escape(self.key)
        return (rf"(?m)(?<=[ =\"'])(?<=(?:^\[{s}\]\n(?:(?!\[)[^\n]*\n)*{k} ?= ?|^{s}:\n(?:  [^\n]*\n)*  {k}: "
                rf"|^  \"{s}\": \{{\n(?:    [^\n]*\n)*    \"{k}\": )[\"']?)"
                rf"{self.char_class}{{{self.lo},{self.hi}}}(?![A-Za-z0-9_-])")

    def families(self) -> tuple[Family, Family, Family, Family]:
        contexts = frozenset({"scoped"})
        secret = Family(self.key, "secret", contexts, (self.key,), self._maker(self.secret_section),
                        oracle=(self.pattern(),), hints=(self.key.lower(),), hints_anchor=True,
                        group="scoped_secret",
                        why=f"the value of {self.key!r} in the [{self.secret_section}] section: the live credential")
        decoy = Family(f"{self.key}_{self.other_section}", "decoy", contexts, (self.key,),
                       self._maker(self.other_section), group="scoped_lookalike",
                       why=f"the value of {self.key!r} in the [{self.other_section}] section reaches a test "
                           f"environment; only the [{self.secret_section}] value is secret")
        siblings = tuple(
            Family(f"{self.sibling_key}_{section}", "decoy", contexts, (self.sibling_key,),
                   self._maker(section, self.sibling_key), group="scoped_sibling",
                   why=f"{self.sibling_key!r} in the [{section}] section: a public reference of the same shape; "
                       f"only {self.key!r} in [{self.secret_section}] is secret")
            for section in (self.secret_section, self.other_section))
        return secret, decoy, siblings[0], siblings[1]


def neutral_slots(r: Rng) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A stream's live and test slots: `NEUTRAL_SECTIONS` shuffled and split in two."""
    names = r.sample(NEUTRAL_SECTIONS, len(NEUTRAL_SECTIONS))
    return tuple(names[:len(names) // 2]), tuple(names[len(names) // 2:])


def draw_scoped_secret(r: Rng, taken: set[str],
                       neutral: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> ScopedSecret:
    """``neutral``: the stream's live and test slots (`neutral_slots`), one of each drawn
    for this secret from a fork, so a stream drawing none keeps its bytes."""
    service = new_service_name(r, taken)
    _, alphabet, char_class = r.choice(ALPHABETS)
    # One length: only the section separates the secret from its look-alike, and every
    # held-out value then has a length the shown ones have.
    length = r.between(18, 30)
    noun = r.choice(_NOUNS)
    secret_section, other_section = r.choice(SECRET_SECTIONS), r.choice(OTHER_SECTIONS)
    sibling = r.choice([n for n in _NOUNS if n != noun])
    if neutral:
        slots = r.fork("neutral")
        secret_section, other_section = slots.choice(neutral[0]), slots.choice(neutral[1])
    return ScopedSecret(service, f"{service}_{noun}", secret_section, other_section, alphabet, char_class,
                        length, length, f"{service}_{sibling}")
