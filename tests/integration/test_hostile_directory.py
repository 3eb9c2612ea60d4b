"""The README's walkthrough, as a user runs it (the installed console scripts), in a git
clone whose working directory and archive directory hold hostile code: a
``redaction_pressure/``, ``audit/``, ``regex/``, ``jsonschema/`` and ``multiprocessing/``
package, a ``sitecustomize.py`` and a ``usercustomize.py``, each of which records that it
ran. Nothing of theirs may run in any process the project starts (scan workers, the
report's `audit verify`, `verify --jobs` workers, the report's job workers), and
`git status` stays clean throughout (no run, key or archive could be committed by
`git add -A`).

Before the fix, `audit verify --jobs 1` ran the ``redaction_pressure/`` beside it in its
scan worker (``python -m`` puts the current directory first on the path), and
`report --public-key` ran the ``audit/`` beside it as its verifier.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure import PRIVATE_SEED_ENV, load_task, policies
from redaction_pressure.cli import main

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LABEL = "public dev split (not a private evaluation)"
HOSTILE_PACKAGES = ("redaction_pressure", "audit", "regex", "jsonschema", "multiprocessing")
HOSTILE_MODULES = ("sitecustomize", "usercustomize")


def plant(directory: Path, marks: Path) -> None:
    """Hostile code in ``directory``: each module leaves a file in ``marks`` when it runs."""
    for name in HOSTILE_PACKAGES + HOSTILE_MODULES:
        path = directory / name / "__init__.py" if name in HOSTILE_PACKAGES else directory / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"import os\nopen(os.path.join({str(marks)!r}, {name!r} + '-' + str(os.getpid())), 'w')"
                        f".close()\n")


class Walkthrough(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="rp-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.clone, self.marks = self.tmp / "clone", self.tmp / "marks"
        self.clone.mkdir()
        self.marks.mkdir()
        for script in ("redaction-pressure", "audit"):
            if not (BIN / script).is_file():
                if os.environ.get("CI"):
                    self.fail(f"{BIN / script} is missing in CI: `uv sync` installs the console scripts")
                self.skipTest(f"{BIN / script} is not installed (uv sync installs it)")
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        # a user's shell: the private secret set, no PYTHONPATH pointing at the project
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "REDACTION_PRESSURE_SCAN_WORKERS")}
        self.env[PRIVATE_SEED_ENV] = "hostile-directory-test-secret-0123456789abcdef"

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.clone), *args], capture_output=True, text=True,
                              check=True).stdout

    def start(self, script: str, *args: str, cwd: Path | None = None, env: dict | None = None,
              prefix: tuple[str, ...] = ()) -> subprocess.Popen:
        return subprocess.Popen([*prefix, str(BIN / script) if script else sys.executable, *args],
                                cwd=cwd or self.clone, env=env or self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def finish(self, proc: subprocess.Popen, what: str) -> str:
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, f"{what}: {out[-2000:]}{err[-2000:]}")
        self.assertNotIn("Traceback", out + err, what)
        return out

    def test_walkthrough_in_a_hostile_git_clone(self):
        self.git("init", "-q")
        shutil.copy(ROOT / ".gitignore", self.clone / ".gitignore")
        self.git("add", ".gitignore")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")

        # `eval --json` replacing the default run directory, in this process (verifiers is
        # imported here already): the clone holds no hostile code yet, as this process
        # has the current directory on its path.
        cwd = os.getcwd()
        os.chdir(self.clone)
        try:
            out = _main_output(["eval", "--policy", "oracle", "-n", "3", "--json"])
        finally:
            os.chdir(cwd)
        summary = json.loads(out)
        self.assertEqual((summary["traces"], summary["mean_reward"], summary["invalid"]), (3, 1.0, 0))
        self.assertEqual(summary["split_label"], LABEL)

        plant(self.clone, self.marks)
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "hostile neighbours")
        (self.clone / "reply.txt").write_text(policies.baseline(load_task("dev", 0)))

        human = self.start("redaction-pressure", "eval", "--policy", "oracle", "-n", "2")
        score = self.start("redaction-pressure", "score", "--index", "0", "reply.txt")
        keygen = self.start("audit", "keygen", "--out", "keys")
        out = self.finish(human, "eval")
        self.assertIn(LABEL, out)
        self.assertIn("leaked", out)
        lines = out.strip().splitlines()
        self.assertLessEqual(len(lines), 25, out)
        self.assertEqual(lines[0], lines[-1])  # the headline first and last
        for needle in (LABEL, "2 tasks", "level 1", "reward 1.000 ± 0.000", "recall 1.000 ± 0.000",
                       "precision 1.000 ± 0.000", "clean 1.000 ± 0.000", "invalid 0",
                       "traces runs/dev-oracle/traces.jsonl"):
            self.assertIn(needle, lines[-1])
        run_dir = self.clone / "runs" / "dev-oracle"
        self.assertEqual(len((run_dir / "traces.jsonl").read_text().splitlines()), 2)  # replaced, not appended
        episode = json.loads((run_dir / "traces.jsonl").read_text().splitlines()[0])
        self.assertEqual(episode["env"]["id"], "redaction-pressure")
        resolved = json.loads((run_dir / "configs" / "resolved" / "eval.json").read_text())
        self.assertEqual(resolved["env"]["taskset"]["num_tasks"], 2)  # the config of the run that wrote it
        self.assertEqual(sorted(os.listdir(run_dir)), ["configs", "traces.jsonl"])  # no staging left
        self.assertIn(f"{LABEL}: reward 0.", self.finish(score, "score"))
        self.finish(keygen, "keygen")
        again = self.start("redaction-pressure", "eval", "-n", "1", "--out", str(run_dir))  # named: not replaced
        _, err = again.communicate(timeout=120)
        self.assertEqual(again.returncode, 2)
        self.assertIn("--force", err)

        self.finish(self.start("audit", "seal", "runs/dev-oracle", "--key", "keys/signing-key.pem", "--out",
                               "archive"), "seal")
        archive = self.clone / "archive"
        plant(archive, self.marks)
        key = str(self.clone / "keys" / "signing-key.pub.pem")
        one_cpu = dict(self.env, REDACTION_PRESSURE_SCAN_WORKERS="1")
        cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
        pin = ("taskset", "-c", str(cpu)) if shutil.which("taskset") else ()
        pool = ("import sys; from unittest import mock; from redaction_pressure.report import _view, write_report; "
                "mock.patch.object(_view, 'PARALLEL_FROM', 1).start(); "
                f"write_report('archive', 'runs/pool.html', jobs=2, public_key={key!r})")
        checks = {  # five processes at once: a scan's budget is CPU time, so the load changes no verdict
            "verify --jobs 1, in the archive": self.start("audit", "verify", ".", "--public-key", key, "--jobs", "1",
                                                          cwd=archive),
            "verify --jobs 2": self.start("audit", "verify", "archive", "--public-key", key, "--jobs", "2"),
            "verify on one CPU": self.start("audit", "verify", "archive", "--public-key", key, "--json",
                                            env=one_cpu, prefix=pin),
            "report --public-key": self.start("redaction-pressure", "report", "archive", "--public-key", key,
                                              "--jobs", "2"),
            "report's job workers": self.start("", "-I", "-c", pool),
        }
        for what, proc in checks.items():
            out = self.finish(proc, what)
            if what == "verify on one CPU":
                verdict = json.loads(out)
                self.assertEqual(verdict["verdict"], "passed")
                if pin:
                    self.assertEqual(verdict["jobs"], 1)  # the default on one CPU: rescored in process
            elif what.startswith("verify"):
                self.assertIn("VERIFIED: every check that ran passed", out, what)
        for page in (archive / "report.html", self.clone / "runs" / "pool.html"):
            self.assertIn("✔ verified: `audit verify` ran here", page.read_text())
        self.assertEqual(sorted(p.name for p in self.marks.iterdir()), [], "hostile code ran")
        self.assertTrue((self.clone / "keys" / "signing-key.pem").is_file())
        self.assertEqual(self.git("status", "--porcelain", "--untracked-files=all"), "")


def _main_output(argv: list[str]) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    assert code == 0, code
    return out.getvalue()


if __name__ == "__main__":
    unittest.main()
