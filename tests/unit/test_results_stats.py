"""Uncertainty figures: the analytic ones match a textbook computation done here
independently, and the bootstrap's are the same bits on every run and interpreter."""

from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import unittest
from pathlib import Path

from redaction_pressure.boundary.launch import child_environment
from redaction_pressure.results import stats
from redaction_pressure.results.stats import Z95, SplitMix64, estimates, spread

STATS_FILE = Path(stats.__file__).resolve()
NAMES = ("reward", "recall", "precision", "clean")


def dataset(tasks: int, rollouts: int) -> dict[int, list[list[float]]]:
    """A fixed, awkward dataset: uneven values (no two sums alike), every metric in [0, 1]."""
    out = {}
    for i in range(tasks):
        out[i] = [[((i * 7919 + r * 104729 + m * 13) % 1000) / 999 for m in range(4)] for r in range(rollouts)]
    return out


# The bootstrap intervals of dataset(40, 1) and dataset(24, 3), as float.hex of (lo, hi) per
# metric: computed once, on CPython 3.11.7. Any interpreter, machine or run must give these bits.
GOLDEN = {
    (40, 1): {"reward": ("0x1.9bb3887b69bb3p-2", "0x1.2c4b3ca156c4bp-1"),
              "recall": ("0x1.a906d100aa906p-2", "0x1.32f4e0e3f72f5p-1"),
              "precision": ("0x1.9e01f29279e02p-2", "0x1.2bd86f1cdabd9p-1"),
              "clean": ("0x1.ab553b17bab55p-2", "0x1.3282135f7b282p-1")},
    (24, 3): {"reward": ("0x1.bbd99e56802f6p-2", "0x1.0b8f5c73999c8p-1"),
              "recall": ("0x1.c92ce6dbc1049p-2", "0x1.123900b63a072p-1"),
              "precision": ("0x1.d6802f6101d9cp-2", "0x1.18e2a4f8da71cp-1"),
              "clean": ("0x1.d3537441428a9p-2", "0x1.194c55fcfb5bep-1")},
}


def rollout_weighted(clusters: dict[int, list[list[float]]]) -> dict[str, dict]:
    """The figures as they were computed before means became task means (2026-12-04):
    every rollout weighing the same. Kept here to hold even counts to those bits."""
    rows = [clusters[k] for k in sorted(clusters, key=lambda k: (repr(type(k)), repr(k)))]
    counts = [len(r) for r in rows]
    n, g = sum(counts), len(rows)
    totals = [[math.fsum(row[m] for row in r) for r in rows] for m in range(len(NAMES))]
    boots = stats.bootstrap_means(totals, counts)
    out = {}
    for m, name in enumerate(NAMES):
        mean = math.fsum(row[m] for r in rows for row in r) / n
        residuals = [math.fsum(row[m] - mean for row in r) for r in rows]
        se = math.sqrt(g / (g - 1) * math.fsum(x * x for x in residuals)) / n
        ordered = sorted(boots[m])
        out[name] = {"mean": mean, "n": n, "tasks": g, "se": se,
                     "ci95": [min(1.0, max(0.0, mean - Z95 * se)), min(1.0, max(0.0, mean + Z95 * se))],
                     "bootstrap95": [ordered[stats.TAIL - 1], ordered[len(ordered) - stats.TAIL]]}
    return out


def bootstrap_hex(tasks: int, rollouts: int) -> dict[str, tuple[str, str]]:
    found = estimates(dataset(tasks, rollouts), NAMES)
    return {m: tuple(x.hex() for x in found[m].bootstrap95) for m in NAMES}


# Run by other interpreters: loads stats.py alone by path (it needs nothing but the standard
# library) and prints the same figures.
_CHILD = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("stats", sys.argv[1])
stats = importlib.util.module_from_spec(spec); sys.modules["stats"] = stats; spec.loader.exec_module(stats)
def dataset(tasks, rollouts):
    return {i: [[((i * 7919 + r * 104729 + m * 13) % 1000) / 999 for m in range(4)] for r in range(rollouts)]
            for i in range(tasks)}
out = {}
for tasks, rollouts in ((40, 1), (24, 3)):
    found = stats.estimates(dataset(tasks, rollouts), ("reward", "recall", "precision", "clean"))
    out[f"{tasks},{rollouts}"] = {m: [x.hex() for x in e.bootstrap95] + [e.se.hex(), e.mean.hex()]
                                  for m, e in found.items()}
