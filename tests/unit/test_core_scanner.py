"""The scanner against a slow, obviously-correct reference (property-based)."""

from __future__ import annotations

import random
import time
import unittest

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from redaction_pressure.scoring.pattern_guard import Refused, compile_bounded
from redaction_pressure.scoring.scanner import CompiledRule, scan

ATOMS = ["a", "b+", "a|b", "(?<=a)b", "(?=b)", "", r"\w", "[ab]{2}", "c*", r"\[", "E", "D]",
         "(?<=R)E", r"\s", "-", "b(?=-)", "$", "^a", ".", "a?b?", "ab", "(?i)ab", "(?:ba)", "(?!ab)",
         "(?<=ab)", "(?i:a)b", r"a\Kb", r"\R", "(a)", "(?>ab)", "(?r)ab", "a(?i)b", "RED",
         # literals matched ignoring case (a Kelvin sign or a long s in the text matches
         # k or s), and branches of literals: the literals the scanner skips texts by
         "(?i:red)", "(?i:sk)", "(?<=(?i:ks))a", "(?:ab|cd)", "(?:RE|Da)+", "(?i:ab|k)c", "(?fi)ss"]


def reference(rules, texts):
    """Each character carries its source index (None for inserted text); a rule
    rebuilds the list character by character from the matches of the joined text."""
    out_texts, removed = [], []
    for text in texts:
        chars = [(c, i) for i, c in enumerate(text)]
        for pattern, repl in rules:
            current = "".join(c for c, _ in chars)
            new, prev = [], 0
            for m in sorted(regex.finditer(pattern, current), key=lambda m: m.start()):
                new.extend(chars[prev:m.start()])
                new.extend((c, None) for c in repl)
                prev = m.end()
            new.extend(chars[prev:])
            chars = new
        kept = {i for _, i in chars if i is not None}
        out_texts.append("".join(c for c, _ in chars))
        removed.append(bytearray(0 if i in kept else 1 for i in range(len(text))))
    return out_texts, removed


patterns = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=3).map("".join)
rules = st.lists(st.tuples(patterns, st.sampled_from(["", "[REDACTED]", "R"])), max_size=6)
texts = st.lists(st.text(alphabet="abc-[]RED \nkKsS\u212a\u017f\u00df", max_size=30), min_size=1, max_size=4)


