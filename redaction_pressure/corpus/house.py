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

import base64
import os
import zlib
from dataclasses import dataclass, replace

import regex

from .families import Family, Fragment
from .families.base import Make, fast_chars, random_body
from .families.decoys import PLACEHOLDER_KIND_WORDS, PLACEHOLDER_KINDS, fill_placeholder, placeholder_run
from .families.secrets import SEQUENCES
from .levels import Level
from .names import abbreviation, marker, service_name
from .names import ok as name_ok
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
_CHECKSUM_PAIRS = tuple(a + b for a in _CHECKSUM for b in _CHECKSUM)  # 10 bits -> two symbols
# Look-alike kinds, and what each gives way to when a format cannot have it or has it.
_FALLBACK = {"public": ("public", "sandbox", "near", "length"), "sandbox": ("sandbox", "public", "near", "length"),
             "length": ("length", "sandbox", "public", "near"), "near": ("near", "sandbox", "public", "length"),
             "alphabet": ("alphabet", "near", "sandbox", "public", "length")}


@dataclass(frozen=True)
class Shape:
    """One concrete token shape: literal prefix, body alphabet and length, checksum."""
    prefix: str
    alphabet: str
    char_class: str
    length: int
    checksum: str  # "" or the separator before a 6-character CRC-32 suffix
    # The format also appears as placeholders (``Level.house_placeholders``): a body never
    # looks like one, and the oracle leaves every body that does.
    real: bool = False

    def make(self, r: Rng) -> str:
        body = (random_body if self.real else fast_chars)(r, self.alphabet, self.length)
        if self.checksum:  # the CRC-32's low 30 bits, 5 at a time from the top
            crc = zlib.crc32(body.encode())
            return (f"{self.prefix}{body}{self.checksum}{_CHECKSUM_PAIRS[(crc >> 20) & 1023]}"
                    f"{_CHECKSUM_PAIRS[(crc >> 10) & 1023]}{_CHECKSUM_PAIRS[crc & 1023]}")
        return self.prefix + body

    def pattern(self) -> str:
        tail = regex.escape(self.checksum) + "[0-9A-V]{6}" if self.checksum else ""
        cls = self.char_class
        # No placeholder body: six equal characters or a run of the alphabet (as the
        # static families' ``secrets._real``), naming only the runs the body's alphabet
        # can hold (the body's class cannot reach past the body, so the others never match).
        runs = "".join("|" + s for s in SEQUENCES if set(s) <= set(self.alphabet))
        real = f"(?!{cls}*?(?:({cls})\\1{{5}}{runs}))" if self.real else ""
        return f"{_GUARD_BEFORE}{regex.escape(self.prefix)}{real}{cls}{{{self.length}}}{tail}{_GUARD_AFTER}"

    def placeholder(self, run: str) -> str:
        """This shape's prefix and length (and checksum separator) with a placeholder body
        written by cycling ``run`` (``decoys.placeholder_run``)."""
        tail = self.checksum + "#" * 6 if self.checksum else ""
        return self.prefix + fill_placeholder("#" * self.length + tail, run)


