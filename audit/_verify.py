"""`audit verify`: the chain of trust, declared once as a sequence of steps.

The order follows what each step is allowed to trust (as in TUF's trusted metadata
set or sigstore's verifier): nothing in the archive is believed until one of the
envelope's signatures verifies under the key the evaluator pinned; then only the
signed payload is parsed, as an in-toto Statement whose predicate is the manifest
(``manifest.toml`` on disk is merely checked against the Statement: its subject digest
and its content); then the traces file must be the one the manifest names -- first its
size and SHA-256, reading no more than the sealed size plus one byte and parsing
nothing unless both match, then trace by trace; only then are traces read as data.
Archive members are opened without following symbolic links and must be regular files.

`CHAIN` declares every step: its name and title, the steps it ``requires`` (they must
have passed), the steps whose artefact it ``reads`` (they must have produced it, even
if they then failed: the payload type is read from an envelope whose signature did not
verify), and the reason its dependents give when it does not pass. Each step's check
method says in its docstring what passing proves. Skips are derived from that
declaration alone, never decided by the step code: a step whose prerequisite did not
pass is reported skipped, naming the step that failed (``Check.blocked_by``), instead
of being run on untrusted input. Checks that only read authenticated data (identity,
rescoring, summary, coverage, split labels, private seeds) require nothing of each
other and all run, so one report lists every problem. Any unexpected exception inside
a check becomes a failure of that check, never a traceback and never a pass.

Reading archive members (``read_*`` below) is kept apart from the checks: it is where
the bounds on hostile files live (size caps, no links, the sealed size plus one byte,
no sealed traces file above ``MAX_TRACES_BYTES``).

Rescoring spends what the evaluator grants (`Limits`: ``--max-budget`` per trace,
``--max-cpu`` in all, one `contract.Allowance` shared by the job workers). A trace not
granted is NOT CHECKED, and a check that could not check everything is ``incomplete``:
not a pass, exit 3. What a passing rescoring tolerated (the 4x budget retry,
time-dependent episodes) is counted for the verdict line, and ``--strict`` fails it.
The report names the Statement it is about (``statement_sha256``), so a verdict can be
tied to one archive and to no other.

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
import inspect
import os
import time
import traceback
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from redaction_pressure.contract import (
    DEFAULT_MAX_BUDGET_S,
    DEFAULT_MAX_CPU_S,
    MAX_TRACES_BYTES,
    MEAN_OVER_TASKS,
    Allowance,
    build_identity,
    describe_evaluated,
    evaluated_of,
    prove_split,
)

from . import _dsse, _statement
from ._canonical import same_json
from ._coverage import coverage_of, trace_indices
from ._files import MemberError, open_member, read_member
from ._keys import keyid
from ._labels import (
    STANDARD_LEVELS,
    STANDARD_TASK_PARAMS,
    describe_levels,
    describe_params,
    is_standard,
    manifest_problems,
    private_seed_problems,
    task_params_problems,
    trace_problems,
)
from ._manifest import (
    MANIFEST_NAME,
    ManifestError,
    build_part,
    episode_runs,
    jsonable,
    levels_of,
    loads,
    run_id_of,
    summarize,
    uneven,
)
from ._parallel import Workers, effective_jobs, rescore_all
from ._records import run_record_problems
from ._rescore import BUDGET_EXTENSION
from ._schemas import EPISODE, STATEMENT, SchemaError, error_lines, schema_errors
from ._tracefile import TRACES_NAME, TraceEntry, TraceFile, parse_trace_bytes

V1_MESSAGE = ("made by environment 0.1.x (manifest v1): verify it with that release "
              "(pip install 'redaction-pressure==0.1.*')")
V2_MESSAGE = ("made by environment 0.2.x or 0.3.x (manifest v2): verify it with the release its manifest's "
              "sealed_by names (e.g. pip install 'redaction-pressure==0.3.*')")
MAX_DETAILS = 200
_T = TypeVar("_T")
_CHUNK = 1 << 20


class Status(StrEnum):
    """A check's result. Its value is what the JSON report says."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # not run (a prerequisite did not pass), or nothing to check
    # ran and found nothing wrong, but did not check all it must, within the limits the
    # evaluator set (--max-budget, --max-cpu): not a pass (exit 3)
    INCOMPLETE = "incomplete"


PASSED, FAILED, SKIPPED, INCOMPLETE = Status.PASSED, Status.FAILED, Status.SKIPPED, Status.INCOMPLETE
EXIT_INCOMPLETE = 3


@dataclass(frozen=True)
class Outcome:
    """What a check found. ``not_checked``: skipped although the archive asks for the
    check (the evaluator did not supply what it needs), which the verdict line names.
    ``blocks``: why the steps that require this one are not run, when this outcome
    says more than the step's declared reason (an archive of another format)."""

    status: Status
    summary: str
    details: list[str] = field(default_factory=list)
    not_checked: bool = False
    blocks: str | None = None


def passed(summary: str, details: list[str] | None = None) -> Outcome:
    return Outcome(PASSED, summary, details or [])


class CheckFailed(Exception):
    """Raised inside a check to fail it with a summary and details."""

    def __init__(self, summary: str, details: list[str] | None = None, blocks: str | None = None):
        super().__init__(summary)
        self.summary, self.details, self.blocks = summary, details or [], blocks


@dataclass
class Check:
    name: str
    title: str
    status: Status
    summary: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    not_checked: bool = False   # see Outcome.not_checked
    blocked_by: str | None = None  # skipped: the step whose failure stopped this one

    def as_dict(self) -> dict[str, Any]:
        shown = self.details[:MAX_DETAILS]
        if len(self.details) > MAX_DETAILS:
            shown.append(f"... and {len(self.details) - MAX_DETAILS} more")
        return {"name": self.name, "title": self.title, "status": self.status.value, "summary": self.summary,
                "details": shown, "seconds": round(self.seconds, 6)}


