"""DSSE envelopes, keys and canonical JSON: the primitives the audit's signatures and
digests rest on."""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit import _dsse
from audit._canonical import StrictJSONError, canonical_json, loads_strict, trace_digest
from audit._files import write_new
from audit._keys import KeyFileError, keygen, keyid, load_private_key, load_public_key
from audit._rescore import codes_match


def dumps(obj: object) -> bytes:
    """An envelope-shaped JSON document, as a test writes one by hand."""
    return json.dumps(obj, indent=2).encode()


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
        self.assertIsInstance(env, _dsse.Envelope)
        obj = json.loads(env.to_json())
        self.assertEqual(list(obj), ["payloadType", "payload", "signatures"])
        self.assertEqual(obj["payloadType"], _dsse.PAYLOAD_TYPE)
        self.assertEqual(base64.b64decode(obj["payload"]), b"a = 1\n")
        der = self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
        self.assertEqual(obj["signatures"][0]["keyid"], hashlib.sha256(der).hexdigest())
        self.assertEqual(env.to_json(), json.dumps(obj, indent=2).encode() + b"\n")
        parsed = _dsse.Envelope.parse(env.to_json())
        self.assertEqual(parsed, env)
        self.assertEqual(parsed.to_json(), env.to_json())
        self.assertIsNone(parsed.verify(self.key.public_key()))
        # the signature is over PAE, not the bare payload
        sig = base64.b64decode(obj["signatures"][0]["sig"])
        self.key.public_key().verify(sig, _dsse.pae(_dsse.PAYLOAD_TYPE, b"a = 1\n"))
        # keyid is optional: an envelope without one keeps none when written again
        bare = _dsse.Envelope(env.payload_type, env.payload, (_dsse.Signature(None, env.signatures[0].sig),))
        self.assertEqual(json.loads(bare.to_json())["signatures"], [{"sig": env.signatures[0].sig}])
        self.assertEqual(_dsse.Envelope.parse(bare.to_json()), bare)
        self.assertIsNone(bare.verify(self.key.public_key()))

    def test_failures_have_reasons(self):
        env = _dsse.sign(b"a = 1\n", self.key).to_dict()
        other = Ed25519PrivateKey.generate()
        with self.assertRaises(_dsse.SignatureError) as cm:
            _dsse.Envelope.parse(dumps(env)).verify(other.public_key())
        self.assertIn("pinned key is", str(cm.exception))
        env["signatures"][0]["sig"] = base64.b64encode(b"\x00" * 63).decode()
        with self.assertRaises(_dsse.SignatureError) as cm:
            _dsse.Envelope.parse(dumps(env)).verify(self.key.public_key())
        self.assertIn("is 63 bytes", str(cm.exception))
        with self.assertRaises(_dsse.SignatureError) as cm:
            _dsse.Envelope(_dsse.PAYLOAD_TYPE, b"", ()).verify(self.key.public_key())
        self.assertEqual(str(cm.exception), "the envelope carries no signature")
        with self.assertRaises(_dsse.EnvelopeError) as cm:
            _dsse.Envelope.parse(b'{"payloadType": "x", "payload": "YQ==", "signatures": []}')
        self.assertEqual(len(cm.exception.reasons), 1)
        self.assertIn("$.signatures", cm.exception.reasons[0])
        sig = '[{"keyid": "%s", "sig": "AAAA"}]' % ("0" * 64)
        for payload, needle in (("Y", "padding"), ("YR==", "canonical"), ("YR", "canonical"), ("YQ==YQ==", "padding"),
                                ("YQ==\\n", "base64"), ("\u00e9AAA", "base64"), ("a+b_", "mixes"),
                                ("YQ=", "padding")):
            with self.subTest(payload=payload):
                text = f'{{"payloadType": "x", "payload": "{payload}", "signatures": {sig}}}'
                with self.assertRaises(_dsse.EnvelopeError) as cm:
                    _dsse.Envelope.parse(text.encode())
                self.assertIn("payload is not base64", cm.exception.reasons[0])
                self.assertIn(needle, cm.exception.reasons[0])

    def test_both_alphabets_padded_or_not(self):
        data = bytes(range(256)) * 3 + b"\xfb\xff"
        for text in (base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode(),
                     base64.b64encode(data).decode().rstrip("="), base64.urlsafe_b64encode(data).decode().rstrip("=")):
            with self.subTest(text=text[-6:]):
                self.assertEqual(_dsse.b64decode_canonical(text), data)
        import time

        big = base64.urlsafe_b64encode(b"\xfb\xff" * (6 << 20)).decode()  # 16 MiB of URL-safe text
        start = time.process_time()
        self.assertEqual(len(_dsse.b64decode_canonical(big)), 12 << 20)
        self.assertLess(time.process_time() - start, 1.0)

    def test_parse_bounds(self):
        env = _dsse.sign(b"a = 1\n", self.key).to_dict()
        env["signatures"] *= 3
        self.assertEqual(len(_dsse.Envelope.parse(dumps(env)).signatures), 3)  # DSSE allows several
        env["signatures"] *= 3
        with self.assertRaises(_dsse.EnvelopeError) as cm:
            _dsse.Envelope.parse(dumps(env))
        self.assertEqual(cm.exception.reasons, ["manifest.dsse.json is not a DSSE envelope: the envelope carries 9 "
                                                "signatures; at most 8 are read"])
        # schema errors stop at MAX_ENVELOPE_ERRORS
        many = {"payloadType": 1, "payload": 2, "signatures": [{"keyid": 3, "sig": 4}]}
        many.update({f"k{i}": i for i in range(100)})
        with self.assertRaises(_dsse.EnvelopeError) as cm:
            _dsse.Envelope.parse(dumps(many))
        self.assertLessEqual(len(cm.exception.reasons), _dsse.MAX_ENVELOPE_ERRORS)
        with self.assertRaises(_dsse.EnvelopeError) as cm:
            _dsse.Envelope.parse(b"[" + b"0," * _dsse.MAX_JSON_SEPARATORS + b"0]")
        self.assertIn("so it was not parsed", cm.exception.reasons[0])