@dataclass(frozen=True)
class HouseFormat:
    service: str
    keys: tuple[str, ...]
    secret: Shape
    lookalikes: tuple[tuple[str, Shape, str], ...]  # (family name, shape, why)
    placeholders: tuple[tuple[str, str], ...] = ()  # (kind, the placeholder's text), from level 3
    # (look-alike family name, kind, text): placeholders of the look-alikes' own shapes,
    # as a sample config holds a key id's placeholder beside the key's
    lookalike_placeholders: tuple[tuple[str, str, str], ...] = ()

    def families(self) -> tuple[Family, list[Family]]:
        secret = Family(f"{self.service}_api_key", "secret", frozenset({"kv"}), self.keys,
                        _maker(self.secret), oracle=(self.secret.pattern(),),
                        why=f"the credential of the stream's in-house service {self.service!r}",
                        group="house_format")
        decoys = [Family(name, "decoy", frozenset({"kv"}), self.keys, _maker(shape), why=why,
                         group="house_" + name.removeprefix(self.service + "_"))
                  for name, shape, why in self.lookalikes]
        decoys += [Family(f"{self.service}_placeholder_{kind}", "decoy", frozenset({"kv"}), self.keys,
                          _fixed(text), group="house_placeholder",
                          why=f"a placeholder of the {self.service} credential: its prefix and length with a body "
                              f"{PLACEHOLDER_KIND_WORDS[kind]}, as templates and .env.example files write it; "
                              "it authenticates nothing")
                   for kind, text in self.placeholders]
        decoys += [Family(f"{name}_placeholder_{kind}", "decoy", frozenset({"kv"}), self.keys, _fixed(text),
                          group="house_lookalike_placeholder",
                          why=f"a placeholder of a {self.service} look-alike ({name.removeprefix(self.service + '_')}"
                              "): its prefix and length with a placeholder body; it authenticates nothing")
                   for name, kind, text in self.lookalike_placeholders]
        return secret, decoys


# The look-alikes whose placeholders a sample config holds: another marker (a client id,
# a sandbox key) and another length (a key id).
_PLACEHELD_LOOKALIKES = ("client_id", "sandbox_key", "key_id")


def with_placeholders(house: HouseFormat, r: Rng, kinds: int) -> HouseFormat:
    """``house`` with ``kinds`` placeholder kinds, each one text drawn once (a template's
    line is copied, not rewritten), and a credential whose body never looks like one."""
    secret = replace(house.secret, real=True)
    drawn = tuple((kind, secret.placeholder(placeholder_run(r, kind, secret.alphabet)))
                  for kind in r.sample(PLACEHOLDER_KINDS, min(kinds, len(PLACEHOLDER_KINDS))))
    # The look-alikes' placeholders too (one each, of a kind drawn): on levels-v6 only the
    # credential had placeholders, so a placeholder gave away its exact marker and length,
    # and a constant reply dropped every value of its record with another marker or length
    # (the look-alikes) and kept the credential.
    others = tuple((name, kind, shape.placeholder(placeholder_run(r, kind, shape.alphabet)))
                   for name, shape, _ in house.lookalikes
                   if name.removeprefix(house.service + "_") in _PLACEHELD_LOOKALIKES
                   for kind in (r.choice(PLACEHOLDER_KINDS),))
    return replace(house, secret=secret, placeholders=drawn, lookalike_placeholders=others)


def _encoded_maker(shape: Shape, key: str) -> Make:
    def make(r: Rng, variant: str = "") -> Fragment:
        text = base64.b64encode(shape.make(r).encode()).decode()
        return Fragment(text, ((0, len(text)),), key=key)
    return make


# The words of a Kubernetes Secret's data keys for a service's encoded credential and its
# encoded look-alike (``{service}-{word}-credential``), two drawn per stream: which word
# holds the credential is the stream's, so no key name tells them apart, only the value.
ENCODING_WORDS = ("primary", "secondary", "blue", "green", "current", "next", "main", "alt")


def encoding_keys(house: HouseFormat, r: Rng) -> tuple[str, str]:
    """The data keys of ``house``'s encoded credential and of its encoded look-alike."""
    secret, kept = r.sample(ENCODING_WORDS, 2)
    return f"{house.service}-{secret}-credential", f"{house.service}-{kept}-credential"