@dataclass(frozen=True)
class Limits:
    """What the evaluator grants rescoring (``--max-budget``, ``--max-cpu``) and whether
    a tolerated machine-speed difference fails the verification (``--strict``)."""

    max_budget_s: float = DEFAULT_MAX_BUDGET_S
    max_cpu_s: float = DEFAULT_MAX_CPU_S
    strict: bool = False


@dataclass
class Report:
    archive: str
    pinned_key_id: str
    checks: list[Check]
    manifest: dict[str, Any] | None = None  # set once authenticated and schema-valid
    coverage: dict[str, Any] | None = None  # computed from the sealed traces, once they are readable
    time_dependent: int = 0       # recorded time-outs this machine finishes (see _rescore)
    budget_extended: int = 0      # traces reproduced only with the budget extended
    jobs: int = 1
    manifest_v1: bool = False     # an archive of the 0.1.x releases (not verified here)
    manifest_v2: bool = False     # an archive of the 0.2.x and 0.3.x releases (not verified here)
    statement_sha256: str | None = None  # SHA-256 of the DSSE payload (the signed Statement), once read
    traces: int = 0               # traces rescored or not, once the traces are readable
    not_rescored: int = 0         # traces the evaluator's limits left NOT CHECKED
    limits: Limits = field(default_factory=Limits)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    @property
    def incomplete(self) -> list[Check]:
        return [c for c in self.checks if c.status == INCOMPLETE]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else EXIT_INCOMPLETE if self.incomplete else 0

    @property
    def verdict(self) -> str:
        return FAILED.value if self.failed else INCOMPLETE.value if self.incomplete else PASSED.value

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    @property
    def task_params(self) -> dict[str, Any] | None:
        return self.manifest["task_params"] if self.manifest else None

    @property
    def levels(self) -> list[int] | None:
        return self.manifest["levels"] if self.manifest else None

    @property
    def standard_task_params(self) -> bool | None:
        """False when the archive was measured with non-standard task parameters or levels
        (not the standard benchmark, even if every check passed); None when unknown."""
        return None if self.manifest is None else is_standard(self.manifest["task_params"], self.manifest["levels"])

    def as_dict(self) -> dict[str, Any]:
        m = self.manifest or {}
        return {
            "archive": self.archive, "verdict": self.verdict,
            "exit_code": self.exit_code,
            "pinned_key_id": self.pinned_key_id, "statement_sha256": self.statement_sha256,
            "split": m.get("split", {}).get("name"), "label": m.get("summary", {}).get("label"),
            "task_params": self.task_params, "levels": self.levels,
            "standard_task_params": self.standard_task_params,
            "standard_benchmark_task_params": STANDARD_TASK_PARAMS, "standard_benchmark_levels": STANDARD_LEVELS,
            "run_id": m.get("run_id"), "evaluated": m.get("evaluated"),
            "evaluated_line": describe_evaluated(m["evaluated"]) if m else None,
            "summary": m.get("summary"), "by_level": m.get("by_level"),
            "coverage": None if self.coverage is None else {
                k: self.coverage[k] for k in ("label", "complete", "tasks", "split_tasks")} | {
                "rollouts_per_task": {"min": min(self.coverage["rollouts"]), "max": max(self.coverage["rollouts"])}},
            "time_dependent": self.time_dependent, "budget_extended": self.budget_extended,
            "budget_extension": BUDGET_EXTENSION, "traces": self.traces, "not_rescored": self.not_rescored,
            "tolerated": {"budget_extended": self.budget_extended, "time_dependent": self.time_dependent,
                          "refused_by_strict": self.limits.strict},
            "limits": {"max_budget_s": self.limits.max_budget_s, "max_cpu_s": self.limits.max_cpu_s,
                       "strict": self.limits.strict},
            "jobs": self.jobs,
            "format": ("manifest-v1 (not verified by this release)" if self.manifest_v1 else
                       "manifest-v2 (not verified by this release)" if self.manifest_v2 else "manifest-v3"),
            "note": V1_MESSAGE if self.manifest_v1 else V2_MESSAGE if self.manifest_v2 else None,
            "checks": [c.as_dict() for c in self.checks],
        }


@dataclass(frozen=True)
class Step:
    """One link of the chain. ``requires``: steps that must have passed. ``reads``: steps
    whose artefact this one reads, which must exist even if that step then failed.
    ``blocks``: why the steps requiring this one are not run when it does not pass.
    ``unread``: why the steps reading it are not run when it produced nothing.
    ``then``: run once this step has passed, outside its timing."""

    name: str
    title: str
    check: Callable[[_Verifier], Outcome]
    requires: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    blocks: str = ""
    unread: str = ""
    then: Callable[[_Verifier], None] | None = None

    @property
    def proves(self) -> str:
        """What passing this step establishes (its check's docstring)."""
        return inspect.getdoc(self.check) or ""


# -- reading archive members (bounded; every refusal is a failure of the calling check) --

def read_envelope(archive: Path) -> bytes:
    """The envelope's bytes, at most ``MAX_ENVELOPE_BYTES`` of them."""
    try:
        data = read_member(archive / _dsse.ENVELOPE_NAME, _dsse.MAX_ENVELOPE_BYTES)
    except MemberError as exc:
        if exc.missing:
            raise CheckFailed(f"no {_dsse.ENVELOPE_NAME} in the archive: it is unsigned or its signature was "
                              "removed") from None
        raise CheckFailed(str(exc)) from None
    if len(data) > _dsse.MAX_ENVELOPE_BYTES:
        raise CheckFailed(f"{_dsse.ENVELOPE_NAME} is larger than {_dsse.MAX_ENVELOPE_BYTES} bytes (not parsed)")
    return data


