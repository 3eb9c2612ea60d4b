"""`audit verify`: clean archives pass; each tamper fails its own check with a specific
reason; hostile archives fail without a traceback. (In-process; the exit codes through
the real entry point are in test_audit_cli.py.)"""

from __future__ import annotations

import base64
import json
import unittest
from unittest import mock

from audit import _tracefile
from audit._verify import FAILED, PASSED, SKIPPED, verify_archive
from redaction_pressure._splits import PUBLIC, private_commitment

import _audit_fixtures as fx

CHAIN_AFTER_SIGNATURE = ["manifest-file", "manifest-schema", "trace-digests", "trace-schemas", "identity",
                         "rescoring", "summary", "split-labels", "private-seeds"]


class VerifyCase(unittest.TestCase):
    def verify(self, archive, owner="owner", secret=None):
        return verify_archive(archive, fx.public_key(owner), secret.encode() if secret else None)

    def assertCheck(self, report, name, status, *needles):
        check = report.check(name)
        text = "\n".join([check.summary, *check.details])
        self.assertEqual(check.status, status, f"{name}: {text}")
        for needle in needles:
            self.assertIn(needle, text, f"{name}")
        return check

    def assertOnlyFailures(self, report, *names):
        self.assertEqual(sorted(c.name for c in report.failed), sorted(names),
                         json.dumps(report.as_dict(), indent=1)[:4000])
        self.assertEqual(report.exit_code, 1)


class CleanArchives(VerifyCase):
    def test_clean_dev_archive_passes(self):
        report = self.verify(fx.seal_run(fx.dev_run()))
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1))
        for c in report.checks:
            self.assertEqual(c.status, SKIPPED if c.name == "private-seeds" else PASSED, c.name)
        self.assertEqual(report.manifest["summary"]["label"], "public dev split (not a private evaluation)")

    def test_mixed_run_covers_error_codes(self):
        # the fixture must exercise error-code comparison, not only clean replies
        episodes = fx.read_episodes(fx.dev_run() / "traces.jsonl")
        codes = {e["code"] for ep in episodes for t in ep["traces"] for e in t["info"]["redaction_errors"]}
        self.assertTrue({"malformed_json", "unsafe_replacement"} <= codes, codes)

    def test_clean_private_archive_passes_with_the_secret(self):
        with fx.env_var(fx.SECRET_ENV, fx.SECRET):
            report = self.verify(fx.seal_run(fx.private_run()), secret=fx.SECRET)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1))
        self.assertTrue(all(c.status == PASSED for c in report.checks))
        self.assertCheck(report, "private-seeds", PASSED, "re-derived")

    def test_private_archive_without_secret_says_not_checked(self):
        report = self.verify(fx.seal_run(fx.private_run()))
        self.assertEqual(report.exit_code, 0)
        self.assertCheck(report, "private-seeds", SKIPPED, "NOT CHECKED")
        self.assertCheck(report, "split-labels", PASSED, "private evaluation split")


