"""The trust boundary every command shares (`redaction_pressure.boundary`): files from
outside are regular, bounded before a byte is read, and never followed where a link is
not expected; outputs never go through a link; a child process sees neither the
caller's secret nor the current directory."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from redaction_pressure.boundary import files, launch
from redaction_pressure.scoring import scan_pool
from redaction_pressure.task.splits import PRIVATE_SEED_ENV

SECRET = "boundary-tests-private-secret-0123456789-not-for-real-use"


class Reading(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="rp-boundary-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))

    def test_only_regular_files_within_the_cap_are_read(self):
        plain, fifo, link, sparse = (self.tmp / n for n in ("plain", "fifo", "link", "sparse"))
        plain.write_bytes(b"12345")
        os.mkfifo(fifo)  # no writer: a blocking open would never return
        link.symlink_to(plain)
        with open(sparse, "wb") as f:
            f.truncate(8 << 30)
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(str(self.tmp / "sock"))  # opening one fails with ENXIO, not an InputFileError
        start = time.perf_counter()
        self.assertEqual(files.read_bounded(plain, 5), b"12345")
        self.assertEqual(files.read_bounded(link, 5, follow_links=True), b"12345")
        cases = ((plain, 4, False, "plain is 5 bytes, more than the 4 bytes"),
                 (fifo, 10, True, "fifo is not a regular file (a FIFO)"),
                 (link, 10, False, "link is a symbolic link"),
                 (Path("/dev/zero"), 10, True, "zero is not a regular file (a device)"),
                 (self.tmp / "sock", 10, False, "sock is not a regular file (a socket)"),
                 (self.tmp / "sock", 10, True, "sock is not a regular file (a socket)"),
                 (self.tmp, 10, True, "is not a regular file (a directory)"),
                 (sparse, 1 << 20, False, "sparse is 8,589,934,592 bytes"),
                 (self.tmp / "missing", 10, False, "missing is missing"))
        for path, cap, follow, needle in cases:
            with self.subTest(path=path.name), self.assertRaises(files.InputFileError) as caught:
                files.read_bounded(path, cap, follow_links=follow)
            self.assertIn(needle, str(caught.exception))
        self.assertLess(time.perf_counter() - start, 1.0)  # nothing blocked, nothing large was read

    def test_a_file_growing_while_read_is_cut_at_the_cap(self):
        path = self.tmp / "growing"
        path.write_bytes(b"x" * 10)
        real_fstat = os.fstat

        def fstat(fd):  # says 3 bytes: the file grew to 10 after it was looked at
            st = real_fstat(fd)
            return os.stat_result((*st[:6], 3, *st[7:]))

        with mock.patch.object(files.os, "fstat", fstat), \
                self.assertRaisesRegex(files.InputFileError, "grew past 3 bytes"):
            files.read_bounded(path, 3)


class NumberLiterals(unittest.TestCase):
    """Red team: a trace whose reward was a 4,299-digit JSON integer cost every reader
    int() of the literal, then OverflowError wherever float() met it. The readers of
    `report`, `compare` and `rescore` convert no literal longer than audit's bound: it
    reads as NaN (refused where a number belongs, as a NaN literal is) and the line
    gets one problem; `audit`'s strict reader refuses the line."""

    def test_a_long_literal_reads_as_not_a_number_with_one_problem_for_its_line(self):
        import io
        import json
        import math

        from audit._canonical import MAX_NUMBER_CHARS
        from redaction_pressure.boundary import episodes

        self.assertEqual(episodes.MAX_NUMBER_CHARS, MAX_NUMBER_CHARS)  # one bound for every reader
        trace = {"info": {"redaction": {"reward": 10 ** 4298, "recall": 0.5, "seed": 2 ** 64 - 1}},
                 "task": {"data": {"pad": "x" * 2000}}, "rewards": {"clean": {"score": "SCORE"}}}
        line = json.dumps({"traces": [trace]}).replace('"SCORE"', "0." + "0" * 60)
        problems: list[str] = []
        start = time.process_time()
        got = list(episodes.EpisodeReader(problems.append).read(io.BytesIO(line.encode() + b"\n")))
        self.assertLess(time.process_time() - start, 0.5)
        self.assertEqual(len(got), 1)
        red = got[0][2]["info"]["redaction"]
        self.assertTrue(math.isnan(red["reward"]) and math.isnan(got[0][2]["rewards"]["clean"]["score"]))
        self.assertEqual((red["recall"], red["seed"]), (0.5, 2 ** 64 - 1))
        self.assertEqual(problems, ["line 1 holds 2 number literals longer than 40 characters (the longest 4,299); "
                                    "they are read as not a number"])


