"""The building blocks of the family tables: alphabets, the `Fragment` and `Family`
types, and encoders that give generated values their vendors' real structure (DER
bodies for PEM keys, GitHub's CRC32 suffix, Bech32 for age keys, OpenPGP's packets and
CRC-24, PyPI's macaroons), and real keys and certificates that load with OpenSSL (and
GnuPG).

Structure matters because a scanner that checks it (a DER header, a checksum) must
find the corpus's secrets valid, and a learner must see the same regularities that
real leaked keys show.
"""

from __future__ import annotations

import base64
import datetime
import functools
import math
import operator
import re
import zlib
from binascii import b2a_base64
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.x509.oid import NameOID

from ..rng import Rng, byte_per_draw
from .primes import pick_pair

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

    def __init__(self, text: str, spans: tuple[tuple[int, int], ...], key: str | None = None,
                 section: str | None = None) -> None:
        # The generated frozen __init__ sets each field through object.__setattr__,
        # twice this one's cost, and every family value is a Fragment: the fields go
        # into the instance's dict directly (frozen after, as before).
        fields = self.__dict__
        fields["text"] = text
        fields["spans"] = spans
        fields["key"] = key
        fields["section"] = section


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
# (`re`: the same matches, a quarter of `regex`'s cost on a 40-character body)
DIGITS_36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_PLACEHOLDER_LIKE = re.compile(r"(.)\1{5}|abcdefgh|ABCDEFGH|01234567|12345678|EXAMPLE|example")


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


_BYTE_TABLES: dict[str, tuple[int, bytes, bytes] | None] = {}


def _byte_table(alphabet: str) -> tuple[int, bytes, bytes] | None:
    """For `fast_chars`: k, a bytes.translate table from its k-bit symbols (base64 or
    hex digits for k = 6 or 4, else a byte per draw) to the alphabet, and the symbols
    past the alphabet's end (deleted: rejection sampling); None for an alphabet beyond
    latin-1 (then `_table` does it on str)."""
    if alphabet in _BYTE_TABLES:
        return _BYTE_TABLES[alphabet]
    hit = None
    if all(ord(c) < 256 for c in alphabet):
        k = max(1, (len(alphabet) - 1).bit_length())
        symbols = {6: _STD64.encode(), 4: b"0123456789abcdef"}.get(k) or bytes(range(1 << k))
        mapped = bytearray(range(256))
        for i, c in enumerate(alphabet):
            mapped[symbols[i]] = ord(c)
        hit = (k, bytes(mapped), symbols[len(alphabet):])
    _BYTE_TABLES[alphabet] = hit
    return hit


