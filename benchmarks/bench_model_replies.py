"""Scores replies that language models wrote from the prompt alone, by level.

    uv run python benchmarks/bench_model_replies.py [DIR]

DIR (default: the newest ``benchmarks/data/model-replies-*``) holds files named
``L{level}-dev{index}.reply.txt``: each the complete reply a model gave to dev task
``index`` at ``level`` when shown only that task's system prompt and prompt (no tools,
no code execution). Prints each reply's reward, what it leaked or destroyed (by class),
and per level the mean with its standard error beside `induce` and the oracle on the
same tasks, so the question "does the level separate models?" is answered by a
script, not by hand.

``model-replies-2026-12-02-env0.8`` holds the replies of environment 0.8.0 (corpus-v4)
at levels 1, 3 and 5, eight dev tasks each (3, 11, ..., 59): each from a frontier-model
session allowed only to print its prompt file and write its reply, two tasks per
session. ``single-pass-2026-12-02-env0.8`` (not read by default; pass it as DIR) holds
replies to the same prompts at levels 1 and 5 from sessions told to answer as a fast
model with a small thinking budget would: read once, write the answer, no drafting or
re-checking (one task per session). Replies to corpus-v3 tasks (environment 0.7.0) are kept in
``benchmarks/data/corpus-v3/`` (not read by default: corpus-v4 reseeded every stream,
so they score only with the 0.7.0 build; its README says how): with the same protocol,
level 1 scored 0.919 and level 3 0.910 (both level-3 losses key-scoped values of a
length no shown value had, the unfairness corpus-v4 removed).
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redaction_pressure import load_task, policies
from redaction_pressure.scoring.score import score_completion

DATA = Path(__file__).resolve().parent / "data"
NAME = re.compile(r"L(\d)-dev(\d+)\.reply\.txt")


def stderr(values: list[float]) -> float:
    return statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else sorted(DATA.glob("model-replies-*"))[-1]
    by_level: dict[int, list[tuple[float, float, float]]] = {}
    for path in sorted(folder.glob("*.reply.txt"), key=lambda p: tuple(map(int, NAME.findall(p.name)[0]))):
        level, index = map(int, NAME.findall(path.name)[0])
        task = load_task("dev", index, level=level)
        score = score_completion(task, path.read_text(encoding="utf-8"))
        induce = score_completion(task, policies.induce(task)).reward
        oracle = score_completion(task, policies.oracle(task)).reward
        leaked = {k: v for k, v in score.secret_classes.items() if v[1] < v[0]}
        destroyed = {k: v for k, v in score.decoy_classes.items() if v[1]}
        errors = [e.code for e in score.errors]
        print(f"level {level} dev {index:>2}: model {score.reward:.3f}  induce {induce:.3f}  oracle {oracle:.3f}"
              f"  leaked {leaked or '-'}  destroyed {destroyed or '-'}" + (f"  errors {errors}" if errors else ""))
        by_level.setdefault(level, []).append((score.reward, induce, oracle))
    print(f"\n{folder.name}: mean reward (± standard error) by level")
    for level, rows in sorted(by_level.items()):
        model, induce, oracle = ([r[i] for r in rows] for i in range(3))
        print(f"  level {level}: model {statistics.mean(model):.3f} ± {stderr(model):.3f} (n={len(model)}, "
              f"{sum(m == 1.0 for m in model)} perfect)  induce {statistics.mean(induce):.3f}  "
              f"oracle {statistics.mean(oracle):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