def read_manifest_copy(archive: Path, limit: int) -> bytes:
    """``manifest.toml``'s bytes, refused past ``limit`` (it is only a copy of the signed
    predicate, so it cannot legitimately be much larger)."""
    try:
        data = read_member(archive / MANIFEST_NAME, limit)
    except MemberError as exc:
        raise CheckFailed(f"{exc} (the signed predicate is used)") from None
    if len(data) > limit:
        raise CheckFailed(f"{MANIFEST_NAME} is larger than {limit} bytes, far larger than the signed predicate: it "
                          f"was replaced after sealing (not read further; the signed predicate is used)")
    return data


def read_sealed_file(path: Path, sealed_bytes: int, sealed_sha256: str) -> bytes:
    """The file's bytes if they are exactly the sealed size and SHA-256. Otherwise fails,
    having read at most ``sealed_bytes`` + 1 bytes and parsed nothing: a replaced file
    costs the evaluator no more than the sealed one would, whatever its size or
    content (a sparse file of terabytes is refused by its size before any read)."""
    if sealed_bytes > MAX_TRACES_BYTES:  # the signer's choice, but not one this verifier reads
        raise CheckFailed(f"the manifest seals a {TRACES_NAME} of {sealed_bytes:,} bytes; this verifier reads at most "
                          f"{MAX_TRACES_BYTES:,} (not read; a run that large is sealed in parts)")
    h, chunks, size = hashlib.sha256(), [], 0
    try:
        with open_member(path) as f:
            on_disk = _size_of(f)
            if on_disk != sealed_bytes:
                raise CheckFailed(f"{TRACES_NAME} is {on_disk} bytes; the manifest sealed {sealed_bytes} "
                                  f"(the file was replaced or changed after sealing; not read)")
            while size <= sealed_bytes:  # the file may grow while read: never past sealed + 1
                chunk = f.read(min(_CHUNK, sealed_bytes + 1 - size))
                if not chunk:
                    break
                h.update(chunk)
                chunks.append(chunk)
                size += len(chunk)
    except MemberError as exc:
        raise CheckFailed(f"{TRACES_NAME} is missing from the archive" if exc.missing else str(exc)) from None
    if size != sealed_bytes:
        raise CheckFailed(f"{TRACES_NAME} changed size while being read ({'more than ' if size > sealed_bytes else ''}"
                          f"{size} bytes; the manifest sealed {sealed_bytes}); not parsed")
    digest = h.hexdigest()
    if digest != sealed_sha256:
        raise CheckFailed(f"{TRACES_NAME} has SHA-256 {digest}; the manifest sealed {sealed_sha256}: it was changed "
                          f"after sealing (not parsed, so the changed traces are not named)")
    return b"".join(chunks)


def _produced(artefact: _T | None, step: str) -> _T:
    """An artefact a step reads; None means the chain's declaration let the step run
    before ``step`` made it, which fails the reading check (closed)."""
    if artefact is None:
        raise RuntimeError(f"read before {step} produced it")
    return artefact


def _size_of(f: IO[bytes]) -> int:
    return os.fstat(f.fileno()).st_size