class DuplicateKeys(unittest.TestCase):
    """Review of 2026-12-04: the readers of unsealed runs took the last of a key written
    twice, as Python does, so ``{"reward": 1.0, ..., "reward": 0.1}`` showed one score
    to them and another to a reader that takes the first; `audit` refused such files.
    Now every reader of a run refuses the line, once, with the key named."""

    def test_a_line_naming_a_key_twice_is_not_read(self):
        import io
        import json

        from redaction_pressure.boundary import episodes

        pad = "x" * 2000
        honest = json.dumps({"traces": [{"info": {"redaction": {"reward": 0.1}}, "task": {"data": {"pad": pad}}}]})
        twice = honest.replace('{"reward": 0.1}', '{"reward": 1.0, "reward": 0.1}')
        nested = honest.replace('"pad":', '"pad": 1, "pad":')
        problems: list[str] = []
        got = list(episodes.EpisodeReader(problems.append).read(io.BytesIO(f"{honest}\n{twice}\n{nested}\n".encode())))
        self.assertEqual([n for n, *_ in got], [1])
        self.assertEqual(problems, [
            "line 2 is ambiguous JSON (an object names the key 'reward' twice: readers disagree on its value); "
            "it is not read",
            "line 3 is ambiguous JSON (an object names the key 'pad' twice: readers disagree on its value); "
            "it is not read"])


class LineFloods(unittest.TestCase):
    """Review of 2026-12-03: `report`, `rescore` and `compare` parsed every line of a
    traces file one Python step at a time: 16 MiB of ``{}`` lines cost the reader 71 s
    (and `report` 88 s, `compare` 185 s), 50 MB of line breaks 31 s. Lines under
    MIN_TRACE_BYTES hold no trace: the first few are named, the rest counted in C."""

    def read(self, data: bytes) -> tuple[int, list[str], float]:
        import hashlib
        import io

        from redaction_pressure.boundary.episodes import EpisodeReader

        problems: list[str] = []
        digest = hashlib.sha256()
        start = time.process_time()
        traces = sum(1 for _ in EpisodeReader(problems.append).read(io.BytesIO(data), digest))
        self.assertEqual(digest.hexdigest(), hashlib.sha256(data).hexdigest())  # every byte still hashed
        return traces, problems, time.process_time() - start

    def test_floods_of_short_or_blank_lines_cost_what_their_bytes_do(self):
        from redaction_pressure.boundary.episodes import SHORT_LINES_NAMED

        n = (16 << 20) // 3
        traces, problems, cpu = self.read(b"{}\n" * n)
        self.assertLess(cpu, 15)
        self.assertEqual(len(problems), SHORT_LINES_NAMED + 1)
        self.assertEqual(problems[0], "line 1 is not an Episode with a list of traces; it is not read")
        self.assertTrue(problems[-1].startswith(f"{n - SHORT_LINES_NAMED:,} more lines under 1,024 bytes (the first "
                                                f"in line {SHORT_LINES_NAMED + 1}) hold no trace"), problems[-1])
        for blank in (b"\n" * (16 << 20), b"  \r\n" * (4 << 20)):
            traces, problems, cpu = self.read(blank)
            self.assertEqual((traces, problems), (0, []))
            self.assertLess(cpu, 15)

    def test_line_numbers_and_kinds_survive_the_chunks(self):
        from redaction_pressure.boundary import episodes

        long = b'{"traces": "' + b"x" * 3000 + b'"}'
        data = (b"\n" * 3 + long + b"\n" + b"{}\n" * 70 + b"   \n\n" + b"[" * 10 + b"\n" + long + b"\n"
                + b"y" * 5000 + b"\n{}")
        for chunk in (7, 1000, 4096, 1 << 20):
            with self.subTest(chunk=chunk), mock.patch.object(episodes, "CHUNK_BYTES", chunk):
                _, problems, _ = self.read(data)
                self.assertEqual(problems[0], "line 4 is not an Episode with a list of traces; it is not read")
                # lines 5-68 are the 64 named {}; 69-74, the [[[ line (77) and the last are counted
                self.assertEqual(len(problems), 1 + 64 + 2 + 1, problems)
                self.assertEqual(problems[64], "line 68 is not an Episode with a list of traces; it is not read")
                self.assertEqual(problems[65], "line 78 is not an Episode with a list of traces; it is not read")
                self.assertTrue(problems[66].startswith("line 79 is not JSON"), problems[66])
                self.assertTrue(problems[-1].startswith("8 more lines under 1,024 bytes (the first in line 69)"),
                                problems)
        with mock.patch.object(episodes, "MAX_LINE_BYTES", 2000), mock.patch.object(episodes, "CHUNK_BYTES", 1000):
            _, problems, _ = self.read(data)
            self.assertIn("line 4 is longer than 2,000 bytes; it is not read", problems)
            self.assertIn("line 79 is longer than 2,000 bytes; it is not read", problems)