def fast_chars(r: Rng, alphabet: str, n: int) -> str:
    """``n`` uniform characters of ``alphabet``: batches of k-bit draws encoded at C
    speed (base64, hex, or a byte per draw), out-of-range draws rejected by
    bytes.translate. `Rng.chars` takes one Python step per character, which dominated
    building a task once tokens grew to 100-200 characters."""
    byte_table = _byte_table(alphabet)
    if byte_table is None:
        k, table = _table(alphabet)
        out = ""
        while len(out) < n:
            m = (n - len(out)) * (1 << k) // len(alphabet) + 2
            m += -m % 8
            out += _symbols(r, k, m).translate(table)
        return out[:n]
    k, mapped, deleted = byte_table
    size = len(alphabet)
    drawn = b""
    while len(drawn) < n:
        m = (n - len(drawn)) * (1 << k) // size + 2
        m += -m % 8
        # the next k*m bits as `_symbols` writes them, as bytes: bytes.translate maps and
        # deletes at C speed, where str.translate looks each character up in a dict
        if k == 6:
            symbols = b2a_base64(r._bits(6 * m).to_bytes(3 * m // 4, "big"), newline=False)
        elif k == 4:
            symbols = b"%0*x" % (m, r._bits(4 * m))
        else:
            symbols = byte_per_draw(r._bits(k * m), k, m)
        drawn += symbols.translate(mapped, deleted)
    return drawn[:n].decode("latin-1")


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


def looks_like_placeholder(value: str) -> bool:
    """Whether ``value`` holds what placeholder bodies are written with (no real secret
    of the corpus does)."""
    return _PLACEHOLDER_LIKE.search(value) is not None


def random_b64url(r: Rng, n: int, tail: bytes = b"") -> str:
    """``n`` random bytes (then ``tail``) as unpadded base64url (a signature, a token's
    payload): canonical, so its last character carries only the bits left; the random
    bytes drawn again if it looks like a placeholder."""
    while True:
        value = b64url(rbytes(r, n) + tail)
        if not looks_like_placeholder(value):
            return value


def base36(n: int) -> str:
    """As Ruby's Integer#to_s(36) writes it: 0-9 then a-z, no padding."""
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = DIGITS_36[d] + out
        if not n:
            return out


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


_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
# What BIP 173's inner loop XORs in for each value of the top five bits (the generators
# of its set bits), looked up instead of tested bit by bit.
_GEN_BY_TOP = tuple(functools.reduce(operator.xor, (g for i, g in enumerate(_GEN) if top >> i & 1), 0)
                    for top in range(32))


def _polymod(values: list[int]) -> int:
    chk = 1
    for v in values:
        chk = (chk & 0x1FFFFFF) << 5 ^ v ^ _GEN_BY_TOP[chk >> 25]
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


@cache  # a key's algorithm identifiers are the same few strings, encoded again per record
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


def pem_text(label: str, der_bytes: bytes, width: int = 64) -> str:
    return f"-----BEGIN {label}-----\n{wrap(b64(der_bytes), width)}\n-----END {label}-----"


def big(r: Rng, nbytes: int) -> bytes:
    """A random integer of exactly ``nbytes`` bytes (top bit set, like a key modulus)."""
    raw = bytearray(rbytes(r, nbytes))
    raw[0] |= 0x80
    return bytes(raw)


def wrap(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def _crc24_step(crc: int) -> int:
    """Eight of RFC 4880's bit steps on a 24-bit register whose top byte was XORed in."""
    for _ in range(8):
        crc <<= 1
        if crc & 0x1000000:
            crc ^= 0x1864CFB
    return crc & 0xFFFFFF


# The register after RFC 4880's eight bit steps for each value of its top byte (the
# steps are linear, and its low 16 bits only shift up): a lookup per byte, not 8 steps.
_CRC24_TABLE = tuple(_crc24_step(top << 16) for top in range(256))


def crc24(data: bytes) -> int:
    """OpenPGP's ASCII-armor checksum (RFC 4880, 6.1)."""
    crc = 0xB704CE
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFF) ^ _CRC24_TABLE[(crc >> 16) ^ byte]
    return crc


def pgp_armor(label: str, data: bytes) -> str:
    """OpenPGP ASCII armor (RFC 4880, 6.2): the header line, a blank line (no headers),
    the base64 body in 64 columns, and ``=`` and the base64 of the body's CRC-24."""
    crc = b64(crc24(data).to_bytes(3, "big"))
    return f"-----BEGIN PGP {label}-----\n\n{wrap(b64(data), 64)}\n={crc}\n-----END PGP {label}-----"


def pgp_packet(tag: int, body: bytes) -> bytes:
    """An OpenPGP packet with an old-format header (RFC 4880, 4.2.1), as GnuPG writes
    keys: 10, the tag in four bits, then a one- or two-octet length."""
    if len(body) < 0x100:
        return bytes([0x80 | tag << 2, len(body)]) + body
    return bytes([0x80 | tag << 2 | 1]) + len(body).to_bytes(2, "big") + body


def mpi(value: bytes) -> bytes:
    """An OpenPGP multiprecision integer (RFC 4880, 3.2): the value's length in bits,
    counted from its most significant set bit, in two octets, then its octets with no
    leading zeros."""
    n = int.from_bytes(value, "big")
    return n.bit_length().to_bytes(2, "big") + n.to_bytes((n.bit_length() + 7) // 8, "big")


# --- Real keys and certificates, every byte drawn from the record's `Rng`, so a value
# loads with the vendor's own tools (OpenSSL, ssh-keygen) and the corpus stays
# byte-identical on every machine: RSA moduli are products of two primes of a fixed pool
# (`primes`), EC and Ed25519 keys are derived from drawn scalars and seeds, and
# certificates are signed with Ed25519, whose signatures are deterministic (ECDSA and
# RSA-PSS signing draw randomness inside OpenSSL and are never used here).
RSA_E = 65537
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | Ed25519PublicKey


def rsa_private_der(r: Rng) -> bytes:
    """A PKCS#1 RSAPrivateKey (2048 bits, e = 65537) of two distinct primes of the pool,
    d = e^-1 mod lcm(p-1, q-1) and its CRT values, in DER: the bytes OpenSSL writes for
    the same numbers (a test compares them with `cryptography`'s serialisation), built
    here because making an OpenSSL key object for them costs twice as much."""
    p, q = pick_pair(r)
    # `cryptography`'s rsa_recover_private_exponent(e, p, q): the inverse of e modulo
    # lcm(p-1, q-1), by pow in C (it runs Euclid's algorithm step by step in Python)
    d = pow(RSA_E, -1, math.lcm(p - 1, q - 1))
    return seq(*(small_int(x) for x in (0, p * q, RSA_E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))))


def ec_p256_key(r: Rng) -> ec.EllipticCurvePrivateKey:
    return ec.derive_private_key(1 + r.below(_P256_ORDER - 1), ec.SECP256R1())


def ed25519_key(r: Rng) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(rbytes(r, 32))


PUBLIC_KEY_KINDS = ("rsa", "ec", "ed25519")


def public_key(r: Rng, kind: str) -> PublicKey:
    if kind == "rsa":
        p, q = pick_pair(r)
        return rsa.RSAPublicNumbers(RSA_E, p * q).public_key()
    return (ec_p256_key(r) if kind == "ec" else ed25519_key(r)).public_key()


def public_der(key: PublicKey, pkcs1: bool = False) -> bytes:
    """A public key's SubjectPublicKeyInfo ("PUBLIC KEY"), or its PKCS#1 RSAPublicKey
    ("RSA PUBLIC KEY")."""
    return key.public_bytes(Encoding.DER, PublicFormat.PKCS1 if pkcs1 else PublicFormat.SubjectPublicKeyInfo)


CERT_ORGS = ("Acme Corp", "Acme Payments Ltd", "Shop Example Inc", "Ledger Systems GmbH", "Internal Platform")


def certificate_der(r: Rng, key_kind: str | None = None) -> bytes:
    """An X.509 v3 certificate in DER: a CA's (self-signed, Ed25519) or a server's (an
    RSA, P-256 or Ed25519 key, for one of `HOSTS`, issued by an Ed25519 CA); serial,
    names and validity drawn from ``r``."""
    org = r.choice(CERT_ORGS)
    ca_key = ed25519_key(r)
    ca_cn = f"{org} {r.choice(('Root CA', 'Internal CA', 'Issuing CA 1'))}"
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                         x509.NameAttribute(NameOID.COMMON_NAME, ca_cn)])
    start = datetime.datetime(2021 + r.below(5), 1 + r.below(12), 1 + r.below(28), r.below(24), r.below(60),
                              r.below(60), tzinfo=datetime.UTC)
    days = r.choice((90, 365, 397, 730, 3650))
    serial = int.from_bytes(rbytes(r, 16), "big") >> 1 | 1 << 126  # 127 bits: 16 bytes of DER
    kind = key_kind or r.choice(("ca", *PUBLIC_KEY_KINDS))
    builder = x509.CertificateBuilder().issuer_name(ca_name).serial_number(serial) \
        .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
    subject_key: PublicKey
    if kind == "ca":
        subject_key = ca_key.public_key()
        builder = builder.subject_name(ca_name).add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
    else:
        host = r.choice(HOSTS)
        subject_key = public_key(r, kind)
        builder = builder.subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                                                  x509.NameAttribute(NameOID.COMMON_NAME, host)])) \
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), True) \
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), False)
    builder = builder.public_key(subject_key) \
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(subject_key), False)
    return builder.sign(ca_key, None).public_bytes(Encoding.DER)