class _Verifier:
    """The state one verification builds up, step by step: each artefact is set by the
    step that established it, and read only by the steps that require or read that one."""

    def __init__(self, archive: Path, public_key: Ed25519PublicKey, secret: bytes | None, jobs: int,
                 chain: Sequence[Step] | None = None, limits: Limits | None = None):
        # the workers it runs, which the report states
        self.archive, self.public_key, self.secret, self.jobs = archive, public_key, secret, effective_jobs(jobs)
        self.limits = limits or Limits()
        self.allowance = Allowance(self.limits.max_budget_s, self.limits.max_cpu_s, shared=self.jobs > 1)
        self.chain: Sequence[Step] = CHAIN if chain is None else chain
        self.checks: list[Check] = []
        self.produced: set[str] = set()          # steps whose artefact exists (passed, or got that far)
        self.block_reasons: dict[str, str] = {}  # step that did not pass -> why its dependents are not run
        self.envelope: _dsse.Envelope | None = None
        self.statement: dict[str, Any] | None = None
        self.manifest: dict[str, Any] | None = None
        self.tracefile: TraceFile | None = None
        self.coverage: dict[str, Any] | None = None
        self.time_dependent = self.budget_extended = self.not_rescored = 0
        self.manifest_v1 = self.manifest_v2 = False
        self.workers = Workers(self.jobs, self.allowance)

    # -- running the declared chain ---------------------------------------------------------
    def run(self) -> Report:
        try:
            for step in self.chain:
                blocker = self._blocker(step)
                if blocker is not None:
                    root, reason = blocker
                    self.checks.append(Check(step.name, step.title, SKIPPED, f"not run: {reason}", blocked_by=root))
                    self.block_reasons[step.name] = reason
                elif self._run(step) and step.then is not None:
                    step.then(self)
            return self._report()
        finally:
            self.workers.close()

    def _blocker(self, step: Step) -> tuple[str, str] | None:
        """(the failed step, the reason) that keeps ``step`` from running, or None. Of
        several prerequisites that did not pass, the nearest one speaks; one that was
        itself skipped passes on what stopped it."""
        for name in step.reads:
            if name not in self.produced:
                return name, self._step(name).unread
        done = {c.name: c for c in self.checks}
        unmet = [name for name in step.requires if done[name].status != PASSED]
        if not unmet:
            return None
        nearest = done[max(unmet, key=self._index)]
        root = nearest.blocked_by or nearest.name
        return root, self.block_reasons[root]

    def _step(self, name: str) -> Step:
        return next(s for s in self.chain if s.name == name)

    def _index(self, name: str) -> int:
        return next(i for i, s in enumerate(self.chain) if s.name == name)

    def _run(self, step: Step) -> bool:
        start = time.perf_counter()
        try:
            outcome = step.check(self)
        except CheckFailed as exc:
            outcome = Outcome(FAILED, exc.summary, exc.details, blocks=exc.blocks)
        except Exception as exc:  # noqa: BLE001 - fail closed on anything unexpected
            last = traceback.extract_tb(exc.__traceback__)[-1]
            outcome = Outcome(FAILED, "internal error while checking (treated as a failure)", [
                f"{type(exc).__name__}: {str(exc)[:300]} (at {Path(last.filename).name}:{last.lineno})"])
        self.checks.append(Check(step.name, step.title, outcome.status, outcome.summary, outcome.details,
                                 time.perf_counter() - start, not_checked=outcome.not_checked))
        if outcome.status == PASSED:
            self.produced.add(step.name)
        else:
            self.block_reasons[step.name] = outcome.blocks or step.blocks
        return outcome.status == PASSED

    def start_workers(self) -> None:
        """Forks the ``jobs`` workers (they start their scan workers) while this process
        reads the traces: only once the manifest is authenticated, and before any trace
        is read, so they hold no trace data but their chunks'. A failure here is not
        fatal: the first check that needs them starts them again and fails if it cannot."""
        try:
            self.workers.start()
        except Exception:  # noqa: BLE001 - reported by the check that uses them
            with contextlib.suppress(Exception):
                self.workers.close()
            self.workers = Workers(self.jobs, self.allowance)

    def _map_pieces(self, fn: Callable[[list[Any]], list[Any]], items: list[Any],
                    prepare: Callable[[Any], Any]) -> list[Any]:
        return self.workers.map(fn, items, prepare=prepare, min_chunk=1, max_chunk=1)

    def _report(self) -> Report:
        return Report(str(self.archive), keyid(self.public_key), self.checks, self.manifest, self.coverage,
                      self.time_dependent, self.budget_extended, self.jobs, manifest_v1=self.manifest_v1,
                      manifest_v2=self.manifest_v2,
                      statement_sha256=hashlib.sha256(self.envelope.payload).hexdigest() if self.envelope else None,
                      traces=len(self.tracefile.entries) if self.tracefile else 0, not_rescored=self.not_rescored,
                      limits=self.limits)

    # -- artefacts, for the steps that declared they need them ----------------------------
    @property
    def _envelope(self) -> _dsse.Envelope:
        return _produced(self.envelope, "signature")

    @property
    def _manifest(self) -> dict[str, Any]:
        return _produced(self.manifest, "manifest-schema")

    @property
    def _signed_statement(self) -> dict[str, Any]:
        return _produced(self.statement, "manifest-schema")

    @property
    def _tracefile(self) -> TraceFile:
        return _produced(self.tracefile, "trace-digests")

    @property
    def _entries(self) -> list[TraceEntry]:
        return self._tracefile.entries

    # -- the checks, in chain order -----------------------------------------------------
    def check_signature(self) -> Outcome:
        """One of the envelope's signatures verifies under the pinned key, over PAE of its
        payload type and payload: the signed payload is the pinned key holder's."""
        data = read_envelope(self.archive)
        try:
            self.envelope = _dsse.Envelope.parse(data)
        except _dsse.EnvelopeError as exc:
            raise CheckFailed("the envelope is not a well-formed DSSE envelope", exc.reasons) from None
        del data
        self.produced.add("signature")  # a readable envelope, whether or not a signature verifies
        try:
            self.envelope.verify(self.public_key)
        except _dsse.SignatureError as exc:
            raise CheckFailed(str(exc)) from None
        n = len(self.envelope.signatures)
        of = f" (of {n} signatures; the others are not checked)" if n > 1 else ""
        return passed(f"a valid Ed25519 signature by the pinned key {keyid(self.public_key)}{of}")

    def check_payload_type(self) -> Outcome:
        """The signed payload type is an in-toto Statement's: what was signed is meant to
        be read as this release's manifest (and not, say, a manifest-v1 of 0.1.x)."""
        got = self._envelope.payload_type
        if got == _dsse.V1_PAYLOAD_TYPE:
            self.manifest_v1 = True
            raise CheckFailed(f"this archive is {V1_MESSAGE}; this release reads manifest v2 (an in-toto Statement "
                              f"under {_dsse.PAYLOAD_TYPE})", blocks=V1_MESSAGE)
        if got != _dsse.PAYLOAD_TYPE:
            raise CheckFailed(f"payload type {got[:200]!r} is not {_dsse.PAYLOAD_TYPE!r}: the signed document is "
                              f"not an in-toto Statement of a redaction-pressure run")
        return passed(f"{_dsse.PAYLOAD_TYPE} (in-toto Statement)")

    def check_manifest_schema(self) -> Outcome:
        """The authenticated payload is a schema-valid in-toto Statement whose predicate is
        a manifest-v3 and whose traces subject is the digest the predicate seals: from
        here on the manifest is trusted data."""
        try:
            statement = _statement.loads(self._envelope.payload)
        except _statement.StatementError as exc:
            raise CheckFailed(str(exc)) from None
        if isinstance(statement, dict) and statement.get("predicateType") == _statement.V2_PREDICATE_TYPE:
            self.manifest_v2 = True
            raise CheckFailed(f"this archive is {V2_MESSAGE}; this release reads manifest v3 (predicate type "
                              f"{_statement.PREDICATE_TYPE})", blocks=V2_MESSAGE)
        errors = schema_errors(STATEMENT, statement, limit=MAX_DETAILS)
        if errors:
            raise CheckFailed(f"the signed Statement has {'at least ' if errors.truncated else ''}{len(errors)} "
                              f"schema error(s) (statement-v3: an in-toto Statement v1 of predicate type "
                              f"{_statement.PREDICATE_TYPE} whose predicate is a manifest-v3)", error_lines(errors))
        manifest = statement["predicate"]
        subjects = _statement.subject_digests(statement)
        if subjects[TRACES_NAME] != manifest["traces_file"]["sha256"]:
            raise CheckFailed(f"the Statement's subject {TRACES_NAME} has SHA-256 {subjects[TRACES_NAME]}, but its "
                              f"predicate seals {manifest['traces_file']['sha256']}: "
                              "the signed document contradicts itself")
        self.statement, self.manifest = statement, manifest
        return passed(f"in-toto Statement v1, {_statement.PREDICATE_TYPE}, manifest-v3, split "
                      f"{manifest['split']['name']}, run {manifest['run_id']}")

    def check_manifest_file(self) -> Outcome:
        """``manifest.toml`` is the signed subject and says exactly what the signed
        predicate says. Nothing relies on it (the predicate is used), so its failure
        skips nothing: a reader of the archive's TOML would be misled."""
        sealed = _statement.subject_digests(self._signed_statement)[MANIFEST_NAME]
        limit = 2 * len(self._envelope.payload) + 4096  # TOML of the predicate is about its JSON's size
        on_disk = read_manifest_copy(self.archive, limit)
        digest = hashlib.sha256(on_disk).hexdigest()
        if digest != sealed:
            raise CheckFailed(f"{MANIFEST_NAME} has SHA-256 {digest}, the signed Statement's subject says {sealed}: "
                              f"it was edited after sealing (only the signed predicate is trusted)")
        try:
            content = jsonable(loads(on_disk))
        except ManifestError as exc:
            raise CheckFailed(f"{MANIFEST_NAME} is the signed subject but not readable: {exc}") from None
        manifest = self._manifest
        if not same_json(content, manifest):  # types included: TOML's true is not the predicate's 1
            keys = sorted(k for k in set(content) | set(manifest) if not same_json(content.get(k), manifest.get(k)))
            raise CheckFailed(f"{MANIFEST_NAME} (signed as a subject) does not say what the signed predicate says",
                              [f"differs at {', '.join(keys[:20])}"])
        return passed("the Statement's subject (SHA-256), and parses to exactly the signed predicate")

    def check_trace_digests(self) -> Outcome:
        """``traces.jsonl`` is byte for byte the sealed file (size, then SHA-256, before any
        parsing), and its traces are the manifest's list, in order: the traces are
        authenticated data."""
        m = self._manifest
        sealed = m["traces_file"]
        path = self.archive / TRACES_NAME
        data = read_sealed_file(path, sealed["bytes"], sealed["sha256"])
        if self.workers.parallel:  # parsed, and schema-checked, in the workers (see check_trace_schemas)
            tf = parse_trace_bytes(path, data, sealed["sha256"], self._map_pieces, episode_errors)
        else:
            tf = parse_trace_bytes(path, data, sealed["sha256"])
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
            problems.append(f"the manifest counts {counts['episodes']} episodes; {TRACES_NAME} has "
                            f"{len(tf.episodes)}")
        if problems:
            raise CheckFailed("the traces are not the sealed ones", problems)
        return passed(f"{TRACES_NAME} ({sealed['bytes']} bytes, SHA-256) and all {len(tf.entries)} "
                      "trace digests match the manifest")

    def check_trace_schemas(self) -> Outcome:
        """Every Episode line is schema-valid (episode-v1, trace-v1, identity-v1): the
        checks that read traces as data may index them as the schemas promise."""
        tf = self._tracefile
        problems: list[str] = []
        truncated = False
        per_episode = tf.episode_checks
        if per_episode is None:
            per_episode = self.workers.map(episode_errors, tf.episodes, min_chunk=8)
        for (line, _), (errors, more) in zip(tf.episodes, per_episode, strict=True):
            room = MAX_DETAILS - len(problems)
            problems += [f"{TRACES_NAME}:{line} {e}" for e in errors[:room]]
            if more or len(errors) > room or len(problems) >= MAX_DETAILS:
                truncated = True
                break
        if problems:
            count = f"at least {len(problems)}" if truncated else f"{len(problems)}"
            if truncated:
                problems.append(f"(stopped after {len(problems)} errors; there are more)")
            raise CheckFailed(f"{count} schema error(s) in {TRACES_NAME}", problems)
        return passed(f"{len(tf.episodes)} episode lines valid (episode-v1, trace-v1, identity-v1)")

    def check_identity(self) -> Outcome:
        """The archive was built by the installed build (same source digest and build
        identity in the manifest and every trace), every trace was scored with the
        archive's task parameters (compared as JSON values, types included), and what
        else records its task (task.key, task.data.idx, the Episode's task and ok) agrees
        with that identity: rescoring here can reproduce it, and no reader is told otherwise."""
        archived, installed = self._manifest["identity"], build_identity()
        problems = []
        summary = None
        for key in sorted(set(archived) | set(installed)):
            a, b = archived.get(key, "(absent)"), installed.get(key, "(absent)")
            if a != b:
                if key == "source_digest":
                    summary = f"archive built by source digest {a}, installed build is {b}"
                problems.append(f"{key}: archive has {a!r}, installed build has {b!r}")
        params, levels = self._manifest["task_params"], self._manifest["levels"]
        params_differ = 0
        for e in self._entries:
            env = e.trace["info"]["environment"]
            if not same_json(build_part(env), archived):
                problems.append(f"{e.where}: info.environment's build identity differs from the manifest's")
            if not same_json(build_part(e.trace["task"]["data"]["identity"]), archived):
                problems.append(f"{e.where}: task.data.identity's build identity differs from the manifest's")
            found = task_params_problems(e.trace, params, levels)
            params_differ += bool(found)
            problems += [f"{e.where}: {p}" for p in found]
        records, records_differ = run_record_problems(self._entries, self._tracefile.episodes, TRACES_NAME)
        problems += records
        if problems:
            if summary is None and params_differ:
                summary = (f"{params_differ} of {len(self._entries)} traces were not scored with the archive's "
                           f"task parameters ({describe_params(params)})")
            if summary is None and records_differ:
                summary = ("the task keys or hashes, task positions (idx), Episode tasks or success flags recorded "
                           "beside the traces' identity disagree with it")
            raise CheckFailed(summary or "the archive was not produced by the installed build", problems)
        found_levels = levels_of([e.trace for e in self._entries])
        if found_levels != levels:
            raise CheckFailed(f"the manifest covers {describe_levels(levels)}; the traces are at "
                              f"{describe_levels(found_levels)}")
        standard = "standard" if is_standard(params, levels) else "NON-STANDARD: not the standard benchmark"
        return passed(f"same build: source digest {installed['source_digest']} "
                      f"({installed['source_digest_algorithm']}); every trace scored with task parameters "
                      f"{describe_params(params)} at {describe_levels(levels)} ({standard})")

    def check_rescoring(self) -> Outcome:
        """Every trace's recorded reward and error codes are what scoring its recorded
        reply gives here (time-outs this machine finishes with at least a quarter of the
        budget spent are TIME-DEPENDENT, with less a mismatch; rewards
        reproduced only with the budget extended 4x are counted: both tolerated, and named
        in the verdict, unless --strict); a trace the evaluator's limits leave unrescored
        is NOT CHECKED, which is not a pass."""
        results = rescore_all([e.trace for e in self._entries], self.jobs, self.workers)
        problems: list[str] = []
        bad, extended = 0, 0
        dependent: list[str] = []
        unchecked: list[str] = []
        reasons: Counter[str] = Counter()
        for e, r in zip(self._entries, results, strict=True):
            bad += bool(r.problems)
            problems += [f"{e.where}: {p}" for p in r.problems]
            if r.time_dependent:
                dependent.append(e.where)
            if r.not_checked is not None:
                unchecked.append(f"not checked: {e.where}: {r.not_checked}")
                reasons[r.not_checked] += 1
            extended += r.extended and not r.problems and r.not_checked is None
        n = len(self._entries)
        self.time_dependent, self.budget_extended, self.not_rescored = len(dependent), extended, len(unchecked)
        if problems:
            tail = f"; {len(unchecked)} more NOT CHECKED" if unchecked else ""
            raise CheckFailed(f"{bad} of {n} traces do not reproduce their recorded rewards{tail}",
                              problems + unchecked)
        tolerated = tolerance_phrases(extended, len(dependent), n, self._manifest["task_params"]["budget_s"])
        if self.limits.strict and tolerated:
            raise CheckFailed(f"--strict: {'; '.join(tolerated)}",
                              [f"time-dependent: {w}" for w in dependent])
        checked = n - len(unchecked)
        notes = []
        if extended:
            notes.append(f"{extended} reproduced exactly with the budget extended {BUDGET_EXTENSION:g}x (this "
                         f"machine is slower than the sealing one, or the reply needs more than its stated budget)")
        if dependent:
            notes.append(f"{len(dependent)} TIME-DEPENDENT: recorded a time-out (voided, reward 0) that this "
                         f"machine finishes using at least 1/{BUDGET_EXTENSION:g} of the budget (within the "
                         f"{BUDGET_EXTENSION:g}x tolerance); everything else matches")
        tail = f"; {'; '.join(notes)}" if notes else ""
        details = [f"time-dependent: {w}" for w in dependent]
        if unchecked:
            why = "; ".join(f"{k} because {w}" for w, k in reasons.most_common())
            return Outcome(INCOMPLETE, f"NOT CHECKED: {len(unchecked)} of {n} traces were not rescored ({why}); "
                                       f"the other {checked} reproduce their recorded rewards and error codes{tail}",
                           unchecked + details)
        return passed(f"all {n} traces reproduce their recorded rewards and error codes{tail}", details)

    def check_summary(self) -> Outcome:
        """The manifest's summary (means, their standard errors and 95% intervals, the
        bootstrap's included, class tables), each level's figures and the counts are the
        ones its traces give, recomputed here and compared exactly."""
        m = self._manifest
        traces = [e.trace for e in self._entries]
        expected, per_level = summarize(traces, m["split"]["name"], m["task_params"], m["levels"],
                                        m["coverage"].get("excluded"))
        problems = [f"summary.{k}: manifest says {str(m['summary'].get(k))[:200]}, the traces give {str(v)[:200]}"
                    for k, v in expected.items() if m["summary"].get(k) != v]
        problems += [f"summary.{k}: not a figure of the traces" for k in m["summary"] if k not in expected]
        if m["by_level"] != per_level:
            said = {lv["level"]: lv for lv in m["by_level"]}
            for lv in per_level:
                if said.get(lv["level"]) != lv:
                    problems.append(f"by_level: level {lv['level']}'s figures are not its traces' "
                                    f"(manifest {str(said.get(lv['level']))[:200]}, traces {str(lv)[:200]})")
            problems += [f"by_level: level {k} has no traces" for k in said if k not in {x["level"] for x in per_level}]
            if not problems:
                problems.append("by_level: the levels are not in level order")
        counts = m["counts"]
        if counts["invalid"] != expected["invalid"] or counts["valid"] != len(traces) - expected["invalid"]:
            problems.append(f"counts.valid/invalid {counts['valid']}/{counts['invalid']} do not match the traces "
                            f"({len(traces) - expected['invalid']}/{expected['invalid']})")
        if problems:
            raise CheckFailed("the manifest's summary is not the summary of its traces", problems)
        s = expected
        u = s["uncertainty"]["reward"]
        pm = f" ± {u['se']:.4f} (95% CI {u['ci95'][0]:.4f}–{u['ci95'][1]:.4f})" if "se" in u else ""
        tasks = len({e.trace["info"]["environment"]["task_id"] for e in self._entries})
        over = f" ({MEAN_OVER_TASKS})" if uneven(traces) else ""
        return passed(f"{s['label']}: mean reward {s['mean_reward']:.4f}{pm} over {s['traces']} traces "
                      f"of {tasks} distinct tasks{over}, task parameters {describe_params(m['task_params'])}, "
                      f"{describe_levels(m['levels'])} (recall {s['mean_recall']:.4f}, precision "
                      f"{s['mean_precision']:.4f}, clean {s['clean_rate']:.4f}, invalid {s['invalid']}); "
                      f"standard errors, intervals and class tables recomputed")

    def check_evaluated(self) -> Outcome:
        """The manifest names the model, sampling settings, harness and run (or the
        built-in policy) that every trace records: what was evaluated is the traces'
        own record, signed (not proof that the model produced the replies)."""
        said = self._manifest["evaluated"]
        found, mixed = evaluated_of([e.trace for e in self._entries], episode_runs(self._tracefile))
        problems = [f"evaluated.{k}: manifest says {str(said.get(k))[:200]!r}, the traces give {str(v)[:200]!r}"
                    for k, v in found.items() if not same_json(said.get(k), v)]
        problems += [f"evaluated.{k}: not recorded by the traces" for k in said if k not in found]
        run_id = run_id_of(self._tracefile)
        if run_id is not None and self._manifest["run_id"] != run_id:
            problems.append(f"run_id: manifest says {str(self._manifest['run_id'])[:200]!r}, the traces give "
                            f"{run_id!r}")
        if problems or mixed:
            raise CheckFailed("the manifest does not name what the traces record as evaluated", problems + mixed)
        return passed(describe_evaluated(found))

    def check_coverage(self) -> Outcome:
        """The manifest's coverage (tasks of the split, rollouts per task) is its traces'."""
        m = self._manifest
        found = coverage_of(m["split"]["name"], trace_indices(e.trace for e in self._entries),
                            m["coverage"].get("excluded"))
        self.coverage = found
        problems = [f"coverage.{k}: manifest says {str(m['coverage'].get(k))[:200]}, the traces give "
                    f"{str(v)[:200]}" for k, v in found.items() if m["coverage"].get(k) != v]
        problems += [f"coverage.{k}: not part of the traces' coverage" for k in m["coverage"] if k not in found]
        if problems:
            raise CheckFailed("the manifest's coverage is not its traces'", problems)
        if "excluded" in found:
            return passed(f"{found['label']} (the left-out rollouts are the sealer's statement: they have no "
                          f"scores to check)")
        return passed(found["label"])

    def check_split_labels(self) -> Outcome:
        """The split label is backed by its commitment and every trace's seed (public
        seeds are the public range's; private seeds lie outside every public range)."""
        m = self._manifest
        split, commitment = m["split"]["name"], m["split"]["commitment"]
        problems = manifest_problems(m)
        for e in self._entries:
            problems += [f"{e.where}: {p}" for p in trace_problems(e.trace, split, commitment)]
        if problems:
            proof = prove_split((split, commitment, e.trace["info"]["environment"]["task_index"],
                                 e.trace["info"]["environment"]["task_seed"]) for e in self._entries)
            said = proof.disagreement()
            raise CheckFailed(f"the archive's split label {split!r} is not backed by its commitment and seeds"
                              + (f": {said}" if said else ""), problems)
        what = ("seeds are the public range's" if split != "private_eval"
                else "private commitment; seeds outside every public range")
        return passed(f"{split}: {m['summary']['label']}; {what}")

    def check_private_seeds(self) -> Outcome:
        """With the private secret supplied: it is the committed one, and every revealed
        seed derives from it. Without it a private archive's seeds are NOT CHECKED."""
        m = self._manifest
        split, label = m["split"]["name"], m["summary"]["label"]
        if split != "private_eval":
            if self.secret is not None:
                raise CheckFailed(f"a private secret was supplied, but this archive is split {split} ({label}): "
                                  f"it is not a private evaluation")
            return Outcome(SKIPPED, f"public split {split}: no private seeds (public seeds checked under "
                                    f"split-labels)")
        if self.secret is None:
            return Outcome(SKIPPED, "NOT CHECKED: no --private-seed-env given, so the revealed seeds are not "
                                    "shown to come from the committed secret", not_checked=True)
        where = [(e.where, e.trace) for e in self._entries]
        problems = private_seed_problems(self.secret, m["split"]["commitment"], where)
        if problems:
            raise CheckFailed("the private seeds do not derive from the supplied secret", problems)
        return passed(f"commitment matches the secret; all {len(where)} seeds re-derived with HMAC-SHA256")


