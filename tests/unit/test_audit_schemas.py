"""The versioned schemas and `audit validate`: local $ref resolution, format
assertion, and every error reported with its JSON path."""

from __future__ import annotations

import io
import json
import unittest
from contextlib import redirect_stderr, redirect_stdout

import jsonschema
from referencing.exceptions import Unresolvable

from audit import _schemas, cli
from audit._schemas import EPISODE, MANIFEST, schema_errors
from audit._validate import validate_file
from redaction_pressure.build.schemas import schema_dir
from tests.support import audit_fixtures as fx

NAMES = ("identity-v1", "trace-v1", "episode-v1", "manifest-v1", "envelope-v1")


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


class Schemas(unittest.TestCase):
    def test_schemas_are_versioned_draft_2020_12(self):
        for name in NAMES:
            with self.subTest(name=name):
                schema = json.loads((schema_dir() / f"{name}.schema.json").read_text())
                self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
                self.assertEqual(schema["$id"], f"https://redaction-pressure.dev/schemas/{name}.schema.json")
                jsonschema.Draft202012Validator.check_schema(schema)
                _schemas.validator(name)  # every $ref resolves locally

    def test_no_network_resolution(self):
        with self.assertRaises(Unresolvable):
            _schemas.registry().resolver().lookup("https://example.com/other.schema.json")

    def test_format_is_asserted(self):
        # a real date-time checker (rfc3339-validator, from jsonschema[format]) is installed
        checker = _schemas.format_checker()
        self.assertTrue(checker.conforms("2025-01-02T03:04:05Z", "date-time"))
        for bad in ("2025-13-45T99:00:00Z", "yesterday", "2025-01-02 03:04:05"):
            self.assertFalse(checker.conforms(bad, "date-time"), bad)
        manifest = fx.manifest_of(fx.seal_run(fx.dev_run()))
        self.assertEqual(schema_errors(MANIFEST, manifest), [])
        manifest["created"] = "2025-02-30T10:00:00Z"
        errors = schema_errors(MANIFEST, manifest)
        self.assertEqual([e.path for e in errors], ["$.created"])
        self.assertIn("date-time", errors[0].message)

    def test_real_runs_are_valid(self):
        for run in (fx.dev_run(), fx.private_run()):
            for episode in fx.read_episodes(run / "traces.jsonl"):
                self.assertEqual(schema_errors(EPISODE, episode), [])

    def test_errors_stop_at_a_limit(self):
        episode = fx.read_episodes(fx.dev_run() / "traces.jsonl")[0]
        episode["traces"] = [{"version": 2}] * 50
        errors = schema_errors(EPISODE, episode, limit=7)
        self.assertEqual(len(errors), 7)
        self.assertTrue(errors.truncated)
        self.assertIn("stopped after 7 errors", _schemas.error_lines(errors)[-1])
        self.assertFalse(schema_errors(EPISODE, episode, limit=None).truncated)
        self.assertGreater(len(schema_errors(EPISODE, episode, limit=None)), 7)

    def test_manifest_requires_task_params(self):
        manifest = fx.manifest_of(fx.seal_run(fx.dev_run()))
        del manifest["task_params"]
        self.assertEqual([e.path for e in schema_errors(MANIFEST, manifest)], ["$"])
        manifest["task_params"] = {"n_shown": 0, "n_eval": 16, "budget_s": 2.0, "extra": 1}
        self.assertEqual(sorted(e.path for e in schema_errors(MANIFEST, manifest)),
                         ["$.task_params", "$.task_params.n_shown"])

    def test_error_codes_enum(self):
        episode = fx.read_episodes(fx.dev_run() / "traces.jsonl")[0]
        episode["traces"][0]["info"]["redaction_errors"] = [{"code": "oops", "message": "m"}]
        errors = schema_errors(EPISODE, episode)
        self.assertEqual([e.path for e in errors], ["$.traces[0].info.redaction_errors[0].code"])


