"""Cross-interpreter determinism: the corpus and every built-in policy's verdicts must
be byte-identical under every CPython >= 3.11 found on this machine.

For each interpreter (the system's 3.11, pyenv's 3.12.x / 3.13.x, whatever
``python3.1N`` and ``pyenv versions`` offer), a fresh venv is made with uv, the locked
dependencies (``uv export --frozen``) and this worktree's project are installed into
it, and the script re-runs itself there in ``--child`` mode, which prints:

- corpus fingerprints: SHA-256 of the canonical JSON of dev tasks 0..63 (content only:
  records, labels, prompt, mix; identity is left out), and one over all of them;
- for every policy in ``policies.POLICIES``: SHA-256 of the canonical JSON of every
  verdict (reward, recall, precision, clean, valid, metrics, error codes and rules,
  family tallies; floats by ``float.hex``) on dev 0..63 and train 0..199, and the
  mean reward;
- for every difficulty level above 1: the fingerprint of dev 0..31 at that level and
  every policy's verdicts on them.

The parent prints one table and exits 1 if any interpreter disagrees with the first,
2 if fewer than two interpreters could be set up. Nothing is hard-coded: the corpus
may change, the interpreters must agree with each other.

    uv run --frozen python benchmarks/cross_interpreter.py [--train N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEV_TASKS = 64
LEVEL_TASKS = 32  # dev tasks per higher level


def canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sha(value) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def _floats(value):
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_floats(v) for v in value]
    return value


def child(train: int) -> dict:
    import platform

    from redaction_pressure import load_task, policies, score_completion

    def content(task) -> dict:
        return {"id": task.id, "seed": task.seed, "templates": task.templates,
                "secret_families": task.secret_families, "decoy_families": task.decoy_families,
                "shown": [r.as_dict() for r in task.shown], "heldout": [r.as_dict() for r in task.heldout],
                "prompt": task.prompt, "system_prompt": task.system_prompt}

    dev = [load_task("dev", i) for i in range(DEV_TASKS)]
    train_tasks = [load_task("train", i) for i in range(train)]
    fingerprints = [sha(content(t)) for t in dev]
    out = {"python": platform.python_version(), "implementation": platform.python_implementation(),
           "corpus": sha(fingerprints), "fingerprints": fingerprints, "policies": {}}
    for name, policy in sorted(policies.POLICIES.items()):
        for split, tasks in (("dev", dev), ("train", train_tasks)):
            verdicts, rewards = [], []
            for task in tasks:
                s = score_completion(task, policy(task))
                rewards.append(s.reward)
                verdicts.append(_floats({"reward": s.reward, "recall": s.recall, "precision": s.precision,
                                         "clean": s.clean, "metrics": s.metrics(),
                                         "errors": [[e.code, e.rule] for e in s.errors],
                                         "secrets": s.secret_families, "decoys": s.decoy_families}))
            out["policies"][f"{name}/{split}"] = {"verdicts": sha(verdicts), "mean": math.fsum(rewards) / len(rewards)}
    # Every higher level: its own corpus fingerprint and every policy's verdicts.
    for level in range(2, 6):
        tasks = [load_task("dev", i, level=level) for i in range(LEVEL_TASKS)]
        out[f"corpus level {level}"] = sha([sha(content(t)) for t in tasks])
        for name, policy in sorted(policies.POLICIES.items()):
            verdicts, rewards = [], []
            for task in tasks:
                s = score_completion(task, policy(task))
                rewards.append(s.reward)
                verdicts.append(_floats({"reward": s.reward, "metrics": s.metrics(),
                                         "errors": [[e.code, e.rule] for e in s.errors],
                                         "secrets": s.secret_families, "decoys": s.decoy_families}))
            out["policies"][f"{name}/dev level {level}"] = {"verdicts": sha(verdicts),
                                                             "mean": math.fsum(rewards) / len(rewards)}
    return out


def interpreters() -> list[str]:
    """Paths of CPython >= 3.11 interpreters, one per version, system first."""
    found: list[str] = []
    for name in ("/usr/bin/python3.11", "python3.11", "python3.12", "python3.13", "python3.14"):
        path = shutil.which(name)
        if path:
            found.append(path)
    if shutil.which("pyenv"):
        bare = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True).stdout.split()
        for version in bare:
            if re.fullmatch(r"3\.(1[1-9])\.\d+", version):
                prefix = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True).stdout.strip()
                if prefix:
                    found.append(str(Path(prefix) / "bin" / "python"))
    by_version: dict[str, str] = {}
    for path in found:
        probe = subprocess.run([path, "-c", "import platform, sys; print(platform.python_implementation(), "
                                "'.'.join(map(str, sys.version_info[:3])))"], capture_output=True, text=True)
        if probe.returncode != 0:
            continue
        impl, version = probe.stdout.split()
        major, minor = map(int, version.split(".")[:2])
        if impl == "CPython" and (major, minor) >= (3, 11):
            by_version.setdefault(version, path)
    return list(by_version.values())


def setup(python: str, workdir: Path, requirements: Path) -> Path:
    venv = workdir / f"venv-{len(list(workdir.glob('venv-*')))}"
    run = lambda *cmd: subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=workdir)  # noqa: E731
    run("uv", "venv", "--quiet", "--python", python, str(venv))
    target = str(venv / "bin" / "python")
    run("uv", "pip", "install", "--quiet", "--python", target, "-r", str(requirements))
    run("uv", "pip", "install", "--quiet", "--python", target, "--no-deps", str(ROOT))
    return venv / "bin" / "python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--train", type=int, default=200, help="train tasks scored (default 200)")
    parser.add_argument("--keep", type=Path, help="keep the venvs in this directory (default: a temporary one)")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.train)))
        return 0
    started = time.perf_counter()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="rp-cross-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        requirements = workdir / "requirements.txt"
        subprocess.run(["uv", "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes",
                        "--quiet", "-o", str(requirements)], check=True, cwd=ROOT, capture_output=True)
        results = []
        for python in interpreters():
            try:
                target = setup(python, workdir, requirements)
            except subprocess.CalledProcessError as exc:
                print(f"skipped {python}: could not set up a venv: {(exc.stderr or '').strip()[-300:]}")
                continue
            # Run outside the worktree so the installed copy is what gets imported.
            proc = subprocess.run([str(target), str(Path(__file__).resolve()), "--child", "--train", str(args.train)],
                                  capture_output=True, text=True, cwd=workdir,
                                  env={**os.environ, "PYTHONHASHSEED": "random", "PYTHONPATH": ""})
            if proc.returncode != 0:
                print(f"FAILED under {python}:\n{proc.stderr[-2000:]}")
                return 1
            results.append((python, json.loads(proc.stdout)))
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    if len(results) < 2:
        print(f"only {len(results)} interpreter(s) could be set up; nothing to compare")
        return 2
    reference = results[0][1]
    corpora = sorted(k for k in reference if k.startswith("corpus"))
    keys = [*corpora, *sorted(reference["policies"])]
    header = ["", *(r["python"] for _, r in results)]
    rows = [header]
    differs = False
    for key in keys:
        corpus = key in corpora
        row = [key if corpus else f"{key} (mean {reference['policies'][key]['mean']:.4f})"]
        for _, r in results:
            value = r.get(key, "missing") if corpus else r["policies"].get(key, {}).get("verdicts", "missing")
            ref = reference[key] if corpus else reference["policies"][key]["verdicts"]
            same = value == ref and (corpus or r["policies"][key]["mean"] == reference["policies"][key]["mean"])
            differs |= not same
            row.append(value[:16] + ("" if same else "  DIFFERS"))
        rows.append(row)
    for i in range(DEV_TASKS):
        if len({r["fingerprints"][i] for _, r in results}) > 1:
            differs = True
            rows.append([f"dev {i} fingerprint", *(r["fingerprints"][i][:16] + "  DIFFERS" for _, r in results)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print(f"cross_interpreter: dev 0..{DEV_TASKS - 1} fingerprints and every built-in policy on dev and "
          f"train 0..{args.train - 1}, {len(results)} interpreters ({time.perf_counter() - started:.0f} s)")
    for python, r in results:
        print(f"  {r['python']}: {python}")
    print("\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) for row in rows))
    print("DIFFERENT" if differs else "IDENTICAL on every interpreter (SHA-256 prefixes shown)")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
