"""`audit seal`: turns a run directory into a signed archive (manifest v3).

The archive holds ``traces.jsonl`` (the run's bytes), ``manifest.toml`` (the manifest,
human-readable) and ``manifest.dsse.json``: a DSSE envelope whose payload is an in-toto
Statement with both files as subjects and the manifest as predicate.

Sealing signs only what it checked: the traces file is read once, and the very bytes
that were hashed and schema-checked are the ones copied into the archive. A run is
refused (with every reason) when a line does not parse, a trace is not schema-valid,
the traces disagree on build identity, split, commitment, shared task parameters or
what was evaluated (model, sampling settings, harness, run), a trace's task data
publishes other parameters than it was scored with, the Episodes name different runs,
or one trace appears twice: an archive states one result of one build on one split,
with one set of task parameters (its traces may cover several difficulty levels, each
summarised apart).

Failed rollouts (summarised first, by kind and count) have no score. By default they
make a run unsealable; with ``allow_failed`` the Episode lines holding one are left
out, the archive's ``traces.jsonl`` is the run's other lines byte for byte, and the
coverage names what is missing and what was left out: a PARTIAL archive, never a
complete one. Files are created exclusively (never overwriting, never through a link,
never seen half-written: ``_files.write_new``), the envelope last, so an archive without
its envelope is visibly incomplete. The output directory must not be a symbolic link,
and an envelope too large for `audit verify` to read is refused rather than written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from redaction_pressure.contract import ENVIRONMENT_VERSION, MAX_MANIFEST_BYTES, evaluated_of

from . import _dsse, _statement
from ._failures import failed_kind, summarise
from ._files import write_new
from ._keys import keyid
from ._labels import shared_params, task_params_problems
from ._manifest import (
    MANIFEST_NAME,
    ManifestError,
    build_manifest,
    build_part,
    dumps,
    episode_runs,
    jsonable,
    levels_of,
    loads,
    run_id_of,
    run_ids,
)
from ._records import run_record_problems
from ._schemas import EPISODE, MANIFEST, STATEMENT, error_lines, schema_errors
from ._tracefile import TRACES_NAME, TraceFile, parse_trace_bytes, read_trace_file

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
    excluded: dict[str, Any] | None = None  # rollouts left out (allow_failed)


def _schema_problems(tf: TraceFile) -> list[str]:
    problems = [f"{TRACES_NAME} {p}" for p in tf.problems]
    for line, episode in tf.episodes:
        problems += error_lines(schema_errors(EPISODE, episode), f"{TRACES_NAME}:{line} ")
    return problems


def _consistency_problems(tf: TraceFile) -> list[str]:
    problems = []
    traces = [e.trace for e in tf.entries]
    first = traces[0]["info"]["environment"]
    build, split, commitment = build_part(first), first["split"], first["split_commitment"]
    params, levels = shared_params(first["task_params"]), levels_of(traces)
    for e in tf.entries:
        problems += [f"{e.where}: {p} (the first trace's)" for p in task_params_problems(e.trace, params, levels)]
    for e in tf.entries[1:]:
        env = e.trace["info"]["environment"]
        if build_part(env) != build:
            problems.append(f"{e.where}: another build identity than the first trace's "
                            f"(source digest {env.get('source_digest')} vs {build.get('source_digest')})")
        if (env["split"], env["split_commitment"]) != (split, commitment):
            problems.append(f"{e.where}: split {env['split']} / {env['split_commitment']} differs from the first "
                            f"trace's {split} / {commitment}")
    # What verifiers records beside the identity (task key, hash, idx, the Episode's task
    # and flags) is checked as `audit verify` checks it: red team, 2026-12-04, seal signed
    # runs with a forged task.key, task.data.idx, Episode.task or Episode.ok, which verify
    # of the same build then failed.
    problems += run_record_problems(tf.entries, tf.episodes, TRACES_NAME)[0]
    for digest, n in Counter(e.digest for e in tf.entries).items():
        if n > 1:
            dup = next(e for e in tf.entries if e.digest == digest)
            problems.append(f"{dup.where}: the same trace appears {n} times")
    _, mixed = evaluated_of(traces, episode_runs(tf))
    return problems + mixed


def _lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number from 1, bytes with their ``\n``) of every line, as the trace reader counts them."""
    out, start, number = [], 0, 0
    while start < len(data):
        stop = data.find(b"\n", start)
        stop = len(data) if stop < 0 else stop + 1
        number += 1
        out.append((number, data[start:stop]))
        start = stop
    return out


def _index_of(trace: Any) -> int | None:
    for path in (("info", "environment", "task_index"), ("task", "data", "index")):
        value: Any = trace
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def without_failures(tf: TraceFile) -> tuple[TraceFile, dict[str, Any]]:
    """The trace file of the run's lines that hold no failed rollout (their bytes
    unchanged), and what was left out: {rollouts, failed, task_indices, reasons}."""
    if tf.data is None:
        raise SealRefused("internal error: the traces file's bytes were not kept", [])
    failed = _failed_entries(tf)
    bad_lines = {e.line for e in failed}
    left_out = [e.trace for e in tf.entries if e.line in bad_lines]
    kept = b"".join(raw for number, raw in _lines(tf.data) if number not in bad_lines)
    excluded = {"rollouts": len(left_out), "failed": len(failed),
                "task_indices": sorted({i for i in map(_index_of, left_out) if i is not None}),
                "reasons": _failed(tf) or ""}
    if not kept.strip():
        return TraceFile(tf.path), excluded
    result = parse_trace_bytes(tf.path, kept)
    result.data = kept
    return result, excluded