class Writing(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="rp-boundary-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))

    def test_replace_never_writes_through_a_link(self):
        victim, out = self.tmp / "victim", self.tmp / "page.html"
        victim.write_text("precious")
        out.symlink_to(victim)
        (self.tmp / "page.html.partial").symlink_to(victim)  # the name the report used to write first
        files.replace_file(out, b"<html>")
        self.assertEqual(victim.read_text(), "precious")
        self.assertFalse(out.is_symlink())
        self.assertEqual(out.read_bytes(), b"<html>")
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["page.html", "page.html.partial", "victim"])

    def test_replace_gives_the_mode_the_umask_allows(self):
        out = self.tmp / "page.html"
        old = os.umask(0o027)
        try:
            files.replace_file(out, b"x")
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(out.stat().st_mode), 0o640)

    def test_write_new_never_overwrites(self):
        out = self.tmp / "key"
        files.write_new(out, b"one", 0o600, exact_mode=True)
        with self.assertRaises(FileExistsError):
            files.write_new(out, b"two", 0o600, exact_mode=True)
        self.assertEqual(out.read_bytes(), b"one")


@unittest.skipUnless(sys.platform.startswith("linux"), "reads /proc/PID/environ")
class Overwriting(unittest.TestCase):
    """Red team, 2026-12-03 (second round): ``report --out``, ``compare --html`` and
    ``export --out`` replaced whatever the path named, a run's own traces.jsonl and an
    archive's manifest included, and an export left a 0644 file 0600. A review then
    found a page-looking prefix trusted and two levels of a run unguarded."""

    PAGE = b'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta name="generator" content="redaction-pressure">\n'

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="rp-over-"))
        self.run = self.tmp / "run"
        (self.run / "configs" / "resolved").mkdir(parents=True)
        (self.run / "traces.jsonl").write_text('{"id": 1}\n')
        (self.run / "configs" / "resolved" / "eval.json").write_text("{}")

    def refusal(self, out, force=False, reads=None):
        from redaction_pressure.cli import _a_page
        return files.replace_refusal(out, reads=(self.run,) if reads is None else reads, ours=_a_page,
                                     force=force, option="--out")

    def test_a_device_is_never_replaced(self):
        """Red team, 2026-12-03: `report --out /dev/null --force`, run as root, replaced
        /dev/null with the page. A device or socket is refused, even with --force."""
        for device in (Path("/dev/null"), Path("/dev/zero")):
            for force in (False, True):
                refusal = self.refusal(device, force=force)
                self.assertIsNotNone(refusal)
                self.assertIn("is a device or a socket, not a file; nothing replaces one, even with --force", refusal)
        with socket.socket(socket.AF_UNIX) as sock:
            path = self.tmp / "sock"
            sock.bind(str(path))
            self.assertIn("a device or a socket", self.refusal(path, force=True))

    def test_what_may_be_replaced(self):
        self.assertIsNone(self.refusal(self.tmp / "new.html"))
        page = self.run / "report.html"
        page.write_bytes(self.PAGE + b"old page")
        self.assertIsNone(self.refusal(page))  # a page it wrote, even inside the run
        (self.tmp / "empty").write_text("")
        self.assertIsNone(self.refusal(self.tmp / "empty"))
        for name, text in (("notes.txt", b"mine"), ("site.html", b"<!DOCTYPE html>\n<html>my own page</html>")):
            mine = self.tmp / name
            mine.write_bytes(text)
            self.assertIn("pass --force", self.refusal(mine))
            self.assertIsNone(self.refusal(mine, force=True))
        # an earlier version's page (no generator tag; its title says what wrote it)
        older = self.run / "older.html"
        older.write_bytes(b'<!DOCTYPE html>\n<html lang="en">\n<head>\n<title>redaction-pressure report \xe2\x80\x94 x'
                          b'</title>')
        self.assertIsNone(self.refusal(older))
        # the user's own file in the run: theirs to replace with --force (the review of
        # 8f25d00 found it refused even so, with a message saying the report read it)
        notes = self.run / "notes.txt"
        notes.write_text("mine")
        self.assertIn("pass --force", self.refusal(notes))
        self.assertIsNone(self.refusal(notes, force=True))
        for member in (self.run / "traces.jsonl", self.run / "configs" / "resolved" / "eval.json",
                       self.run / "configs" / "resolved" / "new-name.json"):
            member.write_text("{}") if not member.exists() else None
            for force in (False, True):
                with self.subTest(member=member.name, force=force):
                    self.assertIn("is a file this command reads", self.refusal(member, force))
        os.link(self.run / "traces.jsonl", self.tmp / "hard")  # the same file by another name
        self.assertIn("is a file this command reads", self.refusal(self.tmp / "hard", True))
        # a traces file named directly: its archive beside it is read too
        (self.run / "manifest.toml").write_text("x = 1\n")
        self.assertIn("is a file this command reads",
                      self.refusal(self.run / "manifest.toml", True, reads=(self.run / "traces.jsonl",)))
        os.mkfifo(self.tmp / "fifo")  # never opened for reading (that would block)
        self.assertIn("pass --force", self.refusal(self.tmp / "fifo"))
        self.assertIn("is a directory", self.refusal(self.tmp, True))

    def test_the_commands_refuse_and_lose_nothing(self):
        from tests.support.util import cli
        before = (self.run / "traces.jsonl").read_bytes()
        for argv in (("report", str(self.run), "--out", str(self.run / "traces.jsonl"), "--force"),
                     ("compare", str(self.run), str(self.run), "--html", str(self.run / "traces.jsonl")),
                     ("export", "-n", "1", "--out", str(self.run / "traces.jsonl"))):
            with self.subTest(command=argv[0]):
                code, _, err = cli(*argv)
                self.assertEqual(code, 2, err)
                self.assertRegex(err, "is a file this command reads|pass --force")
                self.assertEqual((self.run / "traces.jsonl").read_bytes(), before)

    def test_an_export_has_the_mode_of_any_new_file(self):
        from tests.support.util import cli
        out = self.tmp / "sft.jsonl"
        code, _, err = cli("export", "-n", "1", "--out", str(out))
        self.assertEqual(code, 0, err)
        umask = os.umask(0o022)
        os.umask(umask)
        self.assertEqual(stat.S_IMODE(out.stat().st_mode), 0o644 & ~umask)
        self.assertEqual(cli("export", "-n", "1", "--out", str(out))[0], 0)  # its own export: replaced
        chat = self.tmp / "chat.jsonl"  # someone else's chat JSONL: same opening, other keys
        chat.write_text('{"messages":[{"role": "user", "content": "hi"}]}\n')
        self.assertIn("pass --force", cli("export", "-n", "1", "--out", str(chat))[2])