_UNAUTHENTICATED = "the manifest is not authenticated (see signature / payload type)"
_AUTHENTICATED_DATA = ("trace-schemas",)

CHAIN: tuple[Step, ...] = (
    Step("signature", "signature under the pinned key", _Verifier.check_signature,
         blocks=_UNAUTHENTICATED, unread="the envelope could not be read"),
    Step("payload-type", "payload type", _Verifier.check_payload_type, reads=("signature",),
         blocks=_UNAUTHENTICATED),
    Step("manifest-schema", "in-toto Statement and manifest-v3 schema", _Verifier.check_manifest_schema,
         requires=("signature", "payload-type"),
         blocks="the signed payload is not a valid Statement of a manifest-v3", then=_Verifier.start_workers),
    Step("manifest-file", "manifest.toml is the signed subject and predicate", _Verifier.check_manifest_file,
         requires=("manifest-schema",)),
    Step("trace-digests", "traces file and per-trace digests", _Verifier.check_trace_digests,
         requires=("manifest-schema",), blocks="traces.jsonl is not the sealed traces file"),
    Step("trace-schemas", "trace schemas", _Verifier.check_trace_schemas, requires=("trace-digests",),
         blocks="some traces are not schema-valid"),
    Step("identity", "identity against the installed build", _Verifier.check_identity,
         requires=_AUTHENTICATED_DATA),
    Step("rescoring", "rewards recomputed from replies", _Verifier.check_rescoring, requires=_AUTHENTICATED_DATA),
    Step("summary", "summary scores and uncertainty against the traces", _Verifier.check_summary,
         requires=_AUTHENTICATED_DATA),
    Step("evaluated", "model, sampling, harness and run against the traces", _Verifier.check_evaluated,
         requires=_AUTHENTICATED_DATA),
    Step("coverage", "tasks and rollouts covered", _Verifier.check_coverage, requires=_AUTHENTICATED_DATA),
    Step("split-labels", "split labels against commitments", _Verifier.check_split_labels,
         requires=_AUTHENTICATED_DATA),
    Step("private-seeds", "private seed derivation", _Verifier.check_private_seeds, requires=_AUTHENTICATED_DATA),
)


