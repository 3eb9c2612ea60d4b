"""Replies as real models write them (tests/support/reply_corpus.py): which text is
read, which replies are valid, and the exact error each invalid one gets. The
README's answer section lists every case."""

from __future__ import annotations

import json
import re
import unittest
from pathlib import Path

from redaction_pressure import load_task, score_completion
from redaction_pressure.scoring.answer import parse_reply
from tests.support.reply_corpus import CASES, Case

ROOT = Path(__file__).resolve().parents[2]
TASK = load_task("dev", 1)


def render(case: Case, oracle: list[str]) -> str:
    rules = [{"pattern": p, "replacement": "[REDACTED]"} for p in oracle]
    with_rule = [json.loads(case.extra_rule), *rules] if case.extra_rule else rules
    return (case.template.replace("{ORACLE_PRETTY}", json.dumps({"rules": rules}, indent=1))
            .replace("{ORACLE_WITH}", json.dumps({"rules": with_rule}, indent=1))
            .replace("{ORACLE}", json.dumps({"rules": rules})))


class ReplyCorpus(unittest.TestCase):
    def test_every_case_yields_its_pinned_outcome(self):
        self.assertGreaterEqual(len(CASES), 30)
        for case in CASES:
            with self.subTest(case=case.name):
                score = score_completion(TASK, render(case, list(TASK.oracle_rules)))
                if case.error is None:
                    self.assertEqual(score.errors, (), case.name)
                    if case.reward == "1.0":
                        self.assertEqual(score.reward, 1.0)
                else:
                    code, start = case.error
                    self.assertEqual(score.errors[0].code, code, score.errors)
                    self.assertTrue(score.errors[0].message.startswith(start), score.errors[0].message)
                    self.assertEqual(score.reward, 0.0)

    def test_cases_are_listed_in_the_readme(self):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        section = readme[readme.index("## The answer"):readme.index("## The reward")]
        for case in CASES:
            with self.subTest(case=case.name):
                self.assertRegex(section, re.escape(f"`{case.name}`"))

    def test_a_single_backslash_b_is_a_backspace(self):
        """Valid JSON, but not what the author meant: the prompt warns about it, and the
        rule matches nothing (here: no AKIA token is removed)."""
        case = next(c for c in CASES if c.name == "single-backslash-b")
        reply = render(case, [])
        self.assertIn("\\b", reply)
        self.assertIn("\b", json.loads(reply)["rules"][0]["pattern"])

    def test_an_escaped_single_quote_gets_its_own_hint(self):
        """A writer used to JavaScript or Python escapes ' as JSON escapes ": the hint
        names that slip instead of asking for every backslash twice."""
        case = next(c for c in CASES if c.name == "escaped-single-quote")
        reply = render(case, [])
        self.assertIn("\\'", reply)
        (error,) = parse_reply(reply)[1]
        self.assertIn("JSON escapes no single quote: write ' as it is", error.message)

    def test_a_single_backslash_u_or_x_gets_a_hint(self):
        """Review of 2026-12-03: a pattern's own \\u (or a "\\user" path) is a JSON \\u
        escape without four hex digits, an error that got no hint while the other
        escape slips (\\d, \\x41, \\') got one."""
        for pattern in ("\\user", "\\u00e", "C:\\\\Users\\user", "\\x41", "\\x{41}"):
            for wrap in ("{}", "```json\n{}\n```"):
                text = wrap.replace("{}", '{"rules": [{"pattern": "' + pattern + '", "replacement": ""}]}')
                with self.subTest(text=text):
                    (error,) = parse_reply(text)[1]
                    self.assertRegex(error.message, r"; .*(written|write) .*twice", error.message)

    def test_an_unescaped_double_quote_gets_its_own_hint(self):
        """Review of 2026-12-03: a pattern's own `"` (a quote in a set, ``["']``) ends its
        JSON string early; the hint said "JSON strings use double quotes" (the next
        character was a ') or "not code that assigns one", or nothing."""

        case = next(c for c in CASES if c.name == "unescaped-double-quote")
        for reply in (render(case, []), '{"rules": [{"pattern": ""password=[^"\\s]+"", "replacement": ""}]}',
                      '{"rules": [{"pattern": "password=\\"[^"]+\\"", "replacement": ""}]}'):
            with self.subTest(reply=reply):
                (error,) = parse_reply(reply)[1]
                self.assertIn('a " inside a pattern ends its JSON string there: write it \\"', error.message)
                self.assertNotIn("double quotes", error.message)


if __name__ == "__main__":
    unittest.main()
