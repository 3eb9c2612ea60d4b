"""DSSE v1 envelopes (https://github.com/secure-systems-lab/dsse), Ed25519 only.

The signature covers PAE(payloadType, payload), never the payload alone, so a
signature made for one payload type cannot be replayed as another. PAE is exactly the
spec's ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`` with LEN the decimal
byte length (no leading zeros) and type UTF-8 encoded.

One `Envelope` type is what `sign` makes, `Envelope.parse` reads and
`Envelope.to_json` writes; `Envelope.verify` returns only when a signature verifies
and otherwise raises `SignatureError` with the reason, so a caller cannot mistake a
failure for a pass.

Envelopes are read as the DSSE spec requires of a verifier, so that an envelope any
conforming signer wrote (securesystemslib, sigstore, cosign) is accepted:

* ``payload`` and ``sig`` may be standard or URL-safe base64, padded or not. Text that
  mixes the two alphabets, or is not in canonical form (re-encoding the bytes in the
  same alphabet and padding gives other text: stray bits, whitespace), is refused: no
  conforming encoder writes it, and refusing keeps one text per byte string.
* Unknown fields, at the top level and in signatures, are ignored.
* ``keyid`` is an optional, unauthenticated hint. It is never trusted: the pinned key
  is tried against every signature (those whose keyid names it first), because other
  tools compute key ids their own way (securesystemslib hashes its key metadata,
  cosign leaves it empty).
* Several signatures are allowed (at most ``MAX_SIGNATURES``); the envelope verifies
  when one of them verifies under the pinned key. The others are not checked.

Reading an envelope happens before anything is authenticated, so it must be cheap for
any file an attacker can put in its place:

* ``MAX_ENVELOPE_BYTES`` is 64 MiB. A Statement costs about 136 bytes per trace (one
  ``traces`` entry of the predicate: line, position, task id, SHA-256), about 182 once
  base64 in the envelope (measured on 512 train traces), so 64 MiB holds a Statement of
  roughly 370,000 traces. ``audit seal`` refuses to write a larger one.
* Before ``json.loads`` builds any object, the raw bytes are checked to hold few JSON
  values: every value but the first is preceded by a ``,`` or opens after a ``[``/``{``,
  so counting those bytes bounds the number of values (bytes inside strings only make
  the bound looser). A valid envelope has a few dozen; 64 MiB of ``{},`` would be 22
  million dicts (~2 GB) without this check. What remains is at most a few large
  strings, so parsing costs a small multiple of the file size.
* The signature count (at most ``MAX_SIGNATURES``) is checked before the entries are
  schema-checked, and schema errors stop at ``MAX_ENVELOPE_ERRORS``. Trying the pinned
  key against every signature costs at most ``MAX_SIGNATURES`` Ed25519 verifications
  over one PAE (built once).
* Base64 is checked by decoding (and re-encoding), not by a schema pattern: Python's
  ``re`` needs seconds and about 2 GB to match a base64 pattern against a 60 MB string.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ._canonical import StrictJSONError, loads_strict
from ._keys import keyid
from ._schemas import ENVELOPE, schema_errors

PAYLOAD_TYPE = "application/vnd.in-toto+json"
V1_PAYLOAD_TYPE = "application/vnd.redaction-pressure.manifest+toml;version=1"  # manifest-v1 archives (0.1.x)
ENVELOPE_NAME = "manifest.dsse.json"
MAX_ENVELOPE_BYTES = 64 * 1024 * 1024
MAX_SIGNATURES = 8
MAX_JSON_SEPARATORS = 4096  # ",", "[" and "{" bytes: bounds the number of JSON values before parsing
MAX_ENVELOPE_ERRORS = 20
_TO_STANDARD, _TO_URL = bytes.maketrans(b"-_", b"+/"), bytes.maketrans(b"+/", b"-_")


class EnvelopeError(Exception):
    """An envelope that cannot even be read as DSSE; ``reasons`` lists why."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class SignatureError(Exception):
    """A well-formed envelope none of whose signatures verifies under the pinned key;
    the message says why each one does not."""


@dataclass(frozen=True)
class Signature:
    keyid: str | None  # an unauthenticated hint, as found (None: absent)
    sig: str           # base64 text, as found (decoded only when verified)


