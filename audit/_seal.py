"""`audit seal`: turns a run directory into a signed archive (manifest v2).

The archive holds ``traces.jsonl`` (the run's bytes), ``manifest.toml`` (the manifest,
human-readable) and ``manifest.dsse.json``: a DSSE envelope whose payload is an in-toto
Statement with both files as subjects and the manifest as predicate.

Sealing signs only what it checked: the traces file is read once, and the very bytes
that were hashed and schema-checked are the ones copied into the archive. A run is
refused (with every reason) when rollouts failed (summarised first, by kind and
count: a failed rollout has no score), when a line does not parse, a trace is not schema-valid,
the traces disagree on build identity, split, commitment or task parameters (or a
trace's task data publishes other parameters than it was scored with), the Episodes
name different runs, or one trace appears twice: an archive states one result of one
build on one split with one set of task parameters. Files are created exclusively
(never overwriting, never through a link, never seen half-written: ``_files.write_new``),
the envelope last, so an archive without its envelope is visibly
incomplete. The output directory must not be a symbolic link, and an envelope too
large for `audit verify` to read is refused rather than written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from redaction_pressure.contract import ENVIRONMENT_VERSION

from . import _dsse, _statement
from ._failures import summarise
from ._files import write_new
from ._keys import keyid
from ._labels import task_params_problems
from ._manifest import MANIFEST_NAME, build_manifest, build_part, dumps, jsonable, loads
from ._schemas import EPISODE, MANIFEST, STATEMENT, error_lines, schema_errors
from ._tracefile import TRACES_NAME, TraceFile, read_trace_file

SEALED_BY = f"audit (redaction-pressure {ENVIRONMENT_VERSION})"


class SealRefused(Exception):
    def __init__(self, summary: str, reasons: list[str]):
        super().__init__(summary)
        self.summary, self.reasons = summary, reasons


@dataclass(frozen=True)
class Sealed:
    out_dir: Path
    manifest: dict[str, Any]
    keyid: str


def _schema_problems(tf: TraceFile) -> list[str]:
    problems = [f"{TRACES_NAME} {p}" for p in tf.problems]
    for line, episode in tf.episodes:
        problems += error_lines(schema_errors(EPISODE, episode), f"{TRACES_NAME}:{line} ")
    return problems


def _consistency_problems(tf: TraceFile) -> list[str]:
    problems = []
    first = tf.entries[0].trace["info"]["environment"]
    build, split, commitment = build_part(first), first["split"], first["split_commitment"]
    params = first["task_params"]
    for e in tf.entries:
        problems += [f"{e.where}: {p} (the first trace's)" for p in task_params_problems(e.trace, params)]
    for e in tf.entries[1:]:
        env = e.trace["info"]["environment"]
        if build_part(env) != build:
            problems.append(f"{e.where}: another build identity than the first trace's "
                            f"(source digest {env.get('source_digest')} vs {build.get('source_digest')})")
        if (env["split"], env["split_commitment"]) != (split, commitment):
            problems.append(f"{e.where}: split {env['split']} / {env['split_commitment']} differs from the first "
                            f"trace's {split} / {commitment}")
    for digest, n in Counter(e.digest for e in tf.entries).items():
        if n > 1:
            dup = next(e for e in tf.entries if e.digest == digest)
            problems.append(f"{dup.where}: the same trace appears {n} times")
    return problems


def _run_id(tf: TraceFile) -> str:
    ids = {ep.get("run", {}).get("id") if isinstance(ep.get("run"), dict) else None for _, ep in tf.episodes}
    if len(ids) > 1:
        shown = sorted(str(i) for i in ids)
        raise SealRefused("the run mixes Episodes of different runs", [f"run ids: {', '.join(shown)}"])
    (run_id,) = ids
    return run_id if isinstance(run_id, str) and run_id else f"unnamed-{tf.sha256[:16]}"


def seal(run_dir: Path, private_key: Ed25519PrivateKey, out_dir: Path,
         created: dt.datetime | None = None) -> Sealed:
    """Raises FileNotFoundError (no traces.jsonl), MemberError (traces.jsonl is not a
    regular file, or is larger than a traces file may be: nothing is read), FileExistsError
    (out_dir not empty) or SealRefused (the run cannot be sealed)."""
    source = run_dir / TRACES_NAME
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist: RUN_DIR must hold a traces.jsonl")
    if out_dir.is_symlink():
        raise FileExistsError(f"{out_dir} is a symbolic link; refusing to write an archive through it")
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise FileExistsError(f"{out_dir} exists and is not an empty directory; refusing to overwrite it")
    tf = read_trace_file(source, keep_bytes=True)
    problems = _schema_problems(tf)
    failed = summarise([e.trace for e in tf.entries])
    if failed:
        raise SealRefused(f"{failed}: nothing to seal", [
            "a failed rollout has no scored reply; fix the cause and run the failed tasks again "
            "(the schema problems follow)", *problems])
    if problems:
        raise SealRefused(f"{source} is not a schema-valid run", problems)
    problems = _consistency_problems(tf)
    if problems:
        raise SealRefused(f"{source} does not state one result of one build on one split", problems)
    manifest = build_manifest(tf, _run_id(tf), SEALED_BY, created)
    manifest_toml = dumps(manifest)
    statement = _statement.build(manifest, hashlib.sha256(manifest_toml).hexdigest())
    payload = _statement.dumps(statement)
    errors = schema_errors(MANIFEST, jsonable(loads(manifest_toml))) + schema_errors(STATEMENT, statement)
    if errors:  # a bug here, not the user's input; still never sign an invalid manifest
        raise SealRefused("internal error: the manifest built for this run is not valid", [str(e) for e in errors])
    envelope_bytes = _dsse.sign(payload, private_key).to_json()
    if len(envelope_bytes) > _dsse.MAX_ENVELOPE_BYTES:
        raise SealRefused(f"{source} has too many traces for one archive",
                          [f"its envelope would be {len(envelope_bytes)} bytes; `audit verify` reads at most "
                           f"{_dsse.MAX_ENVELOPE_BYTES}: seal the run in parts"])
    out_dir.mkdir(parents=True, exist_ok=True)
    if out_dir.is_symlink() or not out_dir.is_dir():  # raced into a link since the check above
        raise FileExistsError(f"{out_dir} is not a plain directory; refusing to write an archive into it")
    if tf.data is None:  # read with keep_bytes=True: the very bytes hashed are the ones copied
        raise SealRefused("internal error: the traces file's bytes were not kept", [])
    for name, data in ((TRACES_NAME, tf.data), (MANIFEST_NAME, manifest_toml), (_dsse.ENVELOPE_NAME, envelope_bytes)):
        write_new(out_dir / name, data, 0o644, exact_mode=False)
    return Sealed(out_dir, manifest, keyid(private_key.public_key()))
