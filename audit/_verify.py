"""`audit verify`: one check per step of the chain of trust, each failing closed.

The order follows what each step is allowed to trust (as in TUF's or sigstore's
verifiers): nothing in the archive is believed until one of the envelope's signatures
verifies under the key the evaluator pinned; then only the signed payload is parsed,
as an in-toto Statement whose predicate is the manifest (``manifest.toml`` on disk is
merely checked against the Statement: its subject digest and its content); then the
traces file must be
the one the manifest names -- first its size and SHA-256, reading no more than the
sealed size plus one byte and parsing nothing unless both match, then trace by trace;
only then are traces read as data. Archive members are opened without following
symbolic links and must be regular files. When a
step of that chain fails, the steps that would have relied on it are reported as
skipped, naming the failed step, instead of being run on untrusted input. Checks that
only read authenticated data (identity, rescoring, summary, coverage, split labels,
private seeds) all run, so one report lists every problem. Any unexpected exception
inside a check becomes a failure of that check, never a traceback and never a pass.

With ``jobs`` > 1 the costly work runs in ``jobs`` worker processes (``_parallel.py``),
with the same report byte for byte but for the seconds: they are forked once the
manifest is authenticated, before the traces file is read; once the file's size and
SHA-256 match, they parse it in pieces and check each piece's Episode schemas as they
go (so ``trace-digests`` then takes the schemas' time, and ``trace-schemas`` only
reports what they found, and only if ``trace-digests`` passed); then they rescore.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import traceback
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from redaction_pressure.contract import build_identity

from . import _dsse, _statement
from ._coverage import coverage_of, trace_indices
from ._files import MemberError, open_member, read_member
from ._keys import keyid
from ._labels import (
    STANDARD_TASK_PARAMS,
    describe_params,
    is_standard,
    manifest_problems,
    private_seed_problems,
    task_params_problems,
    trace_problems,
)
from ._manifest import MANIFEST_NAME, ManifestError, build_part, jsonable, loads, summarize
from ._parallel import Workers, rescore_all
from ._rescore import BUDGET_EXTENSION
from ._schemas import EPISODE, STATEMENT, error_lines, schema_errors
from ._tracefile import TRACES_NAME, TraceEntry, TraceFile, parse_trace_bytes

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
V1_MESSAGE = ("made by environment 0.1.x (manifest v1): verify it with that release "
              "(pip install 'redaction-pressure==0.1.*')")
MAX_DETAILS = 200
_CHUNK = 1 << 20


@dataclass
class Check:
    name: str
    title: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        shown = self.details[:MAX_DETAILS]
        if len(self.details) > MAX_DETAILS:
            shown.append(f"... and {len(self.details) - MAX_DETAILS} more")
        return {"name": self.name, "title": self.title, "status": self.status, "summary": self.summary,
                "details": shown, "seconds": round(self.seconds, 6)}


@dataclass
class Report:
    archive: str
    pinned_key_id: str
    checks: list[Check]
    manifest: dict | None = None  # set once authenticated and schema-valid
    coverage: dict | None = None  # computed from the sealed traces, once they are readable
    time_dependent: int = 0       # recorded time-outs this machine finishes (see _rescore)
    budget_extended: int = 0      # traces reproduced only with the budget extended
    jobs: int = 1
    manifest_v1: bool = False     # an archive of the 0.1.x releases (not verified here)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    @property
    def task_params(self) -> dict | None:
        return self.manifest["task_params"] if self.manifest else None

    @property
    def standard_task_params(self) -> bool | None:
        """False when the archive was measured with non-standard task parameters (not the
        standard benchmark, even if every check passed); None when unknown."""
        return None if self.manifest is None else is_standard(self.manifest["task_params"])

    def as_dict(self) -> dict:
        m = self.manifest or {}
        return {
            "archive": self.archive, "verdict": FAILED if self.failed else PASSED, "exit_code": self.exit_code,
            "pinned_key_id": self.pinned_key_id,
            "split": m.get("split", {}).get("name"), "label": m.get("summary", {}).get("label"),
            "task_params": self.task_params, "standard_task_params": self.standard_task_params,
            "standard_benchmark_task_params": STANDARD_TASK_PARAMS,
            "run_id": m.get("run_id"), "summary": m.get("summary"),
            "coverage": None if self.coverage is None else {
                k: self.coverage[k] for k in ("label", "complete", "tasks", "split_tasks")} | {
                "rollouts_per_task": {"min": min(self.coverage["rollouts"]), "max": max(self.coverage["rollouts"])}},
            "time_dependent": self.time_dependent, "budget_extended": self.budget_extended,
            "budget_extension": BUDGET_EXTENSION, "jobs": self.jobs,
            "format": "manifest-v1 (not verified by this release)" if self.manifest_v1 else "manifest-v2",
            "note": V1_MESSAGE if self.manifest_v1 else None,
            "checks": [c.as_dict() for c in self.checks],
        }


class _Failed(Exception):
    """Raised inside a check to fail it with a summary and details."""

    def __init__(self, summary: str, details: list[str] | None = None):
        super().__init__(summary)
        self.summary, self.details = summary, details or []


TITLES = {
    "signature": "signature under the pinned key",
    "payload-type": "payload type",
    "manifest-schema": "in-toto Statement and manifest-v2 schema",
    "manifest-file": "manifest.toml is the signed subject and predicate",
    "trace-digests": "traces file and per-trace digests",
    "trace-schemas": "trace schemas",
    "identity": "identity against the installed build",
    "rescoring": "rewards recomputed from replies",
    "summary": "summary scores against the traces",
    "coverage": "tasks and rollouts covered",
    "split-labels": "split labels against commitments",
    "private-seeds": "private seed derivation",
}


class _Verifier:
    def __init__(self, archive: Path, public_key: Ed25519PublicKey, secret: bytes | None, jobs: int):
        self.archive, self.public_key, self.secret, self.jobs = archive, public_key, secret, jobs
        self.statement: dict | None = None
        self.coverage: dict | None = None
        self.time_dependent = self.budget_extended = 0
        self.manifest_v1 = False
        self.checks: list[Check] = []
        self.envelope: _dsse.Envelope | None = None
        self.manifest: dict | None = None
        self.tracefile: TraceFile | None = None
        self.workers = Workers(jobs)

    # -- plumbing --------------------------------------------------------------------
    def _run(self, name: str, fn) -> bool:
        start = time.perf_counter()
        try:
            status, summary, details = fn()
        except _Failed as exc:
            status, summary, details = FAILED, exc.summary, exc.details
        except Exception as exc:  # noqa: BLE001 - fail closed on anything unexpected
            last = traceback.extract_tb(exc.__traceback__)[-1]
            status, summary, details = FAILED, "internal error while checking (treated as a failure)", [
                f"{type(exc).__name__}: {str(exc)[:300]} (at {Path(last.filename).name}:{last.lineno})"]
        self.checks.append(Check(name, TITLES[name], status, summary, details, time.perf_counter() - start))
        return status != FAILED

    def _skip(self, names: list[str], reason: str) -> None:
        for name in names:
            self.checks.append(Check(name, TITLES[name], SKIPPED, f"not run: {reason}"))

    # -- the chain -------------------------------------------------------------------
    def run(self) -> Report:
        try:
            return self._chain()
        finally:
            self.workers.close()

    def _chain(self) -> Report:
        signed = self._run("signature", self._signature)
        if self.envelope is not None:
            signed = self._run("payload-type", self._payload_type) and signed
        else:
            self._skip(["payload-type"], "the envelope could not be read")
        rest = ["manifest-schema", "manifest-file", "trace-digests", "trace-schemas", "identity", "rescoring",
                "summary", "coverage", "split-labels", "private-seeds"]
        if self.manifest_v1:
            self._skip(rest, V1_MESSAGE)
            return self._report()
        if not signed:
            self._skip(rest, "the manifest is not authenticated (see signature / payload type)")
            return self._report()
        if not self._run("manifest-schema", self._manifest_schema):
            self._skip(rest[1:], "the signed payload is not a valid Statement of a manifest-v2")
            return self._report()
        self._start_workers()
        self._run("manifest-file", self._manifest_file)
        if not self._run("trace-digests", self._trace_digests):
            self._skip(rest[3:], "traces.jsonl is not the sealed traces file")
            return self._report()
        if not self._run("trace-schemas", self._trace_schemas):
            self._skip(rest[4:], "some traces are not schema-valid")
            return self._report()
        for name in rest[4:]:
            self._run(name, getattr(self, "_" + name.replace("-", "_")))
        return self._report()

    def _start_workers(self) -> None:
        """Forks the ``jobs`` workers (they start their scan workers) while this process
        reads the traces: only once the manifest is authenticated, and before any trace
        is read, so they hold no trace data but their chunks'. A failure here is not
        fatal: the first check that needs them starts them again and fails if it cannot."""
        try:
            self.workers.start()
        except Exception:  # noqa: BLE001 - reported by the check that uses them
            with contextlib.suppress(Exception):
                self.workers.close()
            self.workers = Workers(self.jobs)

    def _map_pieces(self, fn, items: list, prepare) -> list:
        return self.workers.map(fn, items, prepare=prepare, min_chunk=1, max_chunk=1)

    def _report(self) -> Report:
        return Report(str(self.archive), keyid(self.public_key), self.checks, self.manifest, self.coverage,
                      self.time_dependent, self.budget_extended, self.jobs, self.manifest_v1)

    @property
    def _entries(self) -> list[TraceEntry]:
        return self.tracefile.entries

    # -- (a) signature ------------------------------------------------------------------
    def _signature(self):
        path = self.archive / _dsse.ENVELOPE_NAME
        try:
            data = read_member(path, _dsse.MAX_ENVELOPE_BYTES)
        except MemberError as exc:
            if exc.missing:
                raise _Failed(f"no {_dsse.ENVELOPE_NAME} in the archive: it is unsigned or its signature was "
                              "removed") from None
            raise _Failed(str(exc)) from None
        if len(data) > _dsse.MAX_ENVELOPE_BYTES:
            raise _Failed(f"{_dsse.ENVELOPE_NAME} is larger than {_dsse.MAX_ENVELOPE_BYTES} bytes (not parsed)")
        try:
            self.envelope = _dsse.parse(data)
        except _dsse.EnvelopeError as exc:
            raise _Failed("the envelope is not a well-formed DSSE envelope", exc.reasons) from None
        del data
        reason = _dsse.verify(self.envelope, self.public_key)
        if reason:
            raise _Failed(reason)
        n = len(self.envelope.signatures)
        of = f" (of {n} signatures; the others are not checked)" if n > 1 else ""
        return PASSED, f"a valid Ed25519 signature by the pinned key {keyid(self.public_key)}{of}", []

    # -- (b) payload type ---------------------------------------------------------------
    def _payload_type(self):
        got = self.envelope.payload_type
        if got == _dsse.V1_PAYLOAD_TYPE:
            self.manifest_v1 = True
            raise _Failed(f"this archive is {V1_MESSAGE}; this release reads manifest v2 (an in-toto Statement "
                          f"under {_dsse.PAYLOAD_TYPE})")
        if got != _dsse.PAYLOAD_TYPE:
            raise _Failed(f"payload type {got[:200]!r} is not {_dsse.PAYLOAD_TYPE!r}: the signed document is "
                          f"not an in-toto Statement of a redaction-pressure run")
        return PASSED, f"{_dsse.PAYLOAD_TYPE} (in-toto Statement)", []

    # -- (c) Statement and manifest schema ------------------------------------------------
    def _manifest_schema(self):
        try:
            statement = _statement.loads(self.envelope.payload)
        except _statement.StatementError as exc:
            raise _Failed(str(exc)) from None
        errors = schema_errors(STATEMENT, statement, limit=MAX_DETAILS)
        if errors:
            raise _Failed(f"the signed Statement has {'at least ' if errors.truncated else ''}{len(errors)} schema "
                          f"error(s) (statement-v2: an in-toto Statement v1 of predicate type "
                          f"{_statement.PREDICATE_TYPE} whose predicate is a manifest-v2)", error_lines(errors))
        manifest = statement["predicate"]
        subjects = _statement.subject_digests(statement)
        if subjects[TRACES_NAME] != manifest["traces_file"]["sha256"]:
            raise _Failed(f"the Statement's subject {TRACES_NAME} has SHA-256 {subjects[TRACES_NAME]}, but its "
                          f"predicate seals {manifest['traces_file']['sha256']}: "
                          "the signed document contradicts itself")
        self.statement, self.manifest = statement, manifest
        return PASSED, (f"in-toto Statement v1, {_statement.PREDICATE_TYPE}, manifest-v2, split "
                        f"{manifest['split']['name']}, run {manifest['run_id']}"), []

    # -- manifest.toml is only a copy -------------------------------------------------------
    def _manifest_file(self):
        path = self.archive / MANIFEST_NAME
        sealed = _statement.subject_digests(self.statement)[MANIFEST_NAME]
        limit = 2 * len(self.envelope.payload) + 4096  # TOML of the predicate is about its JSON's size
        try:
            on_disk = read_member(path, limit)
        except MemberError as exc:
            raise _Failed(f"{exc} (the signed predicate is used)") from None
        if len(on_disk) > limit:
            raise _Failed(f"{MANIFEST_NAME} is larger than {limit} bytes, far larger than the signed predicate: it "
                          f"was replaced after sealing (not read further; the signed predicate is used)")
        digest = hashlib.sha256(on_disk).hexdigest()
        if digest != sealed:
            raise _Failed(f"{MANIFEST_NAME} has SHA-256 {digest}, the signed Statement's subject says {sealed}: it "
                          f"was edited after sealing (only the signed predicate is trusted)")
        try:
            content = jsonable(loads(on_disk))
        except ManifestError as exc:
            raise _Failed(f"{MANIFEST_NAME} is the signed subject but not readable: {exc}") from None
        if content != self.manifest:
            keys = sorted(k for k in set(content) | set(self.manifest) if content.get(k) != self.manifest.get(k))
            raise _Failed(f"{MANIFEST_NAME} (signed as a subject) does not say what the signed predicate says",
                          [f"differs at {', '.join(keys[:20])}"])
        return PASSED, "the Statement's subject (SHA-256), and parses to exactly the signed predicate", []

    # -- (d) digests --------------------------------------------------------------------
    def _read_sealed_file(self, path: Path, sealed_bytes: int, sealed_sha256: str) -> bytes:
        """The file's bytes if they are exactly the sealed size and SHA-256. Otherwise fails,
        having read at most ``sealed_bytes`` + 1 bytes and parsed nothing: a replaced file
        costs the evaluator no more than the sealed one would, whatever its size or
        content (a sparse file of terabytes is refused by its size before any read)."""
        h, chunks, size = hashlib.sha256(), [], 0
        try:
            with open_member(path) as f:
                on_disk = _size_of(f)
                if on_disk != sealed_bytes:
                    raise _Failed(f"{TRACES_NAME} is {on_disk} bytes; the manifest sealed {sealed_bytes} "
                                  f"(the file was replaced or changed after sealing; not read)")
                while size <= sealed_bytes:  # the file may grow while read: never past sealed + 1
                    chunk = f.read(min(_CHUNK, sealed_bytes + 1 - size))
                    if not chunk:
                        break
                    h.update(chunk)
                    chunks.append(chunk)
                    size += len(chunk)
        except MemberError as exc:
            raise _Failed(f"{TRACES_NAME} is missing from the archive" if exc.missing else str(exc)) from None
        if size != sealed_bytes:
            raise _Failed(f"{TRACES_NAME} changed size while being read ({'more than ' if size > sealed_bytes else ''}"
                          f"{size} bytes; the manifest sealed {sealed_bytes}); not parsed")
        digest = h.hexdigest()
        if digest != sealed_sha256:
            raise _Failed(f"{TRACES_NAME} has SHA-256 {digest}; the manifest sealed {sealed_sha256}: it was changed "
                          f"after sealing (not parsed, so the changed traces are not named)")
        return b"".join(chunks)

    def _trace_digests(self):
        m = self.manifest
        sealed = m["traces_file"]
        data = self._read_sealed_file(self.archive / TRACES_NAME, sealed["bytes"], sealed["sha256"])
        if self.workers.parallel:  # parsed, and schema-checked, in the workers (see _trace_schemas)
            tf = parse_trace_bytes(self.archive / TRACES_NAME, data, sealed["sha256"], self._map_pieces,
                                   episode_errors)
        else:
            tf = parse_trace_bytes(self.archive / TRACES_NAME, data, sealed["sha256"])
        self.tracefile = tf
        del data
        problems = [f"{TRACES_NAME} {p}" for p in tf.problems[:MAX_DETAILS]]
        if len(tf.problems) > MAX_DETAILS:
            problems.append(f"... and {len(tf.problems) - MAX_DETAILS} more problems in {TRACES_NAME}")
        problems += _diff_traces(m["traces"], tf.entries)
        counts = m["counts"]
        if counts["traces"] != len(m["traces"]):
            problems.append(f"the manifest counts {counts['traces']} traces but lists {len(m['traces'])}")
        if counts["episodes"] != len(tf.episodes):
            problems.append(f"the manifest counts {counts['episodes']} episodes; {TRACES_NAME} has {len(tf.episodes)}")
        if problems:
            raise _Failed("the traces are not the sealed ones", problems)
        return (PASSED, f"{TRACES_NAME} ({sealed['bytes']} bytes, SHA-256) and all {len(tf.entries)} "
                        "trace digests match the manifest", [])

    # -- (e) trace schemas --------------------------------------------------------------
    def _trace_schemas(self):
        problems, truncated = [], False
        per_episode = self.tracefile.episode_checks
        if per_episode is None:
            per_episode = self.workers.map(episode_errors, self.tracefile.episodes, min_chunk=8)
        for (line, _), (errors, more) in zip(self.tracefile.episodes, per_episode, strict=True):
            room = MAX_DETAILS - len(problems)
            problems += [f"{TRACES_NAME}:{line} {e}" for e in errors[:room]]
            if more or len(errors) > room or len(problems) >= MAX_DETAILS:
                truncated = True
                break
        if problems:
            count = f"at least {len(problems)}" if truncated else f"{len(problems)}"
            if truncated:
                problems.append(f"(stopped after {len(problems)} errors; there are more)")
            raise _Failed(f"{count} schema error(s) in {TRACES_NAME}", problems)
        return PASSED, f"{len(self.tracefile.episodes)} episode lines valid (episode-v1, trace-v1, identity-v1)", []

    # -- (f) identity -------------------------------------------------------------------
    def _identity(self):
        archived, installed = self.manifest["identity"], build_identity()
        problems = []
        summary = None
        for key in sorted(set(archived) | set(installed)):
            a, b = archived.get(key, "(absent)"), installed.get(key, "(absent)")
            if a != b:
                if key == "source_digest":
                    summary = f"archive built by source digest {a}, installed build is {b}"
                problems.append(f"{key}: archive has {a!r}, installed build has {b!r}")
        params = self.manifest["task_params"]
        params_differ = 0
        for e in self._entries:
            env = e.trace["info"]["environment"]
            if build_part(env) != archived:
                problems.append(f"{e.where}: info.environment's build identity differs from the manifest's")
            if build_part(e.trace["task"]["data"]["identity"]) != archived:
                problems.append(f"{e.where}: task.data.identity's build identity differs from the manifest's")
            found = task_params_problems(e.trace, params)
            params_differ += bool(found)
            problems += [f"{e.where}: {p}" for p in found]
        if problems:
            if summary is None and params_differ:
                summary = (f"{params_differ} of {len(self._entries)} traces were not scored with the archive's task "
                           f"parameters ({describe_params(params)})")
            raise _Failed(summary or "the archive was not produced by the installed build", problems)
        standard = "standard" if is_standard(params) else "NON-STANDARD: not the standard benchmark"
        return PASSED, (f"same build: source digest {installed['source_digest']} "
                        f"({installed['source_digest_algorithm']}); every trace scored with task parameters "
                        f"{describe_params(params)} ({standard})"), []

    # -- (g) rescoring ------------------------------------------------------------------
    def _rescoring(self):
        results = rescore_all([e.trace for e in self._entries], self.jobs, self.workers)
        problems, bad, dependent, extended = [], 0, [], 0
        for e, r in zip(self._entries, results, strict=True):
            bad += bool(r.problems)
            problems += [f"{e.where}: {p}" for p in r.problems]
            if r.time_dependent:
                dependent.append(e.where)
            extended += r.extended and not r.problems
        self.time_dependent, self.budget_extended = len(dependent), extended
        if problems:
            raise _Failed(f"{bad} of {len(self._entries)} traces do not reproduce their recorded rewards", problems)
        notes = []
        if extended:
            notes.append(f"{extended} reproduced exactly with the budget extended {BUDGET_EXTENSION:g}x (this "
                         f"machine is slower than the sealing one)")
        if dependent:
            notes.append(f"{len(dependent)} TIME-DEPENDENT: recorded a time-out (voided, reward 0) that this "
                         f"machine finishes; everything else matches")
        tail = f"; {'; '.join(notes)}" if notes else ""
        return PASSED, f"all {len(self._entries)} traces reproduce their recorded rewards and error codes{tail}", [
            f"time-dependent: {w}" for w in dependent]

    # -- summary ------------------------------------------------------------------------
    def _summary(self):
        m = self.manifest
        traces = [e.trace for e in self._entries]
        expected = summarize(traces, m["split"]["name"], m["task_params"])
        problems = [f"summary.{k}: manifest says {m['summary'].get(k)!r}, the traces give {v!r}"
                    for k, v in expected.items() if m["summary"].get(k) != v]
        counts = m["counts"]
        if counts["invalid"] != expected["invalid"] or counts["valid"] != len(traces) - expected["invalid"]:
            problems.append(f"counts.valid/invalid {counts['valid']}/{counts['invalid']} do not match the traces "
                            f"({len(traces) - expected['invalid']}/{expected['invalid']})")
        if problems:
            raise _Failed("the manifest's summary is not the summary of its traces", problems)
        s = expected
        tasks = len({e.trace["info"]["environment"]["task_id"] for e in self._entries})
        return PASSED, (f"{s['label']}: mean reward {s['mean_reward']:.4f} over {s['traces']} traces "
                        f"of {tasks} distinct tasks, task parameters {describe_params(m['task_params'])} "
                        f"(recall {s['mean_recall']:.4f}, precision {s['mean_precision']:.4f}, "
                        f"clean {s['clean_rate']:.4f}, invalid {s['invalid']})"), []

    # -- coverage -----------------------------------------------------------------------
    def _coverage(self):
        m = self.manifest
        found = coverage_of(m["split"]["name"], trace_indices(e.trace for e in self._entries))
        self.coverage = found
        problems = [f"coverage.{k}: manifest says {str(m['coverage'].get(k))[:200]}, the traces give "
                    f"{str(v)[:200]}" for k, v in found.items() if m["coverage"].get(k) != v]
        if problems:
            raise _Failed("the manifest's coverage is not its traces'", problems)
        return PASSED, found["label"], []

    # -- (h) split labels ---------------------------------------------------------------
    def _split_labels(self):
        m = self.manifest
        split, commitment = m["split"]["name"], m["split"]["commitment"]
        problems = manifest_problems(m)
        for e in self._entries:
            problems += [f"{e.where}: {p}" for p in trace_problems(e.trace, split, commitment)]
        if problems:
            raise _Failed(f"the archive's split label {split!r} is not backed by its commitment and seeds", problems)
        what = ("seeds are the public range's" if split != "private_eval"
                else "private commitment; seeds outside every public range")
        return PASSED, f"{split}: {m['summary']['label']}; {what}", []

    # -- (i) private seeds --------------------------------------------------------------
    def _private_seeds(self):
        m = self.manifest
        split, label = m["split"]["name"], m["summary"]["label"]
        if split != "private_eval":
            if self.secret is not None:
                raise _Failed(f"a private secret was supplied, but this archive is split {split} ({label}): "
                              f"it is not a private evaluation")
            return SKIPPED, f"public split {split}: no private seeds (public seeds checked under split-labels)", []
        if self.secret is None:
            return SKIPPED, ("NOT CHECKED: no --private-seed-env given, so the revealed seeds are not shown to "
                             "come from the committed secret"), []
        where = [(e.where, e.trace) for e in self._entries]
        problems = private_seed_problems(self.secret, m["split"]["commitment"], where)
        if problems:
            raise _Failed("the private seeds do not derive from the supplied secret", problems)
        return PASSED, f"commitment matches the secret; all {len(where)} seeds re-derived with HMAC-SHA256", []


def episode_errors(episodes: list) -> list[tuple[list, bool]]:
    """(the first MAX_DETAILS schema errors, whether there are more) of each (line,
    Episode): the unit of work of the trace-schemas check, serial or in processes."""
    out = []
    for _, episode in episodes:
        errors = schema_errors(EPISODE, episode, limit=MAX_DETAILS)
        out.append((list(errors), errors.truncated))
    return out


def _size_of(f) -> int:
    return os.fstat(f.fileno()).st_size


def _diff_traces(sealed: list[dict], found: list[TraceEntry], limit: int = MAX_DETAILS) -> list[str]:
    """Names each trace added, dropped, duplicated, edited or moved relative to the
    manifest (at most ``limit`` of them, then a count of the rest), in O(n + m)."""
    sealed_digests = [s["sha256"] for s in sealed]
    found_digests = [e.digest for e in found]
    problems = [f"the manifest lists trace {d[:16]}… {n} times" for d, n in Counter(sealed_digests).items() if n > 1]
    if sealed_digests == found_digests:
        for s, e in zip(sealed, found, strict=False):
            if (s["line"], s["position"], s["task_id"]) != (e.line, e.position, e.task_id):
                problems.append(f"{e.where}: sealed as line {s['line']} trace {s['position']} ({s['task_id']})")
        return _capped(problems, limit)
    want, have = Counter(sealed_digests), Counter(found_digests)
    seen: Counter = Counter()
    duplicated, unknown = [], []
    for e in found:
        seen[e.digest] += 1
        if seen[e.digest] > want[e.digest]:
            (duplicated if want[e.digest] else unknown).append(e)
    seen.clear()
    missing: dict[str, deque] = defaultdict(deque)  # task id -> sealed entries not found, in order
    for s in sealed:
        seen[s["sha256"]] += 1
        if seen[s["sha256"]] > have[s["sha256"]]:
            missing[s["task_id"]].append(s)
    for e in duplicated:
        problems.append(f"duplicated: {e.where} repeats a sealed trace")
    for e in unknown:
        queue = missing.get(e.task_id)
        if queue:
            match = queue.popleft()
            problems.append(f"edited: {e.where} differs from the sealed trace of {match['task_id']} "
                            f"(sealed {match['sha256'][:16]}…, found {e.digest[:16]}…)")
        else:
            problems.append(f"added: {e.where} was not sealed")
    dropped = sorted((s for queue in missing.values() for s in queue), key=lambda s: (s["line"], s["position"]))
    for s in dropped:
        problems.append(f"dropped: the sealed trace of {s['task_id']} (line {s['line']} "
                        f"trace {s['position']}) is missing")
    if not (duplicated or unknown or dropped):
        problems.append("reordered: the traces are the sealed ones but not in the sealed order")
    return _capped(problems, limit)


def _capped(problems: list[str], limit: int) -> list[str]:
    if len(problems) <= limit:
        return problems
    return [*problems[:limit], f"... and {len(problems) - limit} more differences"]


def verify_archive(archive: Path, public_key: Ed25519PublicKey, private_secret: bytes | None = None,
                   jobs: int = 1) -> Report:
    """Runs every check on ``archive``, rescoring in ``jobs`` processes; never raises for
    anything the archive contains."""
    return _Verifier(Path(archive), public_key, private_secret, max(1, jobs)).run()
