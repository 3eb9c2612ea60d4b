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

Reading an envelope happens before anything is authenticated, so it must be cheap for
any file an attacker can put in its place:

* ``MAX_ENVELOPE_BYTES`` is 64 MiB. A manifest costs about 136 bytes per trace (one
  ``[[traces]]`` entry: line, position, task id, SHA-256), about 181 once base64 in the
  envelope, so 64 MiB holds a manifest of roughly 370,000 traces (100,000 traces make
  an envelope of about 18 MB). ``audit seal`` refuses to write a larger one.
* Before ``json.loads`` builds any object, the raw bytes are checked to hold few JSON
  values: every value but the first is preceded by a ``,`` or opens after a ``[``/``{``,
  so counting those bytes bounds the number of values (bytes inside strings only make
  the bound looser). A valid envelope has about a dozen; 64 MiB of ``{},`` would be 22
  million dicts (~2 GB) without this check. What remains is at most a few large strings,
  so parsing costs a small multiple of the file size.
* The signature count (exactly one) is checked before the entries are schema-checked,
  and schema errors stop at ``MAX_ENVELOPE_ERRORS``.
* Base64 is checked by decoding (and re-encoding: canonical form only), not by a
  schema pattern: Python's ``re`` needs seconds and about 2 GB to match the pattern
  ``(?:[A-Za-z0-9+/]{4})*...`` against a 60 MB string.
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
MAX_ENVELOPE_BYTES = 64 * 1024 * 1024
MAX_JSON_SEPARATORS = 4096  # ",", "[" and "{" bytes: bounds the number of JSON values before parsing
MAX_ENVELOPE_ERRORS = 20


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


def b64decode_canonical(text: str) -> bytes:
    """Decodes standard, padded base64 that is in canonical form: re-encoding the result
    gives ``text`` back (so no stray bits, no data after padding, no whitespace). Linear
    time in C, unlike a schema pattern. Raises ValueError."""
    data = base64.b64decode(text, validate=True)
    if base64.b64encode(data) != text.encode("ascii"):
        raise ValueError("not in canonical form (re-encoding gives other text)")
    return data


def _b64(text: str, what: str) -> bytes:
    try:
        return b64decode_canonical(text)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError([f"{what} is not standard base64: {exc}"]) from None


def load_json(data: bytes):
    """The envelope's JSON value, after the cheap pre-parse bounds (size, UTF-8, number
    of values). Raises EnvelopeError."""
    if len(data) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError([f"{ENVELOPE_NAME} is larger than {MAX_ENVELOPE_BYTES} bytes"])
    separators = data.count(b",") + data.count(b"[") + data.count(b"{")
    if separators > MAX_JSON_SEPARATORS:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not a DSSE envelope: it holds {separators} ',', '[' and '{{' "
                             f"characters (at most {MAX_JSON_SEPARATORS}); a one-signature envelope has about "
                             f"a dozen, so it was not parsed"])
    try:
        return loads_strict(data)
    except StrictJSONError as exc:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not valid JSON: {exc}"]) from None


def structure_errors(obj) -> list[str]:
    """Why ``obj`` is not a one-signature envelope of this schema ([] if it is one).
    The signature count is checked first, so a list of a million entries is not
    schema-checked entry by entry; schema errors stop at MAX_ENVELOPE_ERRORS."""
    if isinstance(obj, dict) and isinstance(obj.get("signatures"), list) and len(obj["signatures"]) > 1:
        return [f"the envelope carries {len(obj['signatures'])} signatures; this profile accepts exactly one"]
    errors = [str(e) for e in schema_errors(ENVELOPE, obj, limit=MAX_ENVELOPE_ERRORS)]
    if not errors:
        try:
            obj["payloadType"].encode("utf-8")
        except UnicodeEncodeError:
            errors.append("$.payloadType: not valid Unicode (a lone surrogate escape)")
    return errors


def parse(data: bytes) -> Envelope:
    """Reads an envelope's structure (no signature check). Raises EnvelopeError."""
    obj = load_json(data)
    errors = structure_errors(obj)
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
