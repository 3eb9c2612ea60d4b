"""Scores replies that language models wrote from the prompt alone, by level.

    uv run python benchmarks/bench_model_replies.py [DIR]

DIR (default: the newest ``benchmarks/data/model-replies-*``, replies to the current
build: ``model-replies-2026-12-04-env0.20.2``, fresh single-pass sessions, level 1 dev 3, 7,
..., 63 and level 5 dev 3, 7, ..., 63; its README) holds files named
``L{level}-dev{index}.reply.txt``: each the complete reply a model gave to dev task
``index`` at ``level`` when shown only that task's system prompt and prompt (no tools,
no code execution). Prints each reply's reward, what it leaked or destroyed (by class),
and per level the mean with its standard error beside `induce` and the oracle on the
same tasks, so the question "does the level separate models?" is answered by a
script, not by hand.

``model-replies-2026-12-04-env0.20`` holds careful sessions' replies to 0.20.0 (level 1 dev
3, 7, ..., 63, level 5 dev 1, 3, ..., 63) and, in its ``single-pass*`` folders, single-pass
ones to 0.20.0 and 0.20.1 (levels 1-5); environments 0.20.1 and 0.20.2 changed only the
prompts' words, so every one of them scores the same here.
``model-replies-2026-12-04-env0.19`` holds the replies to 0.19.0 (levels-v10); its level-1
replies, and its level-5 ones to the tasks levels-v11 left byte-identical, score the same
here (they are copied into env0.20), its other level-5 ones were written for other shown
records. ``model-replies-2026-12-04-env0.20/single-pass`` holds replies of sessions told to
read each prompt once and answer at once (give the folder).
``model-replies-2026-12-04-env0.17`` holds replies to environment 0.17.0 (corpus-v10) at
level 5, and ``levels-v9/model-replies-2026-12-03-env0.16/`` replies to 0.16.0 at levels 1
and 5. The former, and the latter's level-1 replies, still score on this build, though
since corpus-v11 three of their tasks hold other records than the reply was written for
(level 5 dev 23, level 1 dev 15 and 55), and since levels-v11 level-5 tasks with an encoded
credential other shown records; the latter's level-5 replies (levels-v9) score
only on 0.16.x. Their READMEs say what they scored. Replies to earlier corpora are kept under
``benchmarks/data/corpus-v3/`` to ``corpus-v8/``
(the newest: environment 0.14.0, level 1 dev 3, 11, ..., 59 and level 5 dev 1, 3, ..., 31,
each from a frontier-model session allowed only to read its prompt files and write its
replies). They are not read by default: each of those corpus versions reseeded every
stream, so they score only with the build they were written for; their READMEs say how
and what they scored.
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
    current = sorted(DATA.glob("model-replies-*"))
    if len(sys.argv) < 2 and not current:
        print(f"no model replies to the current corpus under {DATA}; give the folder of an earlier "
              "corpus's replies (benchmarks/data/corpus-v*/) and run this with the build they were written for")
        return 2
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else current[-1]
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
