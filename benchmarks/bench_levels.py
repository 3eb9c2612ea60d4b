"""The calibration table of the difficulty levels (SPEC §3, "Difficulty levels").

    uv run python benchmarks/bench_levels.py [--tasks N] [--train N] [--quick] [--levels 1,3,5]

For each level, on N dev tasks (default 64) at that level: the oracle, the induce
learner, the best constant reply (the constant-reply adversary of bench_adversary.py
searches each level on its own train tasks), delete-everything and the baseline, each
as mean / min / median / max reward; then the median task-build time (after 16 builds
of other tasks warm the process, as a training process is) and the median scoring time
of the oracle's reply (in-process scan, one task at a time) and the prompt's size; and,
not checked, the oracle with every placeholder exclusion narrowed to x, X, 0 or *
fills ("fills only"): what a reader who learned every format but only the x-fill
placeholders keeps, the mistake strong models made. It
checks what SPEC §3 asks of the ladder and prints each check: oracle 1.0 and induce >=
0.85 at every level, best constant <= 0.50 at every level, and baseline,
delete-everything and best constant each lower at every step up between the levels
measured (exit 1 if a check fails).
--quick: 16 dev tasks, the adversary on 24 train tasks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import itertools

import bench_adversary
import regex
from _common import machine

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.contract import LEVELS
from redaction_pressure.corpus.levels import level as level_table

_WIPE = json.dumps({"rules": [{"pattern": r"[\s\S]+", "replacement": ""}]})
# A placeholder exclusion of an oracle pattern (secrets._real, house.Shape.pattern):
# (?!C*?(?:(C)\1{5}|runs)) for a character class C.
_EXCLUSION = regex.compile(r"\(\?!\[[^\]]*\]\*\?\(\?:\(\[[^\]]*\]\)\\1\{5\}(?:\|[A-Za-z0-9]+)*\)\)")
_FILLS_ONLY = r"(?![A-Za-z0-9*]*?([xX0*])\1{5})"


def _fills_only(task) -> str:
    """The oracle's reply with each placeholder exclusion narrowed to x, X, 0 or * fills."""
    rules = [_EXCLUSION.sub(lambda m: _FILLS_ONLY, p) for p in task.oracle_rules]
    return json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in rules]})


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    return statistics.fmean(values), min(values), statistics.median(values), max(values)


def measure(level: int, n_tasks: int, n_train: int) -> dict:
    build = []
    tasks = []
    for i in range(16):  # warm the process (imports, the static catalogue's compiled oracles) on other tasks
        load_task("train", i, level=level)
    for i in range(n_tasks):
        start = time.perf_counter()
        tasks.append(load_task("dev", i, level=level))
        build.append(time.perf_counter() - start)
    rewards: dict[str, list[float]] = {}
    scoring = []
    for name in ("oracle", "induce", "baseline"):
        rewards[name] = []
        for t in tasks:
            reply = policies.POLICIES[name](t)
            start = time.perf_counter()
            rewards[name].append(score_completion(t, reply).reward)
            if name == "oracle":
                scoring.append(time.perf_counter() - start)
    rewards["delete everything"] = [score_completion(t, _WIPE).reward for t in tasks]
    rewards["fills only"] = [score_completion(t, _fills_only(t)).reward for t in tasks]
    with contextlib.redirect_stdout(io.StringIO()):  # the adversary's own log
        adversary = bench_adversary.main(["--level", str(level), "--train", str(n_train), "--dev", str(n_tasks)])
    rewards["best constant"] = adversary["rewards"]["best constant reply"]
    return {"level": level, "rewards": rewards, "build_ms": 1000 * statistics.median(build),
            "score_ms": 1000 * statistics.median(scoring),
            "prompt_chars": statistics.median(len(t.prompt) for t in tasks),
            "oracle_rules": max(len(t.oracle_rules) for t in tasks),
            "constant_rules": adversary["best_rules"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64, help="dev tasks per level (default 64)")
    ap.add_argument("--train", type=int, default=48, help="train tasks the adversary searches per level (default 48)")
    ap.add_argument("--levels", default=",".join(map(str, LEVELS)), help="comma-separated levels (default all)")
    ap.add_argument("--quick", action="store_true", help="16 dev tasks, adversary on 24 train tasks")
    args = ap.parse_args(argv)
    n_tasks, n_train = (16, 24) if args.quick else (args.tasks, args.train)
    levels = sorted({int(x) for x in args.levels.split(",")})  # the ladder reads them in order
    t0 = time.perf_counter()
    rows = []
    for lv in levels:
        rows.append(measure(lv, n_tasks, n_train))
        print(f"  level {lv} measured ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    print(f"difficulty levels on {machine()}: {n_tasks} dev tasks per level; best constant reply searched on "
          f"{n_train} train tasks of the level ({time.perf_counter() - t0:.0f} s)")
    print("reward: mean / min / median / max")
    names = ("oracle", "induce", "best constant", "delete everything", "baseline", "fills only")
    print("| level | " + " | ".join(names) + " | build ms (median) | score ms (median) | prompt chars (median) "
          "| oracle rules (max) |")
    print("|---" * (len(names) + 5) + "|")
    for row in rows:
        cells = " | ".join("{:.3f} / {:.3f} / {:.3f} / {:.3f}".format(*_stats(row["rewards"][n])) for n in names)
        print(f"| {row['level']} | {cells} | {row['build_ms']:.1f} | {row['score_ms']:.1f} | "
              f"{row['prompt_chars']:.0f} | {row['oracle_rules']} |")
    print("attributes per level (ranges drawn from): see redaction_pressure/corpus/levels.py")
    for row in rows:
        table = level_table(row["level"]).as_table()
        print(f"  level {row['level']}: " + ", ".join(f"{k}={v}" for k, v in table.items()))
    mean = {row["level"]: {n: statistics.fmean(row["rewards"][n]) for n in names} for row in rows}
    checks = []
    for lv in levels:
        checks.append((f"level {lv}: oracle 1.0 on every task", min(next(r for r in rows if r["level"] == lv)
                                                                      ["rewards"]["oracle"]) == 1.0))
        checks.append((f"level {lv}: induce mean >= 0.85 ({mean[lv]['induce']:.3f})", mean[lv]["induce"] >= 0.85))
        checks.append((f"level {lv}: best constant <= 0.50 ({mean[lv]['best constant']:.3f})",
                       mean[lv]["best constant"] <= 0.50))
    # The ladder: what memory earns falls at every step up (levels measured together).
    for lo, hi in itertools.pairwise(levels):
        for n in ("best constant", "delete everything", "baseline"):
            checks.append((f"{n} falls from level {lo} to {hi}: {mean[lo][n]:.3f} -> {mean[hi][n]:.3f}",
                           mean[hi][n] < mean[lo][n]))
    for text, ok in checks:
        print(f"  [{'ok' if ok else 'FAIL'}] {text}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
