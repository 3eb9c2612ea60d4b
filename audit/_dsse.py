"""DSSE v1 envelopes (https://github.com/secure-systems-lab/dsse), Ed25519 only.

The signature covers PAE(payloadType, payload), never the payload alone, so a
signature made for one payload type cannot be replayed as another. PAE is exactly the
spec's ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`` with LEN the decimal
byte length (no leading zeros) and type UTF-8 encoded.

Verification profile of this project: the envelope must carry exactly one signature;
its keyid must name the pinned key; the signature must verify over PAE under that
key. Anything else (no signature, several, a keyid of another key, bad base64, a
malformed signature) fails with a reason. Only the verified payload bytes are returned
for parsing.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ._canonical import StrictJSONError, loads_strict
from ._keys import keyid
from ._schemas import ENVELOPE, schema_errors

PAYLOAD_TYPE = "application/vnd.redaction-pressure.manifest+toml;version=1"
ENVELOPE_NAME = "manifest.dsse.json"
MAX_ENVELOPE_BYTES = 256 * 1024 * 1024


class EnvelopeError(Exception):
    """An envelope that cannot even be read as DSSE; ``reasons`` lists why."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[tuple[str, str], ...]  # (keyid, base64 sig), as found


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def sign(payload: bytes, private_key: Ed25519PrivateKey, payload_type: str = PAYLOAD_TYPE) -> dict:
    sig = private_key.sign(pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": keyid(private_key.public_key()), "sig": base64.b64encode(sig).decode("ascii")}],
    }


def dumps(envelope: dict) -> bytes:
    return json.dumps(envelope, indent=2).encode("utf-8") + b"\n"


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError([f"{what} is not standard base64: {exc}"]) from None


def parse(data: bytes) -> Envelope:
    """Reads an envelope's structure (no signature check). Raises EnvelopeError."""
    try:
        obj = loads_strict(data)
    except StrictJSONError as exc:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not valid JSON: {exc}"]) from None
    errors = schema_errors(ENVELOPE, obj)
    if errors:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not a DSSE envelope: {e}" for e in errors])
    payload = _b64(obj["payload"], "payload")
    return Envelope(obj["payloadType"], payload, tuple((s["keyid"], s["sig"]) for s in obj["signatures"]))


def verify(envelope: Envelope, public_key: Ed25519PublicKey) -> str | None:
    """None when the envelope carries exactly one valid signature by ``public_key``;
    otherwise the reason it does not."""
    pinned = keyid(public_key)
    if len(envelope.signatures) != 1:
        return (f"the envelope carries {len(envelope.signatures)} signatures; this profile accepts "
                f"exactly one, by the pinned key {pinned}")
    kid, sig_b64 = envelope.signatures[0]
    if kid != pinned:
        return f"signed by key id {kid}, but the pinned key is {pinned} (another key sealed this archive)"
    try:
        sig = _b64(sig_b64, "signature")
    except EnvelopeError as exc:
        return exc.reasons[0]
    if len(sig) != 64:
        return f"the signature is {len(sig)} bytes; an Ed25519 signature is 64"
    try:
        public_key.verify(sig, pae(envelope.payload_type, envelope.payload))
    except InvalidSignature:
        return ("the signature does not verify under the pinned key: the payload or payload type "
                "was changed after signing")
    return None
