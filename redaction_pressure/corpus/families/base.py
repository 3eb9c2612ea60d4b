"""The building blocks of the family tables: alphabets, the `Fragment` and `Family`
types, and encoders that give generated values their vendors' real structure (DER
bodies for PEM keys, GitHub's CRC32 suffix, Bech32 for age keys, OpenPGP's CRC-24).

Structure matters because a scanner that checks it (a DER header, a checksum) must
find the corpus's secrets valid, and a learner must see the same regularities that
real leaked keys show.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import regex

from ..rng import Rng

UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DIGITS = "0123456789"
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
PASSWORD = ALNUM + "!%*_-.~"  # no @ : / so it can sit inside a URL's userinfo
GENERIC = ALNUM + "_-.+!#%"

USERS = ("deploy", "admin", "svc_billing", "ci-runner", "app", "root", "grafana", "etl")
# Public-looking service hosts for fragments; internal hostnames and client IPs are
# policy categories (``corpus.policy``), drawn per stream and labelled by its policy.
HOSTS = ("db.acme-prod.net", "pg-primary.acme.io", "mysql.shop.example", "cache-01.acme-cdn.net",
         "git.corp.example", "registry.acme.io")


@dataclass(frozen=True)
class Fragment:
    text: str
    spans: tuple[tuple[int, int], ...]
    key: str | None = None  # set when the value only makes sense under one key
    section: str | None = None  # set when the value belongs in one section of a file


Make = Callable[[Rng, str], Fragment]  # (rng, variant) -> fragment of that variant


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # "secret" | "decoy"
    contexts: frozenset[str]
    keys: tuple[str, ...]
    make: Make
    oracle: tuple[str, ...] = ()
    why: str = ""
    # Shapes a stream may fix for itself (e.g. "ghp" vs "gho" tokens); make(r, v) draws
    # only variant v. A stream shows every variant it uses.
    variants: tuple[str, ...] = ("",)
    # (text, exact secret substring the oracle must remove; "" for none)
    examples: tuple[tuple[str, str], ...] = ()
    negatives: tuple[str, ...] = ()  # near misses: no secret oracle may touch them
    # For an oracle with no literal `regex` can require (a case-insensitive key): words,
    # lowercase, one of which is in every text it matches. The generator skips the
    # oracle on texts with none of them; a test checks the claim on generated records.
    hints: tuple[str, ...] = ()
    # Stronger, for an oracle whose matches never span lines: a regex that matches on
    # every line where the oracle does; the generator runs the oracle on those lines only.
    line_gate: str = ""
    # Stronger still, for an oracle whose hint is the key its lookbehind ends with: every
    # match starts right after a hint and a run of separators (`stream.ANCHOR_SEPARATORS`),
    # so the generator tries the oracle at those positions only.
    hints_anchor: bool = False
    # The class summaries count this family under: a static family's own name ("" means
    # that); a stream's own families name their open-world kind (``house_format``,
    # ``house_key_id``, ``context_secret``, ``email_address``, ...), whose per-stream
    # names mean nothing across tasks.
    group: str = ""
    # Variants that only sit in some of the family's contexts (a Datadog key in a curl
    # header is a whole command line; under DD_API_KEY it is a value): variant -> contexts.
    variant_contexts: tuple[tuple[str, frozenset[str]], ...] = ()

    @property
    def summary_group(self) -> str:
        return self.group or self.name

    def contexts_of(self, variant: str) -> frozenset[str]:
        for name, contexts in self.variant_contexts:
            if name == variant:
                return contexts
        return self.contexts


def whole(text: str, key: str | None = None) -> Fragment:
    return Fragment(text, ((0, len(text)),), key)


def inner(prefix: str, secret: str, suffix: str = "", key: str | None = None) -> Fragment:
    return Fragment(prefix + secret + suffix, ((len(prefix), len(prefix) + len(secret)),), key)


def pick(r: Rng, variant: str, variants: tuple[str, ...]) -> str:
    """The variant to draw: the one asked for, or any when ``variant`` is ""."""
    if variant == "":
        return r.choice(variants)
    if variant not in variants:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(variants)}")
    return variant


def rbytes(r: Rng, n: int) -> bytes:
    # The next 8n bits of the stream, big-endian: the same bytes as r.chars over a
    # 256-symbol alphabet, without a Python step per byte.
    return r._bits(8 * n).to_bytes(n, "big") if n else b""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# What a placeholder body looks like (six equal characters in a row, a run of the
# alphabet) and the words of vendors' documentation examples: a random body holding
# one is drawn again, so real secrets and placeholders never share a shape and the
# oracles (``secrets._real``) can tell them apart.
_PLACEHOLDER_LIKE = regex.compile(r"(.)\1{5}|abcdefgh|ABCDEFGH|01234567|12345678|EXAMPLE|example")


_STD64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_STD32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_TABLES: dict[str, tuple[int, dict[int, int | None]]] = {}


def _table(alphabet: str) -> tuple[int, dict[int, int | None]]:
    """For an alphabet of size <= 2**k: k, and a str.translate table from the encoded
    k-bit symbols (base64, base32, hex or latin-1 digits) to the alphabet, deleting
    symbols past its end (rejection sampling)."""
    hit = _TABLES.get(alphabet)
    if hit is None:
        k = max(1, (len(alphabet) - 1).bit_length())
        digits = {6: _STD64, 5: _STD32, 4: "0123456789abcdef"}.get(k) or "".join(map(chr, range(1 << k)))
        hit = _TABLES[alphabet] = (k, {ord(d): (ord(alphabet[i]) if i < len(alphabet) else None)
                                       for i, d in enumerate(digits)})
    return hit


def _symbols(r: Rng, k: int, m: int) -> str:
    """m draws of k bits each (the next k*m bits of the stream), as encoded symbols."""
    if k == 6:
        return base64.b64encode(rbytes(r, 3 * m // 4)).decode()  # m is a multiple of 4
    if k == 5:
        return base64.b32encode(rbytes(r, 5 * m // 8)).decode()  # m is a multiple of 8
    if k == 4:
        return rbytes(r, m // 2).hex()  # m is even
    if k == 8:
        return rbytes(r, m).decode("latin-1")
    return r.chars("".join(map(chr, range(1 << k))), m)


def fast_chars(r: Rng, alphabet: str, n: int) -> str:
    """``n`` uniform characters of ``alphabet``: batches of k-bit draws encoded at C
    speed (base64, base32, hex), out-of-range draws rejected by str.translate.
    `Rng.chars` takes one Python step per character, which dominated building a task
    once tokens grew to 100-200 characters."""
    k, table = _table(alphabet)
    out = ""
    while len(out) < n:
        m = (n - len(out)) * (1 << k) // len(alphabet) + 2
        m += -m % 8
        out += _symbols(r, k, m).translate(table)
    return out[:n]


def random_body(r: Rng, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` that never look like a placeholder (six equal
    characters, a run of the alphabet, the word EXAMPLE), so decoys and secrets never
    share a value."""
    while True:
        value = fast_chars(r, alphabet, n)
        if not _PLACEHOLDER_LIKE.search(value):
            return value


