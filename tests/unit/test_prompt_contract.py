"""The contract a model reads (issue 20): every limit the system prompt states is the
validator's own, read back out of the text; each limit is enforced exactly where
stated; labels use the notation the prompt promises; error messages lead with the
reason and the numbers; and valid, cheap patterns models write are not voided."""

from __future__ import annotations

import json
import re
import time
import tracemalloc
import unittest

import regex

from redaction_pressure import load_task, score_completion
from redaction_pressure.build.schemas import load_schema
from redaction_pressure.build.versions import ANSWER_SCHEMA_VERSION
from redaction_pressure.corpus.levels import LEVELS
from redaction_pressure.scoring import pattern_guard as guard
from redaction_pressure.scoring.answer import (
    ALLOWED_REPLACEMENTS,
    MAX_PATTERN_CHARS,
    MAX_RAW_REPLY_CHARS,
    MAX_REPLY_CHARS,
    MAX_RULES,
    Rule,
    parse_reply,
)
from redaction_pressure.scoring.reward import WEIGHTS
from redaction_pressure.scoring.scanner import DEFAULT_BUDGET_S, MAX_MATCHES
from redaction_pressure.task.prompt import SYSTEM_PROMPT, system_prompt
from tests.support import tasks as shared
from tests.support.random_patterns import FALSE_ZERO_CASES, random_patterns
from tests.support.util import reply

TASK = load_task("dev", 1)


def number(pattern: str, text: str = SYSTEM_PROMPT) -> float:
    """The one number ``pattern`` (with a single group) finds in ``text``."""
    found = re.findall(pattern, text)
    if len(found) != 1:
        raise AssertionError(f"{pattern!r} found {found} in the system prompt")
    return float(found[0].replace(",", ""))