def ssh_ed25519_public(r: Rng) -> str:
    """An OpenSSH public key line's first two fields, ``ssh-ed25519 AAAA...``."""
    return ed25519_key(r).public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()


# --- libmacaroons' v2 binary format, which PyPI's API tokens are (pypi- and its
# unpadded urlsafe base64): a version byte 2; fields of (type varint, length varint,
# data); the header's LOCATION (1) and IDENTIFIER (2) and an end of section (0); each
# first-party caveat as an IDENTIFIER and an end of section; an end of section closing
# the caveats; and the 32-byte SIGNATURE (6).
MACAROON_LOCATION, MACAROON_IDENTIFIER, MACAROON_SIGNATURE, MACAROON_EOS = 1, 2, 6, b"\x00"


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def macaroon_field(kind: int, data: bytes) -> bytes:
    return varint(kind) + varint(len(data)) + data


def macaroon_v2(location: bytes, identifier: bytes, caveats: list[bytes], signature: bytes) -> bytes:
    return (b"\x02" + macaroon_field(MACAROON_LOCATION, location) + macaroon_field(MACAROON_IDENTIFIER, identifier)
            + MACAROON_EOS + b"".join(macaroon_field(MACAROON_IDENTIFIER, c) + MACAROON_EOS for c in caveats)
            + MACAROON_EOS + macaroon_field(MACAROON_SIGNATURE, signature))


def uuid4_text(r: Rng) -> str:
    """A version-4 UUID as text, from 16 bytes of ``r``."""
    raw = bytearray(rbytes(r, 16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