class ScanWorkerEnvironment(unittest.TestCase):
    """A scan worker holds none of the caller's environment: no reply needs the private
    secret (it inherited it before)."""

    def test_a_fresh_scan_worker_gets_a_minimal_environment(self):
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET, "PYTHONPATH": "/nowhere", "HOME": "/home/x"}):
            worker = scan_pool._Worker(fork=False)
        try:
            environ = Path(f"/proc/{worker.pid}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{worker.pid}/cmdline").read_bytes().split(b"\0")
        finally:
            worker.kill()
        names = {e.split(b"=", 1)[0].decode() for e in environ if e}
        self.assertLessEqual(names, set(launch.KEPT_VARIABLES))
        self.assertNotIn(SECRET.encode(), b"\0".join(environ))
        self.assertEqual(cmdline[1], b"-I")  # isolated: no current directory, no PYTHON* variables

    def test_a_forked_scan_worker_drops_the_secret(self):
        def serve(requests, replies):  # runs in the forked worker instead of the scan loop
            from redaction_pressure.build.identity import source_digest

            replies.send(("ready", os.getpid(), source_digest()))
            requests.recv()
            replies.send(sorted(os.environ))

        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET, "HOME": "/home/x"}), \
                mock.patch("redaction_pressure.scoring.scan_worker.serve", serve):
            worker = scan_pool._Worker(fork=True)
            try:
                worker.requests.send("environment?")
                self.assertTrue(worker.replies.poll(30))
                names = worker.replies.recv()
            finally:
                worker.kill()
            self.assertIn(PRIVATE_SEED_ENV, os.environ)  # the caller keeps its own
        self.assertNotIn(PRIVATE_SEED_ENV, names)
        self.assertLessEqual(set(names), set(launch.KEPT_VARIABLES))


class IsolatedCommand(unittest.TestCase):
    def test_the_current_directory_is_not_on_a_childs_path(self):
        with tempfile.TemporaryDirectory() as cwd:
            Path(cwd, "redaction_pressure").mkdir()
            Path(cwd, "redaction_pressure", "__init__.py").write_text("raise SystemExit('HOSTILE PACKAGE RAN')\n")
            Path(cwd, "json").mkdir()
            Path(cwd, "json", "__init__.py").write_text("raise SystemExit('HOSTILE json RAN')\n")
            done = subprocess.run(launch.python_command("redaction_pressure.build.identity"), cwd=cwd,
                                  capture_output=True, text=True, env=launch.child_environment(), timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("HOSTILE", done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