def _encoding(shape: Shape) -> tuple[str, int]:
    """What the encoded oracle reads of a shape: the base64 of its prefix up to a multiple
    of 3 characters (which no body changes), and its total length."""
    total = len(shape.prefix) + shape.length + (len(shape.checksum) + 6 if shape.checksum else 0)
    return base64.b64encode(shape.prefix[:len(shape.prefix) // 3 * 3].encode()).decode(), total


def encoding_ends(shape: Shape) -> tuple[int, int]:
    """How many leading and trailing characters every base64 encoding of the shape
    shares. Base64 packs bits across characters, so nothing in an encoding marks where
    its fixed part ends: a reader who copies the common ends of the shown encodings is
    right only if the shown ones differ just past them (`stream` draws them so). The
    first body character decides the first character that varies (the rest of the body
    comes after it), and the last one, of the body or the checksum, the last."""
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    fill = shape.alphabet[0]
    check = shape.checksum + "0" * 6 if shape.checksum else ""
    heads = [b64(shape.prefix + c + fill * (shape.length - 1) + check) for c in shape.alphabet]
    if shape.checksum:
        ends = [b64(shape.prefix + fill * shape.length + check[:-1] + c) for c in _CHECKSUM]
    else:
        ends = [b64(shape.prefix + fill * (shape.length - 1) + c) for c in shape.alphabet]
    return _shared(heads), _shared([e[::-1] for e in ends])


def _shared(texts: list[str]) -> int:
    return len(os.path.commonprefix(texts))  # noqa: RUF071 - texts, not paths: their common start


def encoded_family(house: HouseFormat, key: str) -> Family:
    """The credential as it reappears base64-encoded under ``data:`` of a Kubernetes
    Secret (under ``key``, `encoding_keys`). Base64 turns each 3 bytes into 4 characters, so
    the encoding of the credential's fixed prefix, up to a multiple of 3, is fixed too,
    and a fixed-length credential has a fixed-length encoding: that is its oracle."""
    shape = house.secret
    head, total = _encoding(shape)
    pad = (3 - total % 3) % 3
    middle = 4 * -(-total // 3) - len(head) - pad
    pattern = (rf"(?<![A-Za-z0-9+/]){regex.escape(head)}[A-Za-z0-9+/]{{{middle}}}{'=' * pad}"
               r"(?![A-Za-z0-9+/=])")

    return Family(f"{house.service}_credential_data", "secret", frozenset({"k8s"}), (key,),
                  _encoded_maker(shape, key), oracle=(pattern,), group="house_format_base64",
                  why=f"the {house.service} credential, base64-encoded in a Kubernetes Secret: encoding hides nothing")


# Which look-alike of a format a test environment's Secret holds beside the encoded
# credential, in order of preference: the one a test environment would be given.
_ENCODED_LOOKALIKES = ("sandbox_key", "key_id", "client_id", "preview_key", "webhook_id")


def encoded_lookalike(house: HouseFormat, key: str) -> Family | None:
    """A look-alike of the credential, base64-encoded under a data key of the same form
    (``key``, `encoding_keys`), as a Secret for a test environment holds the sandbox key:
    on levels-v5 every value under a ``-credential`` key was the secret, so a constant
    rule taking them all was exact. Only a look-alike the encoded oracle cannot take
    qualifies (another encoded prefix, or another length): encoding keeps the prefix's
    difference, so the shown pair tells them apart as the plain pair does. None when no
    look-alike of the format qualifies."""
    head, total = _encoding(house.secret)
    fixed = len(house.secret.prefix) // 3 * 3
    shapes = {name.removeprefix(house.service + "_"): (name, shape) for name, shape, _ in house.lookalikes}
    for kind in _ENCODED_LOOKALIKES:
        if kind not in shapes:
            continue
        name, shape = shapes[kind]
        # The oracle takes an encoding of the credential's length that starts with its
        # head: a look-alike whose prefix is shorter than the head's part may too.
        same_head = len(shape.prefix) < fixed or base64.b64encode(shape.prefix[:fixed].encode()).decode() == head
        if _encoding(shape)[1] == total and same_head:
            continue
        return Family(f"{name}_data", "decoy", frozenset({"k8s"}), (key,), _encoded_maker(shape, key),
                      group="house_format_base64_lookalike",
                      why=f"a {house.service} look-alike ({kind.replace('_', ' ')}), base64-encoded under a "
                          "key of the credential's form, as a test environment's Secret holds it: encoding "
                          "makes it no credential")
    return None


def _fixed(text: str) -> Make:
    fragment = Fragment(text, ((0, len(text)),))  # immutable: one for every record

    def make(r: Rng, variant: str = "") -> Fragment:
        return fragment
    return make


def _maker(shape: Shape) -> Make:
    def make(r: Rng, variant: str = "") -> Fragment:
        text = shape.make(r)
        return Fragment(text, ((0, len(text)),))
    return make


def _one_letter_away(r: Rng, word: str, avoid: tuple[str, ...]) -> str | None:
    """A marker that differs from ``word`` in one letter (a consonant for a consonant,
    a vowel for a vowel), not in ``avoid``; None if every such word is taken."""
    options = []
    for i, c in enumerate(word):
        pool = "aeiou" if c in "aeiou" else "bcdfghjklmnpqrstvwxz"
        options += [word[:i] + o + word[i + 1:] for o in pool if o != c]
    options = [w for w in options if name_ok(w) and w not in avoid]
    return r.choice(options) if options else None


def draw_house_format(r: Rng, taken: set[str], lv: Level) -> HouseFormat:
    """Draws one service and its format; ``taken`` holds prefixes already in use in
    this stream, so two services never share one. ``lv`` says how many look-alikes the
    format gets and how close they come: a key id ``length_step`` characters longer or
    shorter, a marker one letter away, the same length in another alphabet."""
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
    alphabet_index = r.below(len(ALPHABETS))
    _, alphabet, char_class = ALPHABETS[alphabet_index]
    length = r.between(16, 44)
    checksum = r.choice(_SEPARATORS) if r.chance(1, 3) else ""
    secret = Shape(prefix, alphabet, char_class, length, checksum)
    keys = tuple(f"{service}_{w}" for w in r.sample(_KEY_WORDS, 2))
    lookalikes: list[tuple[str, Shape, str]] = []
    used: tuple[str, ...] = (secret_marker,)
    others = [a for a in ALPHABETS if not set(a[1]) <= set(alphabet)]
    done: list[str] = []
    for drawn in r.sample(lv.lookalike_kinds, r.between(*lv.lookalikes_per_format)):
        # a kind this format cannot have (another alphabet beside base62), or has already,
        # gives way to the next one
        kind = next((k for k in _FALLBACK[drawn] if k not in done and (k != "alphabet" or others)), None)
        if kind is None:  # every kind this format can have, it has
            continue
        done.append(kind)
        if kind == "length":
            step = r.between(*lv.length_step)
            delta = step * (1 if r.chance(1, 2) or length - lv.length_step[1] < 12 else -1)
            shape = Shape(prefix, alphabet, char_class, length + delta, checksum)
            why = (f"a {service} key id: the same prefix but {length + delta} body characters, "
                   f"where the stream's credentials have {length}; it names a key and grants nothing")
            lookalikes.append((f"{service}_key_id", shape, why))
        elif kind == "alphabet":  # characters the credential's alphabet lacks: hex beside base32
            _, other_alphabet, other_class = r.choice(others)
            shape = Shape(prefix, other_alphabet, other_class, length, checksum)
            why = (f"a {service} webhook id: the credential's prefix and length, but its body is "
                   f"{other_class} where credentials are {char_class}; it names a webhook and grants nothing")
            lookalikes.append((f"{service}_webhook_id", shape, why))
        elif kind == "near":
            near = _one_letter_away(r, secret_marker, used)
            assert near is not None  # a 2-4 letter marker has dozens of neighbours
            used += (near,)
            shape = Shape(f"{abbr}{sep}{near}{sep}", alphabet, char_class, length, checksum)
            why = (f"a {service} preview key (marker {near!r}, one letter from {secret_marker!r}): it reaches "
                   "only the service's preview environment, which this stream does not treat as secret")
            lookalikes.append((f"{service}_preview_key", shape, why))
        else:
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
