"""Failed rollouts of a run, summarised by kind and count.

A vf-eval run whose provider rejected every request holds Episodes whose traces have
``ok: false`` and ``errors: [{type, message, ...}]`` but no scores, so each fails the
trace schema a dozen times. The person sealing it needs the cause, not 448 schema
errors: ``all 64 rollouts failed (ProviderError: 401 invalid api key)``. The text comes
from the run file, so it is cut short and non-printable characters are escaped.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from redaction_pressure.contract import printable

_MAX_MESSAGE = 160


def _printable(text: str) -> str:
    return printable(" ".join(text.split())[:_MAX_MESSAGE])


def failed_kind(trace: Any) -> tuple[str, str] | None:
    """(error type, first message) of a failed rollout; None for one that did not fail."""
    if not isinstance(trace, dict):
        return None
    errors = trace.get("errors")
    failed = trace.get("ok") is False or (isinstance(errors, list) and bool(errors))
    if not failed:
        return None
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    kind, message = first.get("type"), first.get("message")
    if not isinstance(kind, str):
        kind = "failed (no error recorded)"
    if not isinstance(message, str):
        message = ""
    return _printable(kind), _printable(message)


def summarise(traces: list[Any]) -> str | None:
    """``all N rollouts failed (Kind: message)`` / ``k of N rollouts failed (...)``, or
    None when no rollout failed. Kinds are listed most frequent first (then by name),
    each with its count when there are several kinds and one example message."""
    kinds = [k for k in map(failed_kind, traces) if k is not None]
    if not kinds:
        return None
    counts = Counter(kind for kind, _ in kinds)
    example: dict[str, str] = {}
    for kind, message in kinds:
        example.setdefault(kind, message)
    parts = []
    for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        text = kind if len(counts) == 1 else f"{n} × {kind}"
        parts.append(f"{text}: {example[kind]}" if example[kind] else text)
    head = f"all {len(traces)} rollouts failed" if len(kinds) == len(traces) else \
        f"{len(kinds)} of {len(traces)} rollouts failed"
    return f"{head} ({'; '.join(parts)})"