def chain_problems(chain: Sequence[Step]) -> list[str]:
    """Why ``chain`` is not a well-formed declaration ([] if it is): names are unique,
    every step it requires or reads comes earlier, and a step others depend on says why
    they are not run without it."""
    problems: list[str] = []
    seen: dict[str, Step] = {}
    for step in chain:
        if step.name in seen:
            problems.append(f"{step.name}: declared twice")
        for name in step.requires + step.reads:
            if name not in seen:
                problems.append(f"{step.name}: depends on {name!r}, which is not an earlier step")
            elif name in step.requires and not seen[name].blocks:
                problems.append(f"{step.name}: requires {name}, which declares no reason for its dependents")
            elif name in step.reads and not seen[name].unread:
                problems.append(f"{step.name}: reads {name}, which declares no reason when it produced nothing")
        if not (step.check.__doc__ or "").strip():
            problems.append(f"{step.name}: its check does not say what it proves")
        seen[step.name] = step
    return problems


if chain_problems(CHAIN):  # a broken declaration must not verify anything
    raise RuntimeError("audit verify's chain is ill-declared: " + "; ".join(chain_problems(CHAIN)))

def episode_errors(episodes: list[tuple[int, Any]]) -> list[tuple[list[SchemaError], bool]]:
    """(the first MAX_DETAILS schema errors, whether there are more) of each (line,
    Episode): the unit of work of the trace-schemas check, serial or in processes."""
    out: list[tuple[list[SchemaError], bool]] = []
    for _, episode in episodes:
        errors = schema_errors(EPISODE, episode, limit=MAX_DETAILS)
        out.append((list(errors), errors.truncated))
    return out


