"""The bounds every reader of outside files applies before a parser recurses
(`boundary.parse_bounds`): never below what the parser really reaches, in linear time
and memory, and refusing the red team's TOML and JSON bombs of 2026-12-03 quickly."""

from __future__ import annotations

import contextlib
import json
import json.decoder
import json.scanner
import random
import resource
import time
import tomllib
import unittest
from unittest import mock

import tomli_w

from redaction_pressure.boundary import parse_bounds
from redaction_pressure.boundary.parse_bounds import (
    MAX_TOML_KEY_PARTS,
    MAX_TOML_NESTING,
    MAX_TOML_RESULT_DEPTH,
    NestedTooDeeply,
    json_nesting,
    loads_json,
    loads_toml,
    toml_shape,
)


def toml_reached(text: str) -> tuple[int, int]:
    """(the most parts of a key, the deepest array or inline-table nesting) that
    tomllib itself reaches on ``text``, up to its first error."""
    parser = tomllib._parser  # type: ignore[attr-defined]
    most, depth, deepest = [1], [0], [0]
    parse_key, parse_array, parse_inline = parser.parse_key, parser.parse_array, parser.parse_inline_table

    def key(*args):  # type: ignore[no-untyped-def]
        pos, k = parse_key(*args)
        most[0] = max(most[0], len(k))
        return pos, k

    def nested(fn):  # type: ignore[no-untyped-def]
        def run(*args):  # type: ignore[no-untyped-def]
            depth[0] += 1
            deepest[0] = max(deepest[0], depth[0])
            try:
                return fn(*args)
            finally:
                depth[0] -= 1
        return run

    with (mock.patch.multiple(parser, parse_key=key, parse_array=nested(parse_array),
                              parse_inline_table=nested(parse_inline)),
          contextlib.suppress(tomllib.TOMLDecodeError, RecursionError)):
        tomllib.loads(text)
    return most[0], deepest[0]


def json_reached(text: str) -> int:
    """How deeply Python's (pure-Python) JSON scanner nests on ``text`` before its
    first error; the C scanner reads the same grammar."""
    depth, deepest = [0], [0]
    decoder = json.JSONDecoder()

    def nested(fn):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            depth[0] += 1
            deepest[0] = max(deepest[0], depth[0])
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
        return run

    decoder.parse_object = nested(json.decoder.JSONObject)
    decoder.parse_array = nested(json.decoder.JSONArray)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    with contextlib.suppress(ValueError, RecursionError):
        decoder.decode(text)
    return deepest[0]


TOML_PIECES = ("a", "b", "1", ".", " ", " = ", "=", '"', "'", '"""', "'''", "\\", '\\"', "\\\\", "[", "]", "[[", "]]",
               "{", "}", ",", "\n", "#", "x = [", "a.b.c = ", '"k".', "'k'.", "x = {", "1.5", "\t")
JSON_PIECES = ("[", "]", "{", "}", '"', '\\"', "\\\\", "\\", ",", ":", "1", "a", " ", "null", '"k": ', "\n")


class NeverBelowTheParser(unittest.TestCase):
    def test_toml_bounds_are_never_low_on_random_texts(self):
        rng = random.Random(11)
        for _ in range(4000):
            text = "".join(rng.choice(TOML_PIECES) for _ in range(rng.randrange(1, 60)))
            parts, depth = toml_shape(text)
            reached = toml_reached(text)
            self.assertGreaterEqual(parts, reached[0], repr(text))
            self.assertGreaterEqual(depth, reached[1], repr(text))

    def test_toml_bounds_are_never_low_on_documents_tomli_w_writes(self):
        rng = random.Random(5)

        def value(depth: int):  # type: ignore[no-untyped-def]
            kind = rng.randrange(5 if depth < 6 else 3)
            if kind == 0:
                return rng.choice(['a."b"', "x\\y\"z", "'''", '"""', "#[{", "1.2.3", "\n]\n"])
            if kind == 1:
                return rng.choice([1, 2.5, True])
            if kind == 2:
                return rng.choice([[], [1, 2]])
            if kind == 3:
                return [value(depth + 1) for _ in range(rng.randrange(1, 3))]
            return {rng.choice(["a", "b.c", "d e", "f\"g"]): value(depth + 1) for _ in range(rng.randrange(1, 3))}

        for _ in range(500):
            doc = {rng.choice(["k", "l.m", "n"]): value(0) for _ in range(rng.randrange(1, 4))}
            for text in (tomli_w.dumps(doc), tomli_w.dumps(doc, multiline_strings=True)):
                parts, depth = toml_shape(text)
                reached = toml_reached(text)
                self.assertGreaterEqual(parts, reached[0], text)
                self.assertGreaterEqual(depth, reached[1], text)
                if parts <= MAX_TOML_KEY_PARTS and depth <= MAX_TOML_NESTING:
                    self.assertEqual(loads_toml(text), tomllib.loads(text))

    def test_json_bound_is_never_low_on_random_texts(self):
        rng = random.Random(3)
        for _ in range(4000):
            text = "".join(rng.choice(JSON_PIECES) for _ in range(rng.randrange(1, 80)))
            self.assertGreaterEqual(json_nesting(text), json_reached(text), repr(text))

    def test_json_bound_is_exact_on_json(self):
        rng = random.Random(9)
        for _ in range(300):
            node: object = rng.choice(["s\\\"]", "[", 1])
            for _ in range(rng.randrange(0, 40)):
                node = rng.choice([[node], {"k\"[": node}, [node, "]]\\"]])
            text = json.dumps(node)
            self.assertEqual(json_nesting(text), json_reached(text), text)