def _failed_episode_lines(tf: TraceFile) -> set[int]:
    """Lines whose Episode is marked failed (ok false, or errors) though it may hold a
    scored trace (verifiers leaves one after an episode-level time-out or a failed
    finalize): verifiers counts the Episode failed (`vf-eval --resume` runs it again), so it is
    sealed only as a failed rollout; this project's readers still count its scored trace."""
    return {line for line, episode in tf.episodes if failed_kind(episode) is not None}


def _failed_entries(tf: TraceFile) -> list[Any]:
    """The failed rollouts: those marked failed, and every one of an Episode marked failed."""
    episode_failed = _failed_episode_lines(tf)
    return [e for e in tf.entries if e.line in episode_failed or failed_kind(e.trace) is not None]


def _failed(tf: TraceFile) -> str | None:
    """What failed in the run, by rollout and by Episode, in one line; None if nothing."""
    traces = summarise([e.trace for e in tf.entries])
    lines = _failed_episode_lines(tf)
    if not lines:
        return traces
    kinds = [failed_kind(ep) for line, ep in tf.episodes if line in lines]
    kind, message = next(k for k in kinds if k is not None)
    episodes = (f"{len(lines)} of {len(tf.episodes)} Episodes marked failed though their traces were scored "
                f"({kind}{': ' + message if message else ''})")
    return f"{traces}; {episodes}" if traces else episodes


def _run_id(tf: TraceFile) -> str:
    run_id = run_id_of(tf)
    if run_id is None:
        shown = ", ".join(sorted(map(str, run_ids(tf))))
        raise SealRefused("the run mixes Episodes of different runs", [f"run ids: {shown}"])
    return run_id


def _readable(source: Path, manifest_toml: bytes) -> dict[str, Any]:
    """The manifest as its readers parse it: one that report or `audit validate` would
    refuse (too large, or more tables and values than `loads_toml` reads) is not
    written, so no archive is sealed that its own tools cannot show."""
    try:
        if len(manifest_toml) > MAX_MANIFEST_BYTES:
            raise ManifestError(f"it would be {len(manifest_toml):,} bytes; at most {MAX_MANIFEST_BYTES:,} are read")
        return loads(manifest_toml)
    except ManifestError as exc:
        raise SealRefused(f"{source} has too many traces for one archive",
                          [f"its {MANIFEST_NAME}: {exc}: seal the run in parts"]) from None


def seal(run_dir: Path, private_key: Ed25519PrivateKey, out_dir: Path,
         created: dt.datetime | None = None, allow_failed: bool = False) -> Sealed:
    """Raises FileNotFoundError (no traces.jsonl), MemberError (traces.jsonl is a link or
    not a regular file, or is larger than a traces file may be: nothing is read), FileExistsError
    (out_dir not empty) or SealRefused (the run cannot be sealed). ``allow_failed``: seal
    the lines without failed rollouts as a PARTIAL archive (`Sealed.excluded` says what
    was left out)."""
    source = run_dir / TRACES_NAME
    if not source.exists() and not source.is_symlink():
        raise FileNotFoundError(f"{source} does not exist: RUN_DIR must hold a traces.jsonl")
    if out_dir.is_symlink():
        raise FileExistsError(f"{out_dir} is a symbolic link; refusing to write an archive through it")
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise FileExistsError(f"{out_dir} exists and is not an empty directory; refusing to overwrite it")
    # A run directory's member is read as the report, compare and rescore read it: a link
    # there is not followed (what is signed is the run's own file, not one it points at).
    tf = read_trace_file(source, keep_bytes=True, member=True)
    failed = _failed(tf)
    excluded: dict[str, Any] | None = None
    if failed and allow_failed:
        total = len(tf.entries)
        tf, excluded = without_failures(tf)
        if not tf.entries:
            raise SealRefused(f"{failed}: nothing to seal", [
                "every line of the run holds a failed rollout; fix the cause and run the tasks again"])
        if not tf.problems and len(tf.entries) + excluded["rollouts"] != total:
            raise SealRefused("internal error: the run's traces were not all kept or left out", [])
    problems = _schema_problems(tf)
    if failed and not allow_failed:
        ok = len(tf.entries) - len(_failed_entries(tf))
        hint = (f"`audit seal --allow-failed` seals the {ok} successful rollout{'s' if ok != 1 else ''} as a "
                f"PARTIAL archive that names what is missing; or run the failed tasks again "
                f"(`vf-eval @ {run_dir}/configs/resolved/eval.json --resume`)")
        raise SealRefused(f"{failed}: nothing to seal" if not ok else f"{failed}", [
            "a failed rollout has no scored reply" + (f"; {hint}" if ok else "; fix the cause and run the "
                                                      "failed tasks again") + " (the schema problems follow)",
            *problems])
    if problems:
        raise SealRefused(f"{source} is not a schema-valid run", problems)
    problems = _consistency_problems(tf)
    if problems:
        raise SealRefused(f"{source} does not state one result of one build on one split", problems)
    manifest = build_manifest(tf, _run_id(tf), SEALED_BY, created, excluded)
    try:
        manifest_toml = dumps(manifest)
    except UnicodeEncodeError:  # red team, 2026-12-03: an "internal error" before
        raise SealRefused(f"{source} cannot be sealed", [
            "a string the manifest records (the run's name or id, the model, a sampling setting) holds a lone "
            "surrogate (an escaped \\ud800-\\udfff with no pair), which no UTF-8 file can hold"]) from None
    parsed = _readable(source, manifest_toml)
    statement = _statement.build(manifest, hashlib.sha256(manifest_toml).hexdigest())
    payload = _statement.dumps(statement)
    errors = schema_errors(MANIFEST, jsonable(parsed)) + schema_errors(STATEMENT, statement)
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
    return Sealed(out_dir, manifest, keyid(private_key.public_key()), excluded)
