"""Independent implementations agree with ours: securesystemslib's DSSE verifies our
envelopes and signs envelopes `audit verify` accepts; the in-toto attestation
framework's own Python bindings accept our Statement; our written-from-the-spec
Statement schema accepts theirs. (All three libraries are dev dependencies only.)"""

from __future__ import annotations

import hashlib
import json
import unittest

from google.protobuf import json_format
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

from audit import _dsse, _statement
from audit._keys import keyid
from audit._schemas import INTOTO_STATEMENT, STATEMENT, schema_errors
from audit._verify import PASSED, verify_archive
from tests.support import audit_fixtures as fx


def envelope_of(archive) -> dict:
    return json.loads((archive / "manifest.dsse.json").read_text())


class SecureSystemsLib(unittest.TestCase):
    def test_it_verifies_our_envelopes(self):
        archive = fx.seal_run(fx.dev_run())
        env = Envelope.from_dict(envelope_of(archive))
        self.assertEqual(env.payload_type, "application/vnd.in-toto+json")
        pub = fx.public_key()
        key = SSlibKey.from_crypto(pub, keyid=keyid(pub))
        self.assertEqual(list(env.verify([key], 1)), [keyid(pub)])
        # and refuses them under another key, or once the payload changed
        other = fx.public_key("attacker")
        with self.assertRaises(VerificationError):
            Envelope.from_dict(envelope_of(archive)).verify([SSlibKey.from_crypto(other, keyid=keyid(pub))], 1)
        env.payload = env.payload.replace(b'"mean_reward":0.', b'"mean_reward":1.', 1)
        with self.assertRaises(VerificationError):
            env.verify([key], 1)

    def test_we_accept_what_it_signs_over_our_statement(self):
        archive = fx.seal_run(fx.dev_run())
        payload = fx.payload_of(archive)
        signer = CryptoSigner(fx.private_key())  # its own key id scheme, not ours
        env = Envelope(payload, _dsse.PAYLOAD_TYPE, {})
        env.sign(signer)
        self.assertNotEqual(signer.public_key.keyid, keyid(fx.public_key()))
        (archive / "manifest.dsse.json").write_text(json.dumps(env.to_dict()))
        report = verify_archive(archive, fx.public_key())
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
        self.assertEqual(report.check("signature").status, PASSED)
        # signed by another key with securesystemslib: refused
        env = Envelope(payload, _dsse.PAYLOAD_TYPE, {})
        env.sign(CryptoSigner(fx.private_key("attacker")))
        (archive / "manifest.dsse.json").write_text(json.dumps(env.to_dict()))
        self.assertEqual([c.name for c in verify_archive(archive, fx.public_key()).failed], ["signature"])


class InTotoAttestation(unittest.TestCase):
    def test_our_statement_is_a_valid_in_toto_statement(self):
        archive = fx.seal_run(fx.dev_run())
        statement = json.loads(fx.payload_of(archive))
        pb = json_format.ParseDict(statement, statement_pb2.Statement())
        Statement.copy_from_pb(pb).validate()  # raises ValueError when not
        self.assertEqual(pb.type, "https://in-toto.io/Statement/v1")
        self.assertEqual(pb.predicate_type, _statement.PREDICATE_TYPE)
        self.assertEqual({s.name: s.digest["sha256"] for s in pb.subject}, {
            "traces.jsonl": hashlib.sha256((archive / "traces.jsonl").read_bytes()).hexdigest(),
            "manifest.toml": hashlib.sha256((archive / "manifest.toml").read_bytes()).hexdigest()})
        self.assertEqual(schema_errors(INTOTO_STATEMENT, statement), [])
        self.assertEqual(schema_errors(STATEMENT, statement), [])

    def test_the_framework_refuses_what_our_schema_refuses(self):
        statement = json.loads(fx.payload_of(fx.seal_run(fx.dev_run())))
        for edit in (lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"),
                     lambda s: s.update(subject=[]),
                     lambda s: s["subject"][0].update(digest={})):
            changed = json.loads(json.dumps(statement))
            edit(changed)
            with self.subTest(changed=str(changed)[:80]):
                with self.assertRaises(ValueError):
                    Statement.copy_from_pb(json_format.ParseDict(changed, statement_pb2.Statement())).validate()
                self.assertNotEqual(schema_errors(INTOTO_STATEMENT, changed), [])

    def test_our_generic_schema_accepts_the_frameworks_statements(self):
        rd = ResourceDescriptor(name="artifact.tar.gz", digest={"sha256": "ab" * 32}, uri="https://example.org/a",
                                annotations={"k": "v"})
        made = Statement([rd.pb], "https://example.org/predicate/v1", {"anything": [1, "two"]})
        made.validate()
        as_json = json_format.MessageToDict(made.pb)
        self.assertEqual(schema_errors(INTOTO_STATEMENT, as_json), [])
        # ... but not as this project's Statement
        self.assertNotEqual(schema_errors(STATEMENT, as_json), [])


if __name__ == "__main__":
    unittest.main()