class AgainstReference(unittest.TestCase):
    @settings(max_examples=1500, deadline=None)
    @given(rules, texts)
    def test_same_output_and_same_removed_characters(self, rule_list, text_list):
        compiled = []
        for p, r in rule_list:
            c = compile_bounded(p)  # with the literals it needs: skipped texts must not differ
            compiled.append(CompiledRule(c.pattern, r, c.required, c.folded, c.clauses))
        got = scan(compiled, text_list, time.perf_counter() + 10)
        want_texts, want_removed = reference(rule_list, text_list)
        if got.errors:  # replacements can grow text geometrically; the cap must stop that
            self.assertEqual([e.code for e in got.errors], ["excessive_matches"])
            self.assertGreater(sum(len(t) for t in got.outputs), 1000)
            return
        self.assertEqual(got.outputs, want_texts)
        for i, text in enumerate(text_list):  # and the text is exactly what regex.sub makes
            for p, r in rule_list:
                text = regex.sub(p, r.replace("\\", "\\\\"), text)
            self.assertEqual(got.outputs[i], text)
        self.assertEqual(got.removed, want_removed)

    def test_literals_a_match_needs(self):
        """What the scanner skips texts by (the property test above checks the skips
        change nothing): a key matched ignoring case, a branch of literals."""
        c = compile_bounded(r"(?<=(?<![A-Za-z0-9_-])(?i:db_password)[\"']?\s*[:=]\s*)[0-9a-f]{20}")
        self.assertEqual((c.required, c.folded), ("", "db_password"))
        c = compile_bounded(r"[a-z0-9-]+\.(?:internal|lan|corp)(?![a-z])")
        self.assertEqual((c.required, c.clauses), (".", (("internal", "lan", "corp"),)))
        rule = CompiledRule(c.pattern, "", c.required, c.folded, c.clauses)
        got = scan([rule], ["db.internal", "DB_PASSWORD=x", "a.lan"], time.perf_counter() + 10)
        self.assertEqual(got.outputs, ["", "DB_PASSWORD=x", ""])
        c = compile_bounded(r"(?i:db_password)=(x)")
        rule = CompiledRule(c.pattern, "", c.required, c.folded, c.clauses)
        got = scan([rule], ["DB_PASSWORD=x", "db_pas\u017fword=x", "db_pass=x"], time.perf_counter() + 10)
        self.assertEqual(got.outputs, ["", "", "db_pass=x"])  # the long s matches s ignoring case

    def test_a_skipped_text_never_holds_a_match(self):
        """Review of fc15520: random patterns of the constructs that could make a match
        need a literal in another form than the skips assume, or none at all (scoped and
        global case flags in versions 0 and 1, full folding, ASCII and Unicode, reverse
        mode, lookbehinds, conditionals, branch reset, DEFINE, backreferences, atomic and
        possessive groups, verbs, counted repeats of 0), over texts of ASCII letters and
        characters that fold to them (a Kelvin sign, a long s, a sharp s, a dotted I, ligatures):
        the scanner removes what the pattern's own ``sub`` removes, and a text it skips
        before reading the clock (lacking the required or case-folded literal) has no match
        (2,000 patterns drawn, 1,634 compile; 1,675 of their texts are skipped so; a skip
        that lowercased non-ASCII texts, or read literals under a negative lookaround,
        fails it)."""
        r = random.Random(20261205)
        lits = ["ab", "k", "s", "ss", "st", "ff", "i", "K", "S", "AB", "abc", "x", "db_pw", "fi"]
        folding = ["\u212a", "\u017f", "\u00df", "\u0130", "\u0131", "\ufb00", "\ufb01", "\ufb05", "\u1e9e"]
        atoms = lits + folding + [r"\w", ".", "[a-z]", "[^a]", "[k]", r"\N{LATIN SMALL LETTER SHARP S}", r"\x4b",
                                  r"\u017f", r"\b", r"\G", "^", "$", r"\K", "(?:)", r"\X", r"\p{Lu}"]
        flags = ["", "(?i)", "(?fi)", "(?ai)", "(?ui)", "(?r)", "(?ri)", "(?V1)", "(?V1i)", "(?V1fi)", "(?x)", "(?w)"]

        def node(depth: int) -> str:
            pick = r.randrange(16 if depth < 4 else 4)
            if pick <= 3:
                repeat = r.choice(["*", "+", "?", "{2}", "{0}", "+?", "++"]) if r.random() < .25 else ""
                return r.choice(atoms) + repeat
            inner = [node(depth + 1) for _ in range(r.randint(2, 3))]
            return [  # type: ignore[no-any-return]
                "(?:" + "".join(inner[:2]) + ")" + r.choice(["", "+", "*", "{1}", "{2,}", "?", "{0}", "++"]),
                "(?:" + "|".join(inner) + ")",
                r.choice(["(?=", "(?!", "(?<=", "(?<!"]) + inner[0] + ")",
                "(" + inner[0] + ")",
                "(?(?=" + inner[0] + ")" + inner[1] + "|" + inner[-1] + ")",
                r.choice(["(?i:", "(?-i:", "(?fi:", "(?ai:", "(?r:"]) + inner[0] + ")",
                "(?>" + inner[0] + ")",
                "(?|(" + inner[0] + ")|(" + inner[1] + "))",
                r"\1" if r.random() < .5 else "(?(1)" + inner[0] + "|" + inner[1] + ")",
                r.choice(["(?i)", "(?-i)", "(?f)", "(?r)", "(?a)"]),
                "(?(DEFINE)(?P<d>" + inner[0] + "))",
                r.choice(["(*SKIP)(*F)|", "(*PRUNE)", "(*FAIL)|"]),
            ][pick - 4]

        pieces = lits + folding + [c.upper() for c in lits] + ["-", " ", "_", "\n", "a", "b"]
        compiled = skipped = 0
        for _ in range(2_000):
            pattern = r.choice(flags) + "".join(node(0) for _ in range(r.randint(1, 4)))
            try:
                c = compile_bounded(pattern)
            except (Refused, regex.error, ValueError, OverflowError):
                continue
            compiled += 1
            rule = CompiledRule(c.pattern, "", c.required, c.folded, c.clauses)
            letters = [ch for ch in pattern if ch.isalpha()] or ["a"]
            for _ in range(6):
                text = "".join(r.choice(pieces) if r.random() < .6 else "".join(
                    r.choice(letters) for _ in range(r.randint(1, 4))) for _ in range(r.randint(0, 8)))
                reads = [0]  # the clock is read once a text is not skipped

                def clock(reads: list[int] = reads) -> float:
                    reads[0] += 1
                    return 0.0

                got = scan([rule], [text], time.perf_counter() + 10, clock=clock)
                if not reads[0]:
                    skipped += 1
                    if c.pattern.search(text, timeout=10):
                        self.fail(f"{pattern!r} skipped {text!r}, which holds a match")
                elif got.outputs[0] != c.pattern.sub("", text):
                    self.fail(f"{pattern!r} on {text!r}: {got.outputs[0]!r}")
        self.assertGreater(compiled, 1_000)
        self.assertGreater(skipped, 1_000)

    def test_reverse_patterns(self):
        c = compile_bounded("(?r)aba|b")
        got = scan([CompiledRule(c.pattern, "", c.required)], ["bb"], time.perf_counter() + 10)
        self.assertEqual((got.outputs, got.removed), ([""], [bytearray(b"\x01\x01")]))

    def test_marker_inserted_then_partly_removed(self):
        rules = [CompiledRule(regex.compile("b"), "[REDACTED]"), CompiledRule(regex.compile(r"D\]c"), "")]
        got = scan(rules, ["abc"], time.perf_counter() + 10)
        self.assertEqual(got.outputs, ["a[REDACTE"])
        self.assertEqual(got.removed, [bytearray(b"\x00\x01\x01")])


if __name__ == "__main__":
    unittest.main()
