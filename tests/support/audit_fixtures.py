"""Runs, keys and archives shared by the audit tests (not a test module).

Generating a run imports verifiers (~12 s), so every run is made once per process and
cached; each test that tampers works on its own fresh archive sealed from those runs
(sealing takes milliseconds)."""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import functools
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

SECRET = "audit-tests-private-secret-0123456789abcdef-not-for-real-use"
OTHER_SECRET = "a-different-private-secret-for-the-audit-tests-0123456789"
SECRET_ENV = "RP_AUDIT_TEST_SECRET"
_counter = itertools.count()


@functools.cache
def root() -> Path:
    path = Path(tempfile.mkdtemp(prefix="rp-audit-tests-"))
    atexit.register(shutil.rmtree, path, True)
    return path


def fresh_dir(name: str) -> Path:
    return root() / f"{name}-{next(_counter)}"


@contextlib.contextmanager
def env_var(name: str, value: str | None):
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _mixed(task) -> str:
    """A policy giving a mix of outcomes: perfect, partial, malformed, exploit, unsafe."""
    from redaction_pressure import policies

    kind = task.index % 5
    if kind == 0:
        return policies.oracle(task)
    if kind == 1:
        return policies.baseline(task)
    if kind == 2:
        return "I would rather not answer in JSON."
    if kind == 3:
        return policies.first_char(task)
    return json.dumps({"rules": [{"pattern": "AKIA[0-9A-Z]{16}", "replacement": "\\g<0>"}]})


def _run(split: str, policy, n: int, config=None, tag: str = "") -> Path:
    from redaction_pressure import policies
    from redaction_pressure.run import run_policy

    name = f"audit-test-{split}"
    out = root() / f"run-{split}{tag}"
    policies.POLICIES[name] = policy
    try:
        run_policy(split, name, n, out, config=config)
    finally:
        policies.POLICIES.pop(name, None)
    return out


@functools.cache
def dev_run() -> Path:
    """8 dev traces with mixed outcomes (including malformed_json and unsafe_replacement)."""
    return _run("dev", _mixed, 8)


NONSTANDARD = {"n_shown": 2, "n_eval": 3, "budget_s": 2.0, "level": 1}


@functools.cache
def nonstandard_run() -> Path:
    """4 dev traces of the baseline policy scored with non-standard task parameters
    (fewer, easier held-out records): a genuine result, but not the standard benchmark."""
    from redaction_pressure import policies
    from redaction_pressure.taskset import RedactionConfig

    config = RedactionConfig(id="redaction-pressure", split="dev", **NONSTANDARD)
    return _run("dev", policies.baseline, 4, config=config, tag="-nonstandard")


@functools.cache
def budget_run() -> Path:
    """2 dev traces scored with a 6 s budget: more than `audit verify` grants by default."""
    from redaction_pressure import policies
    from redaction_pressure.taskset import RedactionConfig

    config = RedactionConfig(id="redaction-pressure", split="dev", budget_s=6.0)
    return _run("dev", policies.baseline, 2, config=config, tag="-budget6")


@functools.cache
def private_run() -> Path:
    from redaction_pressure import policies
    from redaction_pressure.task.splits import PRIVATE_SEED_ENV

    with env_var(PRIVATE_SEED_ENV, SECRET):
        return _run("private_eval", policies.baseline, 4)


@functools.cache
def keys(owner: str = "owner") -> tuple[Path, Path]:
    from audit._keys import keygen

    private, public, _ = keygen(root() / f"keys-{owner}")
    return private, public


def private_key(owner: str = "owner"):
    from audit._keys import load_private_key

    return load_private_key(keys(owner)[0])


def public_key(owner: str = "owner"):
    from audit._keys import load_public_key

    return load_public_key(keys(owner)[1])