class NewFiles(unittest.TestCase):
    def test_write_new_never_overwrites_nor_follows_and_sets_the_mode(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            old = os.umask(0o077)
            try:
                write_new(d / "exact", b"x", 0o644, exact_mode=True)
                write_new(d / "masked", b"y", 0o644, exact_mode=False)
            finally:
                os.umask(old)
            self.assertEqual(stat.S_IMODE((d / "exact").stat().st_mode), 0o644)
            self.assertEqual(stat.S_IMODE((d / "masked").stat().st_mode), 0o600)  # the umask narrows it
            self.assertEqual(((d / "exact").read_bytes(), (d / "masked").read_bytes()), (b"x", b"y"))
            with self.assertRaises(FileExistsError):
                write_new(d / "exact", b"z", 0o644, exact_mode=True)
            self.assertEqual((d / "exact").read_bytes(), b"x")
            (d / "link").symlink_to(d / "target")  # dangling: writing through it would create target
            with self.assertRaises(FileExistsError):
                write_new(d / "link", b"z", 0o644, exact_mode=False)
            self.assertFalse((d / "target").exists())
            self.assertEqual(sorted(p.name for p in d.iterdir()), ["exact", "link", "masked"])  # no temporary left

    def test_write_new_without_hard_links(self):
        # FAT and some network mounts refuse link(2): the file is then created in place,
        # still exclusively, with the same mode, and no temporary is left behind
        def no_links(src, dst):
            raise OSError(errno.EPERM, "Operation not permitted")

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(os, "link", no_links):
            d = Path(tmp)
            write_new(d / "key.pub", b"x", 0o644, exact_mode=True)
            self.assertEqual((d / "key.pub").read_bytes(), b"x")
            self.assertEqual(stat.S_IMODE((d / "key.pub").stat().st_mode), 0o644)
            with self.assertRaises(FileExistsError):
                write_new(d / "key.pub", b"z", 0o644, exact_mode=True)
            (d / "link").symlink_to(d / "target")
            with self.assertRaises(FileExistsError):
                write_new(d / "link", b"z", 0o644, exact_mode=False)
            self.assertEqual((d / "key.pub").read_bytes(), b"x")
            self.assertEqual(sorted(p.name for p in d.iterdir()), ["key.pub", "link"])


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


    def test_a_key_file_of_two_keys_is_refused_not_read_as_its_first(self):
        # red team, 2026-12-04: a file of two public keys pinned its first one silently
        # (an archive of the second key's holder then failed as "another key sealed
        # it"); two private keys signed with the first.
        with tempfile.TemporaryDirectory() as tmp:
            a_priv, a_pub, a_kid = keygen(Path(tmp) / "a")
            b_priv, b_pub, _ = keygen(Path(tmp) / "b")
            noted = Path(tmp) / "noted.pem"  # text around one block is still one key
            noted.write_bytes(b"# the lab's key\n" + a_pub.read_bytes() + b"trailing note\n")
            self.assertEqual(keyid(load_public_key(noted)), a_kid)
            for name, parts, load in (("pubs.pem", (a_pub, b_pub), load_public_key),
                                      ("privs.pem", (a_priv, b_priv), load_private_key)):
                both = Path(tmp) / name
                both.write_bytes(b"".join(p.read_bytes() for p in parts))
                with self.subTest(name), self.assertRaisesRegex(KeyFileError, "holds 2 PEM blocks"):
                    load(both)


class Canonical(unittest.TestCase):
    def test_canonical_form(self):
        self.assertEqual(canonical_json({"b": [1, 0.5, "\u00e9\U0001f600"], "a": None}),
                         b'{"a":null,"b":[1,0.5,"\\u00e9\\ud83d\\ude00"]}')
        self.assertEqual(trace_digest({"x": 1}), hashlib.sha256(b'{"x":1}').hexdigest())
        # formatting of the source does not change the digest
        self.assertEqual(trace_digest(loads_strict('{ "x" : 1.0e0 }')), trace_digest(loads_strict('{"x":1.0}')))

    def test_strict_parsing(self):
        for bad in ('{"a": 1, "a": 2}', '[NaN]', '{"a": Infinity}', '\xff', '1' * 5000, '[' * 100_000,
                    '{"a": 1e999}', '[-1e400]', '[' + '9' * 400 + '.0]'):
            with self.subTest(bad=bad[:20]), self.assertRaises(StrictJSONError):
                loads_strict(bad)
        self.assertEqual(loads_strict('[1.7976931348623157e308, 1e-400]'), [1.7976931348623157e308, 0.0])

    def test_strict_utf8_only(self):
        # json.loads(bytes) would guess UTF-16/32, strip a BOM and let CESU-8 surrogates through
        cases = {
            b'"\xed\xa0\x80"': "not UTF-8",                        # an encoded surrogate (CESU-8)
            '{"a":1}'.encode("utf-16-le"): "Expecting",             # NULs are UTF-8; the text is not JSON
            '{"a":1}'.encode("utf-16"): "not UTF-8",                # with its BOM FF FE
            '{"a":1}'.encode("utf-32"): "not UTF-8",
            b'\xef\xbb\xbf{"a":1}': "byte order mark",
            '\ufeff{"a":1}': "byte order mark",
            b'"\xc0\xaf"': "not UTF-8",                              # overlong encoding
        }
        for data, needle in cases.items():
            with self.subTest(data=data[:12]):
                with self.assertRaises(StrictJSONError) as cm:
                    loads_strict(data)
                self.assertIn(needle, str(cm.exception))
        self.assertEqual(loads_strict('"\u00e9"'.encode()), "\u00e9")
        self.assertEqual(loads_strict(b'"\xc3\xa9"'), "\u00e9")


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
