"""The constant-reply adversary: the best single reply used for every task.

    uv run python benchmarks/bench_adversary.py [--level L] [--train N] [--quick]

An environment a memorised reply solves measures memory, not redaction. This script
searches hard for such a reply and prints how well it does on dev (SPEC §3: the best
must score at most 0.50 mean). The pool it searches holds every rule a memoriser could
know: every catalogue oracle pattern, the old corpus-v1 union, the baseline's rules,
generic heuristics for house formats (every separator, alphabet and length band the
generator can draw), keyword and context rules (every key noun the generator uses),
high-entropy runs, every PII form under every policy (with and without each stated
exception), every level's structures (scoped sections, key-block labels, base64
credentials in Kubernetes Secrets), and delete-everything. Search: greedy forward
selection with removal steps, from several starts (empty, all oracle patterns,
baseline, delete-everything), on train tasks, scoring a rule set by the union of what
its rules remove from the original texts; the winner is then scored exactly (rules in
order, through ``score_completion``) on all 64 dev tasks (in the better of two rule
orders, chosen on train), beside every constant reply stored in
``benchmarks/data/constant-replies/`` (found by other adversaries); the best of them on
dev is reported as the best constant reply. It also prints min / median / max over dev of baseline,
induce, oracle and the best constant reply.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

from redaction_pressure import load_task, policies, score_completion
from redaction_pressure.corpus.blocks import _SECRET_LABELS, NEUTRAL_LABELS
from redaction_pressure.corpus.context import _NOUNS, _VERBS
from redaction_pressure.corpus.families import SECRETS
from redaction_pressure.corpus.house import ALPHABETS
from redaction_pressure.corpus.policy import _HOST_SUFFIXES, _ID_PREFIXES, _PHONE_STYLES, _ROLES, KEYS
from redaction_pressure.corpus.scoped import NEUTRAL_SECTIONS, SECRET_SECTIONS

STORED = Path(__file__).resolve().parent / "data" / "constant-replies"
V1_UNION = (  # corpus-v1's 22 oracle patterns: the reply that scored 1.0 everywhere there
    r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b(?<!EXAMPLE)",
    r"""(?i)(?<=aws_secret_access_key["']?\s*[:=]\s*["']?)(?-i:(?![A-Za-z0-9/+]*EXAMPLE)[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
    r"\bgh[pousr]_[A-Za-z0-9]{36}\b",
    r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b",
    r"\bxox[bpa]-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}\b",
    r"https://hooks\.slack\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}\b",
    r"\b[sr]k_live_[A-Za-z0-9]{24,99}\b",
    r"\bAIza[A-Za-z0-9_\-]{35}(?![A-Za-z0-9_\-])",
    r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])",
    r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----[\s\S]*?-----END (?:RSA |EC |OPENSSH )?PRIVATE KEY-----",
    r"\bsk-(?:proj-)?[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
    r"\bsk-ant-api03-[A-Za-z0-9_\-]{93}AA(?![A-Za-z0-9_\-])",
    r"\bSK[0-9a-f]{32}\b",
    r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])",
    r"(?<=\b(?:postgres(?:ql)?|mysql|mongodb\+srv|redis|amqp)://[A-Za-z0-9_.\-]*:)[^@\s/:]+(?=@)",
    r"(?<=\bhttps?://[A-Za-z0-9_.\-]+:)[^@\s/:]+(?=@)",
    r"(?<=\bBasic )[A-Za-z0-9+/]{8,}={0,2}",
    r"(?<=\bBearer )[A-Za-z0-9\-._~+/]{20,}=*",
    r"(?<=\bmysql\b[^\n]*?\s-p)[^\s']+",
    r"(?<=\bcurl\b[^\n]*?\s-u [^\s:]+:)[^\s]+",
    r"(?<=\b(?:docker login\b[^\n]*?\s-p|sshpass -p) )[^\s]+",
    r"""(?i)(?<=(?<![A-Za-z0-9_])(?:password|db_password|secret|client_secret|token|api_key)["']?\s*[:=]\s*["']?)[A-Za-z0-9_\-.+!#%]{20,}""",
)


