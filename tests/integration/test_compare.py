"""`redaction-pressure compare`: the paired difference of two runs of built-in policies,
recomputed here independently; refusals of runs that are not of the same tasks scored
the same way; the HTML page; archives marked verified only when verified here."""

from __future__ import annotations

import contextlib
import io
import json
import math
import statistics
import unittest
from html.parser import HTMLParser
from pathlib import Path

from redaction_pressure.cli import main
from tests.support import audit_fixtures as fx

Z = 1.959963984540054


class Parsed(HTMLParser):
    """The page's tags and text, as a browser would see them (entities decoded)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.data: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.data.append(data)

    def text(self) -> str:
        return "".join(self.data)


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def rewards_by_task(run: Path) -> dict[int, float]:
    """Each task's mean reward, read from the traces as a reader would (sum of score x weight)."""
    out: dict[int, list[float]] = {}
    for ep in fx.read_episodes(run / "traces.jsonl"):
        for t in ep["traces"]:
            r = sum(v["score"] * v["weight"] for v in t["rewards"].values())
            out.setdefault(t["info"]["environment"]["task_index"], []).append(r)
    return {k: statistics.fmean(v) for k, v in out.items()}


def edited(run: Path, edit) -> Path:
    def each(episodes):
        for ep in episodes:
            for t in ep["traces"]:
                edit(t)
    return fx.tampered_run(run, each)


