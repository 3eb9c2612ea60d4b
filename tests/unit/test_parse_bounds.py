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
from redaction_pressure.boundary.files import MAX_MANIFEST_BYTES, MAX_TRACES_BYTES
from redaction_pressure.boundary.parse_bounds import (
    MAX_TOML_ITEMS,
    MAX_TOML_KEY_PARTS,
    MAX_TOML_NESTING,
    MAX_TOML_RESULT_DEPTH,
    MAX_TOML_TABLES,
    NestedTooDeeply,
    json_nesting,
    loads_json,
    loads_toml,
    toml_shape,
    toml_size,
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


def toml_made(text: str) -> tuple[int, int, int]:
    """(tables, every part of every key and header, tables, arrays and values) that
    tomllib makes of ``text``, which it parses."""
    parser = tomllib._parser  # type: ignore[attr-defined]
    parts, parse_key = [0], parser.parse_key

    def key(*args):  # type: ignore[no-untyped-def]
        pos, k = parse_key(*args)
        parts[0] += len(k)
        return pos, k

    with mock.patch.object(parser, "parse_key", key):
        stack: list[object] = [tomllib.loads(text)]
    tables = made = 0
    while stack:
        node = stack.pop()
        made += 1
        if isinstance(node, (dict, list)):
            tables += isinstance(node, dict)
            stack.extend(node.values() if isinstance(node, dict) else node)
    return tables - 1, parts[0], made - 1  # the document itself is no table of its own


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


HONEST_MOST_TRACES = MAX_TRACES_BYTES // 18_000


def lines_of(line: str, size: int, times: float = 1.0) -> str:
    """``line`` formatted with 0, 1, 2, ... up to ``size`` characters, and ``times`` as
    many lines as `toml_size` lets through."""
    tables, items = toml_size(line.format(0xfffff))
    most = int(times * min(MAX_TOML_TABLES // tables if tables else size, MAX_TOML_ITEMS // items))
    out, n = [], 0
    for i in range(most):
        piece = line.format(i)
        n += len(piece)
        if n > size:
            break
        out.append(piece)
    return "".join(out)


def largest_honest_manifest() -> bytes:
    """A manifest as `audit seal` writes it of HONEST_MOST_TRACES traces, each of its own
    private task (the longest task ids and coverage lists), over five levels: the dev
    fixture's sealed manifest (every other test's too: a private run costs 8 s to score)
    with those traces, tasks and levels."""
    import copy
    import hashlib

    from audit._manifest import dumps
    from tests.support import audit_fixtures as fx

    manifest = fx.manifest_of(fx.seal_run(fx.dev_run()))
    indices = list(range(1_000_000 - HONEST_MOST_TRACES, 1_000_000))
    manifest["traces"] = [{"line": i + 1, "position": 0, "task_id": f"private_eval-{t:06d}",
                           "sha256": hashlib.sha256(b"%d" % i).hexdigest()} for i, t in enumerate(indices)]
    manifest["coverage"].update(tasks=len(indices), task_indices=indices, rollouts=[1] * len(indices))
    levels = []
    for level in range(1, 6):
        entry, part = copy.deepcopy(manifest["by_level"][0]), indices[level - 1::5]
        entry.update(level=level, coverage={"tasks": len(part), "task_indices": part, "rollouts": [1] * len(part)})
        levels.append(entry)
    manifest.update(by_level=levels, levels=[1, 2, 3, 4, 5])
    return dumps(manifest)


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

    def test_toml_counts_are_never_low(self):
        """Every table tomllib makes is counted, and so is every key part and every
        table, array and value, each on its own: on random texts it parses and on
        documents tomli_w writes."""
        rng = random.Random(13)
        texts = []
        while len(texts) < 1500:
            text = "".join(rng.choice(TOML_PIECES) for _ in range(rng.randrange(1, 60)))
            with contextlib.suppress(tomllib.TOMLDecodeError, RecursionError):
                tomllib.loads(text)
                texts.append(text)
        docs = [{"a": {"b.c": [{"d": [1, [2, {"e": {}}]]}], "f": {"g": {"h": 1}}}, "i": [{"j": 1}, {"k": [[]]}]},
                {"x y": {"z": [[1.5, "s"]], "w": {"v": [{"u": {"t": 1}}]}}, "q": "[a.b]\n{c.d}"}]
        texts += [tomli_w.dumps(d) for d in docs] + ["[[a.b]]\n[[a.b]]\nc.d.e = 1\n[a.f . g]\n", "x = [1,2,]\n"]
        for text in texts:
            tables, items = toml_size(text)
            made_tables, parts, made = toml_made(text)
            self.assertGreaterEqual(tables, made_tables, repr(text))
            self.assertGreaterEqual(items, parts, repr(text))
            self.assertGreaterEqual(items, made, repr(text))

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
        worst = header + "".join(f"{key}.k{i} = 1\n" for i in range(MAX_TOML_TABLES // MAX_TOML_KEY_PARTS))
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

    def test_manifests_of_many_tables_and_values_are_refused_at_once(self):
        """Red team, 2026-12-04: 16 MB of lines each a fresh 8-part table path passed
        every bound and cost `report` 81 s and 5.9 GB; of plain [hex] headers 19 s and
        1.75 GB, of k=1 lines 8 s."""
        for line in ("[{:x}.a.b.c.d.e.f.g]\n", "[[{:x}.a.b.c.d.e.f]]\n", "{:x}.a.b.c.d.e.f.g=1\n", "[{:x}]\n",
                     "k{:x}=1\n", "x{:x}={{a={{b={{}}}}}}\n"):
            text = lines_of(line, MAX_MANIFEST_BYTES, times=2)
            start = time.process_time()
            with self.assertRaisesRegex(ValueError, "at most (200,000|1,000,000) are read"):
                loads_toml(text)
            self.assertLess(time.process_time() - start, 2.0, line)
        with self.assertRaisesRegex(ValueError, "at most 1,000,000 are read"):
            loads_toml("x = [" + "1," * (MAX_MANIFEST_BYTES // 2) + "]\n")

    def test_what_the_counts_let_through_stays_cheap(self):
        """The costliest lines per table, per key and per value, as many as the counts
        let through: seconds and a few hundred MB, where 16 MB within the other bounds
        cost up to 81 s and 5.9 GB."""
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for line in ("[{:x}.a.b.c.d.e.f.g]\n", "[{:x}]\n", "k{:x}=1\n"):
            text = lines_of(line, MAX_MANIFEST_BYTES)
            start = time.process_time()
            loads_toml(text)
            self.assertLess(time.process_time() - start, 12.0, line)
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        self.assertLess(grown_mb, 500)

    def test_the_largest_honest_manifest_is_read_with_room_to_spare(self):
        """A traces file at its cap, of traces of 18 KB (the least a real one holds),
        sealed in one piece: each bound at least half again what it needs."""
        text = largest_honest_manifest().decode()
        self.assertLess(len(text) * 1.4, MAX_MANIFEST_BYTES)
        tables, items = toml_size(text)
        self.assertLess(tables * 3, MAX_TOML_TABLES)
        self.assertLess(items * 1.5, MAX_TOML_ITEMS)
        self.assertEqual(len(loads_toml(text)["traces"]), HONEST_MOST_TRACES)

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