@dataclass(frozen=True)
class Envelope:
    """A DSSE envelope: what `sign` makes, `parse` reads and `to_json` writes. The
    payload is held decoded; signatures as found, so a parsed envelope is verified on
    exactly the text it carried."""

    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    @classmethod
    def parse(cls, data: bytes) -> Envelope:
        """Reads an envelope's structure (no signature check). Raises EnvelopeError."""
        obj = load_json(data)
        errors = structure_errors(obj)
        if errors:
            raise EnvelopeError([f"{ENVELOPE_NAME} is not a DSSE envelope: {e}" for e in errors])
        payload = _b64(obj["payload"], "payload")
        return cls(obj["payloadType"], payload, tuple(Signature(s.get("keyid"), s["sig"]) for s in obj["signatures"]))

    def to_dict(self) -> dict[str, Any]:
        """The envelope's JSON object (the payload in standard base64; a signature
        without a key id has no ``keyid`` field)."""
        return {
            "payloadType": self.payload_type,
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "signatures": [({} if s.keyid is None else {"keyid": s.keyid}) | {"sig": s.sig}
                           for s in self.signatures],
        }

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), indent=2).encode("utf-8") + b"\n"

    def verify(self, public_key: Ed25519PublicKey) -> None:
        """Returns when one of the signatures verifies under ``public_key`` over PAE of
        this payload type and payload; otherwise raises SignatureError saying why none
        does."""
        pinned = keyid(public_key)
        if not self.signatures:
            raise SignatureError("the envelope carries no signature")
        if len(self.signatures) > MAX_SIGNATURES:
            raise SignatureError(f"the envelope carries {len(self.signatures)} signatures; at most "
                                 f"{MAX_SIGNATURES} are read")
        message = pae(self.payload_type, self.payload)
        order = sorted(range(len(self.signatures)), key=lambda i: self.signatures[i].keyid != pinned)
        reasons = []
        for i in order:
            kid = self.signatures[i].keyid
            try:
                sig = _b64(self.signatures[i].sig, f"signature {i}")
            except EnvelopeError as exc:
                reasons.append(exc.reasons[0])
                continue
            if len(sig) != 64:
                reasons.append(f"signature {i} is {len(sig)} bytes; an Ed25519 signature is 64")
                continue
            try:
                public_key.verify(sig, message)
            except InvalidSignature:
                if kid == pinned:
                    reasons.append(f"signature {i} names the pinned key but does not verify under the pinned key: "
                                   "the payload or payload type was changed after signing")
                else:
                    reasons.append(f"signature {i} ({_hint(kid)}) does not verify under the pinned key")
                continue
            return
        if any(s.keyid == pinned for s in self.signatures):
            raise SignatureError("; ".join(reasons))
        hints = ", ".join(_hint(s.keyid) for s in self.signatures)
        raise SignatureError(
            f"no signature verifies under the pinned key {pinned}: the envelope's {len(self.signatures)} "
            f"signature(s) carry {hints}, but the pinned key is {pinned} (another key sealed this archive, or it "
            f"was changed after signing); " + "; ".join(reasons))


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def sign(payload: bytes, private_key: Ed25519PrivateKey, payload_type: str = PAYLOAD_TYPE) -> Envelope:
    """An envelope of ``payload`` with one signature, over PAE, by ``private_key``
    (named by its key id)."""
    sig = private_key.sign(pae(payload_type, payload))
    return Envelope(payload_type, payload,
                    (Signature(keyid(private_key.public_key()), base64.b64encode(sig).decode("ascii")),))


def b64decode_canonical(text: str) -> bytes:
    """Decodes standard or URL-safe base64, padded or not, in canonical form: encoding
    the result in the same alphabet, with the same padding, gives ``text`` back (so no
    stray bits, no data after padding, no whitespace, no mixed alphabets). Linear time
    in C, unlike a schema pattern. Raises ValueError (binascii.Error is one)."""
    raw = text.encode("ascii")  # UnicodeEncodeError (a ValueError) for anything else
    url = b"-" in raw or b"_" in raw
    if url and (b"+" in raw or b"/" in raw):
        raise ValueError("mixes the standard (+/) and URL-safe (-_) alphabets")
    padded = raw.endswith(b"=")
    standard = raw.translate(_TO_STANDARD) if url else raw
    if not padded and len(standard) % 4:
        if len(standard) % 4 == 1:
            raise ValueError("Incorrect padding (a length of 4n+1 characters is not base64)")
        standard += b"=" * (-len(standard) % 4)
    data = base64.b64decode(standard, validate=True)
    again = base64.b64encode(data)
    if url:
        again = again.translate(_TO_URL)
    if not padded:
        again = again.rstrip(b"=")
    if again != raw:
        raise ValueError("not in canonical form (re-encoding gives other text)")
    return data


def _b64(text: str, what: str) -> bytes:
    try:
        return b64decode_canonical(text)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError([f"{what} is not base64 (standard or URL-safe): {exc}"]) from None


def load_json(data: bytes) -> Any:
    """The envelope's JSON value, after the cheap pre-parse bounds (size, UTF-8, number
    of values). Raises EnvelopeError."""
    if len(data) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError([f"{ENVELOPE_NAME} is larger than {MAX_ENVELOPE_BYTES} bytes"])
    separators = data.count(b",") + data.count(b"[") + data.count(b"{")
    if separators > MAX_JSON_SEPARATORS:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not a DSSE envelope: it holds {separators} ',', '[' and '{{' "
                             f"characters (at most {MAX_JSON_SEPARATORS}); an envelope has a few dozen, "
                             f"so it was not parsed"])
    try:
        return loads_strict(data)
    except StrictJSONError as exc:
        raise EnvelopeError([f"{ENVELOPE_NAME} is not valid JSON: {exc}"]) from None


def structure_errors(obj: Any) -> list[str]:
    """Why ``obj`` is not a DSSE envelope ([] if it is one). The signature count is
    checked first, so a list of a million entries is not schema-checked entry by entry;
    schema errors stop at MAX_ENVELOPE_ERRORS."""
    if isinstance(obj, dict) and isinstance(obj.get("signatures"), list) and len(obj["signatures"]) > MAX_SIGNATURES:
        return [f"the envelope carries {len(obj['signatures'])} signatures; at most {MAX_SIGNATURES} are read"]
    errors = [str(e) for e in schema_errors(ENVELOPE, obj, limit=MAX_ENVELOPE_ERRORS)]
    if not errors:
        try:
            obj["payloadType"].encode("utf-8")
        except UnicodeEncodeError:
            errors.append("$.payloadType: not valid Unicode (a lone surrogate escape)")
    return errors


def _hint(kid: str | None) -> str:
    if not kid:
        return "no key id"
    shown = kid[:80] + ("…" if len(kid) > 80 else "")
    return f"key id {shown!r}" if not shown.isprintable() else f"key id {shown}"