class Paired(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = fx.baseline_run(), fx.full_dev_run()  # baseline on 0..31, oracle on 0..63

    def test_the_paired_difference_and_its_interval(self):
        code, out, err = run_cli("compare", self.a, self.b, "--json")
        self.assertEqual(code, 0, err)
        got = json.loads(out)
        a, b = rewards_by_task(self.a), rewards_by_task(self.b)
        diffs = [b[i] - a[i] for i in sorted(a)]
        mean = statistics.fmean(diffs)
        se = statistics.stdev(diffs) / math.sqrt(len(diffs))
        d = got["metrics"]["reward"]["b_minus_a"]
        self.assertEqual((got["paired_tasks"], got["only_in_a"], got["only_in_b"]), (32, [], list(range(32, 64))))
        self.assertAlmostEqual(d["mean"], mean, places=12)
        self.assertAlmostEqual(d["se"], se, places=12)
        self.assertAlmostEqual(d["ci95"][0], mean - Z * se, places=12)
        self.assertAlmostEqual(d["ci95"][1], min(1.0, mean + Z * se), places=12)
        self.assertLess(d["bootstrap95"][0], mean)
        self.assertGreater(d["bootstrap95"][1], mean)
        wins = sum(x > 0 for x in diffs)
        self.assertEqual(got["reward_wins_ties_losses"], {"b_better": wins, "tied": sum(x == 0 for x in diffs),
                                                          "b_worse": sum(x < 0 for x in diffs)})
        self.assertAlmostEqual(got["metrics"]["reward"]["a"]["mean"], statistics.fmean(a.values()), places=12)
        self.assertEqual((got["mismatches"], got["split"], got["levels"]), ([], "dev", [1]))
        leaked = {r["class"]: r for r in got["secret_classes"]}
        self.assertEqual(leaked["house_format"]["b_bad"], 0)
        self.assertGreater(leaked["house_format"]["a_bad"], 0)
        self.assertEqual((got["a"]["state"], got["b"]["verified"]),
                         ("run directory, not sealed; rescored here: 32/32 rewards reproduced", False))

    def test_text_shape_and_wins_ties_losses(self):
        mixed = fx.dev_run()  # the mixed policy on 0..7
        code, out, _ = run_cli("compare", self.a, mixed)
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual(lines[0], lines[-1])
        self.assertLessEqual(len(lines), 25)
        a, b = rewards_by_task(self.a), rewards_by_task(mixed)
        diffs = [b[i] - a[i] for i in sorted(b)]
        counts = sum(x > 0 for x in diffs), sum(x == 0 for x in diffs), sum(x < 0 for x in diffs)
        self.assertTrue(all(counts), counts)  # each kind of pair shows up in the line
        self.assertRegex(lines[0], r"^B − A: reward [+-]0\.\d{3} ± 0\.\d{3} \(95% CI .* to .*; bootstrap .*\); "
                                   + "B better on {}, tied on {}, worse on {} of 8 paired tasks$".format(*counts))
        self.assertTrue(lines[1].startswith(f"A: {self.a} — run directory, not sealed; rescored here: 32/32 rewards "
                                            "reproduced — built-in policy"), lines[1])
        self.assertIn("8 tasks paired (24 only in A: not compared)", out)


class Refusals(unittest.TestCase):
    def refused(self, a, b, *needles):
        code, out, err = run_cli("compare", a, b)
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("(pass --allow-mismatch to compare anyway)", err)
        for needle in needles:
            self.assertIn(needle, err)
        return err

    def test_mismatched_runs_are_refused_unless_told(self):
        base = fx.baseline_run()
        self.refused(base, fx.nonstandard_run(), "task parameters (n_shown, n_eval, budget_s): A (8, 16, 2.0), "
                                                 "B (2, 3, 2.0)")
        with fx.env_var("REDACTION_PRESSURE_PRIVATE_SEED", None):
            self.refused(base, fx.private_run(), "split: A is dev, B is private_eval")

        def other_build(t):
            t["info"]["environment"]["source_digest"] = "0" * 64
        self.refused(base, edited(base, other_build), "build source_digest: A ", ", B " + "0" * 64)

        def level_two(t):  # every copy of the level: labels that disagree with the task data are unusable
            if t["info"]["environment"]["task_index"] % 2:
                t["info"]["environment"]["task_params"]["level"] = t["task"]["data"]["level"] = 2
                t["task"]["data"]["identity"]["task_params"]["level"] = 2
        self.refused(base, edited(base, level_two), "level: 16 paired task(s) were run at different levels (e.g. "
                                                    "task 1: A level 1, B level 2)")

        def float_n_eval(t):  # 16.0 == 16 in Python; only the integer is a valid parameter
            if t["info"]["environment"]["task_index"] % 2:
                t["info"]["environment"]["task_params"]["n_eval"] = t["task"]["data"]["n_eval"] = 16.0
                t["task"]["data"]["identity"]["task_params"]["n_eval"] = 16.0
        self.refused(base, edited(base, float_n_eval), "task parameters (n_shown, n_eval, budget_s): A (8, 16, 2.0), "
                                                       "B (8, 16, 2.0), (8, 16.0, 2.0)")
        code, out, err = run_cli("compare", base, fx.nonstandard_run(), "--allow-mismatch")
        self.assertEqual(code, 0, err)
        self.assertTrue(out.splitlines()[1].startswith("MISMATCHED RUNS (compared anyway, --allow-mismatch): task "
                                                       "parameters"))

    def test_private_runs_revealing_other_seeds_are_other_tasks(self):
        """Red team, 2026-12-04: a run of tasks its author picked (each trace rebuilt,
        consistently, on a seed of their choosing under the private run's commitment)
        compared with the real private run as the same tasks: "B better on 4 of 4 paired
        tasks", exit 0. Under one commitment task i has one seed: another seed is another task."""
        from redaction_pressure.task.splits import private_seed

        def other_seed(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    env = t["info"]["environment"]
                    env["task_seed"] = private_seed(b"another secret, of the run's author", env["task_index"])
        with fx.env_var("REDACTION_PRESSURE_PRIVATE_SEED", None):
            real = fx.private_run()
            self.refused(real, fx.tampered_run(real, other_seed),
                         "seeds: 4 task(s) reveal other seeds in A than in B (e.g. task 0): under one commitment that "
                         "is another task, not the same one")
            code, out, err = run_cli("compare", real, real)
            # without the secret, that each seed is the split's is not checked: not a pass
            self.assertEqual(code, 3, err)
            self.assertRegex(out.splitlines()[1], r"^NOT CHECKED: A: 4 of 4 trace\(s\) not checked here \(e\.g\. ")
            with fx.env_var("REDACTION_PRESSURE_PRIVATE_SEED", fx.SECRET):
                code, out, err = run_cli("compare", real, real)
            self.assertEqual(code, 0, err + out)

    def test_what_a_run_names_reaches_the_terminal_escaped(self):
        """Red team, 2026-12-03: a model name holding an escape sequence (erase the line,
        print a fake one) and a bidi override, a run name and a recorded split commitment
        were printed raw by `compare`, `rescore` and `audit seal`. Each is escaped now,
        as `audit verify` escapes them."""
        from audit._keys import keygen
        from audit.cli import main as audit_main

        evil = "evil\x1b[2K\r\x1b[32mFAKE-LINE\u202e"

        def names(episodes):
            for ep in episodes:
                ep["run"]["name"] = "run\x1b[1mX :white_check_mark: VERIFIED"
                for t in ep["traces"]:
                    t["agent"]["config"]["model"] = evil

        def commitment(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    t["info"]["environment"]["split_commitment"] = "public-sha256:\x1b[31mX"

        def version(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    t["info"]["environment"]["environment_version"] = "9\x1b[2K"

        run = fx.tampered_run(fx.baseline_run(), names)
        outputs = [run_cli("compare", fx.baseline_run(), run, "--allow-mismatch"),
                   run_cli("rescore", fx.tampered_run(fx.baseline_run(), commitment)),
                   run_cli("compare", fx.baseline_run(), fx.tampered_run(fx.baseline_run(), version))]
        out, err = io.StringIO(), io.StringIO()
        archive = fx.fresh_dir("archive")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            audit_main(["seal", str(run), "--key", str(keygen(fx.fresh_dir("keys"))[0]), "--out", str(archive)])
        outputs.append((0, out.getvalue(), err.getvalue()))
        # The manifest's readable copy too (red team, 2026-12-04): TOML escapes, the same value.
        import tomllib

        manifest = (archive / "manifest.toml").read_text(encoding="utf-8")
        self.assertNotIn("\u202e", manifest)
        self.assertIn("FAKE-LINE\\u202e", manifest)
        self.assertEqual(tomllib.loads(manifest)["evaluated"]["model"], evil)
        for _code, stdout, stderr in outputs:
            text = stdout + stderr
            self.assertTrue(text.strip())
            self.assertNotIn("\x1b", text)
            self.assertNotIn("\u202e", text)
            self.assertNotIn("\r", text)
        self.assertIn("FAKE-LINE\\u202e", outputs[0][1] + outputs[3][1])
        # rich's emoji codes are text too (red team, 2026-12-03, second round: "✅ VERIFIED")
        self.assertIn(":white_check_mark: VERIFIED", outputs[0][1])
        self.assertNotIn("\u2705", outputs[0][1])
        self.assertIn("\\x1b[2K", outputs[2][2])

    def test_hostile_lines_are_counted_not_fatal(self):
        run = fx.fresh_dir("hostile")
        run.mkdir()
        good = (fx.baseline_run() / "traces.jsonl").read_text().splitlines(keepends=True)[:4]
        pad = "x" * 2000  # a trace entry of fewer bytes is no trace (`boundary.episodes`)
        forged = json.loads(good[0])
        forged["traces"][0]["info"]["redaction"]["reward"] = 1.0  # its two copies disagree
        junk = ["not json\n", '{"traces": "x"}\n', '{"traces": [{"info": 5}, 7]}\n',
                json.dumps({"traces": [{"info": {"environment": {"task_index": True}}, "rewards": {"recall": {}},
                                        "pad": pad}]}) + "\n", json.dumps(forged) + "\n"]
        (run / "traces.jsonl").write_text("".join(good + junk))
        code, out, err = run_cli("compare", fx.baseline_run(), run)
        # The usable traces are compared; the rest are skipped, and said. Since 2026-12-04
        # (red team) the run is rescored as `rescore` rescores it: the forged trace, the
        # unscored one and the lines not read are differences, and the exit status 1.
        self.assertEqual(code, 1, err)
        self.assertIn("run directory, not sealed; rescored here: NOT REPRODUCED, the run records 2 of 6 reward(s) "
                      "this build does not give (or cannot rescore) and has 3 problem(s) reading it", out)
        self.assertIn("4 tasks paired (28 only in A: not compared); skipped 2 unscored trace(s) in B (e.g. its "
                      "recorded scores are malformed: rewards.recall.score is missing or not a number in [0, 1]", out)
        self.assertIn("3 problem(s) reading it, e.g. traces.jsonl line 5 is not JSON", out)
        self.assertIn("traces.jsonl line 7 holds 2 trace entries in 29 bytes", out + json.dumps(
            json.loads(run_cli("compare", fx.baseline_run(), run, "--json")[1])["b"]["problems"]))
        self.assertNotIn("Traceback", out + err)

    def test_hostile_numbers_and_types_are_unusable_never_a_traceback(self):
        """Attacks (red team a02, a08, a09): scores of 1e308 (weights too: the weighted sum
        overflowed in the bootstrap's fsum), integers of 4,299 digits (float() and
        math.isfinite raised OverflowError), lists and objects where a commitment, task
        parameter or build key belongs (unhashable: TypeError). Each such trace is
        counted as unusable, with the reason; the rest is compared."""
        big = 10 ** 4299

        def hostile(t):
            i = t["info"]["environment"]["task_index"]
            if i == 0:
                t["rewards"]["recall"] = {"score": 1e308, "weight": 1e308}
            elif i == 1:
                t["rewards"]["precision"]["score"] = big
            elif i == 2:
                t["info"]["redaction"]["reward"] = big
            elif i == 3:
                t["info"]["environment"]["split_commitment"] = ["x"]
            elif i == 4:
                t["info"]["environment"]["task_params"]["n_shown"] = [1]
            elif i == 5:
                t["info"]["environment"]["source_digest"] = {"a": 1}
            elif i == 6:
                t["info"]["redaction"]["secret_classes"] = {"house_format": [9 * big, 0]}
        b = edited(fx.baseline_run(), hostile)
        for args in ((fx.baseline_run(), b), (b, b), (b, fx.baseline_run(), "--json")):
            code, out, err = run_cli("compare", *args)
            self.assertNotIn("Traceback", out + err)
            self.assertEqual(code, 1, err)  # task 6's forged tally is a difference (its score is kept)
        got = json.loads(out)
        # rescored as `rescore` rescores it: every trace, the unusable ones (and the lines
        # holding numbers too long to read) differences, not only what the figures count
        self.assertEqual((got["a"]["rescored"]["reproduced"], got["a"]["rescored"]["differ"]), (26, 9))
        self.assertEqual(got["a"]["rescored"]["reading_problems"], 3)  # numbers too long to read
        self.assertEqual(run_cli("rescore", b)[1].splitlines()[-1].split(";")[:2],
                         ["26/32 rewards reproduced, mean 0.169 recorded, 0.169 recomputed over the 27 rescored",
                          " 9 differ"])
        self.assertEqual(got["unusable_traces"]["a"], 6)  # task 6's absurd tally is left out, its score kept
        self.assertEqual(got["paired_tasks"], 26)


    def test_nothing_to_pair_and_bad_paths(self):
        def late(t):
            t["info"]["environment"]["task_index"] += 32
        code, _, err = run_cli("compare", fx.baseline_run(), edited(fx.baseline_run(), late), "--allow-mismatch")
        self.assertEqual(code, 2)
        self.assertIn("the runs have no task in common", err)
        code, _, err = run_cli("compare", fx.baseline_run(), "/nonexistent/run")
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), "redaction-pressure: error: /nonexistent/run does not exist")


class Page(unittest.TestCase):
    def test_self_contained_escaped_and_verified_only_here(self):
        def hostile(t):
            t["agent"]["config"]["model"] = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'
        a = fx.seal_run(edited(fx.dev_run(), hostile))
        archive = fx.seal_run(fx.dev_run())  # 8 traces: a verification here costs little
        page = fx.fresh_dir("cmp") / "compare.html"
        code, out, err = run_cli("compare", a, archive, "--html", page, "--public-key", fx.keys("owner")[1])
        self.assertEqual(code, 0, err + out)
        html = page.read_text(encoding="utf-8")
        parsed = Parsed(html)
        self.assertFalse([t for t, _ in parsed.tags if t in ("script", "img", "iframe", "object", "embed", "link")])
        self.assertFalse([a for _, a in parsed.tags for k in a if k.startswith("on")])
        self.assertIn("default-src 'none'", html)
        self.assertIn('<script>alert("pwned")</script>', parsed.text())  # shown as text
        self.assertIn("✔ verified: `audit verify` ran here with the pinned key", parsed.text())
        self.assertIn("B better on 0, tied on 8, worse on 0", parsed.text())
        self.assertIn("B: ", out)
        self.assertIn("sealed archive, ✔ verified", out)
        code, out, _ = run_cli("compare", fx.baseline_run(), archive)
        self.assertIn("sealed archive, NOT VERIFIED here (no --public-key given)", out)
        code, out, _ = run_cli("compare", a, archive, "--public-key", fx.keys("attacker")[1])
        self.assertEqual(code, 1)
        self.assertIn("sealed archive, ✘ NOT VERIFIED: `audit verify` exited 1", out)

    def test_a_key_verifies_both_runs_or_neither_is_compared(self):
        """Attack (red team a15): A a genuine archive, B a forged run directory (its
        manifest deleted, so it counted as "not sealed"): with --public-key the comparison
        printed B's inflated rewards and exited 0, as if verification had covered it."""
        def inflate(t):
            for k in ("recall", "precision", "clean"):
                t["rewards"][k]["score"] = 1.0
        archive = fx.seal_run(fx.dev_run())
        forged = edited(fx.dev_run(), inflate)
        for a, b, name in ((archive, forged, "B"), (forged, archive, "A")):
            code, out, err = run_cli("compare", a, b, "--public-key", fx.keys("owner")[1])
            self.assertEqual((code, out), (2, ""))
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(f"{name} ({forged}) is not a sealed archive", err)
            self.assertIn("with --public-key both runs must be sealed archives", err)

    def test_strict_refuses_what_audit_verify_tolerates(self):
        """Attack (red team a13): a signer records a time-out on a baseline reply (scores
        0) and seals it. `audit verify` fails it (this machine finishes the reply in far
        under a quarter of its budget, outside the 4x tolerance), and compare says so;
        what `audit verify` does tolerate only `--strict` refuses, which compare passes
        on to it."""
        from audit import _rescore

        def slow_sealer(episodes):
            trace = episodes[1]["traces"][0]
            score = _rescore.score_completion(_rescore.task_of(trace), _rescore.recorded_reply(trace), budget_s=0.0)
            fx.record(trace, score)
        laundered = fx.seal_run(fx.tampered_run(fx.dev_run(), slow_sealer))
        honest = fx.seal_run(fx.dev_run())
        key = fx.keys("owner")[1]
        code, out, err = run_cli("compare", laundered, honest, "--public-key", key)
        self.assertEqual(code, 1, err)
        self.assertIn("sealed archive, ✘ NOT VERIFIED: `audit verify` exited 1", out.split("\nB: ")[0])
        with fx.verify_commands() as commands:
            code, out, err = run_cli("compare", honest, honest, "--public-key", key, "--strict")
        self.assertEqual(code, 0, err)
        self.assertEqual([c.count("--strict") for c in commands], [1, 1])  # both sides, strictly
        code, _, err = run_cli("compare", laundered, honest, "--strict")
        self.assertEqual(code, 2)
        self.assertIn("--strict applies to the `audit verify` that --public-key runs", err)

if __name__ == "__main__":
    unittest.main()


def forged(run: Path) -> Path:
    """``run`` with every trace's recorded scores (both copies, tallies too) replaced by
    the oracle's on its task: consistent, and false for the reply it records."""
    from redaction_pressure import load_task, policies, score_completion

    def edit(t):
        task = load_task("dev", t["info"]["environment"]["task_index"])
        fx.record(t, score_completion(task, policies.oracle(task)))
    return edited(run, edit)


class Rescored(unittest.TestCase):
    """Red team, 2026-12-04: a run whose recorded scores were all raised to the oracle's
    was "B better on ... of ... paired tasks", exit 0: compare read recorded rewards only.
    A run no key verified is rescored here, from the very traces compared."""

    def test_a_forged_run_is_not_reproduced_and_exits_1(self):
        base = fx.dev_run()
        code, out, err = run_cli("compare", base, forged(base))
        self.assertEqual(code, 1, err)
        lines = out.splitlines()
        self.assertRegex(lines[1], r"^NOT REPRODUCED: B records [1-8] of 8 reward\(s\) this build does not give")
        self.assertIn("B: ", out)
        self.assertRegex(out, r"run directory, not sealed; rescored here: NOT REPRODUCED, the run records [1-8] of 8 "
                              r"reward\(s\) this build does not give")
        code, out, err = run_cli("compare", base, forged(base), "--json")
        self.assertEqual(code, 1, err)
        got = json.loads(out)
        self.assertGreater(got["b"]["rescored"]["differ"], 0)
        self.assertEqual(got["a"]["rescored"]["differ"], 0)

    def test_genuine_runs_say_they_were_rescored(self):
        base = fx.dev_run()
        code, out, err = run_cli("compare", base, base)
        self.assertEqual(code, 0, err)
        self.assertNotIn("NOT REPRODUCED", out)
        self.assertEqual(out.count("run directory, not sealed; rescored here: 8/8 rewards reproduced"), 2, out)

    def test_what_is_not_checked_is_not_a_pass(self):
        """Red team, 2026-12-04, second round: traces beyond --max-budget (a run at the
        legal budget of 4 s, compared with the default 2 s) were NOT CHECKED, said only
        inside a run's line, and compare exited 0."""
        from redaction_pressure import policies
        from redaction_pressure.taskset import RedactionConfig

        config = RedactionConfig(id="redaction-pressure", split="dev", budget_s=4.0)
        run = fx._run("dev", policies.baseline, 3, config=config, tag="-budget4")
        code, out, err = run_cli("compare", run, run)
        self.assertEqual(code, 3, err + out)
        self.assertRegex(out.splitlines()[1], r"^NOT CHECKED: A: 3 of 3 trace\(s\) not checked here \(e\.g\. .*its "
                                              r"budget 4 s is above --max-budget 2 s")
        code, out, err = run_cli("compare", run, run, "--max-budget", "4")
        self.assertEqual(code, 0, err + out)

    def test_a_scan_that_times_out_here_is_retried_as_rescore_retries_it(self):
        """A slower machine than the recording's: the time-out is retried with the budget
        extended 4x (up to 4x --max-budget), as `rescore` and `audit verify` do."""
        from unittest import mock

        import redaction_pressure.rescore as rescore_module

        caps = []
        real = rescore_module._score

        def spy(task, reply, codes, cap, known=None):
            caps.append(cap)
            return real(task, reply, codes, cap, known)
        with mock.patch.object(rescore_module, "_score", spy):
            code, _, err = run_cli("compare", fx.dev_run(), fx.dev_run())
        self.assertEqual(code, 0, err)
        self.assertEqual(set(caps), {8.0})

    def test_a_reader_that_closes_the_pipe_gets_the_verdict(self):
        """`compare A B | head -1`: rich exits 1 on a broken pipe, the code of a difference,
        and print() made it 0 (red team, 2026-12-04): the exit status is the verdict."""
        import subprocess
        import sys

        base = fx.dev_run()
        for b, want in ((base, 0), (forged(base), 1)):
            with self.subTest(want=want):
                p = subprocess.Popen([sys.executable, "-m", "redaction_pressure.cli", "compare", str(base), str(b)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                p.stdout.close()  # before anything is written: every write meets a closed pipe
                err = p.stderr.read()
                p.stderr.close()
                self.assertEqual((p.wait(timeout=300), err), (want, b""))

    def test_forged_tallies_beside_real_rewards_are_not_reproduced(self):
        """Red team, 2026-12-04, third round: real rewards, and tallies that say every
        secret was removed and no decoy destroyed: compare said 64/64 reproduced, exit 0,
        with B at 0% leaked in its class table (`audit verify` failed the same traces)."""
        def clean_tallies(t):
            r = t["info"]["redaction"]
            for table in ("secret_families", "secret_classes"):
                for v in r[table].values():
                    v[1] = v[0]
            for table in ("decoy_families", "decoy_classes"):
                for v in r[table].values():
                    v[1] = 0
            r["secrets_removed"] = r["secrets_total"]
            t["metrics"]["secrets_removed"] = float(r["secrets_total"])
        base = fx.dev_run()
        code, out, err = run_cli("compare", base, edited(base, clean_tallies))
        self.assertEqual(code, 1, err + out)
        self.assertRegex(out.splitlines()[1], r"^NOT REPRODUCED: B records [1-8] of 8 reward\(s\)")


class ReadersAgree(unittest.TestCase):
    """Red team, 2026-12-04: on one spoiled run `rescore` exited 1, `compare` 0 (it
    rescored only the traces it paired, so a run could drop the tasks it lost by spoiling
    their lines) and `report` 0 or 1 by the kind of spoiling; a trace repeated 51 times
    was refused by `audit seal` and counted 51 times by the three readers."""

    def spoiled(self) -> dict[str, Path]:
        base = fx.dev_run()

        def score_as_text(episodes):
            episodes[2]["traces"][0]["rewards"]["recall"]["score"] = "1.0"

        def repeated(episodes):
            episodes.extend([episodes[4]] * 3)
            episodes[1]["traces"] *= 2

        unreadable = fx.fresh_dir("run")
        unreadable.mkdir()
        lines = (base / "traces.jsonl").read_text().splitlines(keepends=True)
        lines[3] = lines[3].replace('"score":', '"score":NaN,"x":', 1)
        (unreadable / "traces.jsonl").write_text("".join(lines))
        return {"score as text": fx.tampered_run(base, score_as_text), "repeated": fx.tampered_run(base, repeated),
                "unreadable line": unreadable}

    def test_every_reader_fails_what_rescore_fails(self):
        base = fx.dev_run()
        for name, run in self.spoiled().items():
            with self.subTest(run=name):
                code, out, err = run_cli("rescore", run)
                self.assertEqual(code, 1, out + err)
                code, out, err = run_cli("compare", base, run)
                self.assertEqual(code, 1, out + err)
                self.assertRegex(out, r"NOT REPRODUCED: B (records|has) [1-9]")
                code, out, err = run_cli("report", run, "--out", run / "page.html")
                self.assertEqual(code, 1, out + err)
                self.assertRegex(err, r"NOT (REPRODUCED|READ): [1-9]")

    def test_a_repeated_trace_is_read_once_and_named(self):
        run = self.spoiled()["repeated"]
        code, out, err = run_cli("rescore", run)
        self.assertEqual(code, 1)
        self.assertIn("line 9 is the same trace as line 5", out + err)
        self.assertIn("line 2 trace 1 is the same trace as line 2", out + err)
        self.assertRegex(out + err, r"8/8 rewards reproduced, .*; 4 differ")

    def test_a_bad_scan_worker_setting_is_a_usage_error_not_a_verdict(self):
        """Red team, 2026-12-04: with $REDACTION_PRESSURE_SCAN_WORKERS=0 `rescore` called
        a genuine run "0/8 rewards reproduced", `compare` NOT REPRODUCED, `report` a
        traceback."""
        from audit.cli import main as audit_main
        from redaction_pressure.scoring.scan_pool import WORKERS_ENV

        base = fx.dev_run()
        archive, public = fx.seal_run(base), fx.keys("owner")[1]
        for value in ("0", "-1", "abc", "1e3", "x" * 200, "\u00b2" * 300):
            for argv in (("rescore", base), ("compare", base, base), ("report", base, "--out", fx.fresh_dir("p")),
                         ("audit", "verify", archive, "--public-key", public, "--jobs", "1")):
                with self.subTest(value=value[:8], command=argv[0]), fx.env_var(WORKERS_ENV, value):
                    if argv[0] == "audit":  # review, 2026-12-04: verify --jobs 1 failed a genuine archive
                        out, err = io.StringIO(), io.StringIO()
                        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                            code = audit_main([str(a) for a in argv[1:]])
                        code, out, err = code, out.getvalue(), err.getvalue()
                    else:
                        code, out, err = run_cli(*argv)
                    self.assertEqual((code, out), (2, ""), err)
                    self.assertIn(f"${WORKERS_ENV} must be an integer in 1..256", err)
                    self.assertLess(len(err), 200)

    def test_a_failed_copy_of_a_trace_leaves_the_counted_one_read(self):
        """Review, 2026-12-04: a trace in a failed Episode on line 1 and the same trace in
        its honest Episode on line 2 was sealed whole by `seal --allow-failed` and lost to
        every unsealed reader ("the same trace as line 1")."""
        def failed_copy_first(episodes):
            failed = json.loads(json.dumps(episodes[0]))
            failed["ok"] = False
            episodes.insert(0, failed)

        run = fx.tampered_run(fx.dev_run(), failed_copy_first)
        code, out, err = run_cli("rescore", run)
        self.assertEqual(code, 0, out + err)
        self.assertIn("8/8 rewards reproduced", out)
        self.assertIn("1 failed rollout", out)
        self.assertNotIn("the same trace", out + err)
