"""Whether an archive passed `audit verify`, for the page's header.

A badge means a verification. The page says "verified" only when `audit verify` ran
here, with a key the user pinned, passed, and named the Statement (SHA-256 of the DSSE
payload) that the report then reads from this very archive, and that Statement's
subjects are the SHA-256 of the very ``traces.jsonl`` and ``manifest.toml`` bytes the
page shows: a verdict of another archive, an archive swapped while it was verified, or
files that are not the signed ones never get the badge.

A verdict file (``--verdict``, the output of `audit verify --json`) is an unsigned
claim: anyone can write ``{"verdict": "passed"}``, or copy another archive's genuine
verdict. It is tied to this archive by the Statement digest it names and shown, at
best, as a claim "not re-checked here", in words and colours no reader takes for a
pass. A verdict that names another Statement is another archive's verdict.

The environment package does not import `audit` (the dependency points the other way),
so verification runs as an isolated child process of the same interpreter that loads
this build's `audit` by path (`boundary.launch`): nothing in the current directory or
the archive's runs in it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..boundary.files import InputFileError, read_bounded
from ..boundary.launch import child_environment, has_package, python_command
from ..boundary.parse_bounds import loads_json
from ..scoring.scan_pool import WORKERS_ENV
from ._runfile import ENVELOPE, RunError

MAX_VERDICT_BYTES = 64 << 20
MAX_ENVELOPE_BYTES = 64 << 20  # as `audit verify` reads it
VERIFY_TIMEOUT_S = 1800

VERIFIED, CLAIMED, NOT_VERIFIED = "verified", "claimed", "not-verified"


@dataclass(frozen=True)
class Verification:
    state: str  # VERIFIED (ran here and passed), CLAIMED (a verdict file says so), NOT_VERIFIED
    how: str  # one line: what was checked, or why nothing was
    failures: list[str] = field(default_factory=list)
    traces: int | None = None  # how many traces the verdict covers (its "traces"), when it passed

    @property
    def verified(self) -> bool:
        return self.state == VERIFIED

    def as_shown(self, read: int, counted: int, problems: int) -> Verification:
        """This verification, if the figures shown are over every trace it covers: the
        file's ``read`` traces with no ``problems`` reading it, all ``counted`` in the
        figures. Otherwise NOT VERIFIED: a reader that drops lines or traces `audit
        verify` accepted (a line it refuses for its values' density, a trace labelled as
        another task) would put a badge over figures of a part the signer chose (review
        of 2026-12-03: 5 of 8 verified traces, mean 0.192 against the verified 0.134)."""
        if self.state == NOT_VERIFIED or (problems == 0 and read == counted == self.traces):
            return self
        covered = "an unknown number of" if self.traces is None else f"{self.traces:,}"
        return Verification(NOT_VERIFIED, f"NOT VERIFIED as shown: `audit verify` passed for {covered} traces, but "
                                          f"this reader read {read:,} ({problems:,} problem(s) reading the file) and "
                                          f"counts {counted:,} in its figures: figures over part of a verified "
                                          f"archive are not its verified result ({self.how[:300]})", self.failures,
                            self.traces)


NOT_ASKED = Verification(NOT_VERIFIED, "not verified: no --public-key or --verdict was given")


@dataclass(frozen=True)
class Statement:
    """This archive's signed Statement as the report reads it: the SHA-256 of the DSSE
    payload (None: ``problem`` says why) and the SHA-256 of each file it names as a
    subject (``traces.jsonl``, ``manifest.toml``)."""

    sha256: str | None
    subjects: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


def _b64(text: str) -> bytes:
    """DSSE base64: standard or URL-safe, padded or not (as `audit verify` reads it)."""
    alt = b"-_" if ("-" in text or "_" in text) else None
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=alt, validate=True)


def read_statement(archive: Path) -> Statement:
    """The Statement of the archive at ``archive`` (never raises for what it contains)."""
    try:
        envelope = loads_json(read_bounded(archive / ENVELOPE, MAX_ENVELOPE_BYTES))
        payload = _b64(envelope["payload"])
    except InputFileError as exc:
        return Statement(None, problem=f"{ENVELOPE} cannot be read: {exc}")
    except OSError as exc:
        return Statement(None, problem=f"{ENVELOPE} cannot be read: {exc.strerror or exc}")
    except (ValueError, RecursionError, TypeError, KeyError, binascii.Error):
        return Statement(None, problem=f"{ENVELOPE} is not a DSSE envelope with a base64 payload")
    sha256 = hashlib.sha256(payload).hexdigest()
    subjects: dict[str, str] = {}
    try:
        for subject in loads_json(payload)["subject"]:
            name, digest = subject["name"], subject["digest"]["sha256"]
            if isinstance(name, str) and isinstance(digest, str):
                subjects[name] = digest
    except (ValueError, RecursionError, TypeError, KeyError):
        return Statement(sha256, problem="the signed payload is not a Statement with subjects")
    return Statement(sha256, subjects)


def _failures(verdict: dict[str, Any]) -> list[str]:
    out: list[str] = []
    checks = verdict.get("checks")
    for c in checks if isinstance(checks, list) else []:
        if isinstance(c, dict) and c.get("status") in ("failed", "incomplete"):
            out.append(f"{c.get('title') or c.get('name')}: {c.get('summary')}"[:500])
    return out[:30]


def _count(verdict: dict[str, Any]) -> int | None:
    n = verdict.get("traces")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def _passed(verdict: dict[str, Any]) -> bool:
    return verdict.get("verdict") == "passed" and verdict.get("exit_code") == 0


def _short(digest: object) -> str:
    return f"{str(digest)[:16]}…"


def _tie(verdict: object, statement: Statement, shown: dict[str, str], source: str) -> Verification | None:
    """Why ``verdict`` is not about this archive's Statement and the files shown (their
    SHA-256 by name), or None."""
    if not isinstance(verdict, dict):
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} is not an `audit verify --json` verdict")
    named = verdict.get("statement_sha256")
    if not isinstance(named, str):
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} names no Statement digest, so nothing ties it "
                                          f"to this archive", _failures(verdict))
    if statement.sha256 is None:
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} cannot be tied to this archive: "
                                          f"{statement.problem}")
    if named != statement.sha256:
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} is the verdict of another archive (it names "
                                          f"Statement SHA-256 {_short(named)}, this archive's is "
                                          f"{_short(statement.sha256)})")
    for name, digest in shown.items():
        if statement.subjects.get(name) != digest:
            why = statement.problem or (f"it names {_short(statement.subjects.get(name))}, the page shows "
                                        f"{_short(digest)}")
            return Verification(NOT_VERIFIED, f"NOT VERIFIED: the {name} shown is not the one this archive's signed "
                                              f"Statement names ({why})")
    return None


def read_verdict_file(path: Path, statement: Statement, shown: dict[str, str]) -> Verification:
    """The claim a verdict file makes about this archive. Raises RunError when the file
    cannot be read (missing, not a regular file, larger than MAX_VERDICT_BYTES)."""
    try:
        data = read_bounded(Path(path), MAX_VERDICT_BYTES, follow_links=True)
    except InputFileError as exc:
        raise RunError(f"cannot read the verdict file {path}: {exc}") from None
    except OSError as exc:
        raise RunError(f"cannot read the verdict file {path}: {exc.strerror or exc}") from None
    source = f"verdict file {Path(path).name}"
    try:
        verdict = loads_json(data)
    except (ValueError, RecursionError):
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} is not JSON")
    untied = _tie(verdict, statement, shown, source)
    if untied is not None:
        return untied
    if not _passed(verdict):
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: {source} says `audit verify` did not pass for this "
                                          f"archive", _failures(verdict))
    return Verification(CLAIMED, f"claimed by {source}, not re-checked here: it says `audit verify` passed for "
                                 f"this archive's Statement (SHA-256 {_short(statement.sha256)}, key id "
                                 f"{_short(verdict.get('pinned_key_id'))}). A file anyone can write is not a "
                                 f"verification: give --public-key to verify here", traces=_count(verdict))


def run_verify(archive: Path, public_key: Path, statement_of: Callable[[Path], Statement], shown: dict[str, str], *,
               jobs: int, max_budget_s: float, max_cpu_s: float, strict: bool = False) -> Verification:
    """Runs `audit verify --json` on ``archive`` with the pinned key (and ``--strict``
    when asked: a tolerated budget retry or time-dependent episode then fails), then binds
    its verdict to the Statement ``statement_of(archive)`` reads afterwards and to the
    files shown (``shown``: their SHA-256 by name)."""
    if not has_package("audit"):
        return Verification(NOT_VERIFIED, "not verified: the `audit` package is not installed beside "
                                          "redaction_pressure")
    cmd = python_command("audit", "verify", str(archive), "--public-key", str(public_key), "--json",
                         "--jobs", str(jobs), "--max-budget", repr(max_budget_s), "--max-cpu", repr(max_cpu_s),
                         *(["--strict"] if strict else []), packages=("redaction_pressure", "audit"))
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=VERIFY_TIMEOUT_S,
                              env=child_environment(WORKERS_ENV))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Verification(NOT_VERIFIED, f"not verified: `audit verify` could not run: {str(exc)[:200]}")
    try:
        verdict = loads_json(done.stdout)
    except ValueError:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: `audit verify` exited {done.returncode}: "
                                          f"{(err[-1] if err else 'no output')[:300]}")
    line = str(verdict.get("verdict_line", ""))[:600] if isinstance(verdict, dict) else ""
    if not isinstance(verdict, dict) or done.returncode != 0 or not _passed(verdict):
        return Verification(NOT_VERIFIED, f"NOT VERIFIED: `audit verify` exited {done.returncode}"
                                          + (f": {line}" if line else ""),
                            _failures(verdict) if isinstance(verdict, dict) else [])
    untied = _tie(verdict, statement_of(archive), shown, "`audit verify` run now")
    if untied is not None:
        return untied
    return Verification(VERIFIED, f"verified: `audit verify` ran here with the pinned key "
                                  f"{_short(verdict.get('pinned_key_id'))} and passed for this archive's Statement "
                                  f"(SHA-256 {_short(verdict['statement_sha256'])}), which names exactly the files "
                                  f"shown — {line}", traces=_count(verdict))
