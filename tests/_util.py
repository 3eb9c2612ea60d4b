"""Shared helpers for the tests (not a test module)."""

from __future__ import annotations

import hashlib
import json

import regex


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


def literal_rules(task, cut) -> str:
    """One rule per held-out secret, removing ``cut(secret_text)`` -> (keep_before,
    removed, keep_after) exactly, as literal lookaround patterns."""
    alts = []
    for record in task.heldout:
        for s in record.secrets:
            before, gone, after = cut(record.text[s.start:s.end])
            alts.append(f"(?<={regex.escape(before)}){regex.escape(gone)}(?={regex.escape(after)})")
    rules = []
    for i in range(0, len(alts), 8):
        rules.append(("|".join(alts[i:i + 8]), ""))
    return reply(rules[:24])