print(json.dumps(out, sort_keys=True))
"""


def interpreters() -> list[str]:
    """CPython 3.11, 3.12 and 3.13 executables found on this machine (PATH and pyenv)."""
    found = {os.path.realpath(sys.executable)}
    for minor in (11, 12, 13):
        for path in [shutil.which(f"python3.{minor}"),
                     *glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3"))]:
            if path and os.access(path, os.X_OK) and "/shims/" not in path:  # a pyenv shim may lead nowhere
                found.add(os.path.realpath(path))
    return sorted(found)


class Analytic(unittest.TestCase):
    def test_one_rollout_per_task_is_the_textbook_standard_error(self):
        data = dataset(40, 1)
        found = estimates(data, NAMES)
        for m, name in enumerate(NAMES):
            values = [rows[0][m] for rows in data.values()]
            mean = statistics.fmean(values)
            se = statistics.stdev(values) / math.sqrt(len(values))
            e = found[name]
            self.assertEqual((e.n, e.tasks), (40, 40))
            self.assertAlmostEqual(e.mean, mean, places=14)
            self.assertAlmostEqual(e.se, se, places=14)
            self.assertAlmostEqual(e.ci95[0], max(0.0, mean - 1.959963984540054 * se), places=14)
            self.assertAlmostEqual(e.ci95[1], min(1.0, mean + 1.959963984540054 * se), places=14)

    def test_several_rollouts_are_clustered_by_task(self):
        """With equal rollouts per task, the cluster-robust error is the error of the task
        means; treating 72 rollouts as independent would understate it."""
        data = dataset(24, 3)
        e = estimates(data, NAMES)["reward"]
        means = [statistics.fmean(r[0] for r in rows) for rows in data.values()]
        self.assertEqual((e.n, e.tasks), (72, 24))
        self.assertAlmostEqual(e.se, statistics.stdev(means) / math.sqrt(24), places=14)
        naive = statistics.stdev([r[0] for rows in data.values() for r in rows]) / math.sqrt(72)
        self.assertNotAlmostEqual(e.se, naive, places=4)

    def test_uneven_clusters_weigh_each_task_the_same(self):
        """Red team, 2026-12-04: a mean over rollouts let 50 more rollouts of one good task
        raise a verified mean. With uneven counts the mean is the mean of task means, its
        standard error sd(task means) / sqrt(tasks)."""
        data = {0: [[0.0], [1.0], [1.0]], 1: [[0.5]], 2: [[0.25], [0.75]], 3: [[1.0]]}
        e = estimates(data, ("x",))["x"]
        means = [statistics.fmean(v[0] for v in rows) for rows in data.values()]
        self.assertEqual((e.n, e.tasks), (7, 4))
        self.assertAlmostEqual(e.mean, statistics.fmean(means), places=15)
        self.assertAlmostEqual(e.se, statistics.stdev(means) / math.sqrt(len(means)), places=15)

    def test_more_rollouts_of_one_task_do_not_move_the_figures(self):
        """Uneven counts give the figures of one value per task, each task's mean: the
        bootstrap resamples tasks and averages their means."""
        data = dataset(12, 1)
        padded = {**data, 4: data[4] * 51}
        self.assertNotEqual(estimates(padded, NAMES)["reward"].mean,
                            statistics.fmean(r[0] for rows in padded.values() for r in rows))
        for name, e in estimates(padded, NAMES).items():
            self.assertEqual(e, dataclasses.replace(estimates(data, NAMES)[name], n=62))
        halves = {k: v * (1 + k % 2) for k, v in dataset(9, 2).items()}  # 2 or 4 rollouts, same task means
        for name, e in estimates(halves, NAMES).items():
            want = estimates(dataset(9, 2), NAMES)[name]
            self.assertEqual((e.tasks, e.n), (9, 26))
            self.assertAlmostEqual(e.mean, want.mean, places=15)
            self.assertAlmostEqual(e.se, want.se, places=15)

    def test_even_counts_keep_their_old_bits(self):
        """With the same number of rollouts per task, the mean over tasks is the mean over
        rollouts: the figures must be today's to the bit (archives sealed before verify)."""
        rng = random.Random(20261204)
        for tasks, rollouts in ((2, 1), (8, 1), (40, 1), (7, 2), (24, 3), (13, 5), (64, 4)):
            for _ in range(3):
                data = {rng.randrange(10_000): [[rng.random() for _ in NAMES] for _ in range(rollouts)]
                        for _ in range(tasks)}
                with self.subTest(tasks=len(data), rollouts=rollouts):
                    found = estimates(data, NAMES)
                    self.assertEqual({m: e.as_dict() for m, e in found.items()}, rollout_weighted(data))
                    self.assertEqual({m: found[m].mean.hex() for m in NAMES},
                                     {m: v["mean"].hex() for m, v in rollout_weighted(data).items()})
                    for m in range(len(NAMES)):
                        values = [[row[m] for row in rows] for rows in data.values()]
                        self.assertEqual(stats.task_mean(values).hex(),
                                         (math.fsum(v for g in values for v in g) / (len(data) * rollouts)).hex())

    def test_intervals_are_clipped_to_the_metrics_range(self):
        e = estimates({0: [[1.0]], 1: [[1.0]], 2: [[0.0]]}, ("x",))["x"]
        self.assertEqual(e.ci95[1], 1.0)
        self.assertGreater(e.mean + Z95 * e.se, 1.0)
        d = estimates({0: [[-0.9]], 1: [[0.9]]}, ("d",), lo=-1.0, hi=1.0)["d"]
        self.assertEqual((d.ci95[0], d.ci95[1]), (-1.0, 1.0))

    def test_fewer_than_two_tasks_have_no_spread(self):
        e = estimates({7: [[0.5], [0.7]]}, ("x",))["x"]
        self.assertEqual((e.mean, e.n, e.tasks, e.se, e.ci95, e.bootstrap95), (0.6, 2, 1, None, None, None))
        self.assertEqual(e.as_dict(), {"mean": 0.6, "n": 2, "tasks": 1})
        self.assertEqual(e.pm(), "0.600")

    def test_order_of_tasks_and_rollouts_does_not_matter(self):
        data = dataset(30, 2)
        shuffled = {k: list(reversed(v)) for k, v in reversed(list(data.items()))}
        self.assertEqual(estimates(data, NAMES), estimates(shuffled, NAMES))

    def test_spread_and_best_of_n(self):
        s = spread({0: [0.0, 1.0], 1: [0.5, 0.5], 2: [0.2, 0.4, 0.9], 3: [0.8]})
        self.assertEqual((s.tasks, s.min_rollouts, s.max_rollouts, s.agree), (3, 2, 3, 1))
        self.assertAlmostEqual(s.best_of_n, (1.0 + 0.5 + 0.9) / 3, places=15)
        self.assertAlmostEqual(s.worst_of_n, (0.0 + 0.5 + 0.2) / 3, places=15)
        within = (0.5 ** 2 * 2) + 0 + sum((v - 0.5) ** 2 for v in (0.2, 0.4, 0.9))
        self.assertAlmostEqual(s.within_task_sd, math.sqrt(within / (1 + 1 + 2)), places=15)
        self.assertIsNone(spread({0: [1.0], 1: [0.0]}))