def seal_run(run_dir: Path, owner: str = "owner") -> Path:
    from audit._seal import seal

    out = fresh_dir("archive")
    seal(run_dir, private_key(owner), out, created=dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    return out


def signed_anyway(run_dir: Path, owner: str = "owner") -> Path:
    """An archive of ``run_dir`` signed by ``owner`` as a signer who skips `audit seal`'s
    refusals would sign it: the manifest `seal` builds from the traces (no consistency
    checks), over the run's own traces file."""
    from audit._manifest import build_manifest, run_id_of
    from audit._seal import SEALED_BY
    from audit._tracefile import read_trace_file

    out = fresh_dir("archive")
    out.mkdir()
    shutil.copyfile(run_dir / "traces.jsonl", out / "traces.jsonl")
    tf = read_trace_file(out / "traces.jsonl")
    created = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    resign(out, build_manifest(tf, run_id_of(tf) or "run", SEALED_BY, created), owner)
    return out


def read_episodes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_episodes(path: Path, episodes: list[dict]) -> None:
    path.write_text("".join(json.dumps(ep) + "\n" for ep in episodes), encoding="utf-8")


def tampered_run(run_dir: Path, edit) -> Path:
    """A copy of ``run_dir`` whose episodes went through ``edit(episodes)`` (in place)."""
    out = fresh_dir("run")
    out.mkdir()
    episodes = read_episodes(run_dir / "traces.jsonl")
    edit(episodes)
    write_episodes(out / "traces.jsonl", episodes)
    return out


def edit_traces_same_size(archive: Path) -> None:
    """Changes one recorded score (1.0 -> 0.0) in the archive's traces file without
    changing its size, so only its digest tells."""
    data = bytearray((archive / "traces.jsonl").read_bytes())
    at = data.index(b'"score":1.0')
    data[at:at + 11] = b'"score":0.0'
    (archive / "traces.jsonl").write_bytes(bytes(data))


def copy_archive(archive: Path) -> Path:
    out = fresh_dir("copy")
    shutil.copytree(archive, out)
    return out


def dumps_manifest(manifest: dict) -> bytes:
    from audit._manifest import dumps

    return dumps(manifest)


def statement_of(manifest: dict) -> tuple[bytes, bytes]:
    """(manifest.toml bytes, Statement payload bytes) for ``manifest``, as `audit seal`
    writes them."""
    import hashlib

    from audit import _statement
    from audit._manifest import dumps

    toml = dumps(manifest)
    return toml, _statement.dumps(_statement.build(manifest, hashlib.sha256(toml).hexdigest()))


def resign(archive: Path, manifest: dict | bytes, owner: str = "owner", payload_type: str | None = None) -> None:
    """Rewrites an archive's manifest (a dict: manifest.toml and the Statement built
    from it, as a signer would; raw bytes: the signed payload itself, manifest.toml
    left alone) and signs it with ``owner``'s key."""
    from audit import _dsse

    if isinstance(manifest, bytes):
        payload = manifest
    else:
        toml, payload = statement_of(manifest)
        (archive / "manifest.toml").write_bytes(toml)
    envelope = _dsse.sign(payload, private_key(owner), payload_type or _dsse.PAYLOAD_TYPE)
    (archive / "manifest.dsse.json").write_bytes(envelope.to_json())


def payload_of(archive: Path) -> bytes:
    import base64

    return base64.b64decode(json.loads((archive / "manifest.dsse.json").read_text())["payload"])


def manifest_of(archive: Path) -> dict:
    import tomllib

    return tomllib.loads((archive / "manifest.toml").read_text(encoding="utf-8"))


def redigest(archive: Path, manifest: dict) -> dict:
    """``manifest`` with its traces-file and per-trace digests recomputed from the
    archive's traces.jsonl as it now is (for a signer who seals hostile content)."""
    from audit._tracefile import read_trace_file

    tf = read_trace_file(archive / "traces.jsonl")
    manifest = dict(manifest)
    manifest["traces_file"] = {"path": "traces.jsonl", "sha256": tf.sha256, "bytes": tf.size}
    manifest["traces"] = [{"line": e.line, "position": e.position, "task_id": e.task_id, "sha256": e.digest}
                          for e in tf.entries]
    return manifest


@functools.cache
def full_dev_run() -> Path:
    """All 64 dev tasks, one oracle rollout each: the complete standard split."""
    from redaction_pressure import policies

    return _run("dev", policies.oracle, 64, tag="-full")


@functools.cache
def baseline_run() -> Path:
    """Dev tasks 0..31, one baseline rollout each: the run `compare` sets against the oracle's."""
    from redaction_pressure import policies

    return _run("dev", policies.baseline, 32, tag="-baseline")


def record(trace: dict, score) -> None:
    """Writes ``score`` into ``trace`` as the taskset adapter records a scored reply
    (rewards, metrics, info.redaction, info.redaction_errors)."""
    trace["info"]["redaction_errors"] = [e.as_dict() for e in score.errors]
    trace["info"]["redaction"] = {
        "reward": score.reward, "recall": score.recall, "precision": score.precision, "clean": score.clean,
        "valid": score.valid, **score.metrics(), "secret_families": score.secret_families,
        "decoy_families": score.decoy_families, "secret_classes": score.secret_classes,
        "decoy_classes": score.decoy_classes}
    trace["metrics"].update({k: float(v) for k, v in score.metrics().items()})
    for name in ("recall", "precision", "clean"):
        trace["rewards"][name]["score"] = float(getattr(score, name))


def scans_cost(seconds: float):
    """Rescoring as on a machine where every reply's scan takes at least ``seconds`` of
    CPU (patched into `audit._rescore`, so forked job workers inherit it): an honest
    recorded time-out that this machine finishes is tolerated only when its scan took
    at least a quarter of the budget here (the 4x tolerance), and the test replies scan
    in milliseconds."""
    from unittest import mock

    from audit import _rescore

    real = _rescore._scored

    def scored(task, reply, budget_s):
        score, cpu = real(task, reply, budget_s)
        return score, max(cpu, seconds)
    return mock.patch.object(_rescore, "_scored", scored)


def v1_archive(run_dir: Path, owner: str = "owner") -> Path:
    """An archive in the 0.1.x format (manifest v1): the TOML manifest itself signed
    under the old private payload type, with the old manifest's keys."""
    from audit import _dsse
    from audit._manifest import dumps

    archive = seal_run(run_dir, owner)
    manifest = manifest_of(archive)
    manifest["manifest_version"] = "manifest-v1"
    del manifest["coverage"], manifest["summary"]["coverage"], manifest["evaluated"], manifest["by_level"]
    del manifest["summary"]["uncertainty"], manifest["summary"]["secret_classes"], manifest["summary"]["decoy_classes"]
    manifest["task_params"]["level"] = manifest.pop("levels")[0]
    payload = dumps(manifest)
    (archive / "manifest.toml").write_bytes(payload)
    envelope = _dsse.sign(payload, private_key(owner), _dsse.V1_PAYLOAD_TYPE)
    (archive / "manifest.dsse.json").write_bytes(envelope.to_json())
    return archive


def audit(*argv, env_extra=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    env.pop("AUDIT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "audit", *map(str, argv)], capture_output=True, text=True,
                          env=env, timeout=120)


def audit_in_process(*argv, env_extra=None) -> subprocess.CompletedProcess:
    """`audit` through cli.main in this process (no interpreter start-up, ~0.7 s each),
    with the same result shape as ``audit``; the real entry point is covered above."""
    import contextlib
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from audit import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        for name, value in (env_extra or {}).items():
            stack.enter_context(env_var(name, value))
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def human(report) -> str:
    """A verification report as the terminal shows it, whitespace collapsed."""
    from audit._report import console, render_human
    buf = io.StringIO()
    render_human(report, console(buf))
    return " ".join(buf.getvalue().split())


class CheckAssertions:
    """Assertions on a verification report's checks, for unittest.TestCase subclasses."""

    def assertCheck(self, report, name, status, *needles):
        check = report.check(name)
        text = "\n".join([check.summary, *check.details])
        self.assertEqual(check.status, status, f"{name}: {text}")
        for needle in needles:
            self.assertIn(needle, text, name)
        return check

    def assertOnlyFailures(self, report, *names):
        self.assertEqual(sorted(c.name for c in report.failed), sorted(names),
                         json.dumps(report.as_dict(), indent=1)[:4000])


@contextmanager
def verify_commands():
    """The argument lists of every `audit verify` the report and compare start while
    the block runs (they still run): what a flag passed on really reaches."""
    import subprocess
    from unittest import mock

    from redaction_pressure.report import _verdict

    commands: list[list[str]] = []
    real_run = subprocess.run

    def recording_run(cmd, *args, **kwargs):
        commands.append(list(cmd))
        return real_run(cmd, *args, **kwargs)
    with mock.patch.object(_verdict.subprocess, "run", recording_run):
        yield commands
