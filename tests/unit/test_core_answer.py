"""Answer parsing and validation: every error code, and hostile replies that must
yield a scored, invalid result instead of an exception."""

from __future__ import annotations

import gc
import json
import random
import time
import unittest

import regex

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.scoring.answer import (
    MAX_PATTERN_CHARS,
    MAX_REPLY_CHARS,
    _plainly_valid,
    _validator,
    parse_reply,
    reply_notes,
)
from tests.support.util import reply

TASK = load_task("dev", 1)


def codes(text) -> list[str]:
    s = score_completion(TASK, text)
    if s.errors:
        self_check = (s.valid, s.reward, s.recall, s.precision, s.clean)
        assert self_check == (0, 0, 0, 0, 0), self_check
    return [e.code for e in s.errors]


class ErrorCodes(unittest.TestCase):
    def test_malformed_json(self):
        for text in ("", "no json here", "{rules: []}", '{"rules": [', "[1, 2]", '"rules"', "NaN",
                     '{"rules": [{"pattern": "a", "replacement": NaN}]}'):
            with self.subTest(text=text):
                self.assertEqual(codes(text), ["malformed_json"])

    def test_bad_entry(self):
        for obj in ({"rules": "x"}, {"rule": []}, {"rules": [], "extra": 1}, {"rules": [{"pattern": "a"}]},
                    {"rules": [{"pattern": "", "replacement": ""}]}, {"rules": [{"pattern": 3, "replacement": ""}]},
                    {"rules": [{"pattern": "a" * (MAX_PATTERN_CHARS + 1), "replacement": ""}]},
                    {"rules": [{"pattern": "a", "replacement": "", "flags": "i"}]}):
            with self.subTest(obj=obj):
                self.assertEqual(set(codes(json.dumps(obj))), {"bad_entry"})

    def test_bad_entry_names_the_rule(self):
        rules = [{"pattern": "a", "replacement": ""}, {"pattern": 1, "replacement": ""}]
        s = score_completion(TASK, json.dumps({"rules": rules}))
        self.assertEqual([(e.code, e.rule) for e in s.errors], [("bad_entry", 1)])
        self.assertEqual(s.errors[0].message, "rule 2: pattern must be a string, got a number")

    def test_too_many_rules(self):
        self.assertEqual(codes(reply([("a", "")] * 25)), ["too_many_rules"])
        self.assertEqual(codes(reply([("a", "")] * 24)), [])

    def test_unsafe_replacement(self):
        for repl in (r"\1", r"\g<0>", "[REDACTED] ", "***", "[redacted]", None, 0):
            with self.subTest(repl=repl):
                s = score_completion(TASK, json.dumps({"rules": [{"pattern": "(AKIA)", "replacement": repl}]}))
                self.assertIn("unsafe_replacement",
                              [e.code for e in s.errors])

    def test_invalid_regex(self):
        for pattern in ("(", "[a-", "a{2,1}", r"\L<names>", "(?L)abc", "\ud800", "a{4294967296}", "(?V1)[[a]--"):
            with self.subTest(pattern=pattern):
                self.assertEqual(codes(reply([(pattern, "")])), ["invalid_regex"])

    def test_excessive_matches(self):
        self.assertEqual(codes(reply([("(?:)", "")] * 2)), ["excessive_matches"])  # zero-width count
        # the cap is per episode, not per rule: two rules of ~8,000 matches each exceed it
        self.assertEqual(codes(reply([(r"[\s\S]", "[REDACTED]")] * 2)), ["excessive_matches"])

    def test_error_floods_are_bounded(self):
        flood = score_completion(TASK, json.dumps({"rules": [{"pattern": 1, "x": 2}] * 24}))
        self.assertEqual(len(flood.errors), 50)
        self.assertIn("more errors", flood.errors[-1].message)
        for rules in ([{}] * 40_000, [1] * 60_000, [{"pattern": 1, "replacement": 2}] * 24):
            # The parse's own cost (34 ms for the 40,000 rules), in CPU time and without a
            # full collection of the shard's heap (every task other modules cached) inside
            # it: a CI run once measured 0.54 s of wall clock here.
            gc.collect()
            gc.disable()
            try:
                start = time.process_time()
                s = score_completion(TASK, json.dumps({"rules": rules}))
                spent = time.process_time() - start
            finally:
                gc.enable()
            self.assertLess(spent, 0.5)
            self.assertLessEqual(len(s.errors), 50)
            self.assertEqual(s.reward, 0.0)
        self.assertEqual(codes(json.dumps({"rules": [{}] * 40_000}))[0], "too_many_rules")

    def test_all_errors_are_reported(self):
        obj = {"rules": [{"pattern": 1, "replacement": ""}, {"pattern": "a", "replacement": "x"}]}
        self.assertEqual(sorted(codes(json.dumps(obj))), ["bad_entry", "unsafe_replacement"])


