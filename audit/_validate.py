"""`audit validate`: schema checks only (no signature, no rescoring), every error
reported with its file, line and JSON path, so a producer can fix a run before sealing
it. What a path is follows from its name: a directory (run or archive: its
traces.jsonl, manifest.toml, manifest.dsse.json), ``*.jsonl`` (traces), ``*.toml``
(manifest), ``*.json`` (DSSE envelope, whose payload is checked as a manifest too)."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from . import _dsse
from ._canonical import StrictJSONError, loads_strict
from ._manifest import MANIFEST_NAME, ManifestError, jsonable, loads
from ._schemas import ENVELOPE, EPISODE, MANIFEST, schema_errors
from ._tracefile import TRACES_NAME, read_trace_file

MAX_DOC_BYTES = 256 * 1024 * 1024


class UsageError(Exception):
    pass


def files_of(path: Path) -> list[Path]:
    """The files ``path`` stands for. Raises UsageError when it stands for none."""
    if path.is_dir():
        found = [path / n for n in (TRACES_NAME, MANIFEST_NAME, _dsse.ENVELOPE_NAME) if (path / n).is_file()]
        if not found:
            raise UsageError(f"{path}: no {TRACES_NAME}, {MANIFEST_NAME} or {_dsse.ENVELOPE_NAME} in this directory")
        return found
    if not path.is_file():
        raise UsageError(f"{path}: no such file or directory")
    if path.suffix not in (".jsonl", ".toml", ".json"):
        raise UsageError(f"{path}: expected a directory, *.jsonl (traces), *.toml (manifest) or *.json (envelope)")
    return [path]


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        data = f.read(MAX_DOC_BYTES + 1)
    if len(data) > MAX_DOC_BYTES:
        raise ValueError(f"larger than {MAX_DOC_BYTES} bytes")
    return data


def _traces(path: Path, shown: str) -> list[str]:
    tf = read_trace_file(path)
    out = [f"{shown}:{p.line} {p.message}" if p.line else f"{shown} {p.message}" for p in tf.problems]
    for line, episode in tf.episodes:
        out += [f"{shown}:{line} {e}" for e in schema_errors(EPISODE, episode)]
    return out


def _manifest_bytes(data: bytes, shown: str) -> list[str]:
    try:
        manifest = jsonable(loads(data))
    except ManifestError as exc:
        return [f"{shown} {exc}"]
    return [f"{shown} {e}" for e in schema_errors(MANIFEST, manifest)]


def _envelope(path: Path, shown: str) -> list[str]:
    try:
        obj = loads_strict(_read(path))
    except (StrictJSONError, ValueError) as exc:
        return [f"{shown} not valid JSON: {exc}"]
    errors = [f"{shown} {e}" for e in schema_errors(ENVELOPE, obj)]
    if errors:
        return errors
    if obj["payloadType"] != _dsse.PAYLOAD_TYPE:
        return [f"{shown} $.payloadType: {obj['payloadType'][:200]!r} is not {_dsse.PAYLOAD_TYPE!r}"]
    try:
        payload = base64.b64decode(obj["payload"], validate=True)
    except (binascii.Error, ValueError) as exc:
        return [f"{shown} $.payload: not standard base64: {exc}"]
    return _manifest_bytes(payload, f"{shown} payload")


def validate_file(path: Path, shown: str | None = None) -> list[str]:
    """Every schema error of one file, as display lines ([] when valid)."""
    shown = shown or str(path)
    try:
        if path.suffix == ".jsonl":
            return _traces(path, shown)
        if path.suffix == ".toml":
            return _manifest_bytes(_read(path), shown)
        return _envelope(path, shown)
    except OSError as exc:
        return [f"{shown} cannot be read: {exc.strerror or exc}"]
    except ValueError as exc:
        return [f"{shown} {exc}"]
