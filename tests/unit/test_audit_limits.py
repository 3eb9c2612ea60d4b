"""`audit verify` spends what the evaluator grants and says what it tolerated: the
Statement a verdict is about, the budget and CPU rescoring may take (--max-budget,
--max-cpu: anything not rescored is NOT CHECKED, exit 3), the 4x budget retry and
time-dependent episodes in the verdict line itself (--strict fails them), bounded
reads in seal and verify, and a split label its commitment does not back named in the
header. Each test is an attack that passed before."""

from __future__ import annotations

import hashlib
import json
import os
import time
import unittest
from unittest import mock

from audit import _rescore
from audit._report import render_json
from audit._verify import FAILED, INCOMPLETE, PASSED, Limits, verify_archive
from tests.support import audit_fixtures as fx

human = fx.human


def verify(archive, limits=None, jobs=1, owner="owner"):
    return verify_archive(archive, fx.public_key(owner), None, jobs=jobs, limits=limits)


def needs(reply: str, seconds: float):
    """``score_completion`` for a ``reply`` that needs ``seconds`` of CPU: out of time
    under any smaller budget (every other reply as it is)."""
    real = _rescore.score_completion

    def score(task, text, budget_s=None):
        budget = task.budget_s if budget_s is None else budget_s
        return real(task, text, budget_s=0.0 if text == reply and budget < seconds else budget)
    return score


def reply_of(archive, line: int) -> str:
    return _rescore.recorded_reply(fx.read_episodes(archive / "traces.jsonl")[line]["traces"][0])


class StatementDigest(unittest.TestCase):
    def test_the_json_verdict_names_the_statement_it_is_about(self):
        archive = fx.seal_run(fx.dev_run())
        report = json.loads(render_json(verify(archive)))
        self.assertEqual(report["statement_sha256"], hashlib.sha256(fx.payload_of(archive)).hexdigest())
        from audit._keys import keyid

        self.assertEqual(report["pinned_key_id"], keyid(fx.public_key("owner")))
        self.assertTrue(report["verdict_line"].startswith("VERIFIED: every check that ran passed"))


class Tolerance(unittest.TestCase):
    def test_budget_laundering_is_named_in_the_verdict_line(self):
        """A signer scores a reply that needs 3.5 s of CPU under an 8 s budget and labels
        the run with the standard 2.0 s: verify printed a plain VERIFIED."""
        archive = fx.seal_run(fx.dev_run())
        with mock.patch.object(_rescore, "score_completion", needs(reply_of(archive, 0), 3.5)):
            report = verify(archive)
            strict = verify(archive, Limits(strict=True))
        self.assertEqual(report.exit_code, 0)
        line = "VERIFIED — 1 of 8 rewards reproduced only with a 4x budget (8 s, not the stated 2 s)"
        self.assertIn(line, human(report))
        self.assertNotIn("VERIFIED: every check", human(report))
        as_json = json.loads(render_json(report))
        self.assertTrue(as_json["verdict_line"].startswith(line))
        self.assertEqual(as_json["tolerated"]["budget_extended"], 1)
        self.assertEqual(strict.exit_code, 1)
        self.assertEqual(strict.check("rescoring").status, FAILED)
        self.assertIn("--strict: 1 of 8 rewards reproduced only with a 4x budget", strict.check("rescoring").summary)

    def test_time_dependent_episodes_are_named_first_and_strict_fails_them(self):
        def slow_sealer(episodes):
            trace = episodes[1]["traces"][0]
            score = _rescore.score_completion(_rescore.task_of(trace), _rescore.recorded_reply(trace), budget_s=0.0)
            fx.record(trace, score)
        archive = fx.seal_run(fx.tampered_run(fx.dev_run(), slow_sealer))
        with fx.scans_cost(1.0):  # within the 4x tolerance: see test_audit_v2.MachineSpeed
            self.assertIn("VERIFIED — 1 TIME-DEPENDENT episode(s) of 8", human(verify(archive)))
            strict = verify(archive, Limits(strict=True))
        self.assertEqual((strict.exit_code, strict.check("rescoring").status), (1, FAILED))


