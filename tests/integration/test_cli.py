"""The `redaction-pressure` command through its real entry point (subprocess)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure import PRIVATE_SEED_ENV, load_task, policies, score_completion
from redaction_pressure.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "redaction_pressure.cli"]
AUDIT = [sys.executable, "-m", "audit"]
SECRET = "cli-test private secret that is long enough 0123"
LABEL = "public dev split (not a private evaluation)"


def _env(extra=None) -> dict:
    base = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
    base["PYTHONPATH"] = str(ROOT) + os.pathsep + base.get("PYTHONPATH", "")
    return base | (extra or {})


def run(*args, env=None, stdin=None, cwd=None, cmd=CLI):
    return subprocess.run(cmd + list(args), capture_output=True, text=True, input=stdin, cwd=cwd,
                          env=_env(env), timeout=300)


def no_traceback(test: unittest.TestCase, p: subprocess.CompletedProcess) -> None:
    test.assertNotIn("Traceback", p.stdout + p.stderr)


class UsageErrors(unittest.TestCase):
    """Each is one line on stderr, exit 2, and found before verifiers is imported: a
    `verifiers` package that fails on import shadows the real one for these runs."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        shadow = Path(cls.tmp.name) / "shadow" / "verifiers"
        shadow.mkdir(parents=True)
        (shadow / "__init__.py").write_text("raise SystemExit('VERIFIERS WAS IMPORTED')\n")
        cls.env = {"PYTHONPATH": f"{shadow.parent}{os.pathsep}{ROOT}"}
        cls.file = Path(cls.tmp.name) / "a-file"
        cls.file.write_text("not a directory\n")
        cls.existing = Path(cls.tmp.name) / "existing-run"
        cls.existing.mkdir()
        (cls.existing / "traces.jsonl").write_text("{}\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, args, needle, env=None):
        p = run(*args, env=self.env | (env or {}), cwd=self.tmp.name)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(needle, p.stderr)
        self.assertNotIn("VERIFIERS WAS IMPORTED", p.stderr)
        no_traceback(self, p)
        self.assertFalse((Path(self.tmp.name) / "runs").exists())  # a refused eval writes nothing

    def test_bad_arguments(self):
        """Argument errors: a few through the entry point, the rest through main() in
        this process (same parser, same code path; saves a Python start each)."""
        cases = ((["eval", "--policy", "nope"], "invalid choice"), (["eval", "-n", "0"], "at least 1"),
                 (["eval", "-n", "65"], "has 64 tasks"), (["eval", "--split", "test"], "invalid choice"),
                 (["frobnicate"], "invalid choice"), ([], "required"), (["tasks"], "required"),
                 (["score", "reply.txt"], "--index"), (["reply", "--policy", "oracle"], "--index"),
                 (["reply", "--index", "1"], "--policy"), (["score", "--index", "64", "-"], "0..63"),
                 (["score", "--index", "x", "-"], "invalid int"),
                 (["score", "--index", "1", "/nonexistent/reply.txt"], "cannot read reply file"),
                 (["score", "--index", "1", "/dev/zero"], "zero is not a regular file (a device)"),
                 (["eval", "--level-mix", "1=x"], "--level-mix: '1=x' is not LEVEL=WEIGHT"),
                 (["eval", "--level-mix", "9=1"], "--level-mix: level must be one of"),
                 (["eval", "--level-mix", "1=0"], "--level-mix: level_mix needs at least one level"),
                 (["eval", "--level-mix", "1=1e308,2=1e308"], "--level-mix: level_mix weights sum past the largest"),
                 (["eval", "--level-mix", "1=1,1=2"], "--level-mix: level 1 is given twice"),
                 (["compare", "a"], "RUN_B"), (["compare", "/nonexistent/a", "/nonexistent/b"], "does not exist"),
                 (["compare", "a", "b", "--public-key", "/nonexistent.pem"], "is not a file"),
                 (["compare", "a", "b", "--max-cpu", "0"], "--max-cpu must be a positive number"),
                 (["compare", "a", "b", "--strict"], "--strict applies to the `audit verify` that --public-key runs"),
                 (["report", "a", "--strict"], "--strict applies to the `audit verify` that --public-key runs"),
                 (["rescore", "a", "--max-cpu", "0"], "--max-cpu must be a positive number"))
        for args, needle in cases[:3] + cases[7:8]:
            with self.subTest(args=args, via="subprocess"):
                self.check(args, needle)
        for args, needle in cases:
            with self.subTest(args=args, via="main()"):
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    try:
                        code = main(args)
                    except SystemExit as exc:
                        code = exc.code
                self.assertEqual(code, 2)
                self.assertEqual(len(err.getvalue().strip().splitlines()), 1, err.getvalue())
                self.assertIn(needle, err.getvalue())

    def test_a_path_the_system_refuses_is_one_line_not_a_traceback(self):
        """Red team, 2026-12-04: a path the system will not look at (a name past NAME_MAX,
        a directory on the way that may not be searched) made `rescore` and `compare`
        print a traceback and exit 1, their code for a difference, and `report` say it
        could not write its page; `eval --out` printed a traceback."""
        long = str(Path(self.tmp.name) / ("x" * 300))  # ENAMETOOLONG at the first stat, for any user
        cases = (["rescore", long], ["report", long], ["report", long, "--out", str(Path(self.tmp.name) / "p.html")],
                 ["compare", long, str(self.existing)], ["compare", str(self.existing), long],
                 ["eval", "-n", "1", "--out", long])
        for args in cases:
            with self.subTest(args=args[:2]):
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = main(args)
                self.assertEqual(code, 2, err.getvalue())
                self.assertEqual(len(err.getvalue().strip().splitlines()), 1, err.getvalue())
                self.assertIn(f"cannot use {long}: File name too long", err.getvalue())
                self.assertNotIn("cannot write", err.getvalue())
        p = run("rescore", long)  # through the entry point too
        self.assertEqual(p.returncode, 2, p.stderr)
        no_traceback(self, p)

    def test_bad_run_directories(self):
        cases = [(["--out", str(self.file)], "is an existing file"),
                 (["--out", str(self.file / "run")], "is a file, not a directory"),
                 (["--out", str(self.existing)], "--force"),
                 (["--out", "/proc/redaction-pressure-test/run"], "cannot write run directory")]
        if os.geteuid() != 0:  # root may write anywhere a mode allows nothing
            locked = Path(self.tmp.name) / "locked"
            locked.mkdir(mode=0o500, exist_ok=True)
            cases.append((["--out", str(locked / "run")], "cannot write run directory"))
        for extra, needle in cases:
            with self.subTest(extra=extra):
                self.check(["eval", "-n", "1", *extra], needle)

    def test_a_run_directory_holding_links_is_refused(self):
        """Attack (red team a12): a cloned repository ships runs/dev-baseline/ with
        configs/resolved/eval.json linked to a file of the user's and no traces.jsonl, so
        the README's `eval --out runs/dev-baseline` needs no --force, and verifiers wrote
        the resolved config through the link. Now nothing is written: one line, exit 2."""
        from redaction_pressure.boundary.files import LinkedOutputError
        from redaction_pressure.run import run_policy

        victim = Path(self.tmp.name) / "victim.txt"
        victim.write_text("precious\n")
        elsewhere = Path(self.tmp.name) / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        cases = {"configs/resolved/eval.json": victim, "traces.jsonl": victim, "configs": elsewhere,
                 "notes/deep/link": victim, "": elsewhere, "logs/latest": victim, "logs/attempt_1": victim}
        for k, (member, target) in enumerate(cases.items()):
            with self.subTest(member=member):
                run_dir = Path(self.tmp.name) / f"linked-{k}" / "run"
                link = run_dir / member if member else run_dir
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(target)
                self.check(["eval", "-n", "1", "--out", str(run_dir)], "is or holds a symbolic link")
                with self.assertRaisesRegex(LinkedOutputError, "nothing is written through links"):
                    run_policy("dev", "baseline", 1, run_dir)
                self.assertEqual(victim.read_text(), "precious\n")
                self.assertEqual(list(elsewhere.iterdir()), [])

    def test_an_output_that_fails_is_one_line_not_a_traceback(self):
        """Review of 2026-12-04: `tasks show > /dev/full` printed a traceback. A full
        output is one line and exit 1; an output the encoding cannot take gets escapes."""
        with open("/dev/full", "w") as full:
            p = subprocess.run([*CLI, "tasks", "show", "--index", "1"], stdout=full, stderr=subprocess.PIPE,
                               text=True, env=_env(None), timeout=300)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(), ["redaction-pressure: error: cannot write the output: "
                                                         "No space left on device"])
        p = run("tasks", "show", "--index", "1", env={"PYTHONIOENCODING": "ascii"})
        self.assertEqual(p.returncode, 0, p.stderr)
        no_traceback(self, p)

    def test_a_linked_directory_on_the_way_to_the_default_run_directory_is_refused(self):
        """Review of 2026-12-04: a current directory someone else made holds ``runs`` as a
        link to a directory of the user's; the plain ``eval`` (its default
        runs/dev-baseline) replaced the traces there, exit 0. The parts a relative path
        takes from the current directory are checked as the run directory is."""
        from redaction_pressure.boundary.files import LinkedOutputError, link_in, refuse_links

        victim = Path(self.tmp.name) / "victim-runs"
        (victim / "dev-baseline").mkdir(parents=True)
        (victim / "dev-baseline" / "traces.jsonl").write_text("precious\n")
        hostile = Path(self.tmp.name) / "hostile-clone"
        hostile.mkdir()
        (hostile / "runs").symlink_to(victim)
        for args in (["eval", "-n", "1"], ["eval", "-n", "1", "--out", "runs/other"]):
            with self.subTest(args=args):
                p = run(*args, env=self.env, cwd=str(hostile))
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("is or holds a symbolic link", p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                no_traceback(self, p)
        cwd = os.getcwd()
        os.chdir(hostile)
        try:
            with self.assertRaises(LinkedOutputError):
                refuse_links(Path("runs/dev-baseline"))
        finally:
            os.chdir(cwd)
        self.assertEqual((victim / "dev-baseline" / "traces.jsonl").read_text(), "precious\n")
        self.assertEqual(sorted(p.name for p in victim.iterdir()), ["dev-baseline"])
        # an absolute path's own parts are the user's choice: not checked
        self.assertIsNone(link_in(hostile / "runs" / "dev-baseline" / "x"))

    def test_the_link_vf_eval_resume_leaves_does_not_block_a_new_run(self):
        """Review of 2026-12-03: `vf-eval --resume` on an eval run leaves verifiers' own
        logs/latest -> attempt_1, and `eval --force` then refused the directory for good
        (the refusal's own advice, re-create the run with --force, failed)."""
        from redaction_pressure.run import run_policy

        run_dir = Path(self.tmp.name) / "resumed" / "run"
        run_policy("dev", "baseline", 1, run_dir)
        (run_dir / "logs" / "attempt_1").mkdir(parents=True)
        (run_dir / "logs" / "latest").symlink_to("attempt_1")
        p = run("eval", "-n", "1", "--out", str(run_dir), "--force", cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue((run_dir / "traces.jsonl").is_file())

    def test_missing_private_secret(self):
        for args in (["eval", "--split", "private_eval", "-n", "1"], ["tasks", "show", "--split", "private_eval"],
                     ["reply", "--policy", "oracle", "--split", "private_eval", "--index", "0"]):
            with self.subTest(args=args):
                self.check(args, PRIVATE_SEED_ENV)


class Help(unittest.TestCase):
    def test_every_option_states_its_default_or_that_it_is_required(self):
        def parsers(p):
            yield p
            for a in p._actions:
                if isinstance(a, argparse._SubParsersAction):
                    for child in a.choices.values():
                        yield from parsers(child)

        from audit.cli import build_parser as audit_parser

        seen = 0
        for p in [*parsers(build_parser()), *parsers(audit_parser())]:
            for a in p._actions:
                if isinstance(a, argparse._SubParsersAction):
                    helps = {c.dest: c.help for c in a._choices_actions}
                    for name in a.choices:
                        with self.subTest(prog=p.prog, command=name):
                            self.assertTrue(helps.get(name), f"{p.prog} {name} has no help")
                elif a.dest != "help":
                    with self.subTest(prog=p.prog, argument=a.option_strings or a.dest):
                        self.assertTrue(a.help, f"{p.prog} {a.option_strings or a.dest} has no help")
                if a.option_strings and a.dest != "help":
                    seen += 1
                    with self.subTest(prog=p.prog, option=a.option_strings):
                        self.assertTrue(a.help and ("default" in a.help or "required" in a.help), a.help)
                        self.assertEqual(a.required, "required" in a.help)
        self.assertGreaterEqual(seen, 40)
        eval_help = run("eval", "--help")
        self.assertEqual(eval_help.returncode, 0, eval_help.stderr)
        self.assertIn("(default: baseline)", eval_help.stdout)
        reply_help = run("reply", "--help").stdout
        for name in policies.POLICIES:  # every policy is listed, including any added later
            self.assertIn(name, reply_help)


class Reply(unittest.TestCase):
    def test_reply_prints_each_policy_reply(self):
        task = load_task("dev", 5)
        for name, policy in policies.POLICIES.items():
            with self.subTest(policy=name):
                p = run("reply", "--policy", name, "--index", "5")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, policy(task) + "\n")

    def test_readme_walkthrough_scores_above_zero(self):
        """The README's `reply` then `score` commands, run as written: the score is
        above 0 and is exactly what `score_completion` gives that reply."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        reply_cmd = re.search(r"redaction-pressure (reply [^\n>]*?)\s*>\s*(\S+)", readme)
        score_cmd = re.search(r"redaction-pressure (score [^\n#]*)", readme)
        self.assertIsNotNone(reply_cmd, "README has no `reply ... > FILE` command")
        self.assertIsNotNone(score_cmd, "README has no `score` command")
        reply_args, reply_file = reply_cmd.group(1).split(), reply_cmd.group(2)
        score_args = score_cmd.group(1).split()
        self.assertEqual(score_args[-1], reply_file)
        with tempfile.TemporaryDirectory() as tmp:
            made = run(*reply_args, cwd=tmp)
            self.assertEqual(made.returncode, 0, made.stderr)
            (Path(tmp) / reply_file).write_text(made.stdout, encoding="utf-8")
            scored = run(*score_args, cwd=tmp)
            self.assertEqual(scored.returncode, 0, scored.stderr)
            as_json = run(*score_args[:-1], "--json", score_args[-1], cwd=tmp)
        result = json.loads(as_json.stdout)
        index = int(score_args[score_args.index("--index") + 1])
        policy = reply_args[reply_args.index("--policy") + 1]
        expected = score_completion(load_task("dev", index), policies.POLICIES[policy](load_task("dev", index)))
        self.assertGreater(result["reward"], 0)
        self.assertEqual(result["reward"], expected.reward)
        last = scored.stdout.strip().splitlines()[-1]
        self.assertTrue(last.startswith(f"dev-{index:06d}"), last)
        self.assertIn(f"reward {expected.reward:.4f}", last)


class TasksShow(unittest.TestCase):
    def test_plain_output_marks_every_span_and_keeps_text_whole(self):
        task = load_task("dev", 4)
        for extra in ([], ["--plain"]):
            with self.subTest(extra=extra):
                p = run("tasks", "show", "--split", "dev", "--index", "4", *extra)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertNotIn("\x1b[", p.stdout)  # no colour codes in a pipe
                self.assertIn("held-out records (16)", p.stdout)
                self.assertIn(task.prompt, p.stdout)  # never re-wrapped
                for record in task.heldout:
                    self.assertIn(record.text, p.stdout)
                    for kind, spans in (("SECRET", record.secrets), ("DECOY", record.decoys)):
                        for s in spans:
                            line = (f"{kind:<6} [{s.start}:{s.end}) {s.family}: "
                                    + json.dumps(record.text[s.start:s.end]))
                            self.assertIn(line, p.stdout)
        marked = p.stdout.count("  SECRET [") + p.stdout.count("  DECOY  [")
        self.assertEqual(marked, sum(len(r.secrets) + len(r.decoys) for r in task.heldout))

    @unittest.skipUnless(sys.platform.startswith("linux"), "pty behaviour checked on Linux")
    def test_terminal_gets_colour_and_plain_removes_it(self):
        import pty

        def on_terminal(*extra):
            master, slave = pty.openpty()
            proc = subprocess.Popen([*CLI, "tasks", "show", "--index", "4", *extra], stdout=slave,
                                    stderr=subprocess.PIPE, env=_env({"TERM": "xterm-256color", "COLUMNS": "100"}))
            os.close(slave)
            chunks = []
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(master)
            self.assertEqual(proc.wait(timeout=60), 0, proc.stderr.read())
            proc.stderr.close()
            return b"".join(chunks).decode("utf-8", "replace")

        coloured, plain = on_terminal(), on_terminal("--plain")
        self.assertIn("\x1b[", coloured)
        self.assertNotIn("\x1b[", plain)
        task = load_task("dev", 4)
        for text in (coloured, plain):
            self.assertIn("SECRET [", text)  # the span list is there either way
        self.assertIn(task.heldout[0].text.replace("\n", "\r\n"), plain)

    def test_json_and_range(self):
        p = run("tasks", "show", "--split", "dev", "--index", "4", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        data = json.loads(p.stdout)
        task = load_task("dev", 4)
        self.assertEqual((data["id"], data["prompt"]), (task.id, task.prompt))
        self.assertEqual(len(data["heldout"]), 16)
        self.assertEqual(run("tasks", "show", "--index", "64").returncode, 2)

    def test_private_tasks_hide_heldout(self):
        p = run("tasks", "show", "--split", "private_eval", "--index", "0", "--json", env={PRIVATE_SEED_ENV: SECRET})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["heldout"], "hidden (private split)")
        self.assertNotIn(SECRET, p.stdout)


class Score(unittest.TestCase):
    def test_oracle_file(self):
        task = load_task("dev", 2)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(policies.oracle(task))
        try:
            p = run("score", "--index", "2", "--json", f.name)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["reward"], 1.0)
        finally:
            os.unlink(f.name)

    def test_every_problem_is_reported_with_its_rule(self):
        """Schema problems (rules 2 and 4, as people count) stop scoring before any pattern
        compiles; the regex problems of rules 1 and 3 are still listed, marked as not scored.
        The JSON's rule field is the 0-based index."""
        reply = json.dumps({"rules": [{"pattern": "(", "replacement": "[REDACTED]"},
                                      {"pattern": "ok", "replacement": "X"},
                                      {"pattern": "[", "replacement": ""},
                                      {"pattern": "b"}]})
        p = run("score", "--index", "2", "-", stdin=reply)
        self.assertEqual(p.returncode, 0, p.stderr)
        no_traceback(self, p)
        for needle in ("error unsafe_replacement: rule 2: replacement must be",
                       'error bad_entry: rule 4 has no "replacement"',
                       "invalid_regex: rule 1: does not compile", "invalid_regex: rule 3: does not compile"):
            self.assertIn(needle, p.stdout)
        self.assertIn("INVALID (4 problems above)", p.stdout.strip().splitlines()[-1])
        j = json.loads(run("score", "--index", "2", "--json", "-", stdin=reply).stdout)
        self.assertEqual(j["reward"], 0.0)
        self.assertEqual(sorted(e["rule"] for e in j["redaction_errors"]), [1, 3])
        self.assertEqual([(e["code"], e["rule"]) for e in j["other_problems"]],
                         [("invalid_regex", 0), ("invalid_regex", 2)])
        # A reply whose only problems are regexes: all of them, scored, nothing extra.
        only_regex = json.dumps({"rules": [{"pattern": "(", "replacement": ""}, {"pattern": "[", "replacement": ""}]})
        j = json.loads(run("score", "--index", "2", "--json", "-", stdin=only_regex).stdout)
        self.assertEqual([e["rule"] for e in j["redaction_errors"]], [0, 1])
        self.assertEqual(j["other_problems"], [])


if __name__ == "__main__":
    unittest.main()