class Bootstrap(unittest.TestCase):
    def test_splitmix64_is_the_published_generator(self):
        # SplitMix64 from seed 0 (Steele, Lea, Flood 2014; Vigna's reference splitmix64.c)
        rng = SplitMix64(0)
        self.assertEqual([rng.next() for _ in range(3)],
                         [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F])
        a, b = SplitMix64(99), SplitMix64(99)
        self.assertEqual([a.below(13) for _ in range(500)], b.draws(500, 13))
        self.assertTrue(all(0 <= x < 13 for x in SplitMix64(5).draws(2000, 13)))

    def test_the_bootstrap_interval_holds_the_mean_and_is_near_the_analytic_one(self):
        for e in estimates(dataset(40, 1), NAMES).values():
            lo, hi = e.bootstrap95
            self.assertLess(lo, e.mean)
            self.assertLess(e.mean, hi)
            self.assertLess(abs((hi - lo) - (e.ci95[1] - e.ci95[0])), 0.25 * (e.ci95[1] - e.ci95[0]))

    def test_the_bootstrap_is_left_out_above_its_task_bound(self):
        """Red team, 2026-12-03 (second round): 2,000 resamples of every task cost a
        reader of a 20,000-task unsealed run minutes per figure. Above the bound the
        analytic interval stands alone, and the figures are otherwise unchanged."""
        from redaction_pressure.results.stats import MAX_BOOTSTRAP_TASKS
        at, above = dataset(MAX_BOOTSTRAP_TASKS, 1), dataset(MAX_BOOTSTRAP_TASKS + 1, 1)
        self.assertIsNotNone(estimates(at, NAMES)["reward"].bootstrap95)
        start = time.process_time()
        e = estimates(above, NAMES)["reward"]
        self.assertLess(time.process_time() - start, 1.0)
        self.assertIsNone(e.bootstrap95)
        self.assertIsNotNone(e.ci95)
        self.assertNotIn("bootstrap95", e.as_dict())
        self.assertRegex(e.interval(), r"^95% CI 0\.\d{3} to 0\.\d{3}$")  # the analytic interval, shown alone

    def test_pinned_bits(self):
        for (tasks, rollouts), want in GOLDEN.items():
            with self.subTest(tasks=tasks, rollouts=rollouts):
                self.assertEqual(bootstrap_hex(tasks, rollouts), want)

    def test_same_bits_on_every_interpreter_found(self):
        """CPython 3.11, 3.12 and 3.13 (whichever this machine has; CI has at least one)
        compute the same bits, in fresh isolated processes."""
        here = {f"{t},{r}": {m: [*v, e.se.hex(), e.mean.hex()] for m, v in bootstrap_hex(t, r).items()
                             for e in [estimates(dataset(t, r), NAMES)[m]]} for t, r in GOLDEN}
        found = interpreters()
        for exe in found:
            with self.subTest(interpreter=exe):
                done = subprocess.run([exe, "-I", "-c", _CHILD, str(STATS_FILE)], capture_output=True, text=True,
                                      env=child_environment(), timeout=60, check=False)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(json.loads(done.stdout), here)
        if len(found) < 2 and os.environ.get("CI") is None:
            self.skipTest(f"only {found} found: the pinned bits above still hold this interpreter to them")


if __name__ == "__main__":
    unittest.main()
