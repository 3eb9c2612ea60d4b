"""`audit verify`'s chain is declared once (audit._verify.CHAIN), and which steps are
skipped is derived from that declaration: a failing step skips exactly the steps that
depend on it, directly or not, each naming it; every other step still runs."""

from __future__ import annotations

import dataclasses
import io
import json
import unittest

from audit import _verify
from audit._report import console, render_human, render_json
from audit._verify import CHAIN, FAILED, PASSED, SKIPPED, CheckFailed, Step, chain_problems, verify_archive
from tests.support import audit_fixtures as fx

NAMES = ["signature", "payload-type", "manifest-schema", "manifest-file", "trace-digests", "trace-schemas",
         "identity", "rescoring", "summary", "evaluated", "coverage", "split-labels", "private-seeds"]


def _dependents(failed: str) -> set[str]:
    """Every step that requires or reads ``failed``, or one of those, transitively:
    computed here from the declaration, independently of the verifier's own logic."""
    out: set[str] = set()
    for step in CHAIN:
        if any(d == failed or d in out for d in step.requires + step.reads):
            out.add(step.name)
    return out


class Declaration(unittest.TestCase):
    def test_the_declared_chain_is_well_formed(self):
        self.assertEqual([s.name for s in CHAIN], NAMES)
        self.assertEqual(chain_problems(CHAIN), [])
        for step in CHAIN:
            self.assertTrue(step.title, step.name)
            self.assertTrue(step.proves, f"{step.name}: its check's docstring says what passing proves")

    def test_ill_formed_declarations_are_named(self):
        def check(verifier):  # pragma: no cover - never run
            """Proves nothing."""
            raise AssertionError

        def undocumented(verifier):  # pragma: no cover - never run
            raise AssertionError

        a, b = Step("a", "A", check, blocks="a failed"), Step("b", "B", check, requires=("a",))
        self.assertEqual(chain_problems([a, b]), [])
        self.assertIn("b: depends on 'a', which is not an earlier step", chain_problems([b, a]))
        self.assertIn("b: depends on 'z', which is not an earlier step",
                      chain_problems([a, dataclasses.replace(b, requires=("z",))]))
        self.assertIn("a: declared twice", chain_problems([a, a]))
        self.assertIn("b: requires a, which declares no reason for its dependents",
                      chain_problems([dataclasses.replace(a, blocks=""), b]))
        self.assertIn("b: reads a, which declares no reason when it produced nothing",
                      chain_problems([a, dataclasses.replace(b, requires=(), reads=("a",))]))
        self.assertIn("a: its check does not say what it proves",
                      chain_problems([dataclasses.replace(a, check=undocumented)]))


class DerivedSkips(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.archive = fx.seal_run(fx.private_run())  # with the secret, every step passes

    def run_chain(self, chain):
        return _verify._Verifier(self.archive, fx.public_key(), fx.SECRET.encode(), 1, chain).run()

    def test_the_unchanged_chain_passes_every_step(self):
        report = self.run_chain(CHAIN)
        self.assertEqual([(c.name, c.status) for c in report.checks], [(n, PASSED) for n in NAMES])

    def test_a_failing_step_skips_exactly_its_dependents_naming_it(self):
        def forced(verifier):
            """Fails."""
            raise CheckFailed("forced failure")

        def crashing(verifier):
            """Crashes: fails closed, like a failure."""
            raise KeyError("boom")

        for failing in (forced, crashing):
            for i, step in enumerate(CHAIN):
                with self.subTest(step=step.name, how=failing.__name__):
                    chain = [*CHAIN[:i], dataclasses.replace(step, check=failing), *CHAIN[i + 1:]]
                    report = self.run_chain(chain)
                    self.assertEqual([c.name for c in report.checks], NAMES)
                    dependents = _dependents(step.name)
                    for c in report.checks:
                        if c.name == step.name:
                            self.assertEqual(c.status, FAILED)
                            self.assertIsNone(c.blocked_by)
                        elif c.name in dependents:
                            self.assertEqual((c.status, c.blocked_by), (SKIPPED, step.name), c.name)
                            own = next(s for s in CHAIN if s.name == c.name)
                            reason = step.unread if step.name in own.reads else step.blocks
                            self.assertEqual(c.summary, f"not run: {reason}", c.name)
                        else:
                            self.assertEqual((c.status, c.blocked_by), (PASSED, None), f"{c.name}: {c.summary}")
                    self.assertEqual(report.exit_code, 1)

    def test_dependents_are_what_the_declaration_says(self):
        # the derivation above on the real chain: a guard against a declaration that
        # silently lets a check run on unauthenticated input
        self.assertEqual(_dependents("signature"), set(NAMES) - {"signature"})
        self.assertEqual(_dependents("payload-type"), set(NAMES[2:]))
        self.assertEqual(_dependents("manifest-schema"), set(NAMES[3:]))
        self.assertEqual(_dependents("manifest-file"), set())
        self.assertEqual(_dependents("trace-digests"), set(NAMES[5:]))
        self.assertEqual(_dependents("trace-schemas"), set(NAMES[6:]))
        for name in NAMES[6:]:
            self.assertEqual(_dependents(name), set(), name)


class NotChecked(unittest.TestCase):
    """A check the evaluator could not run (no secret given) is marked by its outcome,
    not recognised from its text."""

    def render(self, report):
        buf = io.StringIO()
        render_human(report, console(buf))
        return buf.getvalue()

    def test_the_report_reads_not_checked_from_the_outcome(self):
        archive = fx.seal_run(fx.private_run())
        report = verify_archive(archive, fx.public_key())
        seeds = report.check("private-seeds")
        self.assertEqual((seeds.status, seeds.not_checked), (SKIPPED, True))
        text = self.render(report)
        self.assertIn("NOT CHECKED", text)
        self.assertIn("(private seed derivation: not checked)", text)
        # the same words as a plain skip's summary do not make it one
        seeds.not_checked = False
        text = self.render(report)
        self.assertNotIn("not checked)", text)
        self.assertIn("SKIP", text)
        self.assertEqual(json.loads(render_json(report))["checks"][-1]["status"], "skipped")


if __name__ == "__main__":
    unittest.main()
