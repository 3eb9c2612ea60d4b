"""The `audit` command through its real entry point (`python -m audit`): exit codes
0/1/2, keygen, seal refusals, JSON output, and that it never imports verifiers."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import unittest
from unittest import mock

from redaction_pressure.build.identity import DIGEST_ALGORITHM, source_digest
from tests.support import audit_fixtures as fx


class ExitCodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.archive = fx.seal_run(fx.dev_run())
        cls.private_archive = fx.seal_run(fx.private_run())
        cls.pub = fx.keys("owner")[1]

    def test_verify_clean_is_0_and_human_readable(self):
        r = fx.audit("verify", self.archive, "--public-key", self.pub)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VERIFIED", r.stdout)
        self.assertIn("public dev split (not a private evaluation)", r.stdout)
        self.assertIn("task parameters: n_shown=8, n_eval=16, budget_s=2.0, level 1 (standard)", r.stdout)
        self.assertNotIn("Traceback", r.stderr)

    def test_verify_private_with_secret_json(self):
        r = fx.audit("verify", self.private_archive, "--public-key", self.pub, "--private-seed-env", fx.SECRET_ENV,
                  "--json", env_extra={fx.SECRET_ENV: fx.SECRET})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        report = json.loads(r.stdout)
        self.assertEqual(report["verdict"], "passed")
        self.assertEqual(report["split"], "private_eval")
        self.assertEqual(report["task_params"], {"n_shown": 8, "n_eval": 16, "budget_s": 2.0})
        self.assertEqual(report["levels"], [1])
        self.assertIs(report["standard_task_params"], True)
        self.assertEqual({c["status"] for c in report["checks"]}, {"passed"})
        self.assertEqual(len(report["checks"]), 13)
        self.assertTrue(all({"name", "status", "details"} <= set(c) for c in report["checks"]))

    def test_verify_tampered_is_1(self):
        archive = fx.copy_archive(self.archive)
        with open(archive / "traces.jsonl", "ab") as f:
            f.write(b"\n{}\n")
        r = fx.audit("verify", archive, "--public-key", self.pub, "--json")
        self.assertEqual(r.returncode, 1)
        checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
        self.assertEqual(checks["trace-digests"]["status"], "failed")
        self.assertEqual(checks["rescoring"]["status"], "skipped")
        r = fx.audit("verify", archive, "--public-key", self.pub)
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAILED", r.stdout)

    def test_an_output_that_cannot_take_the_verdict_is_not_a_failed_verdict(self):
        """Review of 2026-12-04: under an ASCII or Latin-1 locale the verdict's "±" or
        "—" raised, and a genuine archive exited 1 ("internal error"), as a tampered one
        does; a full or closed output did the same. Now a character the encoding lacks
        is written as its escape, and an output that fails is exit 4, which names no
        verdict."""
        r = fx.audit("verify", self.archive, "--public-key", self.pub, env_extra={"PYTHONIOENCODING": "ascii"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VERIFIED", r.stdout)
        self.assertIn("\\u2014", r.stdout)  # the dash, escaped
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "audit", "verify", str(self.archive), "--public-key",
                                str(self.pub)], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("nothing about the input", r.stderr)
        r = subprocess.run([sys.executable, "-m", "audit", "verify", str(self.archive), "--public-key",
                            str(self.pub)], stderr=subprocess.PIPE, text=True, timeout=120,
                           preexec_fn=lambda: os.close(1))  # `>&-`: no standard output at all
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_usage_errors_are_2(self):
        long, never = fx.root() / ("x" * 300), fx.root() / "never"
        cases = [
            (("verify", self.archive), None),                                         # no --public-key
            (("verify", fx.root() / "missing", "--public-key", self.pub), None),       # no archive
            (("verify", self.archive, "--public-key", fx.root() / "missing.pem"), None),
            (("verify", self.private_archive, "--public-key", self.pub, "--private-seed-env", "RP_UNSET_VAR"), None),
            (("verify", self.private_archive, "--public-key", self.pub, "--private-seed-env", fx.SECRET_ENV),
             {fx.SECRET_ENV: "too-short"}),
            # a path the system will not look at (red team, 2026-12-04: exit 4, "internal error")
            (("verify", long, "--public-key", self.pub), None),
            (("seal", long, "--key", fx.keys("owner")[0], "--out", never), None),
            (("frobnicate",), None),
        ]
        for i, (argv, env) in enumerate(cases):
            with self.subTest(argv=argv[:1] + argv[-2:]):
                run = fx.audit if i in (0, len(cases) - 1) else fx.audit_in_process  # two through the entry point
                r = run(*argv, env_extra=env)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertNotIn("Traceback", r.stderr)
        for argv in (c[0] for c in cases if long in c[0]):
            r = fx.audit_in_process(*argv)
            self.assertIn(f"cannot use {long}", r.stderr)
            self.assertIn("File name too long", r.stderr)
        self.assertFalse(never.exists())
        r = fx.audit_in_process("verify", self.private_archive, "--public-key", self.pub, "--private-seed-env",
                             fx.SECRET_ENV, env_extra={fx.SECRET_ENV: "too-short"})
        self.assertIn("at least 32 characters", r.stderr)

    def test_digest(self):
        r = fx.audit("digest")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.split(), [source_digest(), DIGEST_ALGORITHM])
        identity = json.loads(fx.audit("digest", "--json").stdout)
        self.assertEqual((identity["source_digest"], identity["source_digest_algorithm"]),
                         (source_digest(), DIGEST_ALGORITHM))

    def test_audit_never_imports_verifiers(self):
        code = ("import sys\n"
                "from audit.cli import main\n"
                f"rc = main(['verify', {str(self.archive)!r}, '--public-key', {str(self.pub)!r}, '--json'])\n"
                "assert rc == 0, rc\n"
                "print([m for m in sys.modules if m.split('.')[0] == 'verifiers'])\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip().splitlines()[-1], "[]")


class KeygenAndSeal(unittest.TestCase):
    def test_keygen(self):
        out = fx.fresh_dir("cli-keys")
        r = fx.audit("keygen", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE((out / "signing-key.pem").stat().st_mode), 0o600)
        self.assertEqual(stat.S_IMODE((out / "signing-key.pub.pem").stat().st_mode), 0o644)
        before = (out / "signing-key.pem").read_bytes()
        r = fx.audit("keygen", "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("refusing to overwrite", r.stderr)
        self.assertEqual((out / "signing-key.pem").read_bytes(), before)

    def test_keygen_refuses_a_tracked_path_in_a_work_tree(self):
        """Into a directory git would commit, `keygen` refuses (exit 2, one line saying
        how to fix it) and writes nothing; `--force` overrides; an ignored path is fine."""
        import shutil
        import tempfile
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
            subprocess.run(["git", "-C", tmp, "init", "-q"], check=True, env=os.environ | env)
            with open(os.path.join(tmp, ".gitignore"), "w") as f:
                f.write("/secret-keys/\n")
            tracked = os.path.join(tmp, "keys")
            r = fx.audit("keygen", "--out", tracked, env_extra=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--force", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(tracked, "signing-key.pem")))
            r = fx.audit("keygen", "--out", tracked, "--force", env_extra=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = fx.audit("keygen", "--out", os.path.join(tmp, "secret-keys"), env_extra=env)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_seal_then_verify(self):
        out = fx.fresh_dir("cli-archive")
        key, _pub = fx.keys("owner")
        r = fx.audit("seal", fx.dev_run(), "--key", key, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("public dev split (not a private evaluation)", r.stdout)
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["manifest.dsse.json", "manifest.toml", "traces.jsonl"])
        self.assertEqual((out / "traces.jsonl").read_bytes(), (fx.dev_run() / "traces.jsonl").read_bytes())
        # a non-empty output directory is refused
        r = fx.audit("seal", fx.dev_run(), "--key", key, "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not an empty directory", r.stderr)

    def test_seal_refuses_a_symlinked_output_directory(self):
        key = fx.keys("owner")[0]
        target = fx.fresh_dir("link-target")
        for make_target in (False, True):  # dangling, then pointing at an empty directory
            with self.subTest(existing=make_target):
                if make_target:
                    target.mkdir()
                link = fx.fresh_dir("link")
                os.symlink(target, link)
                r = fx.audit_in_process("seal", fx.dev_run(), "--key", key, "--out", link)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("is a symbolic link", r.stderr)
                self.assertFalse(target.exists() and any(target.iterdir()))

    def test_seal_reports_a_write_failure_in_one_line(self):
        key = fx.keys("owner")[0]
        out = fx.fresh_dir("full-disk")

        def full(path, data, mode, *, exact_mode):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))

        with mock.patch("audit._seal.write_new", full):
            r = fx.audit_in_process("seal", fx.dev_run(), "--key", key, "--out", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("cannot write the archive", r.stderr)
        self.assertIn("No space left on device", r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_seal_refuses_invalid_runs(self):
        key = fx.keys("owner")[0]

        def invalid(episodes):
            episodes[0]["traces"][0]["info"]["environment"]["split"] = "public"
            episodes[1]["traces"][0]["rewards"]["recall"]["score"] = 2.0
        r = fx.audit("seal", fx.tampered_run(fx.dev_run(), invalid), "--key", key, "--out", fx.fresh_dir("x"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a schema-valid run", r.stderr)
        self.assertIn("traces.jsonl:1 $.traces[0].info.environment.split", r.stderr)
        self.assertIn("traces.jsonl:2 $.traces[0].rewards.recall.score", r.stderr)

        def mixed(episodes):
            episodes.extend(fx.read_episodes(fx.private_run() / "traces.jsonl"))
        r = fx.audit_in_process("seal", fx.tampered_run(fx.dev_run(), mixed), "--key", key, "--out", fx.fresh_dir("x"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("one result of one build on one split", r.stderr)

        def mixed_params(episodes):
            episodes.extend(fx.read_episodes(fx.nonstandard_run() / "traces.jsonl"))
        r = fx.audit_in_process("seal", fx.tampered_run(fx.dev_run(), mixed_params), "--key", key, "--out",
                             fx.fresh_dir("x"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("info.environment.task_params is n_shown=2, n_eval=3, budget_s=2.0; the archive's task "
                      "parameters are n_shown=8, n_eval=16, budget_s=2.0", r.stderr)

        def duplicated(episodes):
            episodes.append(episodes[0])
        r = fx.audit_in_process("seal", fx.tampered_run(fx.dev_run(), duplicated), "--key", key, "--out",
                             fx.fresh_dir("x"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("the same trace appears 2 times", r.stderr)


if __name__ == "__main__":
    unittest.main()
