"""Scoring-core figures over the 64 dev tasks.

- overhead: median over tasks of the scoring core's time / raw floor, where the floor
  is the same compiled rules applied in order with `regex.sub` to the same records and
  nothing else (no parsing, validation, compiling, timeouts, tracking or reward). The
  core is one verdict's work as a scan worker does it plus parsing and the reward,
  timed in this process; `score_completion` adds the round trip to its scan worker
  process (reported separately: "end to end").
  "warm" reuses compiled patterns (the same rules recurring); "cold" clears the compile
  cache before every call (a fresh reply, the normal case in RL, where every rollout
  writes new rules), so it pays for guarding and compiling every rule. The target
  (<= 2.5x) is on the median over oracle and baseline replies together.
- where a fresh pattern's time goes: per pattern, medians over the dev replies' rules.
- task build: median time of load_task.
- hostile: wall time of a reply whose rule backtracks catastrophically, vs its budget.
- baseline: mean reward of the task-independent baseline policy (decoys bite).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import regex
from _common import machine, median_time, table

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.scoring import pattern_guard as guard
from redaction_pressure.scoring.answer import parse_reply
from redaction_pressure.scoring.pattern_guard import clear_cache
from redaction_pressure.scoring.reward import evaluate
from redaction_pressure.scoring.score import _tallies, scan_rules, score_with_cost


def rules_of(reply: str) -> list[tuple[regex.Pattern, str]]:
    body = reply.split("```json\n", 1)[1].rsplit("```", 1)[0]
    return [(regex.compile(r["pattern"]), r["replacement"]) for r in json.loads(body)["rules"]]


def floor(compiled, texts) -> None:
    for pattern, repl in compiled:
        texts = [pattern.sub(repl.replace("\\", "\\\\"), t) for t in texts]


def core(task, reply) -> float:
    """One verdict's work in this process: parse, guard and compile, scan with source
    tracking under the budget, reward and family tallies (what `score_completion` does,
    minus handing the scan to its worker process)."""
    rules, errors = parse_reply(reply)
    texts = [r.text for r in task.heldout]
    removed, _, errors = scan_rules(texts, [(r.pattern, r.replacement) for r in rules], task.budget_s)
    outcome = evaluate(removed, [[(s.start, s.end) for s in r.secrets] for r in task.heldout], bool(errors))
    _tallies(task, removed)
    return outcome.reward


def raw_cold(patterns, texts) -> None:
    """What a raw scanner pays for a fresh reply: compile (bypassing regex's cache) and sub."""
    floor([(regex.compile(p, cache_pattern=False), r) for p, r in patterns], texts)


def per_pattern_us(patterns: list[str], repeat: int) -> dict[str, float]:
    """Microseconds per fresh pattern, by stage (regex.compile bypassing its cache is
    what the guard used to add on top of its own parse)."""
    stages = {
        "regex.compile (its own parse + build)": lambda p: regex.compile(p, cache_pattern=False),
        "guard parse (regex's parser)": guard._parse,
        "guard parse + cost walk": lambda p: guard._cost(guard._parse(p)[0], guard.MAX_COMPILED_COST),
        "guard parse + build from that tree": lambda p: guard._build(p, *guard._parse(p)),
        "compile_bounded (all of it)": guard.compile_bounded,
    }
    out = {}
    for name, fn in stages.items():
        out[name] = median_time(lambda fn=fn: [fn(p) for p in patterns], repeat) / len(patterns) * 1e6
    return out


def main(quick: bool = False) -> dict:
    repeat = 3 if quick else 7
    t0 = time.perf_counter()
    tasks = [load_task("dev", i) for i in range(64)]
    build = [median_time(lambda i=i: load_task("dev", i), 1 if quick else 3) for i in range(0, 64, 4)]
    out = {"task_build_ms": statistics.median(build) * 1000}
    pooled_cold, pooled_vs_raw_cold = [], []
    patterns = []
    for policy in ("oracle", "baseline"):
        warm, cold, e2e = [], [], []
        for task in tasks:
            reply = getattr(policies, policy)(task)
            compiled, texts = rules_of(reply), [r.text for r in task.heldout]
            patterns += [c.pattern for c, _ in compiled]
            sources = [(c.pattern, r) for c, r in compiled]
            base = median_time(lambda: floor(compiled, texts), repeat)
            assert core(task, reply) == score_completion(task, reply).reward
            warm.append(median_time(lambda: core(task, reply), repeat) / base)
            e2e.append(median_time(lambda: score_completion(task, reply), repeat) / base)
            cold_s = median_time(lambda: (clear_cache(), core(task, reply)), repeat)
            cold.append(cold_s / base)
            pooled_vs_raw_cold.append(cold_s / median_time(lambda: raw_cold(sources, texts), repeat))
        out[f"{policy}_end_to_end_warm"] = statistics.median(e2e)
        out[f"{policy}_overhead_warm"] = statistics.median(warm)
        out[f"{policy}_overhead_cold"] = statistics.median(cold)
        pooled_cold += cold
    out["overhead_cold"] = statistics.median(pooled_cold)
    out["overhead_cold_vs_raw_compile"] = statistics.median(pooled_vs_raw_cold)
    stages = per_pattern_us(patterns[::4], repeat)
    out["stages_us"] = stages
    out["baseline_mean_reward"] = statistics.mean(score_completion(t, policies.baseline(t)).reward for t in tasks)
    out["oracle_mean_reward"] = statistics.mean(score_completion(t, policies.oracle(t)).reward for t in tasks)
    hostile = json.dumps({"rules": [{"pattern": r"(?:.|..)+$x", "replacement": ""}]})
    score, cpu, wall = score_with_cost(tasks[0], hostile)
    code = score.errors[0].code
    out["hostile_cpu_s"], out["hostile_wall_s"], out["hostile_budget_s"], out["hostile_error"] = cpu, wall, 2.0, code
    rows = [("figure", "value", "target"),
            ("scoring / raw regex.sub floor, oracle replies (warm)", f"{out['oracle_overhead_warm']:.2f}x", "<= 1.5x"),
            ("scoring / raw regex.sub floor, baseline replies (warm)", f"{out['baseline_overhead_warm']:.2f}x",
             "<= 1.5x"),
            ("end to end (score_completion, scan in its worker process) / floor, oracle (warm)",
             f"{out['oracle_end_to_end_warm']:.2f}x", "-"),
            ("end to end / floor, baseline (warm)", f"{out['baseline_end_to_end_warm']:.2f}x", "-"),
            ("scoring / floor, oracle replies (cold: cache cleared)", f"{out['oracle_overhead_cold']:.2f}x", "-"),
            ("scoring / floor, baseline replies (cold)", f"{out['baseline_overhead_cold']:.2f}x", "-"),
            ("scoring / floor, oracle + baseline replies (cold)", f"{out['overhead_cold']:.2f}x", "<= 2.5x"),
            ("cold scoring / (regex.compile uncached + regex.sub), both", f"{out['overhead_cold_vs_raw_compile']:.2f}x",
             "-")]
    rows += [(f"  per fresh pattern: {name}", f"{us:.0f} us", "-") for name, us in stages.items()]
    rows += [("median task build (load_task)", f"{out['task_build_ms']:.1f} ms", "-"),
             ("hostile reply: CPU time in its scan worker (budget 2.0 s)", f"{out['hostile_cpu_s']:.3f} s ({code})",
              "<= 2.15 s"),
             ("hostile reply: wall time in its scan worker", f"{out['hostile_wall_s']:.3f} s", "-"),
             ("oracle mean reward, dev", f"{out['oracle_mean_reward']:.3f}", "1.000"),
             ("baseline mean reward, dev", f"{out['baseline_mean_reward']:.3f}", "well between 0 and 1")]
    print(f"bench_core on {machine()} ({time.perf_counter() - t0:.0f} s)")
    print(table(rows))
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
