"""Whether an archive passed `audit verify`, for the page's header.

The report never claims more than it saw: "verified" only when `audit verify` ran here
with a key the user pinned and exited 0 with a passing JSON verdict, or when a verdict
file (the output of `audit verify --json`) says so and names this archive's run. The
environment package does not import `audit` (the dependency points the other way), so
verification runs as a subprocess of the same interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_VERDICT_BYTES = 64 << 20
VERIFY_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Verification:
    verified: bool
    how: str  # one line: what was checked, or why nothing was
    failures: list[str] = field(default_factory=list)


NOT_ASKED = Verification(False, "not verified: no --public-key or --verdict was given")


def _failures(verdict: dict[str, Any]) -> list[str]:
    out: list[str] = []
    checks = verdict.get("checks")
    for c in checks if isinstance(checks, list) else []:
        if isinstance(c, dict) and c.get("status") == "failed":
            out.append(f"{c.get('title') or c.get('name')}: {c.get('summary')}"[:500])
    return out[:30]


def _passed(verdict: object) -> bool:
    return isinstance(verdict, dict) and verdict.get("verdict") == "passed" and verdict.get("exit_code", 0) == 0


def from_json(verdict: object, manifest: dict[str, Any] | None, source: str) -> Verification:
    if not isinstance(verdict, dict):
        return Verification(False, f"not verified: {source} is not an `audit verify --json` verdict")
    run_id = manifest.get("run_id") if isinstance(manifest, dict) else None
    if verdict.get("run_id") is not None and run_id is not None and verdict.get("run_id") != run_id:
        return Verification(False, f"not verified: {source} is the verdict of another archive "
                                   f"(run {str(verdict.get('run_id'))[:80]}, this archive is run {str(run_id)[:80]})")
    if _passed(verdict):
        return Verification(True, f"verified: `audit verify` passed ({source})")
    return Verification(False, f"NOT VERIFIED: `audit verify` failed ({source})", _failures(verdict))


def read_verdict_file(path: Path, manifest: dict[str, Any] | None) -> Verification:
    try:
        data = Path(path).read_bytes()
        if len(data) > MAX_VERDICT_BYTES:
            raise ValueError(f"larger than {MAX_VERDICT_BYTES} bytes")
        verdict = json.loads(data)
    except (OSError, ValueError, RecursionError) as exc:
        return Verification(False, f"not verified: the verdict file {path} could not be read: {str(exc)[:200]}")
    return from_json(verdict, manifest, f"verdict file {Path(path).name}")


def run_verify(archive: Path, public_key: Path, manifest: dict[str, Any] | None) -> Verification:
    cmd = [sys.executable, "-m", "audit", "verify", str(archive), "--public-key", str(public_key), "--json"]
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=VERIFY_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Verification(False, f"not verified: `audit verify` could not run: {str(exc)[:200]}")
    try:
        verdict = json.loads(done.stdout)
    except ValueError:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Verification(False, f"NOT VERIFIED: `audit verify` exited {done.returncode}: "
                                   f"{(err[-1] if err else 'no output')[:300]}")
    result = from_json(verdict, manifest, f"`audit verify` run now with key {Path(public_key).name}")
    if result.verified and done.returncode != 0:
        return Verification(False, f"NOT VERIFIED: `audit verify` exited {done.returncode}", result.failures)
    return result
