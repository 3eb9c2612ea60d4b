"""Key hygiene: `refuse_if_tracked_path` against real git work trees, and the
project's .gitignore against the paths the README writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from audit._hygiene import refuse_if_tracked_path

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")


def _git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True,
                          env=env).stdout


@unittest.skipIf(GIT is None, "git is not installed")
class RefuseIfTrackedPath(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(os.path.realpath(self._tmp.name))
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        _git(self.repo, "init", "-q")
        (self.repo / ".gitignore").write_text("/ignored/\n")
        # A user-wide excludes file must not decide these tests.
        patcher = mock.patch.dict(os.environ, {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self._tmp.cleanup()

    def test_outside_any_work_tree_is_allowed(self):
        outside = self.tmp / "elsewhere"
        outside.mkdir()
        self.assertIsNone(refuse_if_tracked_path(outside / "keys" / "signing-key.pem"))

    def test_ignored_directory_is_allowed_even_before_it_exists(self):
        self.assertIsNone(refuse_if_tracked_path(self.repo / "ignored" / "new" / "signing-key.pem"))

    def test_unignored_path_is_refused_with_fix_and_override(self):
        for rel in ("keys/signing-key.pem", "signing-key.pem", "deep/er/k.pem"):
            with self.subTest(rel=rel):
                msg = refuse_if_tracked_path(self.repo / rel)
                self.assertIsNotNone(msg)
                self.assertIn(str(self.repo), msg)
                self.assertIn("--force", msg)
                self.assertIn(".gitignore", msg)
                self.assertEqual(len(msg.splitlines()), 1)

    def test_relative_path_from_inside_the_work_tree(self):
        cwd = os.getcwd()
        os.chdir(self.repo)
        try:
            self.assertIsNotNone(refuse_if_tracked_path("keys/signing-key.pem"))
            self.assertIsNone(refuse_if_tracked_path("ignored/signing-key.pem"))
        finally:
            os.chdir(cwd)

    def test_tracked_file_counts_as_not_ignored(self):
        (self.repo / "keys").mkdir()
        (self.repo / "keys" / "signing-key.pem").write_text("x")
        _git(self.repo, "add", "keys/signing-key.pem")
        (self.repo / ".gitignore").write_text("/ignored/\n/keys/\n")  # ignored only after it was tracked
        self.assertIsNotNone(refuse_if_tracked_path(self.repo / "keys" / "signing-key.pem"))

    def test_symlink_into_a_work_tree_is_judged_by_its_target(self):
        link = self.tmp / "link"
        link.symlink_to(self.repo, target_is_directory=True)
        self.assertIsNotNone(refuse_if_tracked_path(link / "keys" / "signing-key.pem"))
        self.assertIsNone(refuse_if_tracked_path(link / "ignored" / "signing-key.pem"))

    def test_without_git_a_repository_is_refused(self):
        with mock.patch("audit._hygiene.shutil.which", return_value=None):
            msg = refuse_if_tracked_path(self.repo / "ignored" / "signing-key.pem")
            self.assertIn("git is not installed", msg)
            self.assertIn("--force", msg)
            outside = self.tmp / "elsewhere"
            outside.mkdir()
            self.assertIsNone(refuse_if_tracked_path(outside / "signing-key.pem"))

    def test_callers_git_dir_does_not_redirect_the_question(self):
        other = self.tmp / "other"
        other.mkdir()
        _git(other, "init", "-q")
        (other / ".gitignore").write_text("/keys/\n")
        with mock.patch.dict(os.environ, {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}):
            self.assertIsNotNone(refuse_if_tracked_path(self.repo / "keys" / "signing-key.pem"))

    def test_a_directorys_git_config_executes_nothing(self):
        """A directory someone hands over brings its own .git/config: the commands it
        names (core.fsmonitor runs whenever git reads the index, as check-ignore does;
        hooks; a pager) must never run when `audit keygen` asks git there."""
        pwned = self.tmp / "PWNED"
        script = self.tmp / "hostile.sh"
        script.write_text(f"#!/bin/sh\ntouch {pwned}\nexit 1\n")
        script.chmod(0o755)
        hooks = self.tmp / "hooks"
        hooks.mkdir()
        for hook in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
            (hooks / hook).write_text(f"#!/bin/sh\ntouch {pwned}\n")
            (hooks / hook).chmod(0o755)
        (self.repo / ".gitignore").write_text("/keys/\n")
        (self.repo / "tracked").write_text("x")
        _git(self.repo, "add", ".gitignore", "tracked")  # an index for the monitor to be asked about
        for key, value in (("core.fsmonitor", str(script)), ("core.hooksPath", str(hooks)),
                           ("core.pager", f"touch {pwned}; cat"), ("pager.check-ignore", f"touch {pwned}; cat"),
                           ("core.untrackedCache", "true")):
            _git(self.repo, "config", key, value)
        # the hostile monitor does run for a plain git command in that directory ...
        subprocess.run(["git", "-C", str(self.repo), "check-ignore", "-q", "--", "keys/k.pem"], capture_output=True,
                       env=os.environ | {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
        self.assertTrue(pwned.exists(), "the test's hostile config does not execute: it proves nothing")
        pwned.unlink()
        # ... but never for the key-hygiene check, whose answers are unchanged
        self.assertIsNone(refuse_if_tracked_path(self.repo / "keys" / "signing-key.pem"))
        self.assertIsNotNone(refuse_if_tracked_path(self.repo / "tracked"))
        self.assertIsNotNone(refuse_if_tracked_path(self.repo / "elsewhere" / "signing-key.pem"))
        self.assertFalse(pwned.exists(), "a directory's .git/config executed a command")


@unittest.skipIf(GIT is None, "git is not installed")
class ProjectGitignore(unittest.TestCase):
    def test_readme_output_paths_are_ignored(self):
        """Every path the README tells a user to write (run directories, vf-eval
        outputs, archives, keys, the walkthrough's reply) is git-ignored by the
        project's .gitignore, so `git add -A` after the README commits none of them."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        shell = "\n".join(re.findall(r"```bash\n(.*?)```", readme, flags=re.S))
        written = set(re.findall(r"--out\s+([\w./-]+)", shell))
        written |= set(re.findall(r"(?<![-=])>\s*([\w./-]+)", shell))
        written |= {f"runs/dev-{p}" for p in ("baseline", "oracle")} | {"outputs/dev-my-model"}
        written = {w for w in written if not w.isupper() and w not in ("FILE", "DIR")}
        self.assertTrue({"keys", "archive", "reply.txt"} <= written, written)
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            _git(repo, "init", "-q")
            shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
            for path in sorted(written):
                with self.subTest(path=path):
                    probe = f"{path}/signing-key.pem" if "." not in Path(path).name else path
                    self.assertEqual(subprocess.run(["git", "-C", tmp, "check-ignore", "-q", "--", probe],
                                                    env=os.environ | {"GIT_CONFIG_GLOBAL": os.devnull}).returncode,
                                     0, f"{probe} is not ignored")
                    self.assertIsNone(refuse_if_tracked_path(repo / probe))


if __name__ == "__main__":
    unittest.main()
