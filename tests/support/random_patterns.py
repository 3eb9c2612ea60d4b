"""Patterns for measuring the compile-cost bound against what `regex` really builds:
realistic ones (every catalogue oracle, the built-in policies' rules, the long
alternations and open-ended repeats models write) and random ones from a small
grammar that leans on what makes compiling expensive (counted repeats, nested
repeats, sets, case folding, lookarounds, conditionals, alternations).

Deterministic: the same seed gives the same patterns (random.Random with an explicit
seed is fine here; these are measurement inputs, not corpus content)."""

from __future__ import annotations

import json
import random

_ATOMS = ("a", "b", "x", r"\d", r"\w", r"\s", ".", "[a-z]", "[A-Za-z0-9_-]", "[0-9a-f]", r"[^\s\"']",
          "[A-Za-z0-9+/=\\s]", r"\bAKIA", "ghp_", "-----BEGIN", "sk-", "[[:alpha:]]", r"\p{L}", "ß", "[ß-ﬆ]",
          "(?fi:[ß-ﬆ])", r"[\x00-\U0010ffff]", r"\X", r"(?i:[^a-z])", r"\N{LATIN SMALL LETTER SHARP S}", "[\\W\\d]")
_FLAGS = ("", "(?i)", "(?f)", "(?fi)", "(?x)", "(?s)", "(?m)", "(?V1)", "(?r)", "(?w)")


def _count(r: random.Random) -> str:
    kind = r.randrange(7)
    small, big = r.randint(0, 12), r.choice((16, 32, 64, 100, 256, 512, 1000, 4096))
    return ("*", "+", "?", f"{{{small}}}", f"{{{small},{big}}}", f"{{{small},}}",
            f"{{{r.randint(0, 40)},{r.randint(40, 80)}}}")[kind] + r.choice(("", "", "?", "+"))


def _node(r: random.Random, depth: int) -> str:
    pick = r.randrange(10 if depth < 4 else 3)
    if pick <= 2:
        atom = r.choice(_ATOMS)
        return atom + (_count(r) if r.random() < 0.4 else "")
    if pick == 3:
        return "(?:" + "".join(_node(r, depth + 1) for _ in range(r.randint(1, 3))) + ")" + _count(r)
    if pick == 4:
        return "(?:" + "|".join(_node(r, depth + 1) for _ in range(r.randint(2, 5))) + ")"
    if pick == 5:
        look = r.choice(("(?=", "(?!", "(?<=", "(?<!"))
        return look + _node(r, depth + 1) + ")"
    if pick == 6:
        return "(" + _node(r, depth + 1) + ")" + (_count(r) if r.random() < 0.5 else "")
    if pick == 7:
        return "(?(?=" + _node(r, depth + 1) + ")" + _node(r, depth + 1) + "|" + _node(r, depth + 1) + ")"
    if pick == 8:
        return "(?i:" + _node(r, depth + 1) + ")"
    return "".join(r.choice("abcdefghijklmnopqrstuvwxyz_-") for _ in range(r.randint(1, 30)))


def random_patterns(n: int, seed: int = 0, max_chars: int = 4096) -> list[str]:
    """``n`` patterns; one in four is grown towards ``max_chars`` (long patterns are
    what the pattern-length limit lets through)."""
    r = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        parts = [_node(r, 0) for _ in range(r.randint(1, 8))]
        if len(out) % 4 == 3:
            while sum(map(len, parts)) < max_chars * r.uniform(0.5, 1.0):
                parts.append(_node(r, 0))
        text = r.choice(_FLAGS) + "".join(parts)
        if len(text) <= max_chars:
            out.append(text)
    return out


def model_style_alternations(prefixes: list[str]) -> list[str]:
    """What a strong model writes to cover formats it has not seen in a stream: one
    alternation of vendor shapes, 300-2000 characters long."""
    shapes = [f"{p}[A-Za-z0-9_-]{{20,512}}" for p in prefixes]
    out = []
    for k in (8, 16, 24, 32, 48, len(shapes)):
        out.append(r"\b(?:" + "|".join(shapes[:k]) + r")\b")
    out.append(r"(?<![A-Za-z0-9])(?:" + "|".join(shapes) + r")(?![A-Za-z0-9_-])")
    return out + exact_vendor_alternations(prefixes)


def exact_vendor_alternations(prefixes: list[str]) -> list[str]:
    """The same with each format's exact body length (``ghp_[A-Za-z0-9]{36}``), as a
    model that knows the vendors' lengths writes it: a counted repeat per format, the
    shape the compile bound charges most for (issue 20 review: 53 formats, 1,628
    characters, refused by the bound before sets were charged once per member)."""
    alphabets = ("[A-Za-z0-9]", "[A-Za-z0-9_-]", "[0-9a-f]", "[A-Z0-9]", "[A-Za-z0-9+/]")
    shapes = [f"{p}{alphabets[i % len(alphabets)]}{{{40 + (7 * i) % 40}}}" for i, p in enumerate(prefixes)]
    return [r"\b(?:" + "|".join(shapes[:k]) + r")\b" for k in (12, 24, 39, len(shapes))] + [
        r"(?<=[\s(=:\"'])(?:" + "|".join(shapes) + r")(?![A-Za-z0-9_-])"]


# Vendors' documented token prefixes (facts about formats), escaped for a regex.
VENDOR_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-", "glptt-",
                   "xoxb-", "xoxp-", "xoxe\\.xoxp-", "xapp-", "sk_live_", "rk_live_", "sk_test_", "sk-proj-",
                   "sk-svcacct-", "sk-ant-api03-", "sk-ant-admin01-", "hf_", "gsk_", "r8_", "npm_", "pypi-",
                   "dckr_pat_", "SG\\.", "key-", "dop_v1_", "doo_v1_", "dor_v1_", "HRKU-AA", "dapi", "hvs\\.",
                   "hvb\\.", "sntryu_", "sntrys_", "shpat_", "shpss_", "shpca_", "shppa_", "EAAA", "sq0atp-",
                   "sq0csp-", "AKIA", "ASIA", "AIza", "rubygems_", "ops_", "AGE-SECRET-KEY-1", "A3-")

FALSE_ZERO_CASES = (
    # issue 20 item 6: cheap to compile, voided by the old bound
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[A-Za-z0-9+/=\s]{64,10000}-----END [A-Z ]*PRIVATE KEY-----",
    r"(?<=password=)[^\s\"']{8,4096}",
    r"(?:[A-Za-z0-9+/]{4}){10,600}",
    r"(?P<prefix>ghp_)[A-Za-z0-9#]{36}",
    r"(?(?=AKIA)AKIA\K[A-Z0-9]{16}|ASIA[A-Z0-9]{16})",
)


def realistic_patterns() -> list[str]:
    """Every catalogue oracle pattern, the baseline's rules, the oracle's and induce's
    rules over the dev tasks, model-style alternations and the false-zero cases."""
    from redaction_pressure import catalog, load_task, policies

    out: list[str] = []
    for entry in catalog():
        out += entry["oracle"]
    out += list(policies.BASELINE_RULES)
    for index in range(64):
        task = load_task("dev", index)
        for policy in (policies.oracle, policies.induce):
            body = policy(task).split("```json\n", 1)[1].rsplit("```", 1)[0]
            out += [rule["pattern"] for rule in json.loads(body)["rules"]]
    out += model_style_alternations(list(VENDOR_PREFIXES))
    out += list(FALSE_ZERO_CASES)
    return list(dict.fromkeys(out))
