"""A verdict is a pure function of (reply, task, build): never of the caller's stack
depth, of what the compile cache holds, or of other threads. Red-team replies of every
family the parsers recurse on get the same error code everywhere and never raise."""

from __future__ import annotations

import json
import random
import sys
import threading
import time
import unittest
from unittest import mock

import regex

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.scoring import pattern_guard as guard
from redaction_pressure.scoring import score
from redaction_pressure.scoring.answer import MAX_JSON_DEPTH, json_depth_bound, parse_reply, value_depth_bound
from redaction_pressure.scoring.stack import HEADROOM_FRAMES
from tests.support import tasks as shared
from tests.support.util import reply

TASK = shared.task("dev", 0)
DEPTHS = (0, 300, 600, 900)


def nest_obj(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def _depth(node) -> int:
    """How deeply a decoded JSON value nests arrays and objects."""
    if isinstance(node, (list, dict)):
        return 1 + max(map(_depth, node.values() if isinstance(node, dict) else node), default=0)
    return 0


def nest_list(depth: int, leaf: str = '"a"') -> str:
    return "[" * depth + leaf + "]" * depth


def rule_json(pattern_json: str, replacement_json: str = '""') -> str:
    return '{"rules": [{"pattern": ' + pattern_json + ', "replacement": ' + replacement_json + "}]}"


# JSON nesting in every field, at the cap and past it.
HOSTILE_JSON = {
    "replacement object 980 deep": rule_json('"a"', nest_obj(980)),
    "replacement list 990 deep": rule_json('"a"', nest_list(990)),
    "pattern list 960 deep": rule_json(nest_list(960)),
    "pattern list 20 deep": rule_json(nest_list(20)),
    "pattern list 12 deep": rule_json(nest_list(12)),  # 15 levels in all: still named
    "rule entry 970 deep": '{"rules": [' + nest_list(970, '{"pattern": "a", "replacement": ""}') + "]}",
    "extra key 900 deep": '{"rules": [], "x": ' + nest_obj(900) + "}",
    "top level 995 deep": nest_list(995),
    "unclosed 5000 deep": "[" * 5000,
    "fenced and deep": "```json\n" + rule_json('"a"', nest_obj(600)) + "\n```",
    "deep prose then answer": "[" * 3000 + " " + reply([("AKIA[0-9A-Z]{16}", "")]),
}


def v1_sets(n: int) -> str:
    return "(?V1)" + "[" * n + "a" + "]" * n


# Everything regex's parser recurses on: groups of every kind, sets (V1 nests them),
# lookarounds, conditionals, and texts built to fool a naive counter.
HOSTILE_PATTERNS = {
    "issue red-team: V1 sets under groups": "(?V1)" + "(?:" * 5 + "[" * 136 + "\x01" + "]" * 136 + ")" * 5,
    "V1 sets 33": v1_sets(33),
    "V1 sets 200": v1_sets(200),
    "V1 flag at the end": "[" * 120 + "a" + "]" * 120 + "(?V1)",
    "V1 scoped flag": "(?V1:" + "[" * 100 + "a" + "]" * 100 + ")",
    "V1 literal-first sets": "(?V1)" + "[]" * 120 + "]" * 120,
    "V1 negated literal-first sets": "(?V1)" + "[^]" * 100 + "]" * 100,
    "paren closed inside a set": "(?:[)]" * 60 + ")" * 60,
    "posix class then paren": "([[:alpha:])]" * 34 + ")" * 34,
    "verbose comments hide closers": "(?x)" + "(#)\n" * 90 + ")" * 90,
    "comment groups": "(?#()" * 60 + "(" * 40 + "a" + ")" * 40,
    "lookaheads 40": "(?=" * 40 + "a" + ")" * 40,
    "lookbehinds 40": "(?<=" * 40 + "a" + ")" * 40,
    "mixed lookarounds 60": "(?=(?<!" * 30 + "a" + "))" * 30,
    "conditionals": "(a)" + "(?(1)" * 40 + "b" + ")" * 40,
    "atomic groups 100": "(?>" * 100 + "a" + ")" * 100,
    "scoped flags 100": "(?i:" * 100 + "a" + ")" * 100,
    "named groups 40": "".join(f"(?P<g{i}>" for i in range(40)) + "a" + ")" * 40,
    "groups 170": "(" * 170 + "a" + ")" * 170,
    "groups 33": "(" * 33 + "AKIA" + ")" * 33,
    "unbalanced opens 500": "(" * 500,
    "unbalanced sets 500": "(?V1)" + "[" * 500,
}
ACCEPTED_PATTERNS = {
    "groups 32": "(" * 32 + "AKIA" + ")" * 32,
    "V1 sets 31": v1_sets(31),
    "lookaheads 31": "(?=" * 31 + "AKIA" + ")" * 31,
    "mixed 16 + 16": "(?:" * 16 + "(?V1)" + "[" * 16 + "A" + "]" * 16 + ")" * 16,
}


def at_depth(depth: int, fn, *args):
    """Calls ``fn`` with ``depth`` extra Python frames below the caller."""
    if depth:
        return at_depth(depth - 1, fn, *args)
    return fn(*args)


def parse_depth(pattern: str) -> int:
    """How deeply `regex`'s parser nests on ``pattern``: pattern and set parses open at
    once (a profiler counts them), less the outermost; what `nesting_bound` bounds."""
    names = ("_parse_pattern", "parse_set")
    open_, deepest, stack = [0], [0], []

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_filename.endswith("_regex_core.py") and (
                code.co_name in names or (code.co_name == "parse_set_union"
                                          and frame.f_back.f_code.co_name == "parse_set_item")):
            open_[0] += 1
            deepest[0] = max(deepest[0], open_[0])
            stack.append(frame)
        elif event == "return" and stack and stack[-1] is frame:
            stack.pop()
            open_[0] -= 1

    sys.setprofile(profile)
    try:
        regex.compile(pattern, cache_pattern=False)
    except Exception:  # noqa: BLE001 - a pattern regex refuses nests only as far as it read
        pass
    finally:
        sys.setprofile(None)
    return max(0, deepest[0] - 1)


def codes_of(text) -> list[tuple[str, int | None]]:
    return [(e.code, e.rule) for e in score_completion(TASK, text).errors]


class SameVerdictEverywhere(unittest.TestCase):
    def assert_same_everywhere(self, text) -> list:
        seen = {}
        for cache in ("cold", "warm"):
            for depth in DEPTHS:
                if cache == "cold":
                    guard.clear_cache()
                seen[(cache, depth)] = at_depth(depth, codes_of, text)
        self.assertEqual(len(set(map(tuple, seen.values()))), 1, seen)
        return next(iter(seen.values()))

    def test_hostile_json_nesting(self):
        expected = {"pattern list 12 deep": ["bad_entry"], "deep prose then answer": []}
        for name, text in HOSTILE_JSON.items():
            with self.subTest(name):
                codes = self.assert_same_everywhere(text)
                self.assertEqual([c for c, _ in codes], expected.get(name, ["malformed_json"]))

    def test_hostile_patterns(self):
        for name, pattern in HOSTILE_PATTERNS.items():
            with self.subTest(name):
                self.assertLessEqual(len(pattern), 512)  # so the guard, not the schema, decides
                start = time.perf_counter()
                self.assertEqual(self.assert_same_everywhere(reply([(pattern, "")])), [("invalid_regex", 0)])
                self.assertLess(time.perf_counter() - start, 5.0)

    def test_posix_classes_are_not_nesting(self):
        pattern = "([[:alpha:])]" * 30 + ")" * 30  # 30 real levels: accepted
        self.assertEqual(self.assert_same_everywhere(reply([(pattern, "")])), [])

    def test_accepted_deep_patterns(self):
        for name, pattern in ACCEPTED_PATTERNS.items():
            with self.subTest(name):
                regex.compile(pattern)  # a valid pattern, under the caps
                self.assertEqual(self.assert_same_everywhere(reply([(pattern, "")])), [])

    def test_oracle_scores_one_at_any_depth(self):
        text = policies.oracle(TASK)
        for depth in DEPTHS:
            guard.clear_cache()
            self.assertEqual(at_depth(depth, lambda: score_completion(TASK, text).reward), 1.0)

    def test_json_bound_is_never_low_and_exact_past_the_cap(self):
        for value in ([], {}, [[[]]], {"a": [{"b": "[[[[{{{{"}]}, ["\\\"[", {"x": ["]]]]"]}], nest_list(40)):
            text = value if isinstance(value, str) else json.dumps(value)
            depth, node = 0, json.loads(text)
            stack = [(node, 1)]
            while stack:
                node, d = stack.pop()
                if isinstance(node, (list, dict)):
                    depth = max(depth, d)
                    stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
            bound = json_depth_bound(text)
            self.assertGreaterEqual(bound, depth, text)
            if bound > MAX_JSON_DEPTH:  # where it decides, it is exact on JSON
                self.assertEqual(bound, depth, text)
        deep: list = ['\\"]]][[[{', "x"]
        for _ in range(19):
            deep = [deep, "]]}}\\"]
        self.assertEqual(json_depth_bound(json.dumps(deep)), 20)  # escapes and brackets inside strings
        self.assertEqual(json_depth_bound('{"a": ' + '[' * 20), 21)  # an unfinished text: all it opens
        self.assertEqual(MAX_JSON_DEPTH, 16)

    def test_a_values_bound_stops_where_the_value_closes(self):
        """An unfenced answer is decoded from its opening brace to where it closes: the
        prose after it (notes that leave 17 brackets open) once voided it (review of
        2026-12-03). Up to the close the bound is the whole text's, so never low."""
        rng = random.Random(7)
        junk = "[{]}\"x:, "
        for body in ("[]", '{"rules": []}', '{"a": [{"b": "[[[[{{{{"}]}', '{"x": ["]]]]"]}', nest_list(40),
                     nest_list(16), nest_list(17)):
            depth = _depth(json.loads(body))
            for _ in range(30):
                before = "".join(rng.choice(junk) for _ in range(rng.randrange(20)))
                after = "".join(rng.choice(junk) for _ in range(rng.randrange(60))) + "[" * rng.randrange(40)
                text = before + body + after
                start = len(before)
                bound = value_depth_bound(text, start)
                self.assertGreaterEqual(bound, depth, text)
                # what follows the value never decides: over the cap exactly when the value is
                self.assertEqual(bound > MAX_JSON_DEPTH, depth > MAX_JSON_DEPTH, text)
                self.assertEqual(json.JSONDecoder().raw_decode(text, start), (json.loads(body), start + len(body)))
        self.assertEqual(value_depth_bound('x {"a": ' + "[" * 20, 2), 21)  # an unfinished value: all it opens
        self.assertEqual(value_depth_bound('{"rules": []} ' + "{" * 40, 0), 2)


class StackUse(unittest.TestCase):
    """The fixed stack (`stack.HEADROOM_FRAMES`) must cover what bounded work uses."""

    def frames_used(self, fn, *args) -> int:
        base = len(_frames(sys._getframe()))
        deepest = [0]

        def tracer(frame, event, arg):
            if event == "call":
                deepest[0] = max(deepest[0], len(_frames(frame)))
            return None

        sys.settrace(tracer)
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - only the frames matter here
            pass
        finally:
            sys.settrace(None)
        return deepest[0] - base

    def test_worst_cases_fit_with_a_wide_margin(self):
        worst = {name: p for name, p in ACCEPTED_PATTERNS.items()}
        worst["groups 32, each a branch"] = "(?:a|" * 32 + "b" + ")" * 32
        worst["V1 sets 32 with operators"] = "(?V1)" + "[a--" * 31 + "[ab]" + "]" * 31
        worst["lookbehinds 31"] = "(?<=" * 31 + "a" + ")" * 31
        used = {name: self.frames_used(guard.compile_bounded.__wrapped__, p) for name, p in worst.items()}
        used["deepest JSON"] = self.frames_used(parse_reply.__wrapped__, rule_json(nest_list(MAX_JSON_DEPTH - 2)))
        used["deepest JSON object"] = self.frames_used(
            parse_reply.__wrapped__, rule_json('"a"', nest_obj(MAX_JSON_DEPTH - 3)))
        # 3.11 also counts some C calls against the limit: keep half the headroom spare
        self.assertLess(max(used.values()), HEADROOM_FRAMES // 2, used)

    def test_patterns_that_pass_the_text_bound_fit(self):
        """Random patterns built from the pieces that could fool a text count: whatever
        passes `nesting_bound` needs no more stack than the bound allows."""
        from hypothesis import given, settings
        from hypothesis import strategies as st
        pieces = ["(", "(?:", "(?=", "(?<!", "(?#", "(?x)", "(?x:", "(?-x:", "(?V1)", "(?V1:", "[", "[^", "[]", "[^]",
                  "]", ")",
                  "[)]", "[(]", "[[:alpha:]", ":]", "#", "\n", "\\", "\\(", "\\[", "a", "|", "*", "-", "--", "&&"]
        limit = HEADROOM_FRAMES // 2

        @settings(max_examples=400, deadline=None, derandomize=True)
        @given(st.lists(st.sampled_from(pieces), max_size=200))
        def check(parts):
            pattern = "".join(parts)[:512]
            if guard.nesting_bound(pattern) <= guard.MAX_NESTING:
                self.assertLess(self.frames_used(guard.compile_bounded.__wrapped__, pattern), limit, pattern)

        check()

    def test_the_text_bound_never_undercounts_what_regex_parses(self):
        """Review of 2026-12-02: a POSIX class ending a version-0 set early, or a "]" after
        a version-1 set operator (a literal there), let a "(?#" inside the set swallow
        real groups: bound 2 for 40 levels, a RecursionError deep in a caller's stack.
        The deepest nesting `regex`'s parser reaches (parse levels and sets open at once,
        counted by a profiler) is never above the bound, on those patterns and on random
        ones built from every piece that could fool a text count."""
        from hypothesis import given, settings
        from hypothesis import strategies as st
        deep = "(" * 40 + "a" + ")" * 40
        for pattern in ("[[:alpha:](?#[]" + deep, "(?V1)[a--](?#]" + deep, "(?V1)[a&&](?#]" + deep,
                        "(?V1)" + ("(" * 30 + "[a--]" + ")" * 30 + "]") * 10 + "a" + ")" * 300,
                        "(?x)#[\n" + deep + "]", "(?x:#[\n)" + deep):
            with self.subTest(pattern=pattern[:30]):
                self.assertGreaterEqual(guard.nesting_bound(pattern), parse_depth(pattern))
        pieces = ["(", "(?:", "(?#", "(?x)", "(?x:", "(?-x:", "(?V1)", "[", "[^", "[]", "]", ")", "[:alpha:]",
                  "[[:alpha:]", "--", "&&", "||", "~~", "#", "\n", "\\", "\\(", "\\]", "a", "|", "-", "^"]

        @settings(max_examples=400, deadline=None, derandomize=True)
        @given(st.lists(st.sampled_from(pieces), max_size=60))
        def check(parts):
            pattern = "".join(parts)
            self.assertGreaterEqual(guard.nesting_bound(pattern), parse_depth(pattern), pattern)

        check()

    def test_the_verbose_reading_never_undercounts(self):
        """A pattern that opens with (?x) reads every "#" outside a set as a comment only
        (review of 2026-12-03); random patterns with that prefix, and flags that may turn
        VERBOSE off spaced out or interrupted by comments, stay bounded."""
        from hypothesis import given, settings
        from hypothesis import strategies as st
        pieces = ["(", "(?:", "(?#", "(?x:", "(?-x:", "(?i-x)", "(?i #c\n-x)", "(? -x:", "(?V1)", "[", "[^", "]",
                  ")", "[[:alpha:]", "#", "\n", " ", "\\", "\\(", "\\#", "a", "|", "-", "&&",
                  # every character regex skips as white space under VERBOSE, \s or not
                  "(?\x1f-x)", "(?i\x1c-x:", "\x1e", "\x1d", "\x85", "\u2028", "\u3000", "\r"]

        @settings(max_examples=400, deadline=None, derandomize=True)
        @given(st.sampled_from(["(?x)", "(?ix)", "(?xV1)", "(?x-i)"]), st.lists(st.sampled_from(pieces), max_size=60))
        def check(prefix, parts):
            pattern = prefix + "".join(parts)
            self.assertGreaterEqual(guard.nesting_bound(pattern), parse_depth(pattern), pattern)

        check()
        # The review's reproduction: "\x1f" is white space to regex under VERBOSE, not to \s.
        for off in ("(?\x1f-x)", "(?i\x1c-x)", "(?\x1e-x:"):
            pattern = "(?x)" + off + "#" + "(" * 60 + "a" + ")" * 60
            self.assertGreaterEqual(guard.nesting_bound(pattern), parse_depth(pattern), repr(pattern))
        self.assertEqual([c for c in map(chr, range(0x110000)) if c.isspace() and not regex.match(r"\s", c)],
                         ["\x1c", "\x1d", "\x1e", "\x1f"])

    def test_the_text_bound_costs_linear_time(self):
        """Review of 2026-12-02: every "#" under VERBOSE doubled the readings followed, so
        seven 4,096-character patterns took 20 s and failed the rollout instead of
        scoring 0. Readings that multiply past a few fall back to the opener count."""
        import time
        # "a" first: VERBOSE is only maybe on, so both readings of each "#" are followed
        # (a pattern that opens with (?x) has one reading, timed here too)
        pattern = "a(?xV1)" + "#[\n" * 1363
        for text in (pattern, "a(?x)" + "#[\n" * 1364, "(?xV1)" + "#[\n" * 1363,
                     "(?V1)" + "[" * 12 + "a--]" * 11 + "[a]" * 1300):
            start = time.process_time()
            guard.nesting_bound(text)
            self.assertLess(time.process_time() - start, 0.5)
        self.assertGreater(guard.nesting_bound(pattern), guard.MAX_NESTING)
        error = score_completion(TASK, reply([(pattern, "")] * 7)).errors[0]
        self.assertIn("nest deeper than 32 levels", error.message)

    def test_deep_callers_get_a_fresh_stack(self):
        names = []

        def record(_):
            names.append(threading.current_thread().name)
            return 1

        from redaction_pressure.scoring.stack import with_headroom
        wrapped = with_headroom(record)
        at_depth(0, wrapped, None)
        at_depth(sys.getrecursionlimit() - HEADROOM_FRAMES, wrapped, None)
        self.assertEqual(names[0], threading.current_thread().name)
        self.assertEqual(names[1], "redaction-pressure-fresh-stack")
        with self.assertRaises(ZeroDivisionError):  # exceptions come back unchanged
            at_depth(sys.getrecursionlimit() - HEADROOM_FRAMES, with_headroom(lambda: 1 / 0))


def _frames(frame) -> list:
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


class TrustedScoring(unittest.TestCase):
    def test_the_verdict_is_the_scan_workers(self):
        """`score_trusted` (export's in-process scan) gives `score_completion`'s verdict,
        tallies and errors, for good replies and broken ones alike."""
        for level in (1, 3, 5):
            task = shared.task("dev", 4, level)
            replies = [policies.oracle(task), policies.induce(task), policies.baseline(task), "no json here",
                       reply([("(", "")]), reply([("[A-Za-z0-9]{3,}", "[REDACTED]")]),
                       reply([(r"\w", "[REDACTED]")] * 3)]
            with mock.patch.object(guard, "_share_trusted", True):
                for text in replies:
                    want, got = score_completion(task, text), score.score_trusted(task, text)
                    self.assertEqual((got.outcome, got.errors, got.matches, got.secret_families, got.decoy_families,
                                      got.secret_classes, got.decoy_classes),
                                     (want.outcome, want.errors, want.matches, want.secret_families,
                                      want.decoy_families, want.secret_classes, want.decoy_classes), (level, text[:80]))


class CompileCache(unittest.TestCase):
    def setUp(self):
        guard.clear_cache()

    def tearDown(self):
        guard.clear_cache()

    def test_a_hit_is_what_a_fresh_compile_gives(self):
        patterns = [p for t in (TASK, shared.task("dev", 1)) for p in _patterns(policies.baseline(t))]
        patterns += [*list(ACCEPTED_PATTERNS.values()), r"(?i)secret", r"(?r)\d+", r"(?<=x)\K\w"]
        for p in patterns:
            fresh = guard.compile_bounded(p)
            first, hit = guard.compile_cached(p), guard.compile_cached(p)
            self.assertIs(first, hit)
            for c in (first, at_depth(900, guard.compile_bounded, p)):
                self.assertEqual((c.pattern.pattern, c.pattern.flags, c.pattern.groupindex, c.cost, c.required),
                                 (fresh.pattern.pattern, fresh.pattern.flags, fresh.pattern.groupindex,
                                  fresh.cost, fresh.required))

    def test_the_budget_does_not_depend_on_what_was_compiled_before(self):
        """Compiling is not charged to the time budget: cold, the heavy patterns below
        take tens of milliseconds to compile, warm almost nothing, and with a budget
        between the two the verdict was budget_exhausted cold and valid warm (review of
        2026-12-02). Matching them costs a few milliseconds of the budget either way."""
        from redaction_pressure.scoring.score import scan_rules
        from tests.support.random_patterns import VENDOR_PREFIXES, exact_vendor_alternations

        heavy = exact_vendor_alternations(list(VENDOR_PREFIXES))[-3:]
        rules = [(p, "[REDACTED]") for p in heavy]
        texts = [r.text for r in TASK.heldout]
        start = time.process_time()
        for p in heavy:
            guard.compile_bounded(p)
        compile_s = time.process_time() - start
        budget = compile_s / 2
        verdicts = []
        for _ in range(2):  # cold, then warm
            removed, matches, errors = scan_rules(texts, rules, budget)
            verdicts.append(([e.code for e in errors], matches, [bytes(r) for r in removed]))
        self.assertEqual(verdicts[0], verdicts[1])
        self.assertEqual(verdicts[0][0], [])

    def test_a_shared_trusted_compile_is_what_a_fresh_compile_gives(self):
        """`export` compiles a stream's oracle once, for the build's check and the scan
        (`share_trusted_compiles`): what the build leaves in the cache must be exactly
        what a reply's own compile gives, and a pattern over a reply's bound stays out."""
        tasks = [load_task("dev", 2, level=level) for level in (1, 5)]  # built here: the build is checked
        patterns = sorted({p for t in tasks for p in (*t.oracle_rules, *_patterns(policies.induce(t)))})
        clauses = {p: guard.compile_trusted(p)[1] for p in patterns}
        self.assertEqual(guard.cache_stats(), (0, 0), "off by default: a build leaves the cache alone")
        with mock.patch.object(guard, "_share_trusted", True):
            for p in patterns:
                self.assertEqual(guard.compile_trusted(p)[1], clauses[p])
            with mock.patch.object(guard, "compile_bounded", side_effect=AssertionError("a miss")):
                hits = {p: guard.compile_cached(p) for p in patterns}
            for p in patterns:
                fresh = guard.compile_bounded(p)
                c = hits[p]
                self.assertEqual((c.pattern.pattern, c.pattern.flags, c.pattern.groupindex, c.cost, c.required),
                                 (fresh.pattern.pattern, fresh.pattern.flags, fresh.pattern.groupindex,
                                  fresh.cost, fresh.required))
            entries = guard.cache_stats()[0]
            big = f"x{{{guard.MAX_COMPILED_COST + 10}}}"
            self.assertEqual(guard.compile_trusted(big)[0].pattern, big)
            self.assertEqual(guard.cache_stats()[0], entries, "over a reply's bound: compiled, not cached")

    def test_failures_are_never_cached(self):
        for p in ("(", HOSTILE_PATTERNS["V1 sets 200"], "(?R)", "a{100000}"):
            with self.assertRaises((guard.Refused, regex.error)):
                guard.compile_cached(p)
        self.assertEqual(guard.cache_stats(), (0, 0))

    def test_true_lru_bounded_by_entries_and_cost(self):
        with mock.patch.object(guard, "_CACHE_ENTRIES", 3):
            _a, b, c, _d = (guard.compile_cached(f"tok{i}=\\d+") for i in range(4))  # a evicted
            self.assertEqual(guard.cache_stats()[0], 3)
            guard.compile_cached("tok1=\\d+")  # b becomes most recent
            guard.compile_cached("tok9=\\d+")  # evicts c, the least recently used
            self.assertIs(guard.compile_cached("tok1=\\d+"), b)
            self.assertIsNot(guard.compile_cached("tok2=\\d+"), c)
        guard.clear_cache()
        with mock.patch.object(guard, "_CACHE_COST_LIMIT", 25_000):
            for i in range(10):
                guard.compile_cached(f"x{{{10_000 + i}}}")
                self.assertLessEqual(guard.cache_stats()[1], 25_000)
            self.assertEqual(guard.cache_stats()[0], 2)

    def test_threads_never_see_a_false_zero(self):
        """8 threads, frequent switching, a cache small enough to evict all the time:
        every fresh valid reply (the oracle's rules plus one unique rule that never
        matches) must score exactly what it scores alone, 1.0."""
        oracle = _patterns(policies.oracle(TASK))
        per_thread, n_threads = 160, 8
        failures: list = []

        def work(t: int) -> None:
            for i in range(per_thread):
                text = reply([(p, "") for p in oracle] + [(f"ZQXJ{t}_{i}_never", "")])
                s = score_completion(TASK, text)
                if s.reward != 1.0:
                    failures.append((t, i, [(e.code, e.message) for e in s.errors]))

        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            with mock.patch.object(guard, "_CACHE_ENTRIES", 8):
                threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
        finally:
            sys.setswitchinterval(old)
        self.assertEqual(failures, [])
        self.assertLessEqual(guard.cache_stats()[0], 8)


def _patterns(text: str) -> list[str]:
    rules, errors = parse_reply(text)
    assert not errors
    return [r.pattern for r in rules]


class SingleParseCompile(unittest.TestCase):
    """`pattern_guard._build` compiles the checked tree instead of parsing again; it
    must hand `regex`'s C compiler exactly what ``regex.compile`` hands it, ``regex``
    parsing with its own (enum) flag constants and the guard with them as plain ints."""

    def compiler_args(self, fn, pattern):
        seen = []
        real = regex._regex.compile

        def spy(*args):
            seen.append(args)
            return real(*args)

        with mock.patch.object(regex._regex, "compile", spy):
            try:
                fn(pattern)
            except (regex.error, guard.Refused, ValueError) as exc:
                return type(exc).__name__
        return seen

    def assert_same(self, pattern):
        ours = self.compiler_args(lambda p: guard.compile_bounded(p), pattern)
        if isinstance(ours, str) and ours == "Refused":
            return
        guard._use_flag_constants(plain=False)
        try:
            theirs = self.compiler_args(lambda p: regex.compile(p, cache_pattern=False), pattern)
        finally:
            guard._use_flag_constants(plain=True)
        self.assertEqual(ours, theirs, pattern)

    def test_same_compiler_input_as_regex_compile(self):
        self.assertTrue(guard._SINGLE_PARSE, "regex version not verified: _build is bypassed")
        patterns = [p for i in range(0, 64, 3) for t in (shared.task("dev", i),)
                    for pol in (policies.oracle, policies.baseline) for p in _patterns(pol(t))]
        patterns += [r"(?i)ab(c)\1", r"(?r)\d+x", r"(?<name>a)(?P=name)", r"(?(1)a|b)", r"(a)?(?(1)b|c)",
                     r"(?V1)[[a-z]--[aeiou]]", r"(?fi)straße", r"(?x) a # c", r"(?s).+", r"(?m)^x$",
                     r"(?w)\bword\b", r"\R", r"\X", r"(?a)\w+", r"(?u)\w+", r"(?=a)\K\w", r"a++b*+",
                     r"(?>a|ab)c", r"\p{Lu}\P{Nd}", r"[[:alpha:]]+", "(?V1)(?i)ǅ", r"(?|(a)|(b))", "(", "a{2,1}",
                     r"(?b)x", r"(?e)x", r"(?V0)(?V1)x", r"(?L)x"]
        for p in patterns:
            with self.subTest(pattern=p):
                self.assert_same(p)

    def test_flag_constants_are_plain_ints_for_the_verified_version(self):
        self.assertIs(type(regex._regex_core.IGNORECASE), int)
        self.assertIs(type(regex._regex_core.CASE_FLAGS_COMBINATIONS[0]), int)
        self.assertEqual(regex._regex_core.FULLIGNORECASE, int(regex.RegexFlag.F | regex.RegexFlag.I))

    def test_realistic_and_random_patterns_compile_alike(self):
        """The catalogue's oracles, the built-in policies' rules and 200 random
        patterns of the cost benchmark's grammar (flags, case folding, lookarounds,
        conditionals)."""
        from tests.support.random_patterns import random_patterns, realistic_patterns
        for p in realistic_patterns() + random_patterns(200, seed=11):
            with self.subTest(pattern=p[:80]):
                self.assert_same(p)

    def test_parser_state_left_by_others_does_not_matter(self):
        core = regex._regex_core
        saved = core.DEFAULT_VERSION
        try:
            core.DEFAULT_VERSION = core.VERSION1  # as if someone parsed with V1 before us
            compiled = guard.compile_bounded("[[a]]")
        finally:
            core.DEFAULT_VERSION = saved
        self.assertEqual(compiled.pattern.flags, regex.compile("[[a]]").flags)
        self.assertEqual(compiled.pattern.findall("a] [] [[a]]"), ["a]", "[]", "a]"])

    def test_random_patterns(self):
        from hypothesis import given, settings
        from hypothesis import strategies as st
        atoms = st.sampled_from(["a", "b", "ß", "\\d", "\\w", ".", "[a-c]", "[^x]", "(?i)", "(?V1)", "(?r)", "^",
                                 "$", "\\b", "(?=a)", "(?<!b)", "(", ")", "(?:", "(?P<n>", "|", "*", "+?", "{2}",
                                 "{1,3}", "?", "\\1", "(?(1)a|b)", "(?x) ", "\\K"])

        @settings(max_examples=300, deadline=None, derandomize=True)
        @given(st.lists(atoms, max_size=12))
        def check(parts):
            self.assert_same("".join(parts))

        check()


def _reference_cost(node, budget, in_lookaround=False):
    """The guard's cost bound written plainly (generic child discovery, IntFlag
    arithmetic): the fast one must agree with it."""
    core = regex._regex_core
    if isinstance(node, (core.CallGroup, core.CallRef, core.Fuzzy)):
        raise guard.Refused("refused")
    if isinstance(node, core.Keep) and in_lookaround:
        raise guard.Refused("refused")
    if isinstance(node, core.LookAroundConditional):  # only the condition looks around
        total = 1 + _reference_cost(node.subpattern, budget - 1, True)
        for branch in (node.yes_item, node.no_item):
            if total <= budget:
                total += _reference_cost(branch, budget - total, in_lookaround)
        return total
    in_lookaround = in_lookaround or isinstance(node, core.LookAround)
    if isinstance(node, core.GreedyRepeat):
        # regex builds the minimum count unrolled, then one looping copy if more may follow
        more = node.max_count is None or node.max_count > node.min_count
        factor = max(1, node.min_count + (1 if more else 0))
        if factor > budget:
            return budget + 1
        return 1 + factor * _reference_cost(node.subpattern, budget // factor + 1, in_lookaround)
    # A set costs one unit plus its members (its children); under full case folding
    # each member becomes a branch of strings, FULL_FOLD_FACTOR units.
    own = len(node.characters) if isinstance(node, core.String) else guard.GRAPHEME_COST if isinstance(
        node, core.Grapheme) else 1
    if getattr(node, "case_flags", 0) & core.FULLIGNORECASE == core.FULLIGNORECASE:
        own = (len(node.items) if isinstance(node, core.SetBase) else own) * guard.FULL_FOLD_FACTOR
    total = own
    children = []
    for value in vars(node).values():
        if isinstance(value, core.RegexBase):
            children.append(value)
        elif isinstance(value, (list, tuple)):
            children.extend(v for v in value if isinstance(v, core.RegexBase))
    for child in children:
        total += _reference_cost(child, budget - total, in_lookaround)
        if total > budget:
            return total
    return total


class CostBound(unittest.TestCase):
    def test_fast_cost_equals_the_reference(self):
        patterns = [p for i in range(0, 64, 4) for p in _patterns(policies.baseline(shared.task("dev", i)))]
        patterns += [r"(?fi)[\x00-\U0010ffff]{190}", r"(?iV1)[a-z]{3}(?-i:x)", "(?:a{10}|[bc]{20}){30}",
                     "(?=a{5}\\w{3})x", "(a)(?(1)b{4}|c{9})", "(?V1)[[a-z]--[q]]{7}"]
        patterns += ["".join(c) for c in ("(?:x{40}){40}", "[ab]{100}", "(?fi)ss{12}")]
        for p in patterns:
            with self.subTest(pattern=p):
                tree = guard._parse(p)[0]
                for budget in (20_000, 500, 40):
                    self.assertEqual(guard._cost(tree, budget), _reference_cost(tree, budget))


class Containment(unittest.TestCase):
    def test_unexpected_failures_are_recorded_not_raised(self):
        text = policies.oracle(TASK)
        with mock.patch.object(score, "parse_reply", side_effect=RecursionError("deep")):
            s = score_completion(TASK, text)
        self.assertEqual([e.code for e in s.errors], ["malformed_json"])
        # Compiling and scanning run in a scan worker; its entry point contains failures
        # the same way, so the worker survives and the verdict is the reply's.
        texts = [r.text for r in TASK.heldout]
        rules = [(r.pattern, r.replacement) for r in parse_reply(text)[0]]
        with mock.patch.object(score, "scan", side_effect=MemoryError()):
            removed, matches, errors = score.scan_rules(texts, rules, 2.0)
        self.assertEqual([e.code for e in errors], ["invalid_regex"])
        self.assertIn("MemoryError", errors[0].message)
        self.assertEqual((sum(map(sum, removed)), matches), (0, 0))
        with mock.patch.object(score, "compile_cached", side_effect=KeyError("evicted")):
            errors = score.scan_rules(texts, rules, 2.0)[2]
        self.assertEqual({e.code for e in errors}, {"invalid_regex"})

    def test_a_callers_bad_budget_still_raises(self):
        with self.assertRaises(ValueError):
            score_completion(TASK, "", budget_s="soon")


if __name__ == "__main__":
    unittest.main()


class HostileEvalRun(unittest.TestCase):
    """Through verifiers' Task.score, as `redaction-pressure eval` runs it: replies of
    every red-team family are scored, every trace is written, and the sealed archive
    verifies (rescoring reproduces every verdict)."""

    def test_run_completes_and_its_archive_verifies(self):
        from audit._verify import verify_archive
        from redaction_pressure.run import read_traces
        from tests.support import audit_fixtures as fx

        hostile = [HOSTILE_JSON["replacement object 980 deep"], HOSTILE_JSON["pattern list 960 deep"],
                   reply([(HOSTILE_PATTERNS["issue red-team: V1 sets under groups"], "")]),
                   reply([(HOSTILE_PATTERNS["verbose comments hide closers"], "")]),
                   reply([(HOSTILE_PATTERNS["mixed lookarounds 60"], "")])]

        def policy(task):
            k = task.index
            if k < len(hostile):
                return hostile[k]
            return ("<think>" if k == len(hostile) else "") + policies.oracle(task)

        run_dir = fx._run("dev", policy, len(hostile) + 2, tag="-hostile")
        traces = read_traces(run_dir / "traces.jsonl")
        self.assertEqual(len(traces), len(hostile) + 2)
        codes = [[e["code"] for e in t["info"]["redaction_errors"]] for t in traces]
        self.assertEqual(codes, [["malformed_json"]] * 2 + [["invalid_regex"]] * 3 + [["malformed_json"], []])
        report = verify_archive(fx.seal_run(run_dir), fx.public_key(), None)
        self.assertEqual(report.exit_code, 0, json.dumps(report.as_dict(), indent=1)[:3000])