class ReplyForms(unittest.TestCase):
    def test_fenced_bare_and_after_think(self):
        body = policies.oracle(TASK)
        bare = body.split("```json\n", 1)[1].rsplit("```", 1)[0]
        for text in (body, bare, "Sure!\n" + body + "\nDone.", "<think>{\"rules\": []}</think>" + body,
                     "prose then " + bare.replace("\n", " ") + " trailing prose"):
            with self.subTest(text=text[:40]):
                self.assertEqual(score_completion(TASK, text).reward, 1.0)

    def test_thinking_only_counts_after_last_think(self):
        self.assertEqual(codes(policies.oracle(TASK) + "</think>nothing"), ["malformed_json"])

    def test_unclosed_think_is_no_answer(self):
        """As verifiers reads a reply (`verifiers.v1.utils.score`): one that holds <think>
        and no </think> (thinking cut off by the token limit, or the tag written in prose,
        which the system prompt warns of) has no answer, whatever follows."""
        body = policies.oracle(TASK)
        for text in ("<think>" + body, "<think>\nplanning...\n" + body, body + "<think>", body + "\n<think>more",
                     "Let me think.\n<think>\n" + body, body + "\n(No <think> was needed.)"):
            with self.subTest(text=text[-30:]):
                self.assertEqual(codes(text), ["malformed_json"])
                self.assertIn("<think>", score_completion(TASK, text).errors[0].message)
        for text in ("<think>x</think>" + body, "<think>a</think>" + body + "<think>", "</think>" + body):
            with self.subTest(text=text[:30]):
                self.assertEqual(score_completion(TASK, text).reward, 1.0)