class StatedLimitsAreTheValidators(unittest.TestCase):
    def test_every_limit_is_read_back_from_the_prompt(self):
        schema = load_schema(ANSWER_SCHEMA_VERSION)
        rule_schema = schema["properties"]["rules"]
        pattern_schema = rule_schema["items"]["properties"]["pattern"]
        stated = {
            "rules": (number(r"At most (\d+) rules"), MAX_RULES, rule_schema["maxItems"]),
            "pattern": (number(r"each pattern 1 to ([\d,]+) characters"), MAX_PATTERN_CHARS,
                        pattern_schema["maxLength"]),
            "reply": (number(r"after the last </think>\) at most ([\d,]+) characters"), MAX_REPLY_CHARS,
                      MAX_REPLY_CHARS),
            "raw reply": (number(r"whole reply with its thinking at most ([\d,]+)"), MAX_RAW_REPLY_CHARS,
                          MAX_RAW_REPLY_CHARS),
            "compiled": (number(r"a pattern whose compiled size exceeds ([\d,]+) units"), guard.MAX_COMPILED_COST,
                         guard.MAX_COMPILED_COST),
            "reply cost": (number(r"together exceed ([\d,]+) units"), guard.MAX_REPLY_COST, guard.MAX_REPLY_COST),
            "nesting": (number(r"nested deeper than (\d+) levels"), guard.MAX_NESTING, guard.MAX_NESTING),
            "fold": (number(r"costs (\d+) units instead of 1 and a set"),
                     guard.FULL_FOLD_FACTOR, guard.FULL_FOLD_FACTOR),
            "base cost": (number(r"A pattern costs (\d+) units"), guard.PATTERN_BASE_COST,
                          guard.compile_bounded("a").cost - 2),
            "matches": (number(r"At most ([\d,]+) matches"), MAX_MATCHES, MAX_MATCHES),
            "budget": (number(r"one budget of ([\d.]+) seconds of CPU time"), DEFAULT_BUDGET_S, DEFAULT_BUDGET_S),
        }
        for name, (in_prompt, constant, enforced) in stated.items():
            with self.subTest(limit=name):
                self.assertEqual(in_prompt, constant)
                self.assertEqual(constant, enforced)
        self.assertEqual(pattern_schema["minLength"], 1)
        self.assertEqual(tuple(rule_schema["items"]["properties"]["replacement"]["enum"]), ALLOWED_REPLACEMENTS)
        self.assertIn('exactly "[REDACTED]" or ""', SYSTEM_PROMPT)

    def test_the_cap_on_embedded_objects_is_stated(self):
        """Review of 2026-12-03: only the last `MAX_EMBEDDED_TRIES` places where
        {"rules": opens are tried (a cap that keeps the search linear), so an unfenced
        answer followed by that many broken openings had no answer (a zero), and the
        prompt did not say so. The stated number is the constant, and it is where the
        verdict turns."""
        from redaction_pressure.scoring.answer import MAX_EMBEDDED_TRIES
        self.assertEqual(number(r'only at the last (\d+) places where \{"rules": opens'), MAX_EMBEDDED_TRIES)
        good = reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")])
        for later, read in ((MAX_EMBEDDED_TRIES - 1, True), (MAX_EMBEDDED_TRIES, False)):
            text = "Answer: " + good + "\n" + "".join(f'- draft {i}: {{"rules": [ ... ]}}\n' for i in range(later))
            with self.subTest(later=later):
                self.assertEqual(bool(parse_reply(text)[0]), read)

    def test_the_reward_weights_are_the_contracts(self):
        """A model that knows the weights and that clean is all-or-nothing can weigh a
        risky rule (review of 2026-12-02: neither was stated)."""
        stated = {name: number(rf"([\d.]+) x {name}") for name in WEIGHTS}
        self.assertEqual(stated, WEIGHTS)
        self.assertEqual(number(r"loses all ([\d.]+) of it"), WEIGHTS["clean"])
        self.assertIn("each secret counts once, whatever its length", SYSTEM_PROMPT)

    def test_the_unit_examples_are_the_bounds_own(self):
        for pattern, stated in (("[A-Za-z0-9]", r"\(\[A-Za-z0-9\] is (\d+)\)"),
                                ("[A-Za-z0-9]{32}", r"\[A-Za-z0-9\]\{32\} is (?:about )?([\d,]+) units"),
                                ("(?:a{100}){100}", r"\(\?:a\{100\}\)\{100\} about ([\d,]+)")):
            with self.subTest(pattern=pattern):
                tree = guard._parse(pattern)[0]
                tree = tree.items[0] if len(getattr(tree, "items", ())) == 1 else tree  # the construct itself
                cost = guard._cost(tree, 10**9)
                self.assertLessEqual(abs(cost - number(stated)) / cost, 0.02, cost)

    def test_the_stated_size_is_the_size_charged(self):
        """Review of 2026-12-03: the prompt's formula ("one per character or group") was
        about one unit low per alternative (each sequence of the parse costs 1), so a
        model that sized its pattern from the prompt to the limit could be refused.
        `tests.support.stated_cost` computes the size from a pattern's text by the
        prompt's words; it must equal what the guard charges, exactly, on thousands of
        random patterns (every construct `random_patterns` writes) and the numbers the
        prompt names must be its own."""
        from tests.support.random_patterns import _FLAGS, _node
        from tests.support.stated_cost import FOLD, GRAPHEME, Unstated, stated_cost
        self.assertEqual((FOLD, GRAPHEME, number(r"A pattern costs (\d+) units plus")),
                         (guard.FULL_FOLD_FACTOR, guard.GRAPHEME_COST, guard.PATTERN_BASE_COST))
        self.assertEqual(number(r"\\X: (\d+);"), guard.GRAPHEME_COST)
        self.assertEqual(number(r"\\R: (\d+);"), guard.LINEBREAK_COST)
        # under (?x) whitespace and # comments cost nothing, as the prompt says
        self.assertIn("under (?x) whitespace outside sets and # comments, nothing", SYSTEM_PROMPT)
        self.assertEqual(guard.compile_bounded("(?x)a b  # a comment\n c").cost, guard.compile_bounded("(?x)abc").cost)
        self.assertEqual(number(r"a set (\d+) per member"), guard.FULL_FOLD_FACTOR + 1)
        import random
        r = random.Random(20261203)
        patterns = [r.choice(_FLAGS) + _node(r, 2) for _ in range(3000)] + random_patterns(150, seed=11)
        patterns += ["[A-Za-z0-9]{32}", "(?:a{100}){100}", "[a-z]", "a|bc", "(a)", "(?:ab){3}", "x{1}", "[ab-]",
                     "(?i)[ab-]", "(?(?=a)b|c)", r"(?fi)\p{L}[ab]", r"\X{2,}",
                     # a second review's cases: \R, (?|...), a one-member set under full folding,
                     # and which sets ending in "-" cost one more
                     r"\R", r"a\R{2}", r"(?:\R[A-Za-z0-9+/]{64}){51}", "(?|a|b)", "(?|(a)|(b))", r"(?fi)[\d]",
                     "(?fi)[a-z]", "xox[baprs]-[0-9a-zA-Z-]{10,48}", "[a-]", "[A-Za-z0-9-]", "[a-z0-9-]", r"[\w-]",
                     "[^ab-]", "[^abc-]", r"[a\--]", r"[ab\-]", "[.a-]", "[ab-c-]", r"[a\w-]", r"[a\x41-]",
                     "[a[:alpha:]-]", r"[a\n-]",
                     # the second false-zero hunt's: flag groups and comments
                     "(?s:ab)", "(?-i:ab)", "(?i-s:a|b)", "a(?#a comment)b", "(?i)a(?#c)[bc]{2}",
                     # the fourth's (2026-12-04): a conditional with no "no" branch, and a
                     # backreference under full case folding
                     "(?(?=a)b)", "(?(?!x)yz)", "(?:(?(?=a)b)){100}", r"(?fi)(a)\1", r"(?fi)([A-Za-z0-9_-])\1{5}",
                     r"(?fi)(a)\g<1>", "(?fi)(?P<n>a)(?P=n)", "(?fi)(?P<n>[a-z])(?P=n){5}", "(?(?<=a)b)",
                     "(?(?<!a)b|cd)",
                     # review of 2026-12-05: the helper over-counted these five kinds (so an
                     # over-charging guard could pass): an atomic group, {,n}, escapes of
                     # several characters, a conditional on a group; (?V1) set operations below
                     "(?>ab)c", "(?>a|b){3}", "(?fi)(?>a)", "a{,5}", "a{,5}?", "(?:ab){,3}", "a{,}", "x{}",
                     r"\x41\u00e9\N{LATIN SMALL LETTER A}", r"\U0001F600", r"\0\012\101", r"(?fi)\x41\u00e9",
                     r"[\u00e9-\u00ff]", r"[\N{LATIN SMALL LETTER A}b]", r"[a\u0041-]", r"(a)\12",
                     r"\pL[\pLa-]", "(a)(?(1)b|c)", "(a)(?(1)b)", "(?P<n>a)(?(n)bc|)",
                     "(?fi)(a)(?(1)b|c)", "(a)(?:(?(1)b|c)){10}"]
        members = ["a", "b", "Z", ".", "\\-", "a-z", "0-9", "\\w", "\\d", "\\n", "\\x41", "[:alpha:]", "\\p{L}"]
        for _ in range(2000):
            body = "".join(r.choice(members) for _ in range(r.randint(1, 4))) + r.choice(("", "-"))
            patterns.append(r.choice(("", "(?i)", "(?fi)")) + "[" + r.choice(("", "^")) + body + "]"
                            + r.choice(("", "{3}", "+")))
        for pattern in patterns:
            charged = guard.PATTERN_BASE_COST + guard._cost(guard._parse(pattern)[0], 10**12)
            self.assertEqual(stated_cost(pattern), charged, pattern)
        # The words do not say what a member of a (?V1) set with a nested set or a set
        # operation is; the helper refuses to guess rather than agree with the guard by
        # construction. Listed so a change of words or helper shows here.
        for pattern in ("(?V1)[[a-z]--[aeiou]]", "(?V1)[[a-z]&&[^aeiou]]", "(?V1)[a-z||0-9]", "(?V1)[[a-z]~~[a-c]]",
                        "(?V1)[ab[cd]]", "(?V1i)[[a-z]--[aeiou]]"):
            with self.subTest(pattern=pattern), self.assertRaises(Unstated):
                stated_cost(pattern)
        self.assertEqual(guard.compile_bounded("[A-Za-z0-9]{32}").cost,
                         guard.PATTERN_BASE_COST + 1 + number(r"\{32\} is (\d+) units"))

    def test_the_advice_on_slow_lookbehinds_holds(self):
        """Model round of 2026-12-03 (0.16.0): two level-5 replies scored 0 on the time
        budget, each rule opening with a negative lookbehind that reads back over many
        lines before the lookbehind naming its key. The prompt says to put the
        lookaround that fails fast first; on one such rule that is hundreds of times
        cheaper, with the same matches."""
        import time
        self.assertIn("put a lookaround that fails fast (one naming the key the value follows) before it",
                      SYSTEM_PROMPT)
        section = ("(?<!(?:\\A|\\n)(?:(?:test|staging|dev):[ \\t]*\\n(?:[ \\t]*\\n|[ \\t]+[^\\n]*\\n)*[ \\t]+|"
                   "\\[(?:test|staging|dev)\\][ \\t]*\\n(?:[ \\t]*\\n|[^\\[\\n][^\\n]*\\n)*)[^\\n]*)")
        key = "(?<=(?<![A-Za-z0-9_])(?i:maibuko_cipher)[\"']?\\s*[:=]\\s*[\"']?)"
        value = "[A-Za-z0-9]{25}(?![A-Za-z0-9])"
        staging = "[staging]\n" + "".join(f"host_{i} = db-{i}.internal\n" for i in range(80))
        text = (staging + "maibuko_cipher = " + "a" * 25 + "\n") * 4 + "[prod]\nmaibuko_cipher = " + "b" * 25 + "\n"
        costs, found = [], []
        for pattern in (section + key + value, key + section + value):
            compiled = regex.compile(pattern)
            start = time.process_time()
            found.append([m.span() for m in compiled.finditer(text)])
            costs.append(time.process_time() - start)
        self.assertEqual(found[0], found[1])
        self.assertEqual(len(found[0]), 1)  # the [prod] value only
        self.assertLess(costs[1] * 10, costs[0], costs)  # about 57x on this machine

    def test_a_refusal_states_the_patterns_size_and_the_limit(self):
        with self.assertRaises(guard.Refused) as refused:
            guard.compile_bounded("(?:[A-Za-z0-9]{40}){200}")
        size = guard.PATTERN_BASE_COST + guard._cost(guard._parse("(?:[A-Za-z0-9]{40}){200}")[0], 10**9)
        self.assertIn(f"its compiled size is {size:,} units; the limit is {guard.MAX_COMPILED_COST:,}",
                      str(refused.exception))

    def test_a_tasks_own_budget_is_the_one_stated(self):
        task = load_task("dev", 1, budget_s=0.5)
        self.assertEqual(number(r"one budget of ([\d.]+) seconds", task.system_prompt), 0.5)
        self.assertEqual(system_prompt(2.0), SYSTEM_PROMPT)

    def test_the_refused_constructs_named_are_refused(self):
        """Each construct the prompt lists under "Refused before compiling" is refused
        with that reason, not a compile error. Review of 2026-12-04: \\L<name> failed in
        regex's parser ("undefined named list", "does not compile") before the guard's
        own check, and a scoped (?L:...) was accepted though the prompt refuses the flag."""
        for pattern in ("a(?R)?b", "(a)(?1)", "(?<n>a)(?&n)", "(?:abc){e<=1}", r"(?=a\K)b", r"\L<names>",
                        r"(?i)a\L<w>b", r"(?x) (?:x | \L<names>)+", "(?L)a", "a(?L)", "(?L:a)b", "\ud800",
                        "(" * (guard.MAX_NESTING + 1) + "a" + ")" * (guard.MAX_NESTING + 1)):
            with self.subTest(pattern=pattern):
                errors = score_completion(TASK, reply([(pattern, "")])).errors
                self.assertEqual([e.code for e in errors], ["invalid_regex"])
                self.assertTrue(errors[0].message.startswith("rule 1: refused before compiling: "), errors[0].message)
        self.assertIn(r"named lists (\L<name>) are refused",
                      score_completion(TASK, reply([(r"\L<names>", "")])).errors[0].message)
        # what is not a named list or a lone surrogate is not refused as one
        for pattern in (r"\\L<names>", r"\ud800", "[\ud83d\ude00]", "(?i:a)(?a:b)"):
            with self.subTest(pattern=pattern):
                self.assertEqual(score_completion(TASK, reply([(pattern, "")])).errors, ())
        self.assertIn('a lone surrogate character (an unpaired JSON "\\ud800"-"\\udfff" escape; the regex escape '
                      '"\\\\ud800" is allowed)', SYSTEM_PROMPT)

    def test_text_around_the_object_is_not_part_of_it(self):
        """Review of 2026-12-04: a // line before the object inside its ```json fence was
        read (the object in the text, as prose around it is), though the prompt said only
        "JSON allows no comments". The object is what must be JSON; the prompt now says a
        comment or prose before or after it, in its fence or not, is not part of the
        answer, while a comment inside the object voids it as stated."""
        self.assertIn("JSON allows no comments and no trailing commas inside the object (a comment or prose before "
                      "or after it, in its fence or not, is not part of the answer)", SYSTEM_PROMPT)
        rules = [("ghp_[A-Za-z0-9]{36}", "[REDACTED]"), ("(?<=PASSWORD=)\\S+", "")]
        obj = json.dumps(json.loads(reply(rules)), indent=2)
        draft = "```json\n" + reply(rules[:1]) + "\n```\n"
        for name, text in (("// before, fenced", "```json\n// final answer\n" + obj + "\n```"),
                           ("# before, fenced", "```json\n# final answer\n" + obj + "\n```"),
                           ("/* */ before, fenced", "```json\n/* final */\n" + obj + "\n```"),
                           ("// after, same line", "```json\n" + obj + "  // done\n```"),
                           ("prose after, fenced", "```json\n" + obj + "\nThese cover the token.\n```"),
                           ("// before, bare", "// final answer\n" + obj),
                           ("after a draft", draft + "```json\n// final answer\n" + obj + "\n```")):
            with self.subTest(text=name):
                self.assertEqual(parse_reply(text), ([Rule(p, r) for p, r in rules], []))
        inside = "```json\n" + obj.replace('"rules": [', '"rules": [ // the rules', 1) + "\n```"
        found, errors = parse_reply(inside)
        self.assertEqual((found, [e.code for e in errors]), ([], ["malformed_json"]))
        self.assertIn("JSON has no comments", errors[0].message)
        self.assertEqual(parse_reply(draft + inside)[0], [Rule(*rules[0])])  # the draft, as the prompt says

    def test_the_prompt_says_how_rules_apply_and_what_a_label_covers(self):
        for phrase in ("Rules run in order", "as the rules before it left it", "Inserted [REDACTED] markers are never "
                       "source text", "[start:end)", "the end excluded", "A secret may span lines",
                       "the last fenced block", "write every backslash twice"):
            self.assertIn(phrase, SYSTEM_PROMPT)

    def test_an_exact_answer_within_the_limits_exists_as_stated(self):
        """Model rounds of 2026-12-04: single-pass readers saw a key's value labelled in
        one section and not in another, and, unsure whether "a checksum or the section
        decides", removed both (a third of the level-4 losses). The prompt now says labels
        follow only from what a rule can see and that an exact answer within the limits
        exists; the oracle's own reply is that answer, on the shown records and the later ones."""
        self.assertIn("never by whether a checksum is valid, nor by anything else a regex cannot test",
                      SYSTEM_PROMPT)
        self.assertIn("Some set of rules within the limits below removes exactly the secrets, and nothing else, "
                      "from every record of the stream, shown or later.", SYSTEM_PROMPT)
        import dataclasses

        from redaction_pressure import policies

        for level in LEVELS:
            for index in (0, 1):
                task = shared.task("dev", index, level)
                answer = policies.oracle(task)
                for name, records in (("later", task.heldout), ("shown", task.shown)):
                    with self.subTest(level=level, index=index, records=name):
                        score = score_completion(dataclasses.replace(task, heldout=records), answer)
                        self.assertEqual((score.reward, tuple(score.errors)), (1.0, ()))


    def test_every_error_code_is_stated_as_voiding_the_reply(self):
        """Review of 2026-12-02: a rule that does not compile and a rule with a
        "description" key each voided a reply of good rules, and only the limits said
        that breaking them scores zero. Every code the trace schema allows names a rule
        the prompt states, under a sentence that says an error voids the reply."""
        stated = {"malformed_json": "text that is not valid JSON",
                  "bad_entry": "another key in the object or in a rule", "too_many_rules": "At most 24 rules",
                  "unsafe_replacement": "a replacement other than the two allowed",
                  "invalid_regex": "a pattern that does not compile", "excessive_matches": "At most 10,000 matches",
                  "timeout": "running out of it scores zero", "budget_exhausted": "running out of it scores zero"}
        self.assertEqual(set(_error_codes(load_schema("trace-v1"))), set(stated))
        for code, phrase in stated.items():
            with self.subTest(code=code):
                self.assertIn(phrase, SYSTEM_PROMPT)
        self.assertIn("Any error in the answer voids the whole reply (it scores 0", SYSTEM_PROMPT)