def pool() -> list[str]:
    rules: list[str] = []
    rules += [p for f in SECRETS for p in f.oracle]
    rules += list(V1_UNION)
    rules += list(policies.BASELINE_RULES)
    # House formats: abbreviation, separator, marker, separator, body, optional checksum.
    for sep in ("_", "-", r"\.", "[_.-]"):
        for _, _, cls in (*ALPHABETS, ("any", "", "[A-Za-z0-9]")):
            for lengths in ("{16,44}", "{16,30}", "{28,44}", "{12,60}"):
                rules.append(rf"(?<![A-Za-z0-9_.-])[A-Za-z]{{2,4}}{sep}[a-z]{{2,4}}{sep}{cls}{lengths}"
                             rf"(?:[_.-][0-9A-V]{{6}})?(?![A-Za-z0-9_-])")
    # The house structure itself: abbreviation, separator, marker, the same separator.
    for _, _, cls in (*ALPHABETS, ("any", "", "[A-Za-z0-9]")):
        rules.append(rf"(?<![A-Za-z0-9_.-])[A-Za-z]{{2,4}}([_.-])[a-z]{{2,4}}\1{cls}{{16,44}}"
                     rf"(?:[_.-][0-9A-V]{{6}})?(?![A-Za-z0-9_-])")
    # Context secrets' structure: a service key or flag ending in any noun the generator
    # draws, holding a value of a generated alphabet and length range.
    nouns = "|".join(_NOUNS)
    rules.append(rf"""(?i)(?<=(?<![A-Za-z0-9_-])[a-z]{{4,12}}_(?:{nouns})["']?\s*[:=]\s*["']?)"""
                 r"(?-i:[A-Za-z0-9]{14,38})(?![A-Za-z0-9_-])")
    rules.append(rf"(?<=ctl (?:{'|'.join(_VERBS)}) --[a-z]{{4,12}}-(?:{nouns})[ =])[A-Za-z0-9]{{14,38}}")
    # Keyword and context rules: any value under a key holding one of these words.
    value = r"""(?!\s)[^\s"',;]+"""
    words = ("key", "token", "credential", "access", "apikey", "client", "signing", "service", "secret",
             "password", "auth", *_NOUNS)
    for w in words:
        rules.append(rf"""(?i)(?<=[A-Za-z0-9]_{w}["']?\s*[:=]\s*["']?){value}""")
        rules.append(rf"""(?i)(?<=--[a-z]+-{w}[ =]){value}""")
    rules.append(rf"""(?i)(?<=(?:key|token|secret|password|credential|auth)\w*["']?\s*[:=]\s*["']?){value}""")
    rules.append(rf"""(?i)(?<=[A-Za-z0-9]_(?:{'|'.join(_NOUNS)})["']?\s*[:=]\s*["']?){value}""")
    rules.append(r"""(?<=[:=]\s?["']?)[A-Za-z0-9+/_.-]{16,}(?=["']?(?:\s|$|,))""")
    # High entropy.
    for n in (16, 20, 24, 32, 40):
        rules.append(rf"(?<![A-Za-z0-9+/_-])(?=[A-Za-z0-9+/_-]*[0-9])(?=[A-Za-z0-9+/_-]*[A-Z])[A-Za-z0-9+/_-]{{{n},}}")
        rules.append(rf"(?<![0-9a-f])[0-9a-f]{{{n},}}(?![0-9a-f])")
    # PII under every policy.
    rules.append(r"(?<![A-Za-z0-9._%+/:@-])[a-z0-9._+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?![A-Za-z0-9_.@-])")
    rules.append(r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9.])")
    rules += [rf"(?<![0-9A-Za-z+(-]){p}(?![0-9])" for _, p in _PHONE_STYLES]
    rules.append(r"(?<![A-Za-z0-9_.@-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:"
                 + "|".join(regex.escape(s) for s in _HOST_SUFFIXES) + r")(?![A-Za-z0-9_.-])")
    rules.append(r"(?<![A-Za-z0-9_-])(?:" + "|".join(_ID_PREFIXES) + r")[-_]?[1-9][0-9]{5,8}(?![A-Za-z0-9_-])")
    for keys in KEYS.values():
        rules.append(rf"""(?i)(?<=(?:{'|'.join(keys)})["']?\s*[:=]\s*["']?){value}""")
    # What a memoriser can know of the stated exceptions (their kept parts are drawn per
    # stream): private ranges are never client addresses, support desks sit on a
    # subdomain (an address at exactly two labels), build hosts' names are the
    # stream's roles and environments.
    rules.append(r"(?<![0-9.])(?!10\.|192\.168\.|172\.(?:1[6-9]|2[0-9]|3[01])\.)(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9.])")
    roles = "|".join(_ROLES)
    rules.append(rf"(?<![A-Za-z0-9_.@-])(?:{roles})-[0-9]{{2}}\.[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:"
                 + "|".join(regex.escape(s) for s in _HOST_SUFFIXES) + r")(?![A-Za-z0-9_.-])")
    rules.append(r"(?<![A-Za-z0-9._%+/:@-])[a-z0-9._+-]+@[a-z0-9-]+\.[a-z]{2,}(?![A-Za-z0-9_.@-])")
    # Higher levels' structures: a key under a production section, a key block with a
    # secret label, a base64 credential in a Kubernetes Secret.
    # The same in every layout (a JSON config's objects too, levels-v10) and under the
    # role-free names a level-5 stream splits into live and test slots (a memoriser
    # knows the words, not which are live).
    for names in (SECRET_SECTIONS, NEUTRAL_SECTIONS):
        sections = "|".join(names)
        rules.append(rf"(?m)(?<=(?:^\[(?:{sections})\]\n(?:(?!\[)[^\n]*\n)*"
                     rf"|^(?:{sections}):\n(?:[ \t]+[^\n]*\n)*[ \t]+)"
                     rf"[a-z]{{4,12}}_(?:{nouns})[ \t]*[:=][ \t]*[\"']?)[A-Za-z0-9]{{18,36}}(?![A-Za-z0-9_-])")
        rules.append(rf"(?m)(?<=^  \"(?:{sections})\": \{{\n(?:    [^\n]*\n)*    \"[a-z]{{4,12}}_(?:{nouns})\": \")"
                     rf"[A-Za-z0-9]{{18,36}}(?![A-Za-z0-9_-])")
    # Key blocks by the labels that say "secret", and by those plus the role-free ones
    # (which a stream uses for its secret and its public block alike).
    for chosen in (_SECRET_LABELS, _SECRET_LABELS + NEUTRAL_LABELS):
        labels = "|".join(regex.escape(x) for x in chosen)
        rules.append(rf"-----BEGIN [A-Z]+ (?:{labels})-----\n[\s\S]*?-----END [A-Z]+ (?:{labels})-----")
    rules.append(r"-----BEGIN [A-Z ]+-----\n[\s\S]*?-----END [A-Z ]+-----")
    rules.append(r"""(?<=[a-z]-credential["']?:[ \t]*["']?)[A-Za-z0-9+/]{16,}={0,2}""")
    rules.append(r"[\s\S]+")  # delete everything
    seen, out = set(), []
    for r in rules:
        if r not in seen:
            regex.compile(r)
            seen.add(r)
            out.append(r)
    return out


