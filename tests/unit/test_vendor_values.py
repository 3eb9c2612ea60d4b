"""Values that claim a vendor's format pass that vendor's own checks: private keys load
with `cryptography` (OpenSSL), public keys and certificates load, OpenSSH public key
lines parse, PyPI tokens are whole v2 macaroons; every one is drawn from the corpus's
`Rng` alone (same seed, same bytes); the RSA prime pool holds probable primes and is the
output of its documented procedure."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from redaction_pressure.corpus.families import FAMILIES, primes
from redaction_pressure.corpus.rng import Rng

POOL = frozenset(primes.RSA_PRIMES)
FULL_CHECKS = 4  # RSA keys per variant loaded with OpenSSL's full key check (~80 ms each)


def values(name: str, variant: str, n: int, label: str = "vendor") -> list[str]:
    r = Rng(f"{label}/{name}/{variant}", 0)
    return [FAMILIES[name].make(r, variant).text for _ in range(n)]


def pem_der(pem: str) -> bytes:
    lines = pem.strip().split("\n")
    return base64.b64decode("".join(lines[1:-1]), validate=True)


class PrivateKeys(unittest.TestCase):
    def check_rsa(self, key: rsa.RSAPrivateKey, der: bytes, pkcs8: bool) -> None:
        numbers = key.private_numbers()
        p, q, n = numbers.p, numbers.q, numbers.public_numbers.n
        self.assertEqual(n, p * q)
        self.assertIn(p, POOL)
        self.assertIn(q, POOL)
        self.assertNotEqual(p, q)
        self.assertEqual((n.bit_length(), numbers.public_numbers.e), (2048, 65537))
        self.assertEqual(numbers.d * 65537 % math.lcm(p - 1, q - 1), 1)
        self.assertEqual((numbers.dmp1, numbers.dmq1, numbers.iqmp * q % p),
                         (numbers.d % (p - 1), numbers.d % (q - 1), 1))
        fmt = s.PrivateFormat.PKCS8 if pkcs8 else s.PrivateFormat.TraditionalOpenSSL
        # the corpus's own DER is the DER OpenSSL writes for the same numbers
        self.assertEqual(key.private_bytes(s.Encoding.DER, fmt, s.NoEncryption()), der)

    def load_rsa(self, pems: list[str], pkcs8: bool) -> None:
        for i, pem in enumerate(pems):
            with self.subTest(pem=pem[:80]):
                key = s.load_pem_private_key(pem.encode(), None, unsafe_skip_rsa_key_validation=i >= FULL_CHECKS)
                self.assertIsInstance(key, rsa.RSAPrivateKey)
                self.check_rsa(key, pem_der(pem), pkcs8)

    def test_pkcs1_rsa_keys_load(self):
        self.load_rsa(values("pem_private_key", "rsa", 60), pkcs8=False)

    def test_pkcs8_rsa_keys_load(self):
        self.load_rsa(values("pem_private_key", "pkcs8", 60), pkcs8=True)

    def test_gcp_service_account_keys_load(self):
        pems = []
        for text in values("gcp_service_account_key", "", 60):
            self.assertTrue(text.endswith("-----END PRIVATE KEY-----\\n"))
            pems.append(json.loads(f'"{text}"'))  # the JSON string's escapes, as Google's tools read them
        self.load_rsa(pems, pkcs8=True)

    def test_ec_keys_load_and_their_point_is_the_scalars(self):
        for pem in values("pem_private_key", "ec", 100):
            with self.subTest(pem=pem[:80]):
                key = s.load_pem_private_key(pem.encode(), None)
                self.assertIsInstance(key, ec.EllipticCurvePrivateKey)
                self.assertEqual(key.curve.name, "secp256r1")
                again = ec.derive_private_key(key.private_numbers().private_value, ec.SECP256R1())
                self.assertEqual(again.public_key().public_numbers(), key.public_key().public_numbers())
                self.assertEqual(pem_der(pem), key.private_bytes(s.Encoding.DER, s.PrivateFormat.TraditionalOpenSSL,
                                                                 s.NoEncryption()))

    def test_dsa_and_openssh_keys_still_load(self):
        for pem in values("pem_private_key", "dsa", 20):
            s.load_pem_private_key(pem.encode(), None)
        for pem in values("pem_private_key", "openssh", 20):
            self.assertIsInstance(s.load_ssh_private_key(pem.encode(), None), ed25519.Ed25519PrivateKey)


class PublicMaterial(unittest.TestCase):
    def test_public_keys_and_certificates_load(self):
        seen = set()
        for pem in values("public_key_material", "", 300):
            label = pem.split("\n", 1)[0].removeprefix("-----BEGIN ").removesuffix("-----")
            with self.subTest(pem=pem[:80]):
                self.assertTrue(pem_der(pem).startswith(b"\x30"))
                if label == "CERTIFICATE":
                    cert = x509.load_pem_x509_certificate(pem.encode())
                    self.check_certificate(cert)
                    seen.add((label, type(cert.public_key()).__name__))
                else:
                    key = s.load_pem_public_key(pem.encode())
                    seen.add((label, type(key).__name__))
                    if label == "RSA PUBLIC KEY":
                        self.assertIsInstance(key, rsa.RSAPublicKey)
                    if isinstance(key, rsa.RSAPublicKey):
                        n = key.public_numbers().n
                        self.assertTrue(any(n % p == 0 and n // p in POOL for p in POOL), "two pool primes")
        self.assertGreaterEqual(len(seen), 7, seen)  # every label, and every key type under PUBLIC KEY and CERTIFICATE

    def check_certificate(self, cert: x509.Certificate) -> None:
        self.assertEqual(cert.version, x509.Version.v3)
        self.assertGreater(cert.serial_number, 0)
        self.assertLess(cert.not_valid_before_utc, cert.not_valid_after_utc)
        basic = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        if basic.ca:
            self.assertEqual(cert.subject, cert.issuer)
            cert.verify_directly_issued_by(cert)  # a self-signed CA: its Ed25519 signature verifies
        else:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            self.assertEqual(san.get_values_for_type(x509.DNSName),
                             [cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value])

    def test_kubernetes_ca_certificates_load(self):
        certs = 0
        for i in range(120):
            frag = FAMILIES["k8s_config_data"].make(Rng("vendor/k8s", i), "")
            if frag.key == "ca.crt":
                pem = base64.b64decode(frag.text, validate=True)
                self.assertTrue(pem.endswith(b"-----END CERTIFICATE-----\n"))
                self.check_certificate(x509.load_pem_x509_certificate(pem))
                certs += 1
        self.assertGreater(certs, 10)

    def test_ssh_public_key_lines_parse(self):
        lines = values("ssh_public_key", "", 200)
        for line in lines:
            with self.subTest(line=line):
                key = s.load_ssh_public_key(line.encode())
                self.assertIsInstance(key, ed25519.Ed25519PublicKey)
                blob = base64.b64decode(line.split()[1], validate=True)
                self.assertEqual(blob[:15], b"\x00\x00\x00\x0bssh-ed25519")
                self.assertEqual(blob[15:19], b"\x00\x00\x00\x20")
                self.assertEqual(len(blob), 51)

    @unittest.skipUnless(shutil.which("ssh-keygen"), "no ssh-keygen")
    def test_ssh_keygen_reads_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            for i, line in enumerate(values("ssh_public_key", "", 3, label="keygen")):
                path = Path(tmp) / f"k{i}.pub"
                path.write_text(line + "\n")
                out = subprocess.run(["ssh-keygen", "-l", "-f", str(path)], capture_output=True, text=True, check=False)
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertIn("(ED25519)", out.stdout)


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def read_macaroon(raw: bytes) -> tuple[bytes, bytes, list[bytes], bytes]:
    """An independent reader of libmacaroons' v2 binary format: (location, identifier,
    first-party caveat identifiers, signature); raises on anything else or anything left."""
    if raw[:1] != b"\x02":
        raise ValueError("not v2")
    i = 1

    def fields() -> list[tuple[int, bytes]]:  # up to and including an end of section
        nonlocal i
        out = []
        while True:
            kind, i = read_varint(raw, i)
            if kind == 0:
                return out
            n, i = read_varint(raw, i)
            if i + n > len(raw):
                raise ValueError("field past the end")
            out.append((kind, raw[i:i + n]))
            i += n

    header = fields()
    if [k for k, _ in header] != [1, 2]:
        raise ValueError(f"header fields {header}")
    caveats = []
    while True:
        section = fields()
        if not section:
            break
        if [k for k, _ in section] != [2]:  # first-party: an identifier alone
            raise ValueError(f"caveat fields {section}")
        caveats.append(section[0][1])
    kind, i = read_varint(raw, i)
    n, i = read_varint(raw, i)
    if kind != 6 or n != 32 or i + n != len(raw):
        raise ValueError("signature")
    return header[0][1], header[1][1], caveats, raw[i:]


UUID4 = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


class PyPI(unittest.TestCase):
    def test_tokens_are_whole_v2_macaroons_with_pypis_caveats(self):
        kinds = set()
        for variant, location in (("pypi", b"pypi.org"), ("testpypi", b"test.pypi.org")):
            for token in values("pypi_token", variant, 200):
                with self.subTest(token=token):
                    self.assertTrue(token.startswith("pypi-"))
                    body = token[5:]
                    self.assertNotIn("=", body)
                    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
                    self.assertEqual(base64.urlsafe_b64encode(raw).decode().rstrip("="), body)
                    loc, ident, caveats, sig = read_macaroon(raw)
                    self.assertEqual(loc, location)
                    self.assertRegex(ident.decode(), UUID4)
                    self.assertEqual(len(sig), 32)
                    self.assertTrue(caveats)
                    for caveat in caveats:
                        parsed = json.loads(caveat)
                        if isinstance(parsed, dict):
                            self.assertEqual(parsed["version"], 1)
                            kinds.add("legacy")
                        else:
                            self.assertIn(parsed[0], (0, 1, 3))
                            self.assertEqual(json.dumps(parsed, separators=(",", ":")).encode(), caveat)
                            kinds.add(parsed[0])
                    if location == b"pypi.org":
                        self.assertTrue(token.startswith("pypi-AgEIcHlwaS5vcmcCJ"))
        self.assertEqual(kinds, {"legacy", 0, 1, 3})

    def test_the_reader_refuses_broken_tokens(self):
        raw = base64.urlsafe_b64decode(values("pypi_token", "pypi", 1)[0][5:] + "==")
        read_macaroon(raw)
        old = b"\x02\x01\x08pypi.org\x00\x02\x06" + bytes(range(100, 200))  # the earlier generator's tokens
        for broken in (raw[:-1], raw + b"\x00", b"\x01" + raw[1:], old):
            with self.assertRaises((ValueError, IndexError)):
                read_macaroon(broken)


class Examples(unittest.TestCase):
    """The frozen examples of these families pass the same checks as generated values."""

    def test_examples_load(self):
        from redaction_pressure.corpus.families.examples import EXAMPLES

        pem = re.compile(r"-----BEGIN ([A-Z ]+)-----\n[\s\S]*?-----END \1-----")
        for _, secret in EXAMPLES["pem_private_key"] + EXAMPLES["gcp_service_account_key"]:
            block = json.loads(f'"{secret}"') if "\\n" in secret else secret
            if "RSA" in block or "EC PRIVATE" in block or block.startswith("-----BEGIN PRIVATE KEY"):
                s.load_pem_private_key(block.encode(), None)
        for text, _ in EXAMPLES["public_key_material"]:
            block = pem.search(text).group(0)
            if "CERTIFICATE" in block:
                x509.load_pem_x509_certificate(block.encode())
            else:
                s.load_pem_public_key(block.encode())
        for text, _ in EXAMPLES["ssh_public_key"]:
            s.load_ssh_public_key(re.search(r"ssh-ed25519 [A-Za-z0-9+/=]+", text).group(0).encode())
        for _, secret in EXAMPLES["pypi_token"]:
            read_macaroon(base64.urlsafe_b64decode(secret[5:] + "=" * (-len(secret[5:]) % 4)))
        for text, _ in EXAMPLES["k8s_config_data"]:
            m = re.search(r"ca\.crt: ([A-Za-z0-9+/=]+)", text)
            if m:
                x509.load_pem_x509_certificate(base64.b64decode(m.group(1)))


class Determinism(unittest.TestCase):
    CASES = (("pem_private_key", "rsa"), ("pem_private_key", "pkcs8"), ("pem_private_key", "ec"),
             ("gcp_service_account_key", ""), ("pypi_token", "pypi"), ("pypi_token", "testpypi"),
             ("public_key_material", ""), ("ssh_public_key", ""), ("k8s_config_data", ""))

    def test_same_seed_same_bytes(self):
        for name, variant in self.CASES:
            with self.subTest(name, variant=variant):
                self.assertEqual(values(name, variant, 25, "det"), values(name, variant, 25, "det"))
                self.assertNotEqual(values(name, variant, 5, "det"), values(name, variant, 5, "det2"))

    def test_values_are_pinned(self):
        """The bytes of these values on every machine, interpreter and run (CPython
        3.11-3.13 agreed when this digest was taken). A change of generator moves it."""
        digest = hashlib.sha256()
        for name, variant in self.CASES:
            for value in values(name, variant, 10, "pinned"):
                digest.update(value.encode() + b"\x00")
        self.assertEqual(digest.hexdigest(), PINNED)


PINNED = "62fd3fab3c7a4aa45a48308a9cfb09e305c7a925e06aa3ccce461aa97d454b9f"


class PrimePool(unittest.TestCase):
    def test_pool_entries_are_distinct_probable_primes_of_1024_bits(self):
        self.assertEqual(len(POOL), len(primes.RSA_PRIMES))
        self.assertGreaterEqual(len(POOL), 64)
        test = random.Random(20261203)  # an independent Miller-Rabin, bases of its own
        for p in test.sample(primes.RSA_PRIMES, 24):
            self.assertEqual(p.bit_length(), 1024)
            self.assertEqual(p >> 1022, 3)  # top two bits: a product of two is 2048 bits
            self.assertNotEqual(p % 65537, 1)
            d, r = p - 1, 0
            while d % 2 == 0:
                d, r = d // 2, r + 1
            for _ in range(12):
                x = pow(test.randrange(2, p - 1), d, p)
                if x in (1, p - 1):
                    continue
                for _ in range(r - 1):
                    x = x * x % p
                    if x == p - 1:
                        break
                else:
                    self.fail(f"{p:x} is composite")

    def test_the_first_entries_regenerate_from_the_documented_procedure(self):
        self.assertEqual(primes.generate_pool(3), primes.RSA_PRIMES[:3])

    def test_pairs_are_distinct_and_ordered(self):
        r = Rng("vendor/pairs", 0)
        for _ in range(500):
            p, q = primes.pick_pair(r)
            self.assertGreater(p, q)


if __name__ == "__main__":
    unittest.main()