def _error_codes(node):
    """The enum of error codes in the trace schema."""
    if isinstance(node, dict):
        if "malformed_json" in node.get("enum", ()):
            return node["enum"]
        for value in node.values():
            found = _error_codes(value)
            if found:
                return found
    if isinstance(node, list):
        for value in node:
            found = _error_codes(value)
            if found:
                return found
    return None


class LimitsBiteExactlyWhereStated(unittest.TestCase):
    def test_rule_count(self):
        self.assertEqual(score_completion(TASK, reply([("zq9", "")] * MAX_RULES)).errors, ())
        self.assertEqual([e.code for e in score_completion(TASK, reply([("zq9", "")] * (MAX_RULES + 1))).errors],
                         ["too_many_rules"])

    def test_pattern_length(self):
        at = "zq9" + "a" * (MAX_PATTERN_CHARS - 3)
        self.assertEqual(score_completion(TASK, reply([(at, "")])).errors, ())
        over = score_completion(TASK, reply([("zq9", ""), (at + "a", "")])).errors
        self.assertEqual([(e.code, e.rule) for e in over], [("bad_entry", 1)])
        # the first 80 characters state the length and the limit
        self.assertIn(f"pattern is {MAX_PATTERN_CHARS + 1} characters; the limit is {MAX_PATTERN_CHARS}",
                      over[0].message[:80])
        self.assertTrue(over[0].message.startswith("rule 2: "))

    def test_nesting(self):
        def nested(k: int) -> str:
            return "(?:" * k + "zq9" + ")" * k
        self.assertEqual(score_completion(TASK, reply([(nested(guard.MAX_NESTING), "")])).errors, ())
        errors = score_completion(TASK, reply([(nested(guard.MAX_NESTING + 1), "")])).errors
        self.assertTrue(errors[0].message.startswith(f"rule 1: refused before compiling: groups and sets nest "
                                                     f"deeper than {guard.MAX_NESTING} levels"), errors[0].message)

    def test_compiled_size(self):
        def cost(pattern: str) -> int:
            return guard.PATTERN_BASE_COST + guard._cost(guard._parse(pattern)[0], 10**9)
        n = 1000 + guard.MAX_COMPILED_COST - cost("zq9a{1000}")  # each more copy of "a" costs one unit
        at = f"zq9a{{{n}}}"
        self.assertEqual(cost(at), guard.MAX_COMPILED_COST)
        guard.compile_bounded(at)
        over = f"zq9a{{{n + 1}}}"
        stated = f"is {guard.MAX_COMPILED_COST + 1:,} units; the limit is {guard.MAX_COMPILED_COST:,}"
        with self.assertRaisesRegex(guard.Refused, stated):
            guard.compile_bounded(over)

    def test_match_cap(self):
        from redaction_pressure.scoring.scanner import CompiledRule, scan

        rule = [CompiledRule(regex.compile("a"), "")]
        self.assertEqual(scan(rule, ["a" * MAX_MATCHES], 10**9).errors, [])
        over = scan(rule, ["a" * (MAX_MATCHES // 2), "a" * (MAX_MATCHES // 2 + 1)], 10**9).errors
        self.assertEqual([(e.code, e.rule) for e in over], [("excessive_matches", 0)])
        self.assertTrue(over[0].message.startswith(f"rule 1: more than {MAX_MATCHES:,} matches"), over[0].message)


class Labels(unittest.TestCase):
    def test_every_label_uses_the_promised_notation(self):
        label = re.compile(r"^- (\S+) \[(\d+):(\d+)\): (.*)$")
        tasks = [shared.task("train", i) for i in range(200)]
        tasks += [t for lv in LEVELS for t in shared.dev(64, lv)]  # every level's dev tasks
        for task in tasks:
            lines = [ln for ln in task.prompt.splitlines() if ln.startswith("- ") and " [" in ln]
            expected = sum(len(r.secrets) for r in task.shown)
            self.assertEqual(len(lines), expected, task.id)
            for line, (record, span) in zip(lines, [(r, x) for r in task.shown for x in r.secrets], strict=True):
                m = label.match(line)
                self.assertIsNotNone(m, (task.id, line))
                assert m is not None
                self.assertEqual((m[1], int(m[2]), int(m[3])), (span.family, span.start, span.end), task.id)
                self.assertEqual(m[4], repr(record.text[span.start:span.end]), (task.id, line))

    def test_every_record_ends_with_the_line_break_the_prompt_states(self):
        """Second false-zero hunt: the fences show a record without its final line
        breaks, which rules see; the prompt says so, and that every record has one."""
        self.assertIn("A record's text ends with a line break the fences do not show", SYSTEM_PROMPT)
        tasks = [shared.task("train", i) for i in range(200)] + [t for lv in LEVELS for t in shared.dev(64, lv)]
        for task in tasks:
            for record in task.shown + task.heldout:
                self.assertTrue(record.text.endswith("\n"), task.id)
            for record in task.shown:
                self.assertIn("```text\n" + record.text.rstrip("\n") + "\n```", task.prompt)


class ErrorMessages(unittest.TestCase):
    def test_every_message_leads_with_its_reason(self):
        # Each empty rule matches at every position of every held-out record: the rule
        # that crosses the cap is named (rule 1 matches nothing).
        per_rule = sum(len(r.text) + 1 for r in TASK.heldout)
        crossing = 2 + MAX_MATCHES // per_rule
        cases = {
            "rule 1: pattern is empty": reply([("", "")]),
            'rule 1: replacement must be exactly "[REDACTED]" or ""': reply([("a", "***")]),
            "rule 2: refused before compiling: its compiled size is 1,002,018 units; the limit is 20,000":
                reply([("zq9", ""), ("(?:a{1000}){1000}", "")]),
            "rule 1: does not compile: ": reply([("(zq9", "")]),
            f"rule {crossing}: more than 10,000 matches in the episode":
                reply([("zq9", "")] + [("(?:)", "")] * crossing),
            "the reply has 30 rules; the limit is 24": reply([("a", "")] * 30),
        }
        for start, text in cases.items():
            with self.subTest(start=start):
                message = score_completion(TASK, text).errors[0].message
                self.assertTrue(message.startswith(start), message)

    def test_a_brace_regex_reads_as_fuzzy_says_how_to_write_a_literal_one(self):
        """Red team of 2026-12-04: `re` reads "{s}" and "${env:X}" as literal text,
        `regex` as fuzzy matching; the bare error ("expected }") gave no reason."""
        self.assertIn("may be read as one when e, i, d, s or a digit follows it", SYSTEM_PROMPT)
        for pattern in (r"\${data.vault}", r"=\s*{secret}", r"\${env:TOKEN}", r"\w+{i}", "password={s}",
                        r"x\\{d}", "x{1<=e<=2}", "a{0<e<2}", "(?x)x{ s}"):
            with self.subTest(pattern=pattern):
                [error] = score_completion(TASK, reply([(pattern, "")])).errors
                self.assertEqual(error.code, "invalid_regex")
                self.assertTrue(error.message.endswith(guard.FUZZY_HINT), error.message)
        for pattern in (r"\${data.vault}".replace("{", r"\{"), r"=\s*\{secret}", "a{3}", "[{]s", "x{"):
            with self.subTest(pattern=pattern):
                self.assertFalse(score_completion(TASK, reply([(pattern, "")])).errors)
        # Review, 2026-12-04: only errors about a fuzzy constraint get the hint.
        for pattern in ("(zq9", r"\N{e}", "(?x)(zq9 # {s}", "[{s](zq9"):
            with self.subTest(pattern=pattern):
                [error] = score_completion(TASK, reply([(pattern, "")])).errors
                self.assertNotIn(guard.FUZZY_HINT, error.message)

    def test_a_match_that_ends_before_it_starts_voids_as_stated(self):
        self.assertIn("a match that ends before it starts (\\K under (?r) can yield one) voids the reply",
                      SYSTEM_PROMPT)
        text = "token=abc123 key=zz\n"
        pattern = r"(?r)(?<=b)(?:\K(?>\K.)(?:a)?)*."
        self.assertTrue(any(m.start() > m.end() for m in regex.finditer(pattern, text)))
        self.assertTrue(any(m.start() > m.end() for r in TASK.heldout for m in regex.finditer(pattern, r.text)))
        [error] = score_completion(TASK, reply([(pattern, "")])).errors
        self.assertIn("a match ends before it starts", error.message)

    def test_rule_field_is_the_index_and_messages_count_from_one(self):
        errors = score_completion(TASK, reply([("zq9", ""), ("zq8", ""), ("(", "")])).errors
        self.assertEqual([(e.code, e.rule) for e in errors], [("invalid_regex", 2)])
        self.assertTrue(errors[0].message.startswith("rule 3: "))

    def test_time_errors_name_the_budget(self):
        task = load_task("dev", 1, budget_s=0.2)
        s = score_completion(task, reply([(r"(?:\w|\w\w)+\s=", "")]))
        self.assertIn(s.errors[0].code, ("timeout", "budget_exhausted"))
        self.assertTrue(s.errors[0].message.startswith("rule 1: "), s.errors[0].message)
        self.assertIn("0.2-second regex time budget", s.errors[0].message)


class NoFalseZeros(unittest.TestCase):
    def test_cheap_patterns_models_write_score_as_regex_applies_them(self):
        """Each case of issue 20 item 6, put in front of the oracle's rules: the reply is
        valid and scores what applying the rules with `regex` itself gives."""
        prefixes = ["ghp", "gho", "glpat", "xoxb", "npm", "pypi", "hf", "gsk", "sk_live", "rk_live", "r8", "dckr_pat",
                    "dop_v1", "sntryu", "shpat", "shpss", "rubygems", "glrt", "gldt", "xoxp", "doo_v1", "sntrys",
                    "shpca", "shppa"]
        replies = [reply([(case, "[REDACTED]"), *((p, "[REDACTED]") for p in TASK.oracle_rules)])
                   for case in FALSE_ZERO_CASES]
        replies.append(reply([(rf"\b{p}_[A-Za-z0-9_-]{{20,512}}", "[REDACTED]") for p in prefixes]))
        for text in replies:
            with self.subTest(reply=text[:80]):
                score = score_completion(TASK, text)
                self.assertEqual(score.errors, ())
                rules = json.loads(text)["rules"]
                self.assertEqual(score.reward, _reference_reward(TASK, [r["pattern"] for r in rules]))

    def test_named_group_before_a_hash_is_not_verbose(self):
        pattern = "(?P<prefix>ghp_)[A-Za-z0-9#]{36}" + "(?:[q])" * 20
        self.assertGreater(pattern.count("(") + pattern.count("["), guard.MAX_NESTING)
        self.assertEqual(guard.nesting_bound(pattern), 2)
        guard.compile_bounded(pattern)
        # a real verbose flag still makes '#' start a comment, so the bound stays an upper bound
        verbose = "(?x)" + "(?:" * 20 + "a # )" + ")" * 20
        self.assertGreaterEqual(guard.nesting_bound(verbose), 20)

    def test_parentheses_inside_sets_are_not_groups(self):
        # review of 2026-12-02: 18 alternatives of (?<=[\s(=:])... were refused as
        # "nested deeper than 32"; each set's "(" was counted as an open group
        pattern = "(?:" + "|".join(rf"(?<=[\s(=:])tok{i}_[A-Za-z0-9]{{20}}" for i in range(18)) + ")"
        self.assertEqual(guard.nesting_bound(pattern), 3)
        text = reply([(pattern, "[REDACTED]"), *((p, "[REDACTED]") for p in TASK.oracle_rules)])
        self.assertEqual(score_completion(TASK, text).errors, ())
        # still an upper bound where a "(" only looks as if it were in a set
        deep = "(" * 40 + "a" + ")" * 40
        for prefix in ("[[]", "(?#[)", "(?x)#[\n", "(?V1)[[]"):
            with self.subTest(prefix=prefix):
                self.assertGreaterEqual(guard.nesting_bound(prefix + deep + "]"), 40)
        self.assertGreaterEqual(guard.nesting_bound("(?V1)" + ("[" * 20 + "a]") * 5 + "]" * 95), 96)

    def test_a_bracket_inside_a_set_is_a_literal(self):
        r"""Review of 2026-12-03: in a version-0 set only "[:" may open a POSIX class, but
        every inner "[" was read as one, so each branch of ``(?<=[\s"[])key...`` left a
        level open: 31 such branches (real depth 2) were refused as nested deeper than 32."""
        keys = [f"key_{i}" for i in range(31)]
        pattern = "|".join(rf'(?<=[\s"[])({k})["]?\s*[=:]\s*["[]?([^\s"\]]+)' for k in keys)
        self.assertEqual(guard.nesting_bound(pattern), 2)
        text = reply([*((p, "[REDACTED]") for p in TASK.oracle_rules), (pattern, "[REDACTED]")])
        self.assertNotIn("nest deeper", " ".join(e.message for e in score_completion(TASK, text).errors))
        # a "[:" that may open a POSIX class still counts, and version 1 nests sets
        deep = "(" * 40 + "a" + ")" * 40
        self.assertGreaterEqual(guard.nesting_bound("[[:a]" + deep + "]"), 40)  # "]" ends the set, not a class
        regex.compile("[[:a]" + deep + "]")
        self.assertGreaterEqual(guard.nesting_bound("(?V1)" + "[[" * 20 + "a" + "]]" * 20), 40)

    def test_a_bracket_colon_inside_a_set_opens_a_class_only_if_colon_bracket_closes_it(self):
        r"""Review of 2026-12-04: a "[:" inside a version-0 set was read as a POSIX class
        that any "]" could close, so after ``[\s"'[:=,]`` the set stayed open in one
        reading and the lookbehind's ")" was a set member: 31 branches of
        ``(?<=[\s"'[:=,])tok_...`` (real depth 2) were refused as nested deeper than 32.
        `regex` closes a class only at ":]"; anything else makes the "[" a literal."""
        pattern = "|".join(rf"""(?<=[\s"'[:=,])tok{i}_[A-Za-z0-9]{{20,}}""" for i in range(31))
        self.assertEqual(guard.nesting_bound(pattern), 3)  # 2, and the class's own level in one reading
        text = reply([*((p, "[REDACTED]") for p in TASK.oracle_rules), (pattern, "[REDACTED]")])
        self.assertNotIn("nest deeper", " ".join(e.message for e in score_completion(TASK, text).errors))
        # a class that ":]" closes still keeps the set open, so what follows counts
        deep = "(" * 40 + "a" + ")" * 40
        for opened in ("[[:alpha:]", "[[:^digit:]", "[x[:word:]"):
            with self.subTest(opened=opened):
                regex.compile(opened + deep + "]")
                self.assertGreaterEqual(guard.nesting_bound(opened + deep + "]"), 40)

    def test_verbose_and_comment_flags_keep_sets_read_as_sets(self):
        """Review of 2026-12-02: a (?x) or (?#...) anywhere sent the bound to a reading that
        took every "(" in a set for a group, so 18 lookbehinds (depth 3) were refused as
        nested deeper than 32; a non-verbose "\\(?0x" was taken for a verbose flag."""
        alternatives = "(?:" + "|".join(rf"(?<=[\s(=:])tok{i}_[A-Za-z0-9]{{20}}" for i in range(18)) + ")"
        verbose = "(?x)" + "".join(rf"(?:[#;(]\s*a{i}\s*[:=]\s*(\S+))  # key a{i}" + "\n|" for i in range(11)) + "z"
        for pattern in ("(?x)" + alternatives, "(?#tokens)" + alternatives, r"(?<=\(?0x)[0-9a-f]{8}|" + alternatives,
                        verbose):
            with self.subTest(pattern=pattern[:40]):
                self.assertGreater(pattern.count("(") + pattern.count("["), guard.MAX_NESTING)
                self.assertLessEqual(guard.nesting_bound(pattern), 4)
                guard.compile_bounded(pattern)
        # a comment that holds openers is followed both ways: as a comment and as text
        deep = "(" * 40 + "a" + ")" * 40
        for prefix in ("(?x)#(((\n", "(?#\\)[)", "(?x:#[\n)"):
            with self.subTest(prefix=prefix):
                self.assertGreaterEqual(guard.nesting_bound(prefix + deep + "]"), 40)
        self.assertEqual(guard.nesting_bound("a#[\n" + deep + "]"), 1)  # no VERBOSE: "#" is text, the rest a set
        regex.compile("a#[\n" + deep + "]")
        # review of 2026-12-02: without a VERSION1 flag a "[" in a set is a literal, never a set left open
        literal = "^" + r"\[[^[\]]*\] " * 33 + "$"
        self.assertEqual(guard.nesting_bound(literal), 1)  # the "[" in each set cannot open a POSIX class
        guard.compile_bounded(literal)
        self.assertGreater(guard.nesting_bound("(?V1)" + literal), guard.MAX_NESTING)

    def test_parentheses_in_comments_of_a_verbose_pattern_do_not_nest(self):
        """Review of 2026-12-03: in a pattern that opens with (?x), a "#" comment's "("
        counted as an open group (the comment was also read as text), so 17 commented
        alternatives whose notes hold an unclosed "(" (real depth 2) were refused as
        nested deeper than 32: a false zero. With (?x) first and no flag turned off
        anywhere, every "#" outside a set starts a comment."""
        pattern = "(?x)\n" + "".join(rf"(?<=[\s=])tok{i}_\w{{20}}  # token {i} (the vendor's prefix; see (3" + "\n|"
                                     for i in range(17)) + "z"
        self.assertGreater(pattern.count("("), guard.MAX_NESTING)
        self.assertEqual(guard.nesting_bound(pattern), 2)
        guard.compile_bounded(pattern)
        text = reply([*((p, "[REDACTED]") for p in TASK.oracle_rules), (pattern, "[REDACTED]")])
        self.assertNotIn("nest deeper", " ".join(e.message for e in score_completion(TASK, text).errors))
        # escaped parentheses and parentheses in sets never counted; a comment that may
        # not be one (no leading (?x), or a flag that may turn VERBOSE off) still counts
        deep = "(" * 40 + "a" + ")" * 40
        for prefix in ("a(?x)#(((\n", "(?x)(?-x:#(((\n", "(?x)(?i #\n -x)#(((\n", "(?x)(?i-x)#(((\n", " (?x)#(((\n"):
            with self.subTest(prefix=prefix):
                self.assertGreaterEqual(guard.nesting_bound(prefix + deep + ")"), 40)
        self.assertEqual(guard.nesting_bound("(?x)" + "\\(" * 20 + "[(]" * 20 + "# ((((\n" * 10 + "a"), 1)
        # (?x) in any of the opening flag groups (review of 2026-12-04: "(?i)(?x)" was read
        # as maybe verbose, so 31 notes with an unclosed "(" were refused)
        notes = "".join(rf"(?<=[\s=])tok{i}_\w{{20}}  # token {i} (e.g. the vendor's" + "\n|" for i in range(31)) + "z"
        for flags in ("(?i)(?x)", "(?x)(?i)", "(?i)(?s)(?x)", "(?ix)"):
            with self.subTest(flags=flags):
                self.assertEqual(guard.nesting_bound(flags + "\n" + notes), 2)
                guard.compile_bounded(flags + "\n" + notes)
        self.assertGreaterEqual(guard.nesting_bound("(?i)a(?x)#(((\n" + deep + ")"), 40)  # not opening groups

    def test_the_combined_size_refusal_states_the_sizes(self):
        rules = [("(?:[A-Za-z0-9_-]{40}){60}", "") for _ in range(24)]
        error = score_completion(TASK, reply(rules)).errors[0]
        self.assertRegex(error.message, r"^rule \d+: refused before compiling: rules 1-\d+ together are [\d,]+ units "
                                        r"of compiled size \(this rule [\d,]+\); the limit for the reply's rules "
                                        r"together is 60,000$")

    def test_a_vendor_alternation_with_exact_lengths_is_accepted(self):
        # review of 2026-12-02: 53 vendor formats with exact body lengths, 1,177
        # characters, were refused by the size bound (22,275 units: a set was charged
        # twice per member; now 14,768)
        from tests.support.random_patterns import VENDOR_PREFIXES, exact_vendor_alternations
        pattern = exact_vendor_alternations(list(VENDOR_PREFIXES))[-1]
        self.assertGreater(len(pattern), 1000)
        text = reply([(pattern, "[REDACTED]"), *((p, "[REDACTED]") for p in TASK.oracle_rules)])
        score = score_completion(TASK, text)
        self.assertEqual(score.errors, ())
        self.assertEqual(score.reward, _reference_reward(TASK, [r["pattern"] for r in json.loads(text)["rules"]]))

    def test_thinking_does_not_count_against_the_answer_limit(self):
        answer = "```json\n" + reply((p, "[REDACTED]") for p in TASK.oracle_rules) + "\n```"
        long_thought = "<think>" + "a careful thought. " * 20_000 + "</think>"
        self.assertGreater(len(long_thought), MAX_REPLY_CHARS)
        self.assertEqual(score_completion(TASK, long_thought + answer).reward, 1.0)
        errors = score_completion(TASK, "<think></think>" + " " * MAX_REPLY_CHARS + answer).errors
        self.assertEqual([e.code for e in errors], ["malformed_json"])
        self.assertIn(f"the limit is {MAX_REPLY_CHARS:,}", errors[0].message)
        errors = score_completion(TASK, "x" * (MAX_RAW_REPLY_CHARS + 1)).errors
        self.assertIn(f"the limit is {MAX_RAW_REPLY_CHARS:,}", errors[0].message)

    def test_a_skipped_final_block_and_a_backspace_are_noted(self):
        from redaction_pressure.scoring.answer import reply_notes
        draft = "```json\n" + reply([("\bghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + "\n```"
        final = '```json\n{"rules": [{"pattern": "x", "replacement": ""},]}\n```'
        notes = reply_notes(draft + "\nFinal answer:\n" + final)
        self.assertEqual(len(notes), 2, notes)
        self.assertIn("later block", notes[0])
        self.assertIn("backspace", notes[1])
        self.assertTrue(notes[1].startswith("rule 1:"))
        self.assertEqual(reply_notes("```json\n" + reply([("\\bx", "")]) + "\n```"), [])
        for escaped in ('"\\u0008x"', '"\\u000cx"', '"a\\\\\\bx"'):  # \u escapes; three backslashes then b
            text = '{"rules": [{"pattern": ' + escaped + ', "replacement": ""}]}'
            with self.subTest(pattern=escaped):
                self.assertEqual(len(reply_notes(text)), 1, text)

    def test_a_skipped_later_object_is_noted_however_it_is_fenced(self):
        """Review of 2026-12-03: a broken final answer after a valid fenced draft got the
        "skipped" note only when it was fenced with backticks; fenced with tildes, not
        fenced, or quoted over several lines ("> " on each line), the draft was read
        without a word. Each form gets the note now, with why the final is not JSON."""
        from redaction_pressure.scoring.answer import reply_notes
        draft = "```json\n" + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + "\n```\n"
        broken = '{\n "rules": [\n  {"pattern": "x", "replacement": ""},\n ]\n}'
        finals = {"backticks": "```json\n" + broken + "\n```", "tildes": "~~~json\n" + broken + "\n~~~",
                  "unfenced": broken, "quoted": "> " + broken.replace("\n", "\n> "),
                  "quoted valid": "> " + broken.replace("},", "}").replace("\n", "\n> ")}
        for draft_form in (draft, draft.removeprefix("```json\n").removesuffix("```\n")):
            for name, final in finals.items():
                text = draft_form + "\nFinal answer:\n" + final
                with self.subTest(final=name, fenced_draft=draft_form is draft):
                    self.assertEqual([r.pattern for r in parse_reply(text)[0]], ["ghp_[A-Za-z0-9]{36}"])
                    (note,) = reply_notes(text)
                    self.assertRegex(note, r"^a later .* was skipped: .* is not valid JSON \(.*; the answer was read "
                                           r"from an earlier one$")
                    if name.startswith("quoted"):
                        self.assertIn('start with ">"', note)
        # nothing later: no note; a later object that is read replaces the fenced answer,
        # and the note says which object was read (review of 2026-12-03, second round)
        self.assertEqual(reply_notes(draft), [])
        later = reply([("y", "")])
        for text in (draft + "Final: " + later, draft + "\n~~~json\n" + later + "\n~~~"):
            self.assertEqual([r.pattern for r in parse_reply(text)[0]], ["y"])
            (note,) = reply_notes(text)
            self.assertRegex(note, r'^the answer was read from the \{"rules": \.\.\.\} object ending on line \d+ '
                                   r"of the reply, written after the ```json block that ends on line 3")

    def test_what_the_prompt_says_of_text_after_the_answer_holds(self):
        """Fourth false-zero hunt (2026-12-04): text after a correct fenced answer voided
        it in two ways the prompt stated only inside a long sentence (an example object
        with a rule, however fenced, is read instead; a </think> in prose leaves nothing
        to read). The prompt now says each where a model looks for it; both still hold."""
        self.assertIn("never write either tag in prose, before or after your answer", SYSTEM_PROMPT)
        self.assertIn('So write your answer last: a {"rules": ...} object with a rule that is not a placeholder, '
                      "written after it (an example in prose, in inline code or in any fence), is read instead of it",
                      SYSTEM_PROMPT)
        answer = "```json\n" + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + "\n```\n"
        example = reply([("sk_live_[0-9a-zA-Z]{24}", "[REDACTED]")])
        placeholder = '{"rules": [{"pattern": "<regex>", "replacement": "[REDACTED]"}]}'
        for name, after in (("prose", "For example, " + example + " removes a key."),
                            ("inline code", "For example `" + example + "`."), ("tildes", "~~~\n" + example + "\n~~~"),
                            ("backticks", "```json\n" + example + "\n```")):
            with self.subTest(after=name):
                self.assertEqual([r.pattern for r in parse_reply(answer + after)[0]], ["sk_live_[0-9a-zA-Z]{24}"])
        self.assertEqual([r.pattern for r in parse_reply(answer + "Each rule is " + placeholder)[0]],
                         ["ghp_[A-Za-z0-9]{36}"])
        rules, errors = parse_reply(answer + "I ended my reasoning with </think> above.")
        self.assertEqual((rules, [e.code for e in errors]), ([], ["malformed_json"]))

    def test_an_empty_object_in_prose_does_not_replace_a_fenced_answer(self):
        """Review of 2026-12-03, second round: prose after a fenced answer that mentions
        ``{"rules": []}`` ("with no secrets the answer would be ...") replaced the answer
        and scored 0, with no note. An object with no rules now replaces only a fenced
        answer with none; the system prompt says so, and a note names the aside."""
        from redaction_pressure.scoring.answer import ANSWER_CHOICE, reply_notes
        self.assertIn("with at least one rule is written after that block", ANSWER_CHOICE)
        self.assertIn('An object with no rules (its "rules" neither a non-empty list nor an object with a "pattern" '
                      'key: {"rules": []}, {"rules": null}, ...; fenced or not) is read only if no other object has '
                      "rules", ANSWER_CHOICE)
        answer = "```json\n" + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + "\n```\n"
        for aside in ('(With no secrets it would be {"rules": []}.)', '{"rules": [ ]}', '~~~\n{"rules": []}\n~~~'):
            text = answer + aside
            with self.subTest(aside=aside):
                self.assertEqual([r.pattern for r in parse_reply(text)[0]], ["ghp_[A-Za-z0-9]{36}"])
                (note,) = reply_notes(text)
                self.assertIn("was passed over: it does not replace an earlier answer that has some", note)
        unfenced = 'Answer: ' + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + '\n(or {"rules": []} with none)'
        self.assertEqual([r.pattern for r in parse_reply(unfenced)[0]], ["ghp_[A-Za-z0-9]{36}"])  # unfenced too
        empty = "```json\n" + reply([]) + "\n```\n"
        self.assertEqual(parse_reply(empty + '{"rules": []}'), ([], []))  # empty after empty: read, still empty

    def test_an_echo_of_the_answer_format_is_skipped(self):
        """Review of 2026-12-03: a model that repeats the prompt's answer-format example
        after its answer had the example read (the last block wins) and scored its
        placeholder rule: a false zero. A candidate equal to `ANSWER_TEMPLATE` (the
        constant the prompt shows) is passed over, with a note, when the reply holds
        another answer; alone, it is read as before."""
        from redaction_pressure.scoring.answer import ANSWER_TEMPLATE, reply_notes
        self.assertIn("\n" + ANSWER_TEMPLATE + "\n", SYSTEM_PROMPT)
        answer = reply((p, "[REDACTED]") for p in TASK.oracle_rules)
        spaced = json.dumps(json.loads(ANSWER_TEMPLATE), indent=2)
        for echo in ("```json\n" + ANSWER_TEMPLATE + "\n```", "The format was " + ANSWER_TEMPLATE + ".",
                     "~~~\n" + spaced + "\n~~~", "```json\n" + spaced + "\n```", "```json " + ANSWER_TEMPLATE + "```"):
            for first in ("```json\n" + answer + "\n```", answer, "Answer: " + answer):
                text = first + "\n\nAs asked, in the format:\n" + echo
                with self.subTest(echo=echo[:30], first=first[:10]):
                    score = score_completion(TASK, text)
                    self.assertEqual((score.errors, score.reward), ((), 1.0))
                    notes = reply_notes(text)
                    self.assertEqual(len(notes), 1, notes)
                    self.assertIn("answer format's example", notes[0])
        # alone, or before the answer, it is an answer like any other
        self.assertEqual([r.pattern for r in parse_reply("```json\n" + ANSWER_TEMPLATE + "\n```")[0]], ["<regex>"])
        self.assertEqual(score_completion(TASK, "```json\n" + ANSWER_TEMPLATE + "\n```\n" + answer).reward, 1.0)
        # Review of 2026-12-03 (second false-zero hunt): restated, not copied ("<pattern>",
        # "...", another replacement), it is passed over too; a real pattern is read.
        placeholders = ("<pattern>", "<your regex here>", "...", "\u2026")
        restatements = [ANSWER_TEMPLATE.replace("<regex>", p) for p in placeholders]
        for restated in [ANSWER_TEMPLATE.replace('"[REDACTED]"', '""'), *restatements]:
            text = answer + "\n```json\n" + restated + "\n```"
            with self.subTest(restated=restated):
                self.assertEqual(parse_reply(text)[0], parse_reply(answer)[0])
                self.assertIn("every pattern is a placeholder", reply_notes(text)[0])
        mixed = '{"rules": [{"pattern": "<regex>", "replacement": ""}, {"pattern": "a", "replacement": ""}]}'
        for real in [*(ANSWER_TEMPLATE.replace("<regex>", p) for p in ("<\\\\w+>", "secret_[0-9]+")), mixed]:
            text = answer + "\n```json\n" + real + "\n```"
            with self.subTest(real=real):
                self.assertNotEqual(parse_reply(text)[0], parse_reply(answer)[0])

    def test_third_false_zero_hunt(self):
        """Third false-zero hunt, 2026-12-03: a format reminder after the answer whose
        placeholder was not ASCII words ("<...>", "<regex, JSON-escaped>", "<regex for
        `api_key`>", "<regex>...") replaced the answer and scored 0 with no error, and a
        later {"rules": null}, {"rules": "<list of rules>"} or a schema
        ({"rules": {"type": "array"}}) replaced it and voided it, though the prompt
        promised that only an object with at least one rule replaces an answer."""
        from redaction_pressure.scoring.answer import ANSWER_TEMPLATE, PLACEHOLDER_EXCLUDED, reply_notes
        answer = "```json\n" + reply((p, "[REDACTED]") for p in TASK.oracle_rules) + "\n```"
        for placeholder in ("<...>", " ... ", "<regex>...", "<regex \u2026>", "<regex #1>",
                            "<regex, JSON-escaped>", "<regex, e.g. AKIA\u2026>", "<your regex (JSON-escaped)>",
                            "<regex for `api_key`>", "<regex: token>", "<re/gex>", "<Regex f\u00fcr Token>",
                            "<regex goes here!>", "<" + "a regex " * 24 + ">"):
            restated = ANSWER_TEMPLATE.replace("<regex>", placeholder.replace("\\", "\\\\"))
            for text in (answer + "\nFormat used: " + restated, answer + "\n```json\n" + restated + "\n```"):
                with self.subTest(placeholder=placeholder, fenced=text.endswith("```")):
                    score = score_completion(TASK, text)
                    self.assertEqual((score.errors, score.reward), ((), 1.0))
                    self.assertIn("every pattern is a placeholder", reply_notes(text)[0])
        # a pattern in angle brackets is a pattern: each excluded character makes one
        for char in PLACEHOLDER_EXCLUDED:
            real = "<a" + char + "b>"
            text = answer + "\n```json\n" + ANSWER_TEMPLATE.replace("<regex>", json.dumps(real)[1:-1]) + "\n```"
            with self.subTest(real=real):
                self.assertNotEqual(score_completion(TASK, text).reward, 1.0)
        for aside in ('If a stream had no secrets, the answer would be {"rules": null}.',
                      'Shape: {"rules": "<list of rule objects>"}', '{"rules": 10}',
                      'Schema:\n```json\n{"rules": {"type": "array", "maxItems": 24}}\n```'):
            text = answer + "\n" + aside
            with self.subTest(aside=aside):
                score = score_completion(TASK, text)
                self.assertEqual((score.errors, score.reward), ((), 1.0))
                self.assertIn("a later object with no rules", reply_notes(text)[0])
            with self.subTest(alone=aside):  # alone it is read, and its shape is named
                self.assertEqual({e.code for e in parse_reply(aside)[1]}, {"bad_entry"})
        # A blockquoted answer over several lines is not JSON, and the prompt says so.
        self.assertIn("A > that starts a line is text: an object quoted over several lines is not JSON", SYSTEM_PROMPT)
        spaced = json.dumps(json.loads(reply((p, "[REDACTED]") for p in TASK.oracle_rules)), indent=2)
        quoted = "\n".join("> " + line for line in ("```json\n" + spaced + "\n```").splitlines())
        self.assertEqual([e.code for e in parse_reply(quoted)[1]], ["malformed_json"])
        # a list of placeholder strings is a placeholder too
        self.assertEqual(score_completion(TASK, answer + '\n{"rules": ["<regex>"]}').reward, 1.0)
        # A later answer with rules, however broken, still replaces the draft and voids the
        # reply (review of the fix: wrong key names, a rule without its list, a list of
        # lists were read as asides and the draft scored, with no error).
        for final in ('{"rules": [{"pattern": 5, "replacement": ""}]}',
                      '{"rules": [{"regex": "a", "replacement": ""}]}',
                      '{"rules": {"pattern": "a", "replacement": ""}}', '{"rules": [["a", ""]]}', '{"rules": [{}]}'):
            with self.subTest(final=final):
                self.assertEqual({e.code for e in parse_reply(answer + "\nFinal: " + final)[1]}, {"bad_entry"})
        # and a pattern spread over two pairs of brackets, or four dots, is a pattern
        for real in ("<pin>....</pin>", "....", "<pin>...</pin>"):
            text = answer + "\n```json\n" + ANSWER_TEMPLATE.replace("<regex>", real) + "\n```"
            with self.subTest(real=real):
                self.assertEqual([r.pattern for r in parse_reply(text)[0]], [real])

    def test_a_placeholder_never_hides_a_broken_answer(self):
        """Second false-zero hunt, 2026-12-03: the format's example in prose and an
        answer that is not JSON scored the example (valid, reward 0: the JSON error was
        an advisory note). A placeholder object is read only when no other candidate is
        there, valid or not; then the broken answer's error is the verdict."""
        from redaction_pressure.scoring.answer import ANSWER_TEMPLATE
        broken = "```json\n" + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")])[:-2] + ",]}\n```"
        for text in ("As " + ANSWER_TEMPLATE + " says:\n" + broken, broken + "\n```json\n" + ANSWER_TEMPLATE + "\n```",
                     "```json\n" + ANSWER_TEMPLATE + "\n```\n" + broken):
            with self.subTest(text=text[:40]):
                rules, errors = parse_reply(text)
                self.assertEqual(rules, [])
                self.assertEqual([e.code for e in errors], ["malformed_json"])
                self.assertIn("trailing comma", errors[0].message)

    def test_an_empty_object_never_replaces_an_answer_with_rules(self):
        """A review of the fix: a fenced {"rules": []} still replaced an answer with
        rules written unfenced, in a ~~~ fence or quoted; the prompt promises it never
        does, wherever each is written."""
        answer = reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")])
        aside = '\nIf nothing were secret:\n```json\n{"rules": []}\n```'
        for first in ("Final answer:\n" + answer, "~~~json\n" + answer + "\n~~~", "```json\n" + answer + "\n```",
                      "```json\n{\"rules\": []}\n```\nNo, this:\n" + answer):
            with self.subTest(first=first[:12]):
                self.assertEqual([r.pattern for r in parse_reply(first + aside)[0]], ["ghp_[A-Za-z0-9]{36}"])
        self.assertEqual(parse_reply('```json\n{"rules": []}\n```' + aside), ([], []))  # none has rules: read

    def test_only_an_answer_hides_a_placeholder(self):
        """A review of the fix: any fenced block that was not JSON (```python, ```text)
        or a prose mention of {"rules": ...} stopped a lone placeholder object from being
        read, and the verdict named that block; a misshapen answer (a list, a wrong key)
        did not, and was hidden by it. Only an answer counts: a ```json (or untagged)
        block opening with { or [, or a {"rules": [ that is not JSON."""
        from redaction_pressure.scoring.answer import ANSWER_TEMPLATE
        example = "\n(format: " + ANSWER_TEMPLATE + ")"
        for other in ("```python\nprint(1)\n```\n", "```text\nrecord AKIA\n```\n", 'In the form {"rules": ...}.\n'):
            with self.subTest(other=other[:10]):
                self.assertEqual(parse_reply(other + ANSWER_TEMPLATE), ([Rule("<regex>", "[REDACTED]")], []))
        for misshapen, message in (('[{"pattern": "a+", "replacement": ""}]', "got a list"),
                                   ('{"rule": [{"pattern": "a+", "replacement": ""}]}', "rules")):
            with self.subTest(misshapen=misshapen):
                rules, errors = parse_reply("```json\n" + misshapen + "\n```" + example)
                self.assertEqual(rules, [])
                self.assertIn(message, errors[0].message)

    def test_no_answer_after_think_says_where_it_looked(self):
        """Second false-zero hunt: an answer written before </think> drew "the reply
        holds no JSON object" or "the reply's text is empty", both false; the message
        names the text after the last </think> and the object before it."""
        answer = "```json\n" + reply([("ghp_[A-Za-z0-9]{36}", "[REDACTED]")]) + "\n```"
        for text, what in (("<think>\n" + answer + "\n</think>\nSee above.", "holds no JSON object"),
                           (answer + "\n</think>", "is empty"), (answer + "\n</think>\n\n", "is empty")):
            with self.subTest(text=text[-20:]):
                message = parse_reply(text)[1][0].message
                self.assertTrue(message.startswith(f"no answer: the text after the last </think> {what}"), message)
                self.assertIn("written before that </think>", message)
        message = parse_reply("<think>hmm</think>\nnothing here")[1][0].message
        self.assertNotIn("written before", message)
        # A review: a thinking of 4,000,000 braces took 0.65 s to look through; only its
        # last 200,000 characters are, after a plain search for "rules".
        start = time.process_time()
        parse_reply("<think>" + "{" * 3_999_000 + "</think>")
        self.assertLess(time.process_time() - start, 0.3)

    def test_schema_errors_come_in_rule_order(self):
        rules = [("a", "x")] * 12
        messages = [e.message for e in score_completion(TASK, reply(rules)).errors]
        self.assertEqual([int(m.split(":")[0].split()[1]) for m in messages], list(range(1, 13)))

    def test_keep_in_a_conditionals_branch_is_accepted_but_not_in_its_condition(self):
        guard.compile_bounded(r"(?(?=AKIA)AKIA\K[A-Z0-9]{16}|ASIA[A-Z0-9]{16})")
        with self.assertRaises(guard.Refused):
            guard.compile_bounded(r"(?(?=AK\KIA)AKIA|ASIA)")


def _reference_reward(task, patterns: list[str]) -> float:
    """The reward of applying ``patterns`` with `regex.sub` in order, tracking removed
    characters by a sentinel-free re-scan: each rule's matches on the current text are
    mapped back to source positions through the kept-character index."""
    from redaction_pressure.scoring.reward import evaluate

    removed = []
    for record in task.heldout:
        text, origin = record.text, list(range(len(record.text)))
        gone = bytearray(len(text))
        for p in patterns:
            out, out_origin, last = [], [], 0
            for m in regex.finditer(p, text):
                out.append(text[last:m.start()])
                out_origin += origin[last:m.start()]
                for k in origin[m.start():m.end()]:
                    if k >= 0:
                        gone[k] = 1
                out.append("[REDACTED]")
                out_origin += [-1] * len("[REDACTED]")
                last = m.end()
            out.append(text[last:])
            out_origin += origin[last:]
            text, origin = "".join(out), out_origin
        removed.append(gone)
    return evaluate(removed, [[(s.start, s.end) for s in r.secrets] for r in task.heldout], False).reward


class CostBoundIsAnUpperBound(unittest.TestCase):
    def test_compile_memory_stays_under_the_bound(self):
        """A sample of the benchmark (benchmarks/bench_pattern_cost.py runs 2,600):
        realistic and random patterns, some near the length limit; what `regex` allocates
        while compiling never exceeds BYTES_PER_UNIT per unit of the bound."""
        patterns = list(FALSE_ZERO_CASES) + random_patterns(60, seed=7, max_chars=MAX_PATTERN_CHARS)
        measured = 0
        for pattern in patterns:
            try:
                tree = guard._parse(pattern)[0]
                bound = guard.PATTERN_BASE_COST + guard._cost(tree, guard.MAX_COMPILED_COST)
            except (guard.Refused, regex.error):
                continue
            if bound > guard.MAX_COMPILED_COST:
                continue
            try:
                regex.compile(pattern, cache_pattern=False)
            except regex.error:
                continue
            tracemalloc.start()
            try:
                regex.compile(pattern, cache_pattern=False)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            measured += 1
            self.assertLessEqual(peak, guard.BYTES_PER_UNIT * bound, pattern[:80])
        self.assertGreater(measured, 40)


if __name__ == "__main__":
    unittest.main()
