"""Shared helpers for the tests (not a test module)."""

from __future__ import annotations

import hashlib
import json
import os

import regex

from redaction_pressure.scoring import pattern_guard as guard

_SECTION_HEADER = regex.compile(r'(?m)^(?:\[([^\]\n]+)\]|([A-Za-z0-9_]+):|  "([A-Za-z0-9_]+)": \{)[ \t]*$')


def common_start(texts: list[str]) -> str:
    return os.path.commonprefix(texts)  # noqa: RUF071 - texts, not paths


def common_end(texts: list[str]) -> str:
    return common_start([t[::-1] for t in texts])[::-1]


def section_of(text: str, at: int) -> str:
    """The name of the last section header (INI/TOML table, top-level YAML key, JSON
    config object) before ``at``; "" when there is none."""
    headers = list(_SECTION_HEADER.finditer(text, 0, at))
    return next(g for g in headers[-1].groups() if g) if headers else ""


def fingerprint(task) -> str:
    """SHA-256 of the canonical JSON of a task's corpus content (records, labels,
    prompt, mix). Identity is left out: the source digest changes with any edit."""
    data = {
        "id": task.id, "seed": task.seed, "templates": task.templates,
        "secret_families": task.secret_families, "decoy_families": task.decoy_families,
        "shown": [r.as_dict() for r in task.shown], "heldout": [r.as_dict() for r in task.heldout],
        "prompt": task.prompt, "system_prompt": task.system_prompt,
    }
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def reply(rules) -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": r} for p, r in rules]})


def positional_rules(task, cut) -> str:
    """Rules removing, from every held-out secret, the characters ``cut(length)`` ->
    (start, end) relative to the secret. Each removal is anchored by 16 characters of
    literal context before it and characters from its middle (random, so unique) and
    matches an exact count of characters, so patterns stay short for any secret."""
    alts = []  # (alternative, the compiled size its counted repeats cost)
    for record in task.heldout:
        for s in reversed(record.secrets):  # later first: a removal never breaks a later anchor
            a, b = cut(s.end - s.start)
            start = s.start + a
            before = record.text[max(0, start - 16):start]
            mid = start + (b - a) // 2  # the middle of a secret is random, so unique
            probe = regex.escape(record.text[mid:min(mid + 10, s.start + b)])
            alt = f"(?<={regex.escape(before)})(?=(?s:.){{{mid - start}}}{probe})(?s:.){{{b - a}}}"
            alts.append((alt, guard._cost(guard._parse(alt)[0], 10**9)))
    rules, current, cost = [], [], 0
    for alt, alt_cost in alts:
        if current and (len("|".join([*current, alt])) > 2000 or cost + alt_cost > guard.MAX_COMPILED_COST // 2):
            rules.append(("|".join(current), ""))
            current, cost = [], 0
        current.append(alt)
        cost += alt_cost
    if current:
        rules.append(("|".join(current), ""))
    assert len(rules) <= 24
    return reply(rules)


def cli(*argv: str) -> tuple[int, str, str]:
    """`redaction-pressure ARGV...` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from redaction_pressure.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