@dataclass
class Episode:
    """One task's held-out records as one integer bit mask space."""
    texts: list[str]
    offsets: list[int]
    spans: list[int]  # per secret span, its mask
    secret_union: int
    rule_masks: list[int]


def _episode(task, rules: list[regex.Pattern]) -> Episode:
    texts = [r.text for r in task.heldout]
    offsets, pos = [], 0
    for t in texts:
        offsets.append(pos)
        pos += len(t)
    spans, union = [], 0
    for r, off in zip(task.heldout, offsets, strict=False):
        for s in r.secrets:
            m = ((1 << (s.end - s.start)) - 1) << (off + s.start)
            spans.append(m)
            union |= m
    masks = []
    for p in rules:
        m = 0
        for t, off in zip(texts, offsets, strict=False):
            try:
                for hit in p.finditer(t, timeout=1.0):
                    if hit.end() > hit.start():
                        m |= ((1 << (hit.end() - hit.start())) - 1) << (off + hit.start())
            except TimeoutError:
                pass
        masks.append(m)
    return Episode(texts, offsets, spans, union, masks)


def _reward(ep: Episode, removed: int) -> float:
    full = [s for s in ep.spans if removed & s == s]
    removed_chars = removed.bit_count()
    recall = len(full) / len(ep.spans) if ep.spans else 0.0
    full_chars = sum(s.bit_count() for s in full)
    precision = full_chars / removed_chars if removed_chars else 0.0
    collateral = removed_chars - (removed & ep.secret_union).bit_count()
    clean = 1.0 if ep.spans and len(full) == len(ep.spans) and collateral == 0 else 0.0
    return 0.35 * recall + 0.35 * precision + 0.30 * clean


