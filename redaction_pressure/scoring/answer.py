"""Turns a model reply into rules, or into error entries with stable codes.

The reply is untrusted: it is capped in size before anything parses it, and its
JSON nesting is bounded on the raw text before the decoder (which recurses) or the
schema validator (which recurses, and formats nested values recursively) sees it. An
answer nests three deep (object, rule list, rule); a candidate text nesting deeper
than `MAX_JSON_DEPTH` is no answer. Parsing runs with a fixed stack (`stack`), so the
verdict never depends on the caller's stack depth. The rule list is checked against
the versioned answer schema, whose failures map onto the error codes of SPEC §4.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any

import jsonschema
import regex

from ..build.schemas import json_path, load_schema
from ..build.versions import ANSWER_SCHEMA_VERSION
from .stack import with_headroom

MAX_REPLY_CHARS = 200_000
MAX_RULES = 24
MAX_PATTERN_CHARS = 512
MAX_ERRORS = 50  # entries recorded per reply; the last one counts the rest
ALLOWED_REPLACEMENTS = ("[REDACTED]", "")
MAX_JSON_DEPTH = 16  # an answer nests 3 deep; up to 16 a wrong shape is still named (bad_entry)

_FENCE = regex.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", regex.DOTALL)


@dataclass(frozen=True)
class RedactionError:
    code: str
    message: str
    rule: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.rule is not None:
            out["rule"] = self.rule
        return out


@dataclass(frozen=True)
class Rule:
    pattern: str
    replacement: str


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(ANSWER_SCHEMA_VERSION))


def _plainly_valid(obj: dict[str, Any]) -> bool:
    """A shortcut for the common case: True only when ``obj`` plainly satisfies the
    answer schema (tests check it never accepts what the schema rejects). Anything
    else goes through the schema validator, which is the definition and names the
    errors. Saves ~0.2 ms a reply, a fifth of a typical scan."""
    rules = obj.get("rules")
    return (len(obj) == 1 and type(rules) is list and len(rules) <= MAX_RULES
            and all(type(r) is dict and len(r) == 2 and type(r.get("pattern")) is str
                    and 1 <= len(r["pattern"]) <= MAX_PATTERN_CHARS
                    and type(r.get("replacement")) is str and r["replacement"] in ALLOWED_REPLACEMENTS
                    for r in rules))


def _candidates(reply: str) -> list[str]:
    """The texts that may hold the answer, best first: the last fenced block, the
    whole reply, then the outermost braces."""
    out = [m.group(1) for m in _FENCE.finditer(reply)][::-1][:1]
    out.append(reply.strip())
    first, last = reply.find("{"), reply.rfind("}")
    if 0 <= first < last:
        out.append(reply[first:last + 1])
    return out


_JSON_STRING = regex.compile(r'"(?:[^"\\]|\\.)*+"', regex.DOTALL)
_NOT_BRACKET = regex.compile(r"[^\[\]{}]++")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth_bound(text: str) -> int:
    """A bound, read without recursion, on how deeply ``text`` nests arrays and
    objects: never below what the decoder reaches (up to its first error, if the text
    is not JSON, both read the same strings and brackets), and exact on JSON whenever
    it exceeds `MAX_JSON_DEPTH`, the only place where it decides anything."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return text.count("[") + text.count("{")
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _load_object(reply: str) -> dict[str, Any] | RedactionError:
    last_problem = "no JSON object found"
    for text in _candidates(reply):
        if json_depth_bound(text) > MAX_JSON_DEPTH:
            last_problem = f"JSON nests deeper than {MAX_JSON_DEPTH} levels (an answer nests 3)"
            continue
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            last_problem = f"not valid JSON: {exc}"
            continue
        if isinstance(value, dict):
            return value
        last_problem = f"expected a JSON object, got {type(value).__name__}"
    return RedactionError("malformed_json", last_problem)


def _code_for(error: jsonschema.ValidationError) -> str:
    path = list(error.absolute_path)
    if error.validator == "maxItems" and path == ["rules"]:
        return "too_many_rules"
    if path and path[-1] == "replacement" and error.validator == "enum":
        return "unsafe_replacement"
    return "bad_entry"


@with_headroom
def parse_reply(reply: object) -> tuple[list[Rule], list[RedactionError]]:
    """Returns the rules and the errors; any error makes the episode invalid. As in
    verifiers' own scoring, only the text after the last ``</think>`` is read, and a
    reply that opens ``<think>`` without ever closing it has no answer."""
    if not isinstance(reply, str):
        return [], [RedactionError("malformed_json", f"reply is {type(reply).__name__}, not text")]
    if len(reply) > MAX_REPLY_CHARS:
        return [], [RedactionError("malformed_json",
                                   f"reply has {len(reply)} characters; at most {MAX_REPLY_CHARS} are read")]
    if "</think>" in reply:
        reply = reply.rsplit("</think>", 1)[1]
    elif "<think>" in reply:
        return [], [RedactionError("malformed_json", "the reply opens <think> and never closes it: no answer")]
    obj = _load_object(reply)
    if isinstance(obj, RedactionError):
        return [], [obj]
    if _plainly_valid(obj):
        return [Rule(r["pattern"], r["replacement"]) for r in obj["rules"]], []
    if isinstance(obj.get("rules"), list) and len(obj["rules"]) > MAX_RULES:
        # Past the limit only the first extra rule is checked: a reply of 100,000 empty
        # rules would otherwise cost seconds and megabytes of error entries.
        obj = dict(obj, rules=obj["rules"][:MAX_RULES + 1])
    found = sorted(_validator().iter_errors(obj), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    errors: list[RedactionError] = []
    for e in found[:MAX_ERRORS]:
        path = list(e.absolute_path)
        rule = path[1] if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int) else None
        message = e.message if len(e.message) <= 300 else e.message[:300] + "..."
        errors.append(RedactionError(_code_for(e), f"{json_path(e.absolute_path)}: {message}", rule))
    if len(found) > MAX_ERRORS:
        last = errors[-1]
        errors[-1] = RedactionError(last.code, f"{last.message} (and {len(found) - MAX_ERRORS} more errors)", last.rule)
    if errors:
        return [], errors
    return [Rule(r["pattern"], r["replacement"]) for r in obj["rules"]], []