# --- GitHub's token checksum: CRC32 of the 30 random characters, in base62 (0-9A-Za-z),
# left-padded with 0 to six characters, as GitHub described its 2021 token format.
BASE62 = DIGITS + UPPER + LOWER


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = BASE62[d] + out
    return out.rjust(width, "0")


def github_checksum(body: str) -> str:
    return base62(zlib.crc32(body.encode()), 6)


# --- Bech32 (BIP 173), which age uses for its AGE-SECRET-KEY-1... identities.
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def bech32(hrp: str, data: bytes) -> str:
    acc, bits, words = 0, 0, []
    for byte in data:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            words.append((acc >> bits) & 31)
    if bits:
        words.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = _polymod(expanded + words + [0] * 6) ^ 1
    checksum = [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[w] for w in words + checksum)


def bech32_valid(text: str) -> bool:
    hrp, _, rest = text.lower().rpartition("1")
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    return _polymod(expanded + [BECH32.index(c) for c in rest]) == 1


# --- DER (X.690) for PEM bodies.
def der(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def seq(*items: bytes) -> bytes:
    return der(0x30, b"".join(items))


def der_int(value: bytes) -> bytes:
    """A positive INTEGER from big-endian bytes (a 0 is prepended when the top bit is set)."""
    value = value.lstrip(b"\0") or b"\0"
    return der(0x02, (b"\0" + value) if value[0] & 0x80 else value)


def small_int(n: int) -> bytes:
    return der_int(n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big"))


def oid(dotted: str) -> bytes:
    parts = [int(p) for p in dotted.split(".")]
    out = bytearray([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.append(0x80 | (p & 0x7F))
            p >>= 7
        out.extend(reversed(chunk))
    return der(0x06, bytes(out))


def big(r: Rng, nbytes: int) -> bytes:
    """A random integer of exactly ``nbytes`` bytes (top bit set, like a key modulus)."""
    raw = bytearray(rbytes(r, nbytes))
    raw[0] |= 0x80
    return bytes(raw)


def wrap(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def crc24(data: bytes) -> int:
    """OpenPGP's ASCII-armor checksum (RFC 4880, 6.1)."""
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF
