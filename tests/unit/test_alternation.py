"""Several rules joined into one (`scoring.alternation`) and `induce` staying within
the rule limit by joining only what its shown records prove equivalent."""

from __future__ import annotations

import unittest

import regex

from redaction_pressure.policies.induce import _before, _within_limit
from redaction_pressure.scoring.alternation import alternate
from redaction_pressure.scoring.answer import MAX_RULES


class Alternate(unittest.TestCase):
    def test_each_part_keeps_its_own_back_references(self):
        joined = regex.compile(alternate([r"(a)\1", r"(b)\1", r"x(c)(d)\2\1"]))
        self.assertEqual([m.group() for m in joined.finditer("aa ab bb ba xcddc xcdcd")], ["aa", "bb", "xcddc"])
        # Unrenumbered, the second part's \\1 would name the first part's group.
        self.assertEqual(regex.findall(r"(?:(a)\1|(b)\1)", "bb"), [])

    def test_an_escaped_backslash_is_not_a_reference(self):
        joined = alternate([r"(q)\1", r"z\\1"])
        self.assertEqual(joined, r"(?:(q)\1|z\\1)")
        self.assertIsNotNone(regex.fullmatch(joined, "z\\1"))

    def test_a_leading_flag_applies_to_its_part_only(self):
        joined = regex.compile(alternate([r"(?i)abc", "def"]))
        self.assertEqual(joined.findall("ABC DEF def"), ["ABC", "def"])
        multiline = regex.compile(alternate(["x", r"(?m)^y"]))
        self.assertEqual(multiline.findall("x\ny y"), ["x", "y"])


    def test_a_three_digit_octal_escape_is_not_a_reference(self):
        joined = alternate([r"(a)", r"\101(b)\1"])
        self.assertEqual(joined, r"(?:(a)|\101(b)\2)")
        self.assertEqual([m.group() for m in regex.finditer(joined, "a Abb AbA")], ["a", "Abb"])

    def test_parts_whose_meaning_joining_would_change_are_refused(self):
        for part in (r"x(?i)y", r"(?x) a b  # comment", r"(?P<n>a)(?P=n)", r"(?<n>a)", r"(b)\g<1>",
                     r"(b)?(?(1)c|d)"):
            with self.subTest(part=part), self.assertRaises(ValueError):
                alternate(["(a)\\1", part])
        # Lookbehinds and a leading flag group are fine.
        self.assertEqual(alternate([r"(?<=k=)v", r"(?<!x)w", r"(?m)^y"]), r"(?:(?<=k=)v|(?<!x)w|(?m:^y))")


class InduceWithinTheLimit(unittest.TestCase):
    def test_an_exclusion_goes_after_a_leading_flag_group(self):
        self.assertEqual(_before("(?!zz)", r"(?m)(?<=^k=)\w+"), r"(?m)(?!zz)(?<=^k=)\w+")
        self.assertEqual(_before("(?!zz)", r"(?<=k=)\w+"), r"(?!zz)(?<=k=)\w+")

    def test_rules_over_the_limit_join_into_equivalent_alternations(self):
        names = [f"k{i:02d}" for i in range(MAX_RULES + 4)]
        text = "".join(f"{n}=v{n}\n" for n in names)
        rules = [rf"(?<={n}=)v{n}" for n in names]
        fitted = _within_limit(list(rules), [(text, [])])
        self.assertEqual(len(fitted), MAX_RULES)
        spans = lambda rs: sorted(m.span() for r in rs for m in regex.finditer(r, text))  # noqa: E731
        self.assertEqual(spans(fitted), spans(rules))

    def test_rules_that_differ_joined_are_left_apart(self):
        # Two rules that take overlapping text: as an alternation the first hides the
        # second's match, so they are never joined; what cannot be fitted is dropped.
        text = "abcd\n" * 3
        rules = ["abc", "abcd"] * ((MAX_RULES + 2) // 2)
        fitted = _within_limit(list(rules), [(text, [])])
        self.assertEqual(len(fitted), MAX_RULES)
        self.assertNotIn("(?:abc|abcd)", fitted)


if __name__ == "__main__":
    unittest.main()
