"""`audit validate`: schema checks only (no signature, no rescoring), every error
reported with its file, line and JSON path, so a producer can fix a run before sealing
it. What a path is follows from its name: a directory (run or archive: its
traces.jsonl, manifest.toml, manifest.dsse.json), ``*.jsonl`` (traces), ``*.toml``
(manifest), ``*.json`` (DSSE envelope, whose payload is checked as an in-toto
Statement of a manifest-v3 too). Files of older releases (manifest v1 of 0.1.x, manifest
v2 of 0.2.x and 0.3.x) are checked against their own schemas, and the output says which
release verifies them.

Files are read as archive members: not through a symbolic link, regular files only,
with the same bounds as `audit verify` (an envelope of at most 64 MiB and few JSON
values) and a manifest with the report's (`MAX_MANIFEST_BYTES`, then `loads_toml`'s
counts: an unsigned manifest costs no more here than in `report`); schema errors are
listed up to a limit per file, then the output says collecting stopped."""

from __future__ import annotations

import binascii
from pathlib import Path

from redaction_pressure.contract import MAX_MANIFEST_BYTES

from . import _dsse, _statement
from ._files import MemberError, member_kind, read_member
from ._manifest import MANIFEST_NAME, ManifestError, jsonable, loads
from ._schemas import (
    EPISODE,
    MANIFEST,
    MANIFEST_V1,
    MANIFEST_V2,
    MAX_ERRORS,
    STATEMENT,
    STATEMENT_V2,
    error_lines,
    schema_errors,
)
from ._tracefile import TRACES_NAME, read_trace_file
from ._verify import V1_MESSAGE, V2_MESSAGE


class UsageError(Exception):
    pass


def files_of(path: Path) -> list[Path]:
    """The files ``path`` stands for. Raises UsageError when it stands for none."""
    if path.is_dir():
        found = [path / n for n in (TRACES_NAME, MANIFEST_NAME, _dsse.ENVELOPE_NAME)
                 if member_kind(path / n) != "missing"]  # links and the like are reported, not skipped
        if not found:
            raise UsageError(f"{path}: no {TRACES_NAME}, {MANIFEST_NAME} or {_dsse.ENVELOPE_NAME} in this directory")
        return found
    if member_kind(path) == "missing":
        raise UsageError(f"{path}: no such file or directory")
    if path.suffix not in (".jsonl", ".toml", ".json"):
        raise UsageError(f"{path}: expected a directory, *.jsonl (traces), *.toml (manifest) or *.json (envelope)")
    return [path]


def _read(path: Path, limit: int) -> bytes:
    data = read_member(path, limit)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


def _traces(path: Path, shown: str) -> list[str]:
    tf = read_trace_file(path, member=True)
    out = [f"{shown}:{p.line} {p.message}" if p.line else f"{shown} {p.message}" for p in tf.problems[:MAX_ERRORS]]
    if len(tf.problems) > MAX_ERRORS:
        out.append(f"{shown} ... and {len(tf.problems) - MAX_ERRORS} more unreadable lines")
    budget = MAX_ERRORS
    for line, episode in tf.episodes:
        errors = schema_errors(EPISODE, episode, limit=budget)
        out += [f"{shown}:{line} {e}" for e in errors]
        budget -= len(errors)
        if errors.truncated or budget <= 0:
            out.append(f"{shown} (stopped after {MAX_ERRORS} schema errors; there are more)")
            break
    return out


def _manifest_bytes(data: bytes, shown: str) -> list[str]:
    try:
        manifest = jsonable(loads(data))
    except ManifestError as exc:
        return [f"{shown} {exc}"]
    for version, schema, note in (("manifest-v1", MANIFEST_V1, V1_MESSAGE), ("manifest-v2", MANIFEST_V2, V2_MESSAGE)):
        if isinstance(manifest, dict) and manifest.get("manifest_version") == version:
            errors = error_lines(schema_errors(schema, manifest), f"{shown} ")
            return [*errors, f"{shown} note: {note}"] if errors else []
    return error_lines(schema_errors(MANIFEST, manifest), f"{shown} ")


def _statement_bytes(data: bytes, shown: str) -> list[str]:
    try:
        statement = _statement.loads(data)
    except _statement.StatementError as exc:
        return [f"{shown} {exc}"]
    if isinstance(statement, dict) and statement.get("predicateType") == _statement.V2_PREDICATE_TYPE:
        errors = error_lines(schema_errors(STATEMENT_V2, statement), f"{shown} ")
        return [*errors, f"{shown} note: {V2_MESSAGE}"] if errors else []
    return error_lines(schema_errors(STATEMENT, statement), f"{shown} ")


def _envelope(path: Path, shown: str) -> list[str]:
    try:
        obj = _dsse.load_json(_read(path, _dsse.MAX_ENVELOPE_BYTES))
    except _dsse.EnvelopeError as exc:
        return [f"{shown} {r}" for r in exc.reasons]
    errors = [f"{shown} {e}" for e in _dsse.structure_errors(obj)]
    if errors:
        return errors
    if obj["payloadType"] not in (_dsse.PAYLOAD_TYPE, _dsse.V1_PAYLOAD_TYPE):
        return [f"{shown} $.payloadType: {obj['payloadType'][:200]!r} is not {_dsse.PAYLOAD_TYPE!r}"]
    try:
        payload = _dsse.b64decode_canonical(obj["payload"])
    except (binascii.Error, ValueError) as exc:
        return [f"{shown} $.payload: not base64: {exc}"]
    for i, signature in enumerate(obj["signatures"]):
        try:
            _dsse.b64decode_canonical(signature["sig"])
        except (binascii.Error, ValueError) as exc:
            return [f"{shown} $.signatures[{i}].sig: not base64: {exc}"]
    if obj["payloadType"] == _dsse.V1_PAYLOAD_TYPE:
        return _manifest_bytes(payload, f"{shown} payload")
    return _statement_bytes(payload, f"{shown} payload")


def validate_file(path: Path, shown: str | None = None) -> list[str]:
    """Every schema error of one file, as display lines ([] when valid)."""
    shown = shown or str(path)
    try:
        if path.suffix == ".jsonl":
            return _traces(path, shown)
        if path.suffix == ".toml":
            return _manifest_bytes(_read(path, MAX_MANIFEST_BYTES), shown)
        return _envelope(path, shown)
    except MemberError as exc:
        return [f"{shown} cannot be read: {exc}"]
    except OSError as exc:
        return [f"{shown} cannot be read: {exc.strerror or exc}"]
    except ValueError as exc:
        return [f"{shown} {exc}"]
