"""House formats: credential formats of a stream's own services, invented per seed.

Each stream runs one to three in-house services whose keys follow a format drawn from
the seed: prefix (service abbreviation, separator, a meaningless marker), body
alphabet and exact length, and an optional checksum suffix. Beside each format live
look-alikes of the same service that are not secret and differ from it only in the
marker, the body length, or both; they sit under the very same keys. So no memorised
rule can tell the secret from its look-alike: only the shown records say which marker
and which length is the credential.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import regex

from .families import Family, Fragment
from .families.base import Make, fast_chars
from .names import abbreviation, marker, service_name
from .rng import Rng

# (name, alphabet, character class); every alphabet is a subset of [A-Za-z0-9_-].
ALPHABETS = (
    ("lower hex", "0123456789abcdef", "[0-9a-f]"),
    ("upper hex", "0123456789ABCDEF", "[0-9A-F]"),
    ("base32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "[A-Z2-7]"),
    ("lower alphanumeric", "abcdefghijklmnopqrstuvwxyz0123456789", "[a-z0-9]"),
    ("base62", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "[A-Za-z0-9]"),
)
_SEPARATORS = ("_", "-", ".")
_KEY_WORDS = ("key", "token", "credential", "access", "apikey", "client", "signing", "service")
_GUARD_BEFORE = r"(?<![A-Za-z0-9_.-])"
_GUARD_AFTER = r"(?![A-Za-z0-9_-])"
_CHECKSUM = "0123456789ABCDEFGHIJKLMNOPQRSTUV"


@dataclass(frozen=True)
class Shape:
    """One concrete token shape: literal prefix, body alphabet and length, checksum."""
    prefix: str
    alphabet: str
    char_class: str
    length: int
    checksum: str  # "" or the separator before a 6-character CRC-32 suffix

    def make(self, r: Rng) -> str:
        body = fast_chars(r, self.alphabet, self.length)
        if self.checksum:
            crc = zlib.crc32(body.encode())
            body += self.checksum + "".join(_CHECKSUM[(crc >> (5 * i)) & 31] for i in range(5, -1, -1))
        return self.prefix + body

    def pattern(self) -> str:
        tail = regex.escape(self.checksum) + "[0-9A-V]{6}" if self.checksum else ""
        return f"{_GUARD_BEFORE}{regex.escape(self.prefix)}{self.char_class}{{{self.length}}}{tail}{_GUARD_AFTER}"


@dataclass(frozen=True)
class HouseFormat:
    service: str
    keys: tuple[str, ...]
    secret: Shape
    lookalikes: tuple[tuple[str, Shape, str], ...]  # (family name, shape, why)

    def families(self) -> tuple[Family, list[Family]]:
        secret = Family(f"{self.service}_api_key", "secret", frozenset({"kv"}), self.keys,
                        _maker(self.secret), oracle=(self.secret.pattern(),),
                        why=f"the credential of the stream's in-house service {self.service!r}",
                        group="house_format")
        decoys = [Family(name, "decoy", frozenset({"kv"}), self.keys, _maker(shape), why=why,
                         group="house_" + name.removeprefix(self.service + "_"))
                  for name, shape, why in self.lookalikes]
        return secret, decoys


def _maker(shape: Shape) -> Make:
    def make(r: Rng, variant: str = "") -> Fragment:
        text = shape.make(r)
        return Fragment(text, ((0, len(text)),))
    return make


def draw_house_format(r: Rng, taken: set[str]) -> HouseFormat:
    """Draws one service and its format; ``taken`` holds prefixes already in use in
    this stream, so two services never share one."""
    while True:
        service = service_name(r)
        abbr = abbreviation(service, r)
        if r.chance(1, 3):
            abbr = abbr.upper()
        sep = r.choice(_SEPARATORS)
        secret_marker = marker(r)
        prefix = f"{abbr}{sep}{secret_marker}{sep}"
        if prefix not in taken and not any(p.startswith(prefix) or prefix.startswith(p) for p in taken):
            break
    _, alphabet, char_class = r.choice(ALPHABETS)
    length = r.between(16, 44)
    checksum = r.choice(_SEPARATORS) if r.chance(1, 3) else ""
    secret = Shape(prefix, alphabet, char_class, length, checksum)
    keys = tuple(f"{service}_{w}" for w in r.sample(_KEY_WORDS, 2))
    lookalikes: list[tuple[str, Shape, str]] = []
    kinds = r.sample(("public", "length", "sandbox"), r.between(2, 3))
    used: tuple[str, ...] = (secret_marker,)
    for kind in kinds:
        if kind == "length":
            delta = r.between(4, 10) * (1 if r.chance(1, 2) or length - 10 < 12 else -1)
            shape = Shape(prefix, alphabet, char_class, length + delta, checksum)
            why = (f"a {service} key id: the same prefix but {length + delta} body characters, "
                   f"where the stream's credentials have {length}; it names a key and grants nothing")
            lookalikes.append((f"{service}_key_id", shape, why))
            continue
        other = marker(r, used)
        used += (other,)
        shape = Shape(f"{abbr}{sep}{other}{sep}", alphabet, char_class, length, checksum)
        if kind == "public":
            why = (f"a {service} publishable client id (marker {other!r}, not {secret_marker!r}): "
                   "shipped to browsers by design, grants nothing")
            lookalikes.append((f"{service}_client_id", shape, why))
        else:
            why = (f"a {service} sandbox key (marker {other!r}): it reaches only the service's "
                   "local emulator, so this stream does not treat it as secret")
            lookalikes.append((f"{service}_sandbox_key", shape, why))
    return HouseFormat(service, keys, secret, tuple(lookalikes))