def _mean(episodes: list[Episode], chosen: list[int]) -> float:
    total = 0.0
    for ep in episodes:
        removed = 0
        for i in chosen:
            removed |= ep.rule_masks[i]
        total += _reward(ep, removed)
    return total / len(episodes)


def greedy(episodes: list[Episode], n_rules: int, start: list[int], banned: frozenset[int] = frozenset()
           ) -> tuple[list[int], float]:
    chosen = list(start)
    best = _mean(episodes, chosen)
    while True:
        moves = []
        if len(chosen) < 24:
            moves += [[*chosen, i] for i in range(n_rules) if i not in chosen and i not in banned]
        moves += [[c for c in chosen if c != i] for i in chosen]
        scored = [(_mean(episodes, m), m) for m in moves]
        value, move = max(scored, key=lambda x: x[0]) if scored else (best, chosen)
        if value <= best + 1e-9:
            return chosen, best
        chosen, best = move, value


def _reply(rules: list[str]) -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in rules]})


def _stats(values: list[float]) -> str:
    return (f"mean {statistics.fmean(values):.3f}  min {min(values):.3f}  "
            f"median {statistics.median(values):.3f}  max {max(values):.3f}")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=96, help="train tasks to search on (default 96)")
    ap.add_argument("--quick", action="store_true", help="search on 24 train tasks")
    ap.add_argument("--level", type=int, default=1, help="difficulty level of every task (default 1)")
    ap.add_argument("--dev", type=int, default=64, help="dev tasks to score on (default 64)")
    args = ap.parse_args(argv)
    level = args.level
    n_train = 24 if args.quick else args.train
    t0 = time.perf_counter()
    rules = pool()
    compiled = [regex.compile(r) for r in rules]
    step = max(1, 10_000_000 // n_train)  # spread over the train range
    train_tasks = [load_task("train", i * step, level=level) for i in range(n_train)]
    train = [_episode(t, compiled) for t in train_tasks]
    starts = {
        "empty": [],
        "all oracle patterns": [i for i, r in enumerate(rules) if any(r in f.oracle for f in SECRETS)],
        "baseline": [rules.index(r) for r in policies.BASELINE_RULES],
        "delete everything": [rules.index(r"[\s\S]+")],
    }
    # Deleting everything dominates any rule set it joins, so the search also runs
    # without it, to find the best reply that keeps something.
    wipe = frozenset({rules.index(r"[\s\S]+")})
    runs = [(name, start, frozenset()) for name, start in starts.items()]
    runs += [(f"{name}, no wipe", start, wipe) for name, start in starts.items() if name != "delete everything"]
    best_rules, best_train, best_start = [], -1.0, ""
    for name, start, banned in runs:
        chosen, value = greedy(train, len(rules), start[:24], banned)
        print(f"  search from {name:<32} train mean {value:.3f} with {len(chosen)} rules", flush=True)
        if value > best_train:
            best_rules, best_train, best_start = [rules[i] for i in chosen], value, name
    # The search scores a rule set by the union of what its rules remove, but rules run
    # in order on the rewritten text: a broad rule early can eat what a precise one
    # later needs (a keyword rule taking "Bearer x" before the bearer rule). Score the
    # winner exactly on the train tasks in search order and specific-first order (fewest
    # characters removed over train first) and keep the better, so the figure is never
    # lowered by an order the search did not choose on purpose.
    coverage = {r: sum(ep.rule_masks[rules.index(r)].bit_count() for ep in train) for r in best_rules}
    orders = {"search order": best_rules, "specific first": sorted(best_rules, key=lambda r: coverage[r])}
    exact = {name: statistics.fmean(score_completion(t, _reply(order)).reward for t in train_tasks)
             for name, order in orders.items()}
    best_order = max(exact, key=lambda k: exact[k])
    best_rules = orders[best_order]
    print("  exact train mean by rule order: " + ", ".join(f"{k} {v:.3f}" for k, v in exact.items())
          + f"; kept {best_order}")
    dev = [load_task("dev", i, level=level) for i in range(args.dev)]
    fixed = {
        "best constant reply": _reply(best_rules),
        "v1 union (22 patterns)": _reply(list(V1_UNION)),
        "every catalogue oracle pattern": _reply([p for f in SECRETS for p in f.oracle][:24]),
        "delete everything": _reply([r"[\s\S]+"]),
    }
    results = {name: [score_completion(t, reply).reward for t in dev] for name, reply in fixed.items()}
    # Constant replies found by other means (benchmarks/data/constant-replies): the best
    # constant reply reported is the best known, not only this search's.
    searched = statistics.fmean(results["best constant reply"])
    for path in sorted(STORED.glob("*.json")):
        reply = path.read_text(encoding="utf-8")
        results[f"stored: {path.stem}"] = [score_completion(t, reply).reward for t in dev]
        if statistics.fmean(results[f"stored: {path.stem}"]) > statistics.fmean(results["best constant reply"]):
            results["best constant reply"] = results[f"stored: {path.stem}"]
            best_rules = [r["pattern"] for r in json.loads(reply)["rules"]]
            best_start, best_train = f"stored reply {path.name} (not searched here)", float("nan")
    for name in ("baseline", "induce", "oracle"):
        results[name] = [score_completion(t, policies.POLICIES[name](t)).reward for t in dev]
    print(f"constant-reply adversary, level {level}, on {machine()}: pool {len(rules)} rules, searched on "
          f"{n_train} train tasks ({time.perf_counter() - t0:.0f} s)")
    print(f"best constant reply: {len(best_rules)} rules (search started from {best_start}), "
          f"train mean {best_train:.3f}")
    for r in best_rules:
        print(f"    {r}")
    print(f"dev ({len(dev)} tasks, level {level}):")
    for name, values in results.items():
        print(f"  {name:<32} {_stats(values)}")
    best = statistics.fmean(results["best constant reply"])
    print(f"best constant reply on dev: {best:.3f} (target <= 0.50; this search's own winner {searched:.3f})")
    return {"level": level, "rewards": results, "best_rules": best_rules,
            **{name: statistics.fmean(v) for name, v in results.items()}, "best_constant": best}


if __name__ == "__main__":
    main()
