"""Invented names for a stream's own services, keys and markers.

A stream's house formats and context keys must be unknowable without its shown
records, so their names are drawn from the seed, not from a list a model could learn:
pronounceable syllables give about 10^5 service names and 10^3 short markers.
Names that would read as a known vendor or a secret keyword are drawn again, so an
invented key never collides with the static families' keyword contexts.
"""

from __future__ import annotations

import re

from .rng import Rng

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "dr", "fl", "gr", "kr", "pl", "st", "tr", "vr", "sk", "sn", "qu")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "", "n", "r", "x", "l", "s", "m", "k")
_CONSONANTS = "bcdfghjklmnpqrstvwxz"

# Substrings an invented name must not contain: secret keywords that the static
# families' context rules key on, and the prefixes of real vendors' formats.
_AVOID = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "priv", "sk", "pk", "rk",
          "api", "aws", "akia", "gh", "glpat", "xox", "npm", "pypi", "hf", "sig", "jwt",
          "live", "test", "sess", "cookie", "bearer", "basic", "salt", "pin", "otp", "ssh")


_AVOIDED = re.compile("|".join(map(re.escape, _AVOID)))


def ok(name: str) -> bool:
    """Whether an invented word reads as no vendor and no secret keyword."""
    return _AVOIDED.search(name) is None


def service_name(r: Rng) -> str:
    """A pronounceable invented word of two or three syllables, e.g. ``vorlex``."""
    while True:
        parts = [r.choice(_ONSETS) + r.choice(_VOWELS) for _ in range(r.between(2, 3))]
        name = "".join(parts) + r.choice(_CODAS)
        if 5 <= len(name) <= 10 and ok(name):
            return name


def new_service_name(r: Rng, taken: set[str]) -> str:
    """A service name no other service of the stream has."""
    while True:
        name = service_name(r)
        if name not in taken:
            return name


def marker(r: Rng, avoid: tuple[str, ...] = ()) -> str:
    """A short meaningless infix (2 to 4 letters) such as ``qe`` or ``tvor``: which
    infix marks the credential is a fact of the stream, not of the world."""
    while True:
        n = r.between(2, 4)
        word = "".join(r.choice(_CONSONANTS) if i % 2 == 0 else r.choice("aeiou") for i in range(n))
        if ok(word) and word not in avoid and not any(word.startswith(a) or a.startswith(word) for a in avoid):
            return word


def abbreviation(name: str, r: Rng) -> str:
    """Two to four letters taken from the service name, in order (``vorlex`` -> ``vx``)."""
    rest = [c for c in name[1:] if c in _CONSONANTS]
    n = min(len(rest), r.between(1, 3))
    abbr = name[0] + "".join(rest[i] for i in sorted(r.sample(range(len(rest)), n)))
    return abbr if ok(abbr) and len(abbr) >= 2 else name[:3]
