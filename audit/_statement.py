"""The signed document of an archive: an in-toto Statement v1 (manifest v3).

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": "traces.jsonl",  "digest": {"sha256": "<hex>"}},
                 {"name": "manifest.toml", "digest": {"sha256": "<hex>"}}],
     "predicateType": "https://redaction-pressure.dev/attestation/run/v3",
     "predicate": {<the manifest, as JSON>}}

It is the DSSE payload under payloadType ``application/vnd.in-toto+json``, so any
in-toto or sigstore tool can read it, and ``cosign verify-blob-attestation --type
https://redaction-pressure.dev/attestation/run/v3`` checks a subject's digest against
the blob. The predicate type names this project and the manifest version: a change of
the manifest's meaning gets a new URI. The subjects bind the archive's two other
files by SHA-256; ``manifest.toml`` must also parse to exactly the predicate (the
TOML copy cannot say something the signature does not).

The payload is serialised as ``rp-canonical-json-v1`` (sorted keys, no whitespace,
ASCII), so sealing the same run with the same time and key gives the same bytes.
"""

from __future__ import annotations

from typing import Any

from redaction_pressure.contract import NestedTooDeeply, TooManyValues, check_json_density

from ._canonical import StrictJSONError, canonical_json, loads_strict
from ._manifest import MANIFEST_NAME
from ._tracefile import TRACES_NAME

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://redaction-pressure.dev/attestation/run/v3"
V2_PREDICATE_TYPE = "https://redaction-pressure.dev/attestation/run/v2"  # the manifest-v2 of environment 0.2.x-0.3.x
SUBJECT_NAMES = (TRACES_NAME, MANIFEST_NAME)


class StatementError(Exception):
    pass


def build(manifest: dict[str, Any], manifest_sha256: str) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": TRACES_NAME, "digest": {"sha256": manifest["traces_file"]["sha256"]}},
                    {"name": MANIFEST_NAME, "digest": {"sha256": manifest_sha256}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": manifest,
    }


def dumps(statement: dict[str, Any]) -> bytes:
    return canonical_json(statement)


STATEMENT_VALUE_BYTES = (16, 8, 2)  # at most one array or object per 16 bytes, a string per 8, a value per 2


def loads(payload: bytes) -> Any:
    """The payload's JSON value (strict: no duplicate keys, no NaN, strict UTF-8).
    Raises StatementError."""
    # Bounded before decoding, as every trace line is: 61 MiB of {"x": [{}, {}, ...]}
    # signed with the pinned key cost verify 26 s and 1.35 GB before its schema refused
    # it (review of 2026-12-03). A real Statement holds an array or object per 70 bytes,
    # a string per 20 and a value per 11 (its trace list dominates).
    try:
        check_json_density(payload.decode("utf-8", "replace"), len(payload), STATEMENT_VALUE_BYTES)
    except TooManyValues as exc:
        raise StatementError(f"the signed payload holds too many values for its {len(payload):,} bytes ({exc}); "
                             "a Statement holds an array or object per 70 bytes or more") from None
    except NestedTooDeeply:
        pass  # named by loads_strict
    try:
        return loads_strict(payload)
    except StrictJSONError as exc:
        raise StatementError(f"the signed payload is not valid JSON: {exc}") from None


def subject_digests(statement: dict[str, Any]) -> dict[str, str]:
    """{name: sha256} of a schema-valid Statement's subjects."""
    return {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