class SignatureTampers(VerifyCase):
    def test_wrong_key(self):
        report = self.verify(fx.seal_run(fx.dev_run()), owner="attacker")
        self.assertOnlyFailures(report, "signature")
        self.assertCheck(report, "signature", FAILED, "but the pinned key is")
        for name in CHAIN_AFTER_SIGNATURE:
            self.assertCheck(report, name, SKIPPED, "not authenticated")

    def test_inflated_rewards_resigned_by_another_key(self):
        def inflate(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    for r in t["rewards"].values():
                        r["score"] = 1.0
        forged = fx.seal_run(fx.tampered_run(fx.dev_run(), inflate), owner="attacker")
        report = self.verify(forged)  # the evaluator pins the original key
        self.assertOnlyFailures(report, "signature")
        self.assertCheck(report, "signature", FAILED, "another key sealed this archive")
        # and if the evaluator were tricked into pinning the attacker's key, rescoring still catches it
        report = self.verify(forged, owner="attacker")
        self.assertCheck(report, "rescoring", FAILED, "recall recorded 1.0, recomputed")
        self.assertCheck(report, "signature", PASSED)

    def test_signature_removed(self):
        archive = fx.seal_run(fx.dev_run())
        envelope = json.loads((archive / "manifest.dsse.json").read_text())
        envelope["signatures"] = []
        (archive / "manifest.dsse.json").write_text(json.dumps(envelope))
        report = self.verify(archive)
        self.assertOnlyFailures(report, "signature")
        self.assertCheck(report, "signature", FAILED, "$.signatures", "non-empty")

    def test_envelope_deleted(self):
        archive = fx.seal_run(fx.dev_run())
        (archive / "manifest.dsse.json").unlink()
        report = self.verify(archive)
        self.assertOnlyFailures(report, "signature")
        self.assertCheck(report, "signature", FAILED, "signature was removed")
        self.assertCheck(report, "payload-type", SKIPPED)

    def test_two_signatures_refused(self):
        archive = fx.seal_run(fx.dev_run())
        envelope = json.loads((archive / "manifest.dsse.json").read_text())
        envelope["signatures"] *= 2
        (archive / "manifest.dsse.json").write_text(json.dumps(envelope))
        self.assertCheck(self.verify(archive), "signature", FAILED, "carries 2 signatures", "exactly one")

    def test_edited_payload(self):
        archive = fx.seal_run(fx.dev_run())
        envelope = json.loads((archive / "manifest.dsse.json").read_text())
        payload = base64.b64decode(envelope["payload"]).replace(b"mean_reward = 0.", b"mean_reward = 1.", 1)
        envelope["payload"] = base64.b64encode(payload).decode()
        (archive / "manifest.dsse.json").write_text(json.dumps(envelope))
        report = self.verify(archive)
        self.assertOnlyFailures(report, "signature")
        self.assertCheck(report, "signature", FAILED, "changed after signing")

    def test_swapped_payload_type(self):
        archive = fx.seal_run(fx.dev_run())
        envelope = json.loads((archive / "manifest.dsse.json").read_text())
        envelope["payloadType"] = "application/vnd.in-toto+json"
        (archive / "manifest.dsse.json").write_text(json.dumps(envelope))
        report = self.verify(archive)
        self.assertOnlyFailures(report, "signature", "payload-type")
        self.assertCheck(report, "payload-type", FAILED, "application/vnd.in-toto+json", "not a redaction-pressure")

    def test_other_document_signed_by_the_pinned_key(self):
        # payload-type confusion: a genuine signature over a document of another type
        archive = fx.seal_run(fx.dev_run())
        fx.resign(archive, (archive / "manifest.toml").read_bytes(), payload_type="application/vnd.in-toto+json")
        report = self.verify(archive)
        self.assertOnlyFailures(report, "payload-type")
        self.assertCheck(report, "signature", PASSED)
        self.assertCheck(report, "manifest-schema", SKIPPED)

    def test_hostile_envelopes_fail_without_exceptions(self):
        cases = {
            b"\x00\xff garbage": "not valid JSON",
            b"[" * 100_000: "nested too deeply",
            b'{"payloadType": 1, "payload": [], "signatures": {}}': "$.payloadType",
            b'{"payloadType": "x", "payload": "@@@@", "signatures": [{"keyid": "00", "sig": ""}]}': "$.payload",
            b'{"a": 1, "a": 2}': "duplicate object key",
            b'{"payloadType": "x", "payload": "", "signatures": [{"keyid": "%s", "sig": "AAAA"}]}'
            % (b"0" * 64): "pinned key is",
        }
        for data, needle in cases.items():
            with self.subTest(data=data[:40]):
                archive = fx.seal_run(fx.dev_run())
                (archive / "manifest.dsse.json").write_bytes(data)
                report = self.verify(archive)
                self.assertCheck(report, "signature", FAILED, needle)
                self.assertEqual(report.exit_code, 1)


class ManifestAndTraceTampers(VerifyCase):
    def test_edited_manifest_file(self):
        archive = fx.seal_run(fx.dev_run())
        path = archive / "manifest.toml"
        path.write_bytes(path.read_bytes().replace(b"mean_reward = 0.", b"mean_reward = 1.", 1))
        report = self.verify(archive)
        self.assertOnlyFailures(report, "manifest-file")
        self.assertCheck(report, "manifest-file", FAILED, "edited after sealing")

    def test_edited_reply(self):
        archive = fx.seal_run(fx.dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        episodes[1]["traces"][0]["nodes"][-1]["message"]["content"] = '{"rules": []}'
        fx.write_episodes(archive / "traces.jsonl", episodes)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "trace-digests")
        self.assertCheck(report, "trace-digests", FAILED, "edited: line 2 trace 0 (dev-000001)")
        self.assertCheck(report, "rescoring", SKIPPED, "not the sealed traces file")

    def test_edited_reply_resealed_fails_rescoring(self):
        def edit(episodes):
            episodes[0]["traces"][0]["nodes"][-1]["message"]["content"] = '{"rules": []}'
        report = self.verify(fx.seal_run(fx.tampered_run(fx.dev_run(), edit), owner="attacker"), owner="attacker")
        self.assertOnlyFailures(report, "rescoring")
        self.assertCheck(report, "rescoring", FAILED, "line 1 trace 0 (dev-000000)", "recall recorded 1.0, recomputed 0.0")

    def test_dropped_trace(self):
        archive = fx.seal_run(fx.dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        del episodes[3]
        fx.write_episodes(archive / "traces.jsonl", episodes)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "trace-digests")
        self.assertCheck(report, "trace-digests", FAILED, "dropped: the sealed trace of dev-000003")

    def test_duplicated_trace(self):
        archive = fx.seal_run(fx.dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        episodes.append(episodes[0])
        fx.write_episodes(archive / "traces.jsonl", episodes)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "trace-digests")
        self.assertCheck(report, "trace-digests", FAILED, "duplicated: line 9 trace 0 (dev-000000)")

    def test_added_and_reordered_traces(self):
        archive = fx.seal_run(fx.dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        fx.write_episodes(archive / "traces.jsonl", episodes[::-1])
        self.assertCheck(self.verify(archive), "trace-digests", FAILED, "reordered")
        extra = fx.read_episodes(fx.private_run() / "traces.jsonl")[:1]
        fx.write_episodes(archive / "traces.jsonl", episodes + extra)
        self.assertCheck(self.verify(archive), "trace-digests", FAILED, "added: line 9 trace 0 (private_eval-000000)")

    def test_hostile_trace_content_signed_by_the_owner(self):
        # a signer who seals garbage: every problem is a failed check with a reason
        archive = fx.seal_run(fx.dev_run())
        episodes = fx.read_episodes(archive / "traces.jsonl")
        episodes[0]["traces"][0]["rewards"]["recall"]["score"] = "1.0"
        episodes[1]["traces"][0]["info"]["environment"]["split"] = ["dev"]
        episodes[2]["traces"][0]["nodes"] = None
        fx.write_episodes(archive / "traces.jsonl", episodes)
        fx.resign(archive, fx.redigest(archive, fx.manifest_of(archive)))
        report = self.verify(archive)
        self.assertOnlyFailures(report, "trace-schemas")
        self.assertCheck(report, "trace-schemas", FAILED, "traces.jsonl:1 $.traces[0].rewards.recall.score",
                         "traces.jsonl:2 $.traces[0].info.environment.split", "traces.jsonl:3 $.traces[0].nodes")

    def test_unparseable_and_oversized_lines(self):
        archive = fx.seal_run(fx.dev_run())
        with open(archive / "traces.jsonl", "ab") as f:
            f.write(b"{not json\n" + b"[" * 20_000 + b"\n" + b'{"traces": 7}\n' + b"x" * 100_000 + b"\n")
        fx.resign(archive, fx.redigest(archive, fx.manifest_of(archive)))
        with mock.patch.object(_tracefile, "MAX_LINE_BYTES", 50_000):
            report = self.verify(archive)
        self.assertCheck(report, "trace-digests", FAILED, "line 9: not valid JSON", "line 10: not valid JSON",
                         "line 11: not an Episode", "line 12: longer than 50000 bytes")

    def test_report_escapes_hostile_text(self):
        import io

        from audit._report import console, render_human

        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["run_id"] = "[bold red]VERIFIED[/]\x1b[2J"
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertEqual(report.exit_code, 0)
        buf = io.StringIO()
        render_human(report, console(buf))
        self.assertNotIn("\x1b", buf.getvalue())
        self.assertIn("[bold red]VERIFIED[/]\\x1b[2J", buf.getvalue())

    def test_manifest_with_wrong_types_signed_by_the_owner(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["counts"]["traces"] = "eight"
        manifest["created"] = "2025-13-45T99:00:00Z"
        manifest["extra"] = {"nested": [1, 2]}
        fx.resign(archive, manifest)
        report = self.verify(archive)
        self.assertOnlyFailures(report, "manifest-schema")
        self.assertCheck(report, "manifest-schema", FAILED, "$.counts.traces", "$.created", "date-time",
                         "'extra' was unexpected")
        fx.resign(archive, b"\xff\xfe not toml")
        self.assertCheck(self.verify(archive), "manifest-schema", FAILED, "not UTF-8")
        fx.resign(archive, b"run_id = nan\ncreated = 1979-05-27T07:32:00Z\n")
        self.assertCheck(self.verify(archive), "manifest-schema", FAILED, "toml-float", "toml-datetime")


class SplitAndIdentityTampers(VerifyCase):
    def test_dev_relabelled_as_private_and_resigned(self):
        def relabel(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    for ident in (t["info"]["environment"], t["task"]["data"]["identity"]):
                        ident["split"] = "private_eval"
                    t["task"]["data"]["split"] = "private_eval"
        forged = fx.seal_run(fx.tampered_run(fx.dev_run(), relabel), owner="attacker")
        report = self.verify(forged, owner="attacker")  # even with the attacker's key pinned
        self.assertCheck(report, "signature", PASSED)
        self.assertEqual(report.manifest["summary"]["label"], "private evaluation split")
        self.assertCheck(report, "split-labels", FAILED, "carries the public dev commitment",
                         "it is dev's public seed 0", "published in the task data")
        self.assertEqual(report.exit_code, 1)

    def test_dev_relabelled_with_a_fake_private_commitment(self):
        fake = private_commitment(b"x" * 40)

        def relabel(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    for ident in (t["info"]["environment"], t["task"]["data"]["identity"]):
                        ident.update(split="private_eval", split_commitment=fake)
                        t["task"]["data"]["identity"].pop("task_seed", None)
                    t["task"]["data"]["split"] = "private_eval"
        forged = fx.seal_run(fx.tampered_run(fx.dev_run(), relabel), owner="attacker")
        report = self.verify(forged, owner="attacker")
        self.assertCheck(report, "split-labels", FAILED, "cannot be a private seed (it is dev's public seed")
        self.assertCheck(report, "rescoring", FAILED, "the regenerated task is 'private_eval-000000'")
        self.assertEqual(report.exit_code, 1)

    def test_summary_label_and_scores_must_match(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["summary"]["label"] = "private evaluation split"
        manifest["summary"]["mean_reward"] = 0.99
        fx.resign(archive, manifest, owner="attacker")
        report = self.verify(archive, owner="attacker")
        self.assertOnlyFailures(report, "summary", "split-labels")
        self.assertCheck(report, "split-labels", FAILED, "summary label 'private evaluation split'")
        self.assertCheck(report, "summary", FAILED, "summary.mean_reward: manifest says 0.99")

    def test_public_commitment_must_be_the_ranges(self):
        archive = fx.seal_run(fx.dev_run())
        manifest = fx.manifest_of(archive)
        manifest["split"]["commitment"] = PUBLIC["train"].commitment
        fx.resign(archive, manifest, owner="attacker")
        self.assertCheck(self.verify(archive, owner="attacker"), "split-labels", FAILED,
                         "dev's public seed range commitment is")

    def test_altered_identity_resigned(self):
        def alter(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    for ident in (t["info"]["environment"], t["task"]["data"]["identity"]):
                        ident["source_digest"] = "f" * 64
        forged = fx.seal_run(fx.tampered_run(fx.dev_run(), alter), owner="attacker")
        report = self.verify(forged, owner="attacker")
        self.assertOnlyFailures(report, "identity")
        self.assertCheck(report, "identity", FAILED, f"archive built by source digest {'f' * 64}, installed build is")

    def test_secret_supplied_for_a_public_archive(self):
        report = self.verify(fx.seal_run(fx.dev_run()), secret=fx.SECRET)
        self.assertOnlyFailures(report, "private-seeds")
        self.assertCheck(report, "private-seeds", FAILED, "it is not a private evaluation")

    def test_wrong_private_secret(self):
        report = self.verify(fx.seal_run(fx.private_run()), secret=fx.OTHER_SECRET)
        self.assertOnlyFailures(report, "private-seeds")
        self.assertCheck(report, "private-seeds", FAILED, "not the commitment of the supplied secret")

    def test_altered_revealed_seed(self):
        def alter(episodes):
            episodes[1]["traces"][0]["info"]["environment"]["task_seed"] += 1
        forged = fx.seal_run(fx.tampered_run(fx.private_run(), alter), owner="attacker")
        report = self.verify(forged, owner="attacker", secret=fx.SECRET)
        self.assertOnlyFailures(report, "private-seeds", "rescoring")
        self.assertCheck(report, "private-seeds", FAILED, "line 2 trace 0 (private_eval-000001): revealed seed")
        self.assertCheck(report, "rescoring", FAILED, "recorded prompt is not the prompt of the task regenerated")
        # without the secret the altered seed is still caught, by rescoring
        report = self.verify(forged, owner="attacker")
        self.assertOnlyFailures(report, "rescoring")


if __name__ == "__main__":
    unittest.main()