class Bombs(unittest.TestCase):
    def test_the_red_teams_toml_bombs_are_refused_at_once(self):
        """A 48 KB manifest line of 20,000 dotted parts cost 22 s and 1.6 GB in
        `report` (red team, 2026-12-03)."""
        for text in ("a" + ".a" * 20_000 + " = 1\n", '"a"' + '."a"' * 20_000 + " = 1\n",
                     "[" + "a . " * 20_000 + "a]\n", "x = {" + "a." * 20_000 + "a = 1}\n",
                     "x = " + "[" * 500 + "]" * 500 + "\n", "x = " + "{a = " * 500 + "1" + "}" * 500 + "\n"):
            start = time.process_time()
            with self.assertRaises(ValueError) as caught:
                loads_toml(text)
            self.assertLess(time.process_time() - start, 0.5)
            self.assertRegex(str(caught.exception), r"at most (16|8) are read")
        self.assertEqual(toml_shape("a" + ".a" * (MAX_TOML_KEY_PARTS - 1) + " = 1\n")[0], MAX_TOML_KEY_PARTS)
        self.assertEqual(loads_toml('x = "' + "a." * 20_000 + '"\n# ' + "[{." * 100 + "\n"), {"x": "a." * 20_000})

    def test_what_the_bounds_let_through_stays_cheap_and_shallow(self):
        """Review of 2026-12-03: within 64-part bounds, a table header and keys of 63
        parts each on every line cost 72 s for 16 MB (tomllib pays for both); inline
        tables with dotted keys parsed into a dict 1,953 levels deep, which `audit
        validate` then recursed into."""
        header = "[" + ".".join(["h"] * (MAX_TOML_KEY_PARTS - 1)) + "]\n"
        key = ".".join(["a"] * (MAX_TOML_KEY_PARTS - 2))
        worst = header + "".join(f"{key}.k{i} = 1\n" for i in range(40_000))
        plain = "".join(f"k{i} = 1\n" for i in range(len(worst) // 10))
        timings = []
        for text in (worst, plain):
            start = time.process_time()
            loads_toml(text)
            timings.append(time.process_time() - start)
        self.assertLess(timings[0], 4 * timings[1] + 0.5, timings)
        deep = "x = " + ("{" + ".".join(["a"] * (MAX_TOML_KEY_PARTS - 1)) + " = ") * MAX_TOML_NESTING + "1" \
            + "}" * MAX_TOML_NESTING
        parts, nesting = toml_shape(deep)
        self.assertLessEqual(parts, MAX_TOML_KEY_PARTS)
        self.assertLessEqual(nesting, MAX_TOML_NESTING)
        with self.assertRaisesRegex(ValueError, f"at most {MAX_TOML_RESULT_DEPTH} are read"):
            loads_toml(deep)

    def test_json_files_are_refused_past_the_bound_at_any_stack_depth(self):
        from tests.unit.test_verdict_purity import at_depth

        for depth in (0, 900):
            self.assertEqual(at_depth(depth, loads_json, "[" * 64 + "]" * 64), json.loads("[" * 64 + "]" * 64))
            with self.assertRaisesRegex(NestedTooDeeply, "nested too deeply: 5,000 levels; at most 64 are read"):
                at_depth(depth, loads_json, ("[" * 5000 + "]" * 5000).encode("utf-16"))

    def test_scans_are_linear_and_hold_no_state_per_character(self):
        """16 MiB inputs made to defeat each part of the scan (an open string retried
        from every later quote took minutes; a group repeated per character of a 16 MB
        string ran out of memory)."""
        texts = ['"""' + '\\"""' * (4 << 20), '"' + '\\"' * (8 << 20), '"""' + '"a' * (8 << 20),
                 ('"""' + "a" * 10 + '"""') * (1 << 20), "a" + ".a" * (8 << 20), '"' * (16 << 20),
                 "'''" + "a''" * (5 << 20)]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for text in texts:
            start = time.process_time()
            toml_shape(text)
            self.assertLess(time.process_time() - start, 3.0, text[:20])
        for text in ('{"a": "' + "x" * (16 << 20) + '"}', '["' + '\\"' * (8 << 20) + '"]', "[" * (8 << 20)):
            start = time.process_time()
            json_nesting(text)
            self.assertLess(time.process_time() - start, 3.0, text[:20])
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        self.assertLess(grown_mb, 400)

    def test_escapes_become_plain_never_quotes(self):
        self.assertEqual(parse_bounds._escapes_out('"\\""'), '"__"')
        self.assertEqual(parse_bounds._escapes_out('"\\\\"'), '"__"')
        self.assertEqual(parse_bounds._escapes_out('"\\\\\\""'), '"____"')


if __name__ == "__main__":
    unittest.main()