def _diff_traces(sealed: list[dict[str, Any]], found: list[TraceEntry], limit: int = MAX_DETAILS) -> list[str]:
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
    seen: Counter[str] = Counter()
    duplicated: list[TraceEntry] = []
    unknown: list[TraceEntry] = []
    for e in found:
        seen[e.digest] += 1
        if seen[e.digest] > want[e.digest]:
            (duplicated if want[e.digest] else unknown).append(e)
    seen.clear()
    missing: dict[str, deque[dict[str, Any]]] = defaultdict(deque)  # task id -> sealed entries not found, in order
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


def tolerance_phrases(extended: int, time_dependent: int, traces: int, budget_s: float) -> list[str]:
    """What a passing verification tolerated, in the words its verdict line uses."""
    out = []
    if extended:
        out.append(f"{extended} of {traces} rewards reproduced only with a {BUDGET_EXTENSION:g}x budget "
                   f"({BUDGET_EXTENSION * budget_s:g} s, not the stated {budget_s:g} s)")
    if time_dependent:
        out.append(f"{time_dependent} TIME-DEPENDENT episode(s) of {traces}: recorded time-outs (reward 0) that "
                   f"this machine finishes using at least 1/{BUDGET_EXTENSION:g} of their budget (a recorded time-out "
                   f"finished in less fails)")
    return out


def verify_archive(archive: Path, public_key: Ed25519PublicKey, private_secret: bytes | None = None,
                   jobs: int = 1, limits: Limits | None = None) -> Report:
    """Runs every check on ``archive``, rescoring in ``jobs`` processes within
    ``limits``; never raises for anything the archive contains."""
    return _Verifier(Path(archive), public_key, private_secret, max(1, jobs), limits=limits).run()