class RescoringLimits(unittest.TestCase):
    def test_a_trace_stating_more_budget_than_granted_is_not_checked(self):
        archive = fx.seal_run(fx.budget_run())
        with mock.patch.object(_rescore, "score_completion", side_effect=AssertionError("rescored")):
            report = verify(archive)
        self.assertEqual((report.exit_code, report.as_dict()["verdict"], report.not_rescored), (3, "incomplete", 2))
        check = report.check("rescoring")
        self.assertEqual(check.status, INCOMPLETE)
        self.assertIn("NOT CHECKED: 2 of 2 traces were not rescored (2 because its budget of 6 s is more than the "
                      "2 s this reader grants a trace (--max-budget))", check.summary)
        self.assertIn("NOT VERIFIED — NOT CHECKED: 2 of 2 traces", human(report))
        self.assertNotIn("VERIFIED:", human(report))
        granted = verify(archive, Limits(max_budget_s=6.0))
        self.assertEqual(granted.exit_code, 0, granted.check("rescoring").summary)

    def test_rescoring_stops_when_the_cpu_granted_is_spent(self):
        archive = fx.seal_run(fx.dev_run())
        report = verify(archive, Limits(max_cpu_s=1e-9))
        self.assertEqual((report.exit_code, report.not_rescored), (3, 7))  # the first trace's scan spent it
        self.assertIn("7 because the 1e-09 s of scan CPU this reader grants all traces were spent (--max-cpu)",
                      report.check("rescoring").summary)
        # One figure shared by the jobs: each job's first trace starts (nothing is spent
        # yet), and so do replies that never reach a scan (they spend nothing); a job's
        # traces after its first scan do not.
        parallel = verify(archive, Limits(max_cpu_s=1e-9), jobs=2)
        self.assertEqual(parallel.exit_code, 3)
        self.assertGreaterEqual(parallel.not_rescored, 1)
        self.assertEqual(verify(archive).check("rescoring").status, PASSED)

    def test_task_builds_are_charged_too(self):
        """Red team, 2026-12-03 (second round): verification charged the scans to
        --max-cpu but not the task rebuilds a trace's parameters choose, so replies that
        never reach a scan (here: empty) were each rebuilt and rescored however little
        CPU was granted. The first trace's build now spends the grant."""
        def no_reply(episodes):
            for ep in episodes:
                for trace in ep["traces"]:
                    for node in trace["nodes"]:
                        if node.get("sampled") is True:
                            node["message"]["content"] = ""
        archive = fx.seal_run(fx.tampered_run(fx.dev_run(), no_reply))
        report = verify(archive, Limits(max_cpu_s=1e-9))
        self.assertEqual((report.exit_code, report.not_rescored), (1, 7), report.check("rescoring").summary)

    def test_limits_are_checked_as_usage(self):
        archive, pub = fx.seal_run(fx.dev_run()), fx.keys("owner")[1]
        for flag, value in (("--max-budget", "0"), ("--max-cpu", "-1"), ("--max-cpu", "inf"), ("--max-budget", "nan")):
            r = fx.audit_in_process("verify", archive, "--public-key", pub, flag, value)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(f"{flag} must be a positive number of seconds", r.stderr)