class HostileReplies(unittest.TestCase):
    def test_finding_the_answer_is_linear(self):
        """Review of 2026-12-02: a fence regex that rescanned the rest of the reply from every
        unclosed opener took 160 s on 22,000 lines of "x```json", minutes on a line of
        backticks. Fences are read line by line now; each of these takes well under a second."""
        rule = '{"rules": [{"pattern": "a", "replacement": ""}]}'
        for text in ("x```json\n" * 22_000, "`" * 199_998 + "\n", ("```json\n{" * 22_000)[:199_000],
                     "```\n" * 49_000, "```json\n" + rule + "\n```\n" + "`" * 150_000 + "\n",
                     ("```json " + rule + "```\n") * 3_000, "x" + "```{} " * 33_000,
                     "```{" * 49_000 + "}```", "```" + "{} ```" * 33_000):
            with self.subTest(text=text[:20]):
                self.assertLessEqual(len(text), MAX_REPLY_CHARS)
                start = time.process_time()
                parse_reply(text)
                reply_notes(text)
                self.assertLess(time.process_time() - start, 1.5)

    def test_one_line_blocks_are_read_as_the_reference_regex_reads_them(self):
        """A whole block on one line is read run by run (linear); the regex it replaced
        (quadratic: 149 s on a line of 32,000 ```{} pieces) is the reference on short
        lines of the characters that matter."""
        from redaction_pressure.scoring.answer import _one_line
        reference = regex.compile(r"(?<!`)(`{3,}+)[ \t]*+((?i:jsonc?)(?![A-Za-z0-9]))?[ \t]*+(\{.*\})[ \t]*+\1[ \t]*+$")
        rnd = random.Random(20)
        atoms = ["`", "```", "````", "{", "}", " ", "\t", "json", "JSONC", "jsonx", "a", '"r"', ":"]
        found = 0
        def noise(k: int) -> str:
            return "".join(rnd.choice(atoms) for _ in range(rnd.randint(0, k)))

        def ticks() -> str:
            return "`" * rnd.randint(2, 5)
        for i in range(40_000):
            if i % 2:  # near a block: runs of 2-5 backticks, tags and spaces around braces, noise between
                line = (noise(3) + ticks() + rnd.choice(["", " ", "json", " JSON ", "jsonc\t", "jsonx"]) + "{"
                        + noise(4) + "}" + rnd.choice(["", " ", "\t "]) + ticks() + rnd.choice(["", " ", "x"]))
            else:
                line = noise(12)
            m = reference.search(line)
            want = None if m is None else (m.group(2) or "", m.group(3))
            self.assertEqual(_one_line(line), want, line)
            found += want is not None
        self.assertGreater(found, 1_000)

    def test_never_raises(self):
        hostile = [
            "{" * 1_000_000, "[" * 200_000 + "]" * 200_000, '{"rules":' + "[" * 200_000 + "]" * 200_000 + "}",
            "\x00\xff\ufffe" * 1000, "\ud800\udfff", b"bytes".decode(), "x" * (MAX_REPLY_CHARS + 1),
            '{"rules": [{"pattern": "\\ud800", "replacement": ""}]}', "```json\n```", "```json\n{\"rules\": 1}\n```",
            json.dumps({"rules": [{"pattern": "a" * 512, "replacement": ""}] * 24}),
            json.dumps({"rules": [{"pattern": "(?:" * 170 + "a" + ")" * 170, "replacement": ""}]}),
            json.dumps({"rules": [{"pattern": "(" * 256 + ")" * 256, "replacement": ""}]}),
            "\u202e{\"rules\": []}", "\uff5b\"rules\": []\uff5d",
        ]
        for text in [*hostile, None, 42, ["list"]]:
            with self.subTest(text=repr(text)[:40]):
                s = score_completion(TASK, text)
                self.assertIsInstance(s.reward, float)
                self.assertTrue(s.errors or s.valid == 1.0)

    def test_shortcut_agrees_with_schema(self):
        """_plainly_valid is a fast path; it must never accept what the schema rejects."""
        from hypothesis import given, settings
        from hypothesis import strategies as st
        leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                         st.text(max_size=6), st.sampled_from(["[REDACTED]", "", "a", "pattern", "replacement"]))
        values = st.recursive(leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(
            st.sampled_from(["pattern", "replacement", "rules", "x"]), c, max_size=3), max_leaves=12)
        rule = st.fixed_dictionaries({"pattern": st.one_of(st.text(max_size=3), values),
                                      "replacement": st.one_of(st.sampled_from(["[REDACTED]", ""]), values)})
        answer = st.dictionaries(st.sampled_from(["rules", "x"]), st.one_of(st.lists(rule, max_size=26), values),
                                 min_size=1, max_size=2)

        @settings(max_examples=400, deadline=None)
        @given(answer)
        def check(obj):
            if _plainly_valid(obj):
                self.assertEqual(list(_validator().iter_errors(obj)), [])

        check()
        self.assertTrue(_plainly_valid({"rules": [{"pattern": "a", "replacement": ""}]}))

    def test_parse_reply_returns_rules(self):
        rules, errors = parse_reply(reply([("a", "[REDACTED]")]))
        self.assertEqual((len(rules), errors), (1, []))


if __name__ == "__main__":
    unittest.main()