class Validate(unittest.TestCase):
    def test_reports_every_error_with_its_path(self):
        def break_it(episodes):
            t = episodes[2]["traces"][0]
            t["info"]["environment"]["split"] = "public"
            t["rewards"]["recall"]["weight"] = "0.35"
            del episodes[4]["traces"][0]["info"]["redaction_errors"]
            episodes[5]["traces"][0]["rewards"]["bonus"] = {"score": 1.0, "weight": 1.0}
        run = fx.tampered_run(fx.dev_run(), break_it)
        with open(run / "traces.jsonl", "a") as f:
            f.write("{truncated\n")
        code, out, _ = run_cli("validate", str(run / "traces.jsonl"))
        self.assertEqual(code, 1)
        shown = str(run / "traces.jsonl")
        for expected in (f"{shown}:3 $.traces[0].info.environment.split: 'public' is not one of",
                         f"{shown}:3 $.traces[0].rewards.recall.weight: '0.35' is not of type 'number'",
                         f"{shown}:5 $.traces[0].info: 'redaction_errors' is a required property",
                         f"{shown}:6 $.traces[0].rewards: Additional properties are not allowed ('bonus'",
                         f"{shown}:9 not valid JSON"):
            self.assertIn(expected, out)

    def test_absurd_numbers_are_refused_with_their_reason(self):
        """Red team: a reward of a 4,299-digit JSON integer validated ("number"), and every
        reader after it paid for it (int() of the literal, then OverflowError in float()).
        A literal longer than 40 characters is refused while parsing, before it is
        converted; scores, weights and validity must lie in [0, 1], counts in [0, 2^53]
        (JSON integers where the scorer writes them), task parameters in their ranges."""
        import time

        def absurd(episodes):
            t = episodes[2]["traces"][0]
            t["rewards"]["recall"]["weight"] = 1e308
            t["info"]["redaction"]["reward"] = 7
            t["info"]["redaction"]["secrets_total"] = -1
            t["info"]["redaction"]["secret_classes"] = {"house_format": [2 ** 60, 0]}
            t["metrics"]["valid"] = 2.5
            t["metrics"]["matches"] = 1e300
            t["task"]["data"]["n_eval"] = 10 ** 30
            error = {"code": "timeout", "message": "m", "rule": 10 ** 20}
            episodes[3]["traces"][0]["info"]["redaction_errors"] = [error]
        run = fx.tampered_run(fx.dev_run(), absurd)
        lines = (run / "traces.jsonl").read_text().splitlines(keepends=True)
        huge = json.loads(lines[0])
        huge["traces"][0]["info"]["redaction"]["reward"] = 10 ** 4298  # 4,299 digits: under Python's own limit
        lines[0] = json.dumps(huge) + "\n"
        lines[1] = lines[1].replace('"clean": {"score": 0.0', '"clean": {"score": 0.' + "0" * 60, 1)
        self.assertIn("0" * 60, lines[1])
        (run / "traces.jsonl").write_text("".join(lines))
        start = time.process_time()
        code, out, _ = run_cli("validate", str(run / "traces.jsonl"))
        self.assertLess(time.process_time() - start, 5)
        self.assertEqual(code, 1)
        shown = str(run / "traces.jsonl")
        for expected in (f"{shown}:1 not valid JSON: integer literal of 4,299 characters (100000000000…) is longer "
                         f"than 40, the most a number in these files has",
                         f"{shown}:2 not valid JSON: number literal of 62 characters",
                         f"{shown}:3 $.traces[0].rewards.recall.weight: 1e+308 is greater than the maximum of 1",
                         f"{shown}:3 $.traces[0].info.redaction.reward: 7 is greater than the maximum of 1",
                         f"{shown}:3 $.traces[0].info.redaction.secrets_total: -1 is less than the minimum of 0",
                         f"{shown}:3 $.traces[0].info.redaction.secret_classes.house_format[0]: 1152921504606846976 "
                         f"is greater than the maximum",
                         f"{shown}:3 $.traces[0].metrics.valid: 2.5 is greater than the maximum of 1",
                         f"{shown}:3 $.traces[0].metrics.matches: 1e+300 is greater than the maximum",
                         f"{shown}:3 $.traces[0].task.data.n_eval: 1000000000000000000000000000000 is greater than "
                         f"the maximum of 256",
                         f"{shown}:4 $.traces[0].info.redaction_errors[0].rule: 100000000000000000000 is greater "
                         f"than the maximum"):
            self.assertIn(expected, out)
        self.assertNotIn(f"{shown}:5", out)

    def test_archive_manifest_and_envelope(self):
        archive = fx.seal_run(fx.dev_run())
        code, out, _ = run_cli("validate", str(archive))
        self.assertEqual(code, 0, out)
        self.assertEqual(out.count(": valid"), 3)
        manifest = fx.manifest_of(archive)
        manifest["split"]["name"] = "holdout"
        manifest["summary"]["mean_reward"] = 1.5
        # Every figure of an estimate is a mean of scores in [0, 1] (intervals are clipped to it).
        manifest["summary"]["uncertainty"]["reward"]["mean"] = -0.25
        manifest["summary"]["uncertainty"]["recall"]["ci95"] = [0.5, 3.0]
        fx.resign(archive, manifest)
        errors = validate_file(archive / "manifest.toml")
        self.assertEqual(len(errors), 4, errors)
        for path in ("$.split.name", "$.summary.mean_reward", "$.summary.uncertainty.reward.mean: -0.25 is less than "
                     "the minimum of 0", "$.summary.uncertainty.recall.ci95[1]: 3.0 is greater than the maximum of 1"):
            self.assertTrue(any(path in e for e in errors), (path, errors))
        errors = validate_file(archive / "manifest.dsse.json")
        self.assertTrue(all(" payload $." in e for e in errors) and len(errors) == 4, errors)

    def test_errors_per_file_are_capped(self):
        from unittest import mock

        from audit import _validate

        def break_all(episodes):
            for ep in episodes:
                ep["traces"][0]["rewards"] = {"recall": 1, "precision": 2, "clean": 3}
        run = fx.tampered_run(fx.dev_run(), break_all)
        with mock.patch.object(_validate, "MAX_ERRORS", 5):
            errors = validate_file(run / "traces.jsonl")
        self.assertEqual(len(errors), 6, errors)
        self.assertIn("stopped after 5 schema errors", errors[-1])

    def test_symlinked_members_and_hostile_envelopes(self):
        import os

        archive = fx.seal_run(fx.dev_run())
        target = fx.fresh_dir("elsewhere")
        (archive / "traces.jsonl").rename(target)
        os.symlink(target, archive / "traces.jsonl")
        code, out, _ = run_cli("validate", str(archive))
        self.assertEqual(code, 1)
        self.assertIn("traces.jsonl cannot be read: traces.jsonl is a symbolic link", out)
        (archive / "manifest.dsse.json").write_bytes(b"[" + b"{}," * 10_000 + b"{}]")
        errors = validate_file(archive / "manifest.dsse.json")
        self.assertEqual(len(errors), 1)
        self.assertIn("so it was not parsed", errors[0])
        (archive / "manifest.dsse.json").write_bytes(b"\xef\xbb\xbf{}")
        self.assertIn("byte order mark", validate_file(archive / "manifest.dsse.json")[0])

    def test_a_manifest_of_many_tables_is_one_line_and_a_seal_never_writes_one(self):
        """Red team, 2026-12-04: `audit validate` of 16 MB of fresh 8-part table headers
        took 73 s and 5.9 GB, and exit 4 under a 3 GB limit."""
        from unittest import mock

        from audit._seal import SealRefused
        from redaction_pressure.boundary import parse_bounds

        bomb = fx.fresh_dir("table-bomb") / "manifest.toml"
        bomb.parent.mkdir(parents=True, exist_ok=True)
        bomb.write_text("".join(f"[{i:x}.a.b.c.d.e.f.g]\n" for i in range(600_000)))
        code, out, err = run_cli("validate", str(bomb))
        self.assertEqual(code, 1, err)
        self.assertEqual(out.strip().splitlines(), [f"{bomb} the manifest is not read: it may make 4,800,000 tables; "
                                                    f"at most 200,000 are read"])
        with (mock.patch.object(parse_bounds, "MAX_TOML_ITEMS", 100),
              self.assertRaisesRegex(SealRefused, "too many traces for one archive") as refused):
            fx.seal_run(fx.dev_run())
        self.assertIn("at most 100 are read: seal the run in parts", " ".join(refused.exception.reasons))

    def test_usage_errors(self):
        self.assertEqual(run_cli("validate", str(fx.root() / "nope.jsonl"))[0], 2)
        self.assertEqual(run_cli("validate", str(fx.root()))[0], 2)  # a directory with nothing to validate


if __name__ == "__main__":
    unittest.main()
