"""Built-in policies: functions from a task to a reply text, used as references.

- ``oracle``: the generator's own family knowledge; scores 1.0 on every task.
- ``inaction``: no rules; scores 0.0.
- ``first_char``: the historical exploit that deletes only the first character of
  each secret; must score 0.0 (partial edits earn no recall, precision or clean gate).
- ``induce``: a learner that reads only the shown records and their labels.
- ``baseline``: a task-independent rule set in the style of a scanner's default
  config; decent recall, but careless about decoys.
"""

from __future__ import annotations

import json

from ..task.tasks import RedactionTask
from .induce import induce_rules, stated_ranges


def _reply(rules: list[tuple[str, str]]) -> str:
    body = json.dumps({"rules": [{"pattern": p, "replacement": r} for p, r in rules]}, indent=1)
    return f"```json\n{body}\n```"


def _oracle_patterns(task: RedactionTask) -> list[str]:
    return list(task.oracle_rules)


def oracle(task: RedactionTask) -> str:
    return _reply([(p, "[REDACTED]") for p in _oracle_patterns(task)])


def inaction(task: RedactionTask) -> str:
    return _reply([])


def first_char(task: RedactionTask) -> str:
    return _reply([(f"(?=(?:{p}))[\\s\\S]", "") for p in _oracle_patterns(task)])


BASELINE_RULES: tuple[str, ...] = (
    r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----",
    r"A[KS]IA[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{36}",
    r"github_pat_\w+",
    r"xox[abprs]-[A-Za-z0-9-]+",
    r"https://hooks\.slack\.com/services/\S+",
    r"[spr]k_live_[0-9A-Za-z]+",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"eyJ[\w-]+\.[\w-]+\.[\w-]+",
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"S[GK][0-9A-Za-z_.\-]{32,}",
    r"(?<=://[^:/\s@]+:)[^@\s]+(?=@)",
    r"(?<=\b(?:Basic|Bearer) )\S+",
    r"(?i)(?<=(?:password|passwd|secret|token|api_key)[\"']?\s*[=:]\s*[\"']?)[^\s\"',]+",
    r"(?<=\s-p ?)\S+",
)


def baseline(task: RedactionTask) -> str:
    return _reply([(p, "[REDACTED]") for p in BASELINE_RULES])


def induce(task: RedactionTask) -> str:
    """Rules learned from the shown records and their labels only (see ``induce``):
    the text and secret spans a model reads in the prompt, and the address ranges the
    prompt's policy sentence states, nothing else of the task."""
    examples = [(r.text, [(s.start, s.end, s.family) for s in r.secrets]) for r in task.shown]
    return _reply([(p, "[REDACTED]") for p in induce_rules(examples, stated_ranges(task.prompt))])


POLICIES = {"oracle": oracle, "induce": induce, "baseline": baseline, "inaction": inaction,
            "first-char": first_char}