class BoundedReads(unittest.TestCase):
    def test_seal_refuses_a_huge_or_blocking_traces_file_unread(self):
        key = fx.keys("owner")[0]
        sparse, fifo = fx.fresh_dir("sparse-run"), fx.fresh_dir("fifo-run")
        sparse.mkdir()
        with open(sparse / "traces.jsonl", "wb") as f:
            f.truncate(8 << 30)
        fifo.mkdir()
        os.mkfifo(fifo / "traces.jsonl")
        for run, needle in ((sparse, "traces.jsonl is 8,589,934,592 bytes"), (fifo, "not a regular file (a FIFO)")):
            start = time.perf_counter()
            r = fx.audit_in_process("seal", run, "--key", key, "--out", fx.fresh_dir("never"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1)
            self.assertLess(time.perf_counter() - start, 2.0)

    def test_a_key_file_that_blocks_or_never_ends_is_a_usage_error(self):
        archive = fx.seal_run(fx.dev_run())
        fifo, zero = fx.fresh_dir("key.fifo"), fx.fresh_dir("key-zero.pem")
        os.mkfifo(fifo)
        zero.symlink_to("/dev/zero")
        for key, needle in ((fifo, "(a FIFO)"), (zero, "(a device)")):
            r = fx.audit_in_process("verify", archive, "--public-key", key)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"not a regular file {needle}", r.stderr)

    def test_every_reader_refuses_the_same_padded_line(self):
        """Review of 2026-12-03: a trace padded with [[], [], ...] was sealed and verified,
        while the report and compare left its line unread, so a page badged verified
        counted the traces the signer chose; and a 16 MiB line of them cost `audit seal`
        and `audit validate` 69 s and 2 GB. The audit now applies the readers' bound."""
        from audit._tracefile import read_trace_file
        from redaction_pressure.boundary.episodes import EpisodeReader

        def pad(episodes):
            episodes[0]["pad"] = [[] for _ in range(6000)]
        run = fx.tampered_run(fx.dev_run(), pad)
        needle = "holds too many values for its"
        problems = [str(p) for p in read_trace_file(run / "traces.jsonl").problems]
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("line 1: " + needle), problems)
        seen: list[str] = []
        with open(run / "traces.jsonl", "rb") as f:
            list(EpisodeReader(seen.append).read(f))
        self.assertEqual(len(seen), 1)
        self.assertIn(needle, seen[0])
        r = fx.audit_in_process("seal", run, "--key", fx.keys("owner")[0], "--out", fx.fresh_dir("padded"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(needle, r.stdout + r.stderr)
        flood = fx.fresh_dir("flood-run")
        flood.mkdir()
        (flood / "traces.jsonl").write_text('{"traces": [' + "[]," * ((16 << 20) // 3) + "[]]}\n")
        start = time.process_time()
        problems = [str(p) for p in read_trace_file(flood / "traces.jsonl").problems]
        self.assertLess(time.process_time() - start, 10)  # 69 s before
        self.assertEqual(len(problems), 1)
        self.assertIn(needle, problems[0])

    def test_a_signed_payload_of_empty_objects_is_refused_before_decoding(self):
        """Review of 2026-12-03: 61 MiB of {"x": [{}, {}, ...]} signed with the pinned key
        cost verify 26.5 s and 1.35 GB before the schema refused it; a real Statement
        holds an object per 70 bytes (this one checks its own archive's first)."""
        from audit import _statement
        archive = fx.seal_run(fx.dev_run())
        _statement.loads(fx.payload_of(archive))  # the real one is within the bound
        fx.resign(archive, b'{"x": [' + b"{}," * 400_000 + b"{}]}")
        report = verify(archive)
        self.assertIn("the signed payload holds too many values for its 1,200,011 bytes",
                      json.dumps(report.as_dict()))
        self.assertEqual(report.exit_code, 1)

    def test_a_flood_of_short_lines_costs_what_its_bytes_do(self):
        """Review of the fixes, 2026-12-03: `audit seal` took 212 s and 3.4 GB on 16 MiB of
        "a" lines (a parse and a problem per line), and validate 15 s on 2 MiB. Of each run
        of lines under 1,024 bytes, the first is parsed and named and the rest are one
        problem, alike whether the file is parsed whole or in pieces (--jobs)."""
        import random

        from audit import _tracefile as tf
        path = fx.fresh_dir("flood.jsonl")
        path.write_bytes(b"a\n" * (8 << 20))
        start = time.process_time()
        problems = [str(p) for p in tf.read_trace_file(path).problems]
        self.assertLess(time.process_time() - start, 10)
        self.assertEqual(problems, ["line 1: not valid JSON: Expecting value: line 1 column 1 (char 0)",
                                    "line 1: 8,388,607 more lines under 1,024 bytes follow, to line 8,388,608: no "
                                    "trace is that short; they are not read"])
        # Memory too: a list of one object per line held 22 times the file (2-byte lines,
        # whose objects Python does not share as it shares 1-byte ones).
        import tracemalloc
        data = b"ab\n" * ((8 << 20) // 3)
        tracemalloc.start()
        try:
            tf.parse_trace_bytes(path, data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertLess(peak, 32 << 20)  # 8 MiB of lines; it was ~130 MB
        rnd = random.Random(7)
        kinds = (lambda: b"x" * rnd.randint(1023, 3000) + b"\n", lambda: b"  \n", lambda: b"{}\n",
                 lambda: b"y" * rnd.randint(1, 1100) + b"\r\n")
        data = b"".join(rnd.choice(kinds)() for _ in range(2000)) + b"zz"
        whole = [str(p) for p in tf.parse_trace_bytes(path, data).problems]
        self.assertTrue(any("more lines under 1,024 bytes" in p for p in whole))
        for size in (1, 700, 9000):
            spans = tf._pieces(data, size)
            parts = tf.parse_pieces([(path, first, None if stop < 0 else data[begin:stop], None)
                                     for first, begin, stop in spans])
            self.assertEqual([str(p) for part in parts for p in part.problems], whole, size)

    def test_verify_reads_no_sealed_traces_file_above_the_cap(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["traces_file"]["bytes"] = (1 << 30) + 1  # what a signer sealing 1 GiB + 1 would say
        fx.resign(archive, manifest)
        report = verify(archive)
        self.assertEqual(report.check("trace-digests").status, FAILED)
        self.assertIn("this verifier reads at most 1,073,741,824", report.check("trace-digests").summary)


class SplitHeader(unittest.TestCase):
    def test_a_label_its_commitment_does_not_back_is_said_in_the_header(self):
        def relabel(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    for where in (t["info"]["environment"], t["task"]["data"]["identity"], t["task"]["data"]):
                        where["split"] = "private_eval"
        report = verify(fx.signed_anyway(fx.tampered_run(fx.dev_run(), relabel)))  # seal refuses it
        text = human(report)
        self.assertIn("split: labelled private_eval — NOT ESTABLISHED: the archive's split label 'private_eval' is "
                      "not backed by its commitment and seeds: labelled private_eval, committed as public dev: NOT a "
                      "private evaluation", text)
        self.assertNotIn("split: private_eval — private evaluation split", text)


if __name__ == "__main__":
    unittest.main()
