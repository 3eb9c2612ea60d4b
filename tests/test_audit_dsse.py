"""DSSE envelopes, keys and canonical JSON: the primitives the audit's signatures and
digests rest on."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import tempfile
import unittest
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit import _dsse
from audit._canonical import StrictJSONError, canonical_json, loads_strict, trace_digest
from audit._keys import KeyFileError, keygen, keyid, load_private_key, load_public_key
from audit._rescore import codes_match


class PAE(unittest.TestCase):
    def test_spec_test_vector(self):
        # https://github.com/secure-systems-lab/dsse/blob/master/protocol.md#test-vectors
        self.assertEqual(_dsse.pae("http://example.com/HelloWorld", b"hello world"),
                         b"DSSEv1 29 http://example.com/HelloWorld 11 hello world")

    def test_lengths_are_bytes_not_characters(self):
        self.assertEqual(_dsse.pae("t\u00e9", "\u00e9".encode()), b"DSSEv1 3 t\xc3\xa9 2 \xc3\xa9")
        self.assertEqual(_dsse.pae("", b""), b"DSSEv1 0  0 ")


class Envelopes(unittest.TestCase):
    def setUp(self):
        self.key = Ed25519PrivateKey.generate()

    def test_round_trip_and_layout(self):
        env = _dsse.sign(b"a = 1\n", self.key)
        self.assertEqual(env["payloadType"], _dsse.PAYLOAD_TYPE)
        self.assertEqual(base64.b64decode(env["payload"]), b"a = 1\n")
        der = self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
        self.assertEqual(env["signatures"][0]["keyid"], hashlib.sha256(der).hexdigest())
        parsed = _dsse.parse(_dsse.dumps(env))
        self.assertIsNone(_dsse.verify(parsed, self.key.public_key()))
        # the signature is over PAE, not the bare payload
        sig = base64.b64decode(env["signatures"][0]["sig"])
        self.key.public_key().verify(sig, _dsse.pae(_dsse.PAYLOAD_TYPE, b"a = 1\n"))

    def test_failures_have_reasons(self):
        env = _dsse.sign(b"a = 1\n", self.key)
        other = Ed25519PrivateKey.generate()
        self.assertIn("pinned key is", _dsse.verify(_dsse.parse(_dsse.dumps(env)), other.public_key()))
        env["signatures"][0]["sig"] = base64.b64encode(b"\x00" * 63).decode()
        self.assertIn("is 63 bytes", _dsse.verify(_dsse.parse(_dsse.dumps(env)), self.key.public_key()))
        with self.assertRaises(_dsse.EnvelopeError) as cm:
            _dsse.parse(b'{"payloadType": "x", "payload": "YQ", "signatures": []}')
        self.assertEqual(len(cm.exception.reasons), 2)  # unpadded base64 and no signature


class Keys(unittest.TestCase):
    def test_keygen_modes_and_refusal(self):
        with tempfile.TemporaryDirectory() as tmp:
            old = os.umask(0)  # the private key's mode must not depend on the umask
            try:
                private, public, kid = keygen(Path(tmp) / "k")
            finally:
                os.umask(old)
            self.assertEqual(stat.S_IMODE(private.stat().st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(public.stat().st_mode), 0o644)
            self.assertEqual(keyid(load_public_key(public)), kid)
            self.assertEqual(keyid(load_private_key(private).public_key()), kid)
            before = private.read_bytes()
            with self.assertRaises(FileExistsError):
                keygen(Path(tmp) / "k")
            self.assertEqual(private.read_bytes(), before)
            self.assertEqual(sorted(p.name for p in (Path(tmp) / "k").iterdir()),
                             ["signing-key.pem", "signing-key.pub.pem"])  # no temporary left behind

    def test_non_ed25519_keys_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.pem"
            bad.write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
            with self.assertRaises(KeyFileError):
                load_public_key(bad)
            with self.assertRaises(KeyFileError):
                load_public_key(Path(tmp) / "missing.pem")


class Canonical(unittest.TestCase):
    def test_canonical_form(self):
        self.assertEqual(canonical_json({"b": [1, 0.5, "\u00e9\U0001f600"], "a": None}),
                         b'{"a":null,"b":[1,0.5,"\\u00e9\\ud83d\\ude00"]}')
        self.assertEqual(trace_digest({"x": 1}), hashlib.sha256(b'{"x":1}').hexdigest())
        # formatting of the source does not change the digest
        self.assertEqual(trace_digest(loads_strict('{ "x" : 1.0e0 }')), trace_digest(loads_strict('{"x":1.0}')))

    def test_strict_parsing(self):
        for bad in ('{"a": 1, "a": 2}', '[NaN]', '{"a": Infinity}', '\xff', '1' * 5000, '[' * 100_000):
            with self.subTest(bad=bad[:20]), self.assertRaises(StrictJSONError):
                loads_strict(bad)


class TimeoutCodes(unittest.TestCase):
    def test_wall_clock_codes_match_each_other_only(self):
        self.assertTrue(codes_match([], []))
        self.assertTrue(codes_match(["timeout"], ["budget_exhausted"]))
        self.assertTrue(codes_match(["budget_exhausted"], ["timeout"]))
        self.assertFalse(codes_match(["timeout"], []))          # recorded timeout did not reproduce
        self.assertFalse(codes_match([], ["timeout"]))          # reproduction timed out: unconfirmed
        self.assertFalse(codes_match(["invalid_regex"], ["timeout"]))
        self.assertFalse(codes_match(["malformed_json"], ["bad_entry"]))


if __name__ == "__main__":
    unittest.main()
