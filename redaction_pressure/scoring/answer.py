"""Turns a model reply into rules, or into error entries with stable codes.

The reply is untrusted: it is capped in size before anything parses it, and its
JSON nesting is bounded on the raw text before the decoder (which recurses) or the
schema validator (which recurses, and formats nested values recursively) sees it. An
answer nests three deep (object, rule list, rule); a candidate text nesting deeper
than `MAX_JSON_DEPTH` is no answer. Parsing runs with a fixed stack (`stack`), so the
verdict never depends on the caller's stack depth. The rule list is checked against
the versioned answer schema, whose failures map onto the error codes of SPEC §4.

Which text is the answer (what the system prompt promises, `task.prompt` states it
from `ANSWER_CHOICE`): models write prose, thinking, drafts and illustrations around
their JSON, so the reply is searched for the object that is meant — the last one: the
last fenced block holding a JSON object with a "rules" key, unless a ``{"rules": ...}``
object is written after it (a final answer fenced with tildes, quoted, broken by prose
after its closing fence, or not fenced at all, after a fenced draft); with no such block,
the whole reply as JSON; then the last ``{"rules": ...}`` object inside the text; then
the text from the first ``{`` to the last ``}``. A text that holds no object with
"rules" is judged on the first object found in the same order (its shape errors are
named), else on why its most answer-like block is not JSON.
An object with no rules is read only if no object of the reply has rules (models write
"with no secrets it would be {"rules": []}" beside their answer), and an object whose
every pattern is a placeholder (`PLACEHOLDER_PATTERN`, as in the answer format's example
`ANSWER_TEMPLATE` the system prompt shows) only if the reply holds no other candidate,
valid or not: models echo or restate the format after their answer.

Every error message starts with its reason and its numbers ("rule 9: pattern is 572
characters; the limit is 4096"), never with a quotation that truncation could cut
before the reason; rule numbers in messages count from 1, while the ``rule`` field
of an error is the 0-based index into ``rules``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, NamedTuple, cast

import jsonschema
import regex

from ..boundary.parse_bounds import json_nesting
from ..build.schemas import json_path, load_schema
from ..build.versions import ANSWER_SCHEMA_VERSION
from .stack import with_headroom

MAX_REPLY_CHARS = 200_000  # the answer: the text after the last </think>
# The whole reply, thinking included: a bound on what is read at all, far above what a
# model's token limit lets it write (about a million tokens), so thinking never voids
# an answer.
MAX_RAW_REPLY_CHARS = 4_000_000
MAX_RULES = 24
MAX_PATTERN_CHARS = 4096
MAX_ERRORS = 50  # entries recorded per reply; the last one counts the rest
ALLOWED_REPLACEMENTS = ("[REDACTED]", "")
MAX_JSON_DEPTH = 16  # an answer nests 3 deep; up to 16 a wrong shape is still named (bad_entry)
# ``{"rules":`` openings tried inside a text, last first. Each try decodes up to the rest
# of the text, so the cap keeps finding the answer linear (10,000 openings of
# ``{"rules": [`` would otherwise decode the reply 10,000 times); as it can leave an
# earlier object unread, the system prompt states it (in `ANSWER_CHOICE`).
MAX_EMBEDDED_TRIES = 16
MAX_FENCED_BLOCKS = 256  # fenced blocks tried, last first (a reply of 50,000 empty blocks decodes 256)
# The answer format as the system prompt shows it. A candidate whose every pattern is a
# placeholder like its "<regex>" (words in angle brackets, or an ellipsis: a model
# echoing or restating the format after its answer, "Format: {"rules": [{"pattern":
# "<pattern>", ...}]}") is passed over when the reply holds another candidate: read, it
# would score its placeholder rules, or hide a broken answer's JSON error.
ANSWER_TEMPLATE = '{"rules": [{"pattern": "<regex>", "replacement": "[REDACTED]"}]}'
# A placeholder: text in angle brackets with none of a pattern's structure inside
# ("<regex>", "<your regex (JSON-escaped)>", "<...>"), optionally followed by an
# ellipsis ("<regex>..."), or an ellipsis alone; spaces around it are allowed. Only one
# pair of brackets: `<pin>...</pin>` and `<[^>]+>` are patterns, and so is `....`.
PLACEHOLDER_MAX_CHARS = 200  # inside the angle brackets
PLACEHOLDER_EXCLUDED = "[]{}\\*+?|^$<>"  # what a placeholder's brackets never hold
_ELLIPSIS = "(?:\\.\\.\\.|\u2026)"
PLACEHOLDER_PATTERN = regex.compile(
    f"\\s*+(?:<[^{regex.escape(PLACEHOLDER_EXCLUDED)}\\n]{{1,{PLACEHOLDER_MAX_CHARS}}}+>\\s*+{_ELLIPSIS}?+"
    f"|{_ELLIPSIS})\\s*+")
ANSWER_CHOICE = ('the last object with a "rules" key: the last fenced block (```json ... ```; a fence starts '
                 'its line, or ends a line as in "Final answer: ```json") that holds a JSON object with a "rules" '
                 'key, unless a {"rules": ...} object with at least one rule is written after that block (fenced any '
                 'other way, or not at all), which is then read; with no such block, the whole reply as JSON, then '
                 'the last {"rules": ...} object in the text. An object with no rules (its "rules" neither a '
                 'non-empty list nor an object with a "pattern" key: {"rules": []}, {"rules": null}, ...; fenced or '
                 'not) is read only if no other object has rules, and an object whose every pattern is a '
                 'placeholder (one pair of angle brackets around up to '
                 f'{PLACEHOLDER_MAX_CHARS} characters with none of {" ".join(PLACEHOLDER_EXCLUDED)} or a line break '
                 'inside, such as <regex> or <regex for the token>, optionally followed by "..." or "\u2026"; or '
                 '"..." or "\u2026" alone; spaces around allowed) only if the reply holds no other '
                 'answer, valid or not (a ```json block opening with { or [, or a {"rules": [ that is not JSON); an '
                 'object outside a fenced block is looked for only at the last '
                 f'{MAX_EMBEDDED_TRIES} places where {{"rules": opens')

# Fenced blocks, read line by line as Markdown reads them (linear in the reply, never
# a regex that rescans the rest of the text from every opener). A block opens at a line
# that starts with three or more backticks (after any indentation) and an optional info
# string (json, JSON, jsonc, ...), or at a line that ends in ```json (any case, jsonc
# too: "Final answer: ```json"), and closes at a line of as many backticks or more, or
# at a line that ends with them (``}```); one left open runs to the end of the reply. A
# ``` inside a line of prose ("in a ```json block") opens nothing: read as a fence, it
# paired a draft's closing fence with the final answer's opening one, and the draft was
# scored. A whole block on one line ("```json {...}```") counts too. Line endings may be
# \r\n.
_OPENER = regex.compile(r"[ \t]*+(`{3,}+)[ \t]*+([^`]*+)")
_LATE_OPENER = regex.compile(r"(?<!`)(`{3,}+)[ \t]*+((?i:jsonc?))[ \t]*+$")
_TICK_RUN = regex.compile(r"`{3,}+")
_ONE_LINE_START = regex.compile(r"[ \t]*+((?i:jsonc?)(?![A-Za-z0-9]))?[ \t]*+\{")


def _one_line(line: str) -> tuple[str, str] | None:
    """(info string, object text) of a whole block on one line: a run of backticks, an
    optional json tag, ``{...}``, and a closing run of as many backticks ending the line;
    the leftmost such opening. Read run by run, so a line of many fences costs time in
    proportion to its length (a backtracking regex took minutes on 200 KB of them)."""
    end = len(line.rstrip(" \t"))
    close = end - len(line[:end].rstrip("`"))
    if close < 3:
        return None
    last = len(line[:end - close].rstrip(" \t")) - 1  # the object's closing brace
    if last < 1 or line[last] != "}":
        return None
    for run in _TICK_RUN.finditer(line, 0, last):
        if run.end() - run.start() != close:
            continue
        start = _ONE_LINE_START.match(line, run.end(), last)
        if start is not None:
            return start.group(1) or "", line[start.end() - 1:last + 1]
    return None


class _Block(NamedTuple):
    tag: str  # the info string, lower-cased
    body: str
    start: int  # where the block starts in the reply (its opening line)
    end: int  # where the block ends in the reply (after its closing line)


def _fences(reply: str) -> list[_Block]:
    """Each fenced block, last first."""
    found: list[_Block] = []
    ticks: str | None = None
    tag, body = "", list[str]()
    offset = opened = 0
    for raw in reply.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        begin = offset
        offset += len(raw) + 1
        end = min(offset, len(reply))  # after this line (the last line has no line break)
        if ticks is None:
            if "```" not in line:
                continue
            opener = _OPENER.fullmatch(line) or _LATE_OPENER.search(line)
            if opener is not None:
                ticks, tag, body, opened = opener.group(1), opener.group(2), [], begin
                continue
            one = _one_line(line)
            if one is not None:
                found.append(_Block(one[0].lower(), one[1], begin, end))
            continue
        stripped = line.strip(" \t")
        if stripped.startswith(ticks) and not stripped.strip("`"):
            found.append(_Block(tag.strip().lower(), "\n".join(body) + ("\n" if body else ""), opened, end))
            ticks = None
        elif stripped.endswith(ticks):
            found.append(_Block(tag.strip().lower(), "\n".join([*body, line.rstrip(" \t")[:-len(ticks)]]), opened,
                                end))
            ticks = None
        else:
            body.append(line)
    if ticks is not None:
        found.append(_Block(tag.strip().lower(), "\n".join(body), opened, len(reply)))
    return found[::-1][:MAX_FENCED_BLOCKS]


_RULES_OPENING = regex.compile(r'\{\s*"rules"\s*:')
# The same, also where the object's lines carry Markdown quote marks ("> "): what a
# note about a skipped later object looks for (such an object is not JSON).
_QUOTED_SPACE = r"(?:[ \t\r\f\v]|\n(?:[ \t]*+>)*+)*+"  # linear: possessive, a ">" only after a line break
_ANY_RULES_OPENING = regex.compile(r'\{' + _QUOTED_SPACE + '"rules"' + _QUOTED_SPACE + ":")
# What can decode to a backspace or form feed in a JSON string: \b or \f after an even
# run of backslashes, \u0008 / \u000c, or the character itself.
_CONTROL_ESCAPE = regex.compile(r"(?<!\\)(?:\\\\)*\\(?:[bf]|u000[8cC])|[\x08\x0c]")


@dataclass(frozen=True)
class RedactionError:
    code: str
    message: str
    rule: int | None = None  # 0-based index into the reply's rules

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.rule is not None:
            out["rule"] = self.rule
        return out


def rule_error(code: str, index: int, reason: str) -> RedactionError:
    """An error of rule ``index`` (0-based), whose message names it as people count."""
    return RedactionError(code, f"rule {index + 1}: {reason}", index)


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


def json_depth_bound(text: str) -> int:
    """A bound, read without recursion, on how deeply ``text`` nests arrays and
    objects: never below what the decoder reaches (up to its first error, if the text
    is not JSON, both read the same strings and brackets), and exact on JSON whenever
    it exceeds `MAX_JSON_DEPTH`, the only place where it decides anything."""
    brackets = text.count("[") + text.count("{")
    return brackets if brackets <= MAX_JSON_DEPTH else json_nesting(text)


def value_depth_bound(text: str, start: int) -> int:
    """`json_depth_bound` of the one value the decoder reads from ``start`` (a ``[``
    or ``{``): counting stops where that value's brackets close, so what follows an
    answer (prose, a later example with open brackets) cannot void it."""
    brackets = text.count("[", start) + text.count("{", start)
    return brackets if brackets <= MAX_JSON_DEPTH else json_nesting(text, start, value_only=True)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# Spaces JSON does not allow between values (only space, tab, CR and LF are JSON's).
_ODD_SPACES = frozenset("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                        "\u200b\u202f\u205f\u3000\ufeff")


_CURLY_QUOTES = frozenset("\u201c\u201d\u2018\u2019\u201e\u00ab\u00bb")
_LINE_SEPARATORS = frozenset("\u2028\u2029\u0085")


def _hint(text: str, exc: json.JSONDecodeError) -> str:
    """What a JSON decoding error most likely means, for the common slips."""
    before = text[:exc.pos].rstrip()
    if exc.msg.startswith("Invalid \\escape"):
        if text[exc.pos:exc.pos + 2] == "\\'":
            # JSON escapes " but not ': a writer used to JavaScript or Python escapes both.
            return ("; JSON escapes no single quote: write ' as it is (\\\\' if the pattern itself "
                    "escapes it); every other backslash of a pattern is written twice: \\\\d, \\\\b")
        return ("; in a JSON string every backslash of a pattern is written twice: \\\\d, \\\\b, \\\\. "
                "(a single \\b would even be read as a backspace character)")
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        # A pattern's own \u (or a \user, \uid in a path) read as a JSON \u escape.
        return ("; in a JSON string \\u must be followed by four hex digits: a pattern's own \\u escape "
                "(or any backslash) is written twice: \\\\u00e9, \\\\d")
    if before.endswith(",") and text[exc.pos:exc.pos + 1] in "]}":
        return "; JSON allows no trailing comma before ] or }"
    line = before[before.rfind("\n") + 1:]
    if exc.msg.startswith(("Expecting ',' delimiter", "Expecting ':' delimiter")) and line.endswith('"') and \
            regex.search(r'"(?:pattern|replacement)"\s*:\s*"', line):
        # A pattern's own " closed its JSON string early (a quote in a set: ["'])
        return ('; a " inside a pattern ends its JSON string there: write it \\" (["\'] is written '
                '[\\"\']), and every backslash of the pattern twice')
    if text[exc.pos:exc.pos + 2] in ("//", "/*") or text[exc.pos:exc.pos + 1] == "#":
        return "; JSON has no comments"
    if text[exc.pos:exc.pos + 1] == "'":
        return "; JSON strings use double quotes"
    if exc.msg.startswith("Invalid control character"):
        return "; a line break or tab inside a JSON string is written \\n or \\t (in a pattern: \\\\n)"
    if regex.match(r"""r["']""", text[exc.pos:exc.pos + 2]) or regex.search(r"""\br["']$""", before):
        return ("; JSON has no raw strings (r\"...\"): write each pattern as a plain JSON string with every "
                "backslash written twice")
    at = text[exc.pos:exc.pos + 1]
    if at in _CURLY_QUOTES:
        return (f"; there is a curly quote {at} (U+{ord(at):04X}) where JSON needs a straight double quote \" "
                "(copied from formatted text, perhaps)")
    if at in _LINE_SEPARATORS:
        return (f"; there is a U+{ord(at):04X} line separator where JSON allows only plain spaces, tabs and line "
                "breaks")
    if at in _ODD_SPACES:
        return (f"; there is a U+{ord(at):04X} space where JSON allows only plain spaces, tabs and line breaks "
                "(a non-breaking space copied from formatted text, perhaps)")
    if at == ">" and (exc.pos == 0 or text[exc.pos - 1] == "\n"):
        return "; its lines start with \">\" (a Markdown quote): write the answer without the quote marks"
    if exc.msg.startswith("Expecting property name") and regex.match(r"[A-Za-z_]\w*\s*:", text[exc.pos:exc.pos + 40]):
        return '; JSON keys are written in double quotes: "rules", "pattern", "replacement"'
    if regex.match(r"[A-Za-z_]\w*\s*=", text[exc.pos:exc.pos + 40]):
        return "; the answer is a JSON object, not code that assigns one"
    return ""


_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels of [ and {{ (an answer nests 3)"


def _decode_error(text: str, exc: json.JSONDecodeError) -> str:
    msg = exc.msg.removesuffix(" at")  # "Invalid control character at": the position follows
    return f"not valid JSON ({msg} at line {exc.lineno} column {exc.colno}){_hint(text, exc)}"


class _Decoded:
    """One candidate text, decoded at most once: ``ok`` with its ``value``, or the
    ``error`` that says why it is not JSON; ``end``: where it ends in the reply."""

    __slots__ = ("end", "error", "ok", "value", "where")

    def __init__(self, where: str, text: str | None = None, value: Any = None, end: int = 0) -> None:
        self.where, self.value, self.ok, self.error, self.end = where, value, text is None, None, end
        if text is None:
            return
        if json_depth_bound(text) > MAX_JSON_DEPTH:
            self.error = _DEEP
            return
        try:
            self.value, self.ok = json.loads(text, parse_constant=_reject_constant), True
        except json.JSONDecodeError as exc:
            self.error = _decode_error(text, exc)
        except ValueError as exc:  # NaN, Infinity
            self.error = f"not valid JSON ({exc})"

    @property
    def obj(self) -> bool:
        return self.ok and isinstance(self.value, dict)

    @property
    def answer(self) -> bool:
        return self.obj and "rules" in self.value

    @property
    def empty(self) -> bool:
        """An answer with no rules ({"rules": []}, {"rules": null}: `has_rules`), which
        models write as asides ("with no secrets it would be ...")."""
        return self.answer and not has_rules(self.value)

    @property
    def placeholder(self) -> bool:
        """An answer whose every pattern is a placeholder (`PLACEHOLDER_PATTERN`): the
        answer format's example, echoed or restated."""
        return self.answer and is_placeholder(self.value)


def has_rules(value: object) -> bool:
    """Whether ``value`` is an object with rules: its "rules" a non-empty list (of rules
    or not: a broken final answer is still the answer, its error named) or a single rule
    object written without its list. {"rules": null}, {"rules": "..."} or a schema's
    {"rules": {"type": "array"}} is an aside, not an answer."""
    rules = value.get("rules") if isinstance(value, dict) else None
    return (isinstance(rules, list) and bool(rules)) or (isinstance(rules, dict) and "pattern" in rules)


def is_placeholder(value: object) -> bool:
    """A {"rules": [...]} object whose rules, one at least, all have placeholder patterns
    (or are placeholder strings: {"rules": ["<regex>"]})."""
    rules = value.get("rules") if isinstance(value, dict) else None
    return bool(rules) and isinstance(rules, list) and all(_placeholder_rule(r) for r in rules)


def _placeholder_rule(rule: object) -> bool:
    pattern = rule.get("pattern") if isinstance(rule, dict) else rule
    return isinstance(pattern, str) and PLACEHOLDER_PATTERN.fullmatch(pattern) is not None


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _decode_at(text: str, start: int, explain: bool = False) -> tuple[Any, int, str | None]:
    """The JSON value that starts at ``start`` in ``text`` and where it ends, with None;
    or, when none does, why (with ``explain``; else "", sparing the hint's work)."""
    if value_depth_bound(text, start) > MAX_JSON_DEPTH:
        return None, start, _DEEP if explain else ""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        return None, start, _decode_error(text, exc) if explain else ""
    except ValueError as exc:  # NaN, Infinity
        return None, start, f"not valid JSON ({exc})" if explain else ""
    return value, end, None


_Decodes = dict[int, tuple[Any, int, str | None]]


def _embedded(text: str, start: int = 0, decodes: _Decodes | None = None) -> list[_Decoded]:
    """``{"rules": ...}`` objects that start inside ``text`` at or after ``start`` (prose
    around them), last first; each is decoded from its opening brace to wherever its
    value ends (once per reply: ``decodes`` keeps each opening's result)."""
    found = []
    starts = [m.start() for m in _RULES_OPENING.finditer(text, start)][-MAX_EMBEDDED_TRIES:]
    for start in reversed(starts):
        if decodes is None or start not in decodes:
            decoded = _decode_at(text, start)
            if decodes is None:
                decodes = {}
            decodes[start] = decoded
        value, end, error = decodes[start]
        if error is None:
            found.append(_Decoded("an object in the text", value=value, end=end))
    return found


def _block_where(tag: str) -> str:
    return f"the ```{tag} block" if tag else "the fenced block"


# A fenced block meant as the answer: tagged json (any case, jsonc too) or untagged, its
# body opening with { or [ (a ```python or ```text block, or prose in a fence, is not).
_JSON_TAG = regex.compile(r"(?i:jsonc?)?")
_RULE_LIST_OPENING = regex.compile(r'\{\s*"rules"\s*:\s*\[')


class _Search:
    """Finds the answer of one reply (see the module doc), decoding each candidate
    once. With ``skip_placeholders``, a candidate whose every pattern is a placeholder
    (the answer format's example, echoed or restated) is passed over, and
    ``skipped_placeholder`` says one was."""

    def __init__(self, reply: str, skip_placeholders: bool, decodes: _Decodes | None = None) -> None:
        self.reply, self.skip, self.skipped_placeholder = reply, skip_placeholders, False
        self.fences = _fences(reply)
        self.blocks: list[_Decoded] = []  # every block decoded, last first (up to the answer's)
        self.overridden: _Decoded | None = None  # the fenced answer a later object replaced
        self.decodes: _Decodes = {} if decodes is None else decodes  # each opening's decoding, by offset

    def _take(self, item: _Decoded) -> bool:
        if not item.answer:
            return False
        if self.skip and item.placeholder:
            self.skipped_placeholder = True
            return False
        return True

    def _after(self, decoded: _Decoded) -> _Decoded:
        """``decoded`` (a fenced answer), or a ``{"rules": ...}`` object written after
        it, which a final answer fenced some other way (~~~, a blockquote, a block
        broken by prose after its closing fence) or not fenced at all, after a fenced
        draft, is. {"rules": []} after an answer with rules ("with no secrets the
        answer would be ...") is an aside, not a final answer that drops every rule."""
        later = [item for item in _embedded(self.reply, decoded.end, self.decodes) if self._take(item)
                 and not (item.empty and not decoded.empty)]
        self.overridden = decoded if later else None
        return later[0] if later else decoded

    def fenced(self) -> _Decoded | None:
        """The last block holding an object with "rules" (one with no rules only if no
        earlier block has rules), or an object written after it (`_after`)."""
        empty: _Decoded | None = None
        for block in self.fences:
            decoded = _Decoded(_block_where(block.tag), block.body, end=block.end)
            self.blocks.append(decoded)
            if self._take(decoded):
                if decoded.empty:
                    empty = empty or decoded
                    continue
                return self._after(decoded)
        return self._after(empty) if empty is not None else None

    @cached_property
    def whole(self) -> _Decoded:
        """The whole reply decoded, when it is read: not when a fenced block holds the
        answer (most replies), where decoding it only fails, hints and all."""
        return whole_reply(self.reply)

    def answer(self) -> _Decoded | None:
        """The answer object, if any. An answer with no rules is read only if no object
        of the reply has rules."""
        found = self.fenced()
        if found is not None and not found.empty:
            return found
        whole = self.whole
        if self._take(whole) and not (whole.empty and found is not None):
            return whole
        taken = [item for item in _embedded(self.reply, 0, self.decodes) if self._take(item)]
        ruled = next((item for item in taken if not item.empty), None)
        if ruled is not None:
            self.overridden = None
            return ruled
        # the last one, unless it has no rules and an earlier one has some (an aside)
        return found or (taken[0] if taken else None)

    def other_candidate(self) -> bool:
        """Whether the reply holds a candidate besides placeholder objects, valid or not:
        a block meant as JSON (`_JSON_TAG`, a body opening with { or [) that is not a
        placeholder object, or a ``{"rules": [`` opening that does not decode. Called
        when the search found no answer, so every block was decoded (`blocks`)."""
        for block, decoded in zip(self.fences, self.blocks, strict=True):
            if _JSON_TAG.fullmatch(block.tag) and block.body.lstrip()[:1] in ("{", "[") and not (
                    decoded.answer and decoded.placeholder):
                return True
        for m in list(_RULE_LIST_OPENING.finditer(self.reply))[-MAX_EMBEDDED_TRIES:]:
            if m.start() not in self.decodes:
                self.decodes[m.start()] = _decode_at(self.reply, m.start())
            if self.decodes[m.start()][2] is not None:
                return True
        return False


def whole_reply(reply: str) -> _Decoded:
    return _Decoded("the reply", reply.strip(), end=len(reply))


def _search(reply: str) -> tuple[_Search, _Decoded | None]:
    """The search that found the answer: first passing over placeholder objects (the
    answer format's example, echoed or restated), then, if that left no answer, passed
    one over and the reply holds no other candidate, reading them (a broken or
    misshapen answer's error is worth more to its reader than its placeholder's zero)."""
    search = _Search(reply, skip_placeholders=True)
    answer = search.answer()
    if answer is None and search.skipped_placeholder and not search.other_candidate():
        search = _Search(reply, skip_placeholders=False, decodes=search.decodes)
        answer = search.answer()
    return search, answer


def _skipped_later(search: _Search, answer: _Decoded, of: str = " of the reply") -> str | None:
    """Why the last ``{"rules": ...}`` opening after the answer was not read, if one is
    there: it does not decode (fenced with backticks, with tildes, quoted or not fenced
    at all), it is a placeholder object (the answer format's example, echoed or
    restated), or it has no rules and the answer has some."""
    reply = search.reply
    starts = [m.start() for m in _ANY_RULES_OPENING.finditer(reply, answer.end)][-MAX_EMBEDDED_TRIES:]
    for start in reversed(starts):
        value, _, error = _decode_at(reply, start, explain=True)
        if error is None:
            if search.skipped_placeholder and is_placeholder(value):
                return ("a later object whose every pattern is a placeholder (the answer format's example, "
                        + ANSWER_TEMPLATE + ", or like it) was skipped; the answer was read from an earlier object")
            if not has_rules(value) and has_rules(answer.value):
                line = reply.count("\n", 0, start) + 1
                return (f'a later object with no rules (line {line}{of}; its "rules" is neither a non-empty list '
                        'nor a rule object) was passed over: it does not replace an earlier answer that has some')
            continue
        for block in search.fences:
            if block.start <= start < block.end and block.end > answer.end:
                decoded = _Decoded(_block_where(block.tag), block.body)
                if not decoded.ok:
                    return (f"a later block with \"rules\" was skipped: {decoded.where} is {decoded.error}; "
                            "the answer was read from an earlier one")
        line = reply.count("\n", 0, start) + 1
        return (f"a later {{\"rules\": ...}} object was skipped: the one on line {line}{of} is {error}; "
                "the answer was read from an earlier one")
    return None


def reply_notes(reply: object) -> list[str]:
    """What the reader of a valid reply should know although the verdict stands:
    a later answer-like block that was skipped because it is not JSON (the answer was
    then read from an earlier draft), and patterns holding a backspace or form feed
    (JSON reads a single \\b or \\f as those characters, not as regex escapes).
    Advisory only: never part of the verdict."""
    if not isinstance(reply, str) or len(reply) > MAX_RAW_REPLY_CHARS:
        return []
    # Line numbers count in the text that is read: after the last </think>, if any.
    of = " of the reply"
    if "</think>" in reply:
        reply, of = reply.rsplit("</think>", 1)[1], " after the last </think>"
    if len(reply) > MAX_REPLY_CHARS:
        return []
    notes: list[str] = []
    # Scoring calls this on every rollout: decode only when a note is possible (a later
    # candidate to skip needs two {"rules" openings; a backspace or form feed needs a
    # JSON escape with an odd run of backslashes, a \u escape of one, or the raw
    # character).
    openings = _ANY_RULES_OPENING.finditer(reply)
    if next(openings, None) is not None and next(openings, None) is not None:
        search, answer = _search(reply)
        skipped = _skipped_later(search, answer, of) if answer is not None else None
        if skipped is not None:
            notes.append(skipped)
        if search.overridden is not None and answer is not None:
            ends = reply.count("\n", 0, answer.end - 1) + 1
            block_ends = reply.count("\n", 0, search.overridden.end - 1) + 1
            notes.append(f'the answer was read from the {{"rules": ...}} object ending on line {ends}{of}, written '
                         f"after {search.overridden.where} that ends on line {block_ends}: an object after a fenced "
                         "answer replaces it")
    if not _CONTROL_ESCAPE.search(reply):
        return notes
    obj = _load_object(reply)
    rules = obj.get("rules") if isinstance(obj, dict) else None
    for i, rule in enumerate(rules[:MAX_RULES] if isinstance(rules, list) else []):
        pattern = rule.get("pattern") if isinstance(rule, dict) else None
        if isinstance(pattern, str) and ("\b" in pattern or "\f" in pattern):
            name = "a backspace (U+0008)" if "\b" in pattern else "a form feed (U+000C)"
            notes.append(f"rule {i + 1}: the pattern holds {name}: in JSON a single \\b or \\f is that "
                         "character; a regex word boundary is written \\\\b")
    return notes


def _load_object(reply: str, thinking: str | None = None) -> dict[str, Any] | RedactionError:
    """The answer object of ``reply`` (see the module doc for which one), or why there
    is none. ``thinking``: the text before the last ``</think>`` when the reply had
    one (``reply`` is then what follows it), so that "no answer" says where it looked."""
    search, answer = _search(reply)
    if answer is not None:
        return dict(answer.value)
    whole = search.whole
    fences, blocks = search.fences, search.blocks
    first, last = reply.find("{"), reply.rfind("}")
    braces = [_Decoded("the text from the first { to the last }", reply[first:last + 1])] if 0 <= first < last else []
    if whole.ok and not whole.obj:
        return RedactionError("malformed_json", f'expected a JSON object {{"rules": [...]}}, got {_kind(whole.value)}')
    # (a placeholder object is no answer here: the search passed it over for a broken candidate)
    for item in blocks:
        if item.obj and not (search.skip and item.placeholder):
            return dict(item.value)
    if thinking is not None and (not reply.strip() or (not blocks and not braces)):
        # (looked for in the thinking's last MAX_REPLY_CHARS only: it may be 4,000,000 braces)
        written = '"rules"' in thinking and _ANY_RULES_OPENING.search(thinking, max(0, len(thinking) - MAX_REPLY_CHARS))
        before = ' (a {"rules": ...} object is written before that </think>)' if written else ""
        what = "is empty" if not reply.strip() else 'holds no JSON object ({"rules": [...]})'
        return RedactionError("malformed_json", f"no answer: the text after the last </think> {what}; only that "
                                                f"text is read{before}")
    if not reply.strip():
        return RedactionError("malformed_json", "no answer: the reply's text is empty (a reasoning field apart "
                                                "from it is not read)")
    if not blocks and not braces:
        return RedactionError("malformed_json", 'no answer: the reply holds no JSON object ({"rules": [...]})')
    kept = [(block, fence) for block, fence in zip(blocks, fences, strict=True)
            if not (search.skip and block.placeholder)]
    blocks = [block for block, _ in kept]
    tagged = [block for block, fence in kept if fence.tag.startswith("json")]
    bare = [whole] if reply.lstrip()[:1] in ("{", "[") else []
    meant = (tagged or blocks or bare or braces)[0]
    # A fenced list of rules is named as a list; the braces inside it would be one rule.
    if not (meant.ok and meant in blocks):
        for item in braces:
            if item.obj and not (search.skip and item.placeholder):
                return dict(item.value)
    if meant.ok:
        return RedactionError("malformed_json", f'expected a JSON object {{"rules": [...]}} in {meant.where}, '
                                                f"got {_kind(meant.value)}")
    tries = sum(1 for _ in _RULES_OPENING.finditer(reply))
    cap = (f'; only the last {MAX_EMBEDDED_TRIES} places where {{"rules": opens are tried as the answer '
           f"({tries:,} here)") if tries > MAX_EMBEDDED_TRIES else ""
    return RedactionError("malformed_json", f"no answer: {meant.where} is {meant.error}{cap}")


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _message(e: jsonschema.ValidationError, rule_count: int) -> str:
    """The reason for one schema error, reason and numbers first."""
    path = list(e.absolute_path)
    v, value, wanted = e.validator, cast(Any, e.instance), cast(Any, e.validator_value)
    if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int):
        who = f"rule {path[1] + 1}"
        field = path[2] if len(path) > 2 else None
        if field == "pattern":
            if v == "maxLength":
                return f"{who}: pattern is {len(value)} characters; the limit is {MAX_PATTERN_CHARS}"
            if v == "minLength":
                return f"{who}: pattern is empty"
            if v == "type":
                return f"{who}: pattern must be a string, got {_kind(value)}"
        if field == "replacement":
            shown = json.dumps(value)[:40] if isinstance(value, str) else _kind(value)
            return f'{who}: replacement must be exactly "[REDACTED]" or "" (no group references), got {shown}'
        if field is None:
            if v == "type":
                return f'{who} must be an object {{"pattern": ..., "replacement": ...}}, got {_kind(value)}'
            if v == "required":
                missing = [k for k in wanted if k not in value]
                return f"{who} has no {' and no '.join(map(json.dumps, missing))}"
            if v == "additionalProperties":
                extra = sorted(k for k in value if k not in ("pattern", "replacement"))
                shown = ", ".join(json.dumps(k)[:40] for k in extra[:5])
                return f'{who} has keys other than "pattern" and "replacement": {shown}'
    if path == ["rules"]:
        if v == "maxItems":
            return f"the reply has {rule_count} rules; the limit is {MAX_RULES}"
        if v == "type":
            return f"rules must be a list, got {_kind(value)}"
    if not path:
        if v == "required":
            return 'the answer object has no "rules" key'
        if v == "additionalProperties":
            extras = ", ".join(json.dumps(k)[:40] for k in sorted(k for k in value if k != "rules")[:5])
            return f'the answer object may hold only "rules"; it also has {extras}'
    message = e.message if len(e.message) <= 300 else e.message[:300] + "..."
    return f"{e.validator} failed at {json_path(path)}: {message}"


def _code_for(error: jsonschema.ValidationError) -> str:
    path = list(error.absolute_path)
    if error.validator == "maxItems" and path == ["rules"]:
        return "too_many_rules"
    if path and path[-1] == "replacement" and error.validator == "enum":
        return "unsafe_replacement"
    return "bad_entry"


def _path_key(path: Any) -> tuple[tuple[int, int | str], ...]:
    """Errors sort by rule number as a number (rule 2 before rule 11), then by key."""
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in path)


@with_headroom
def parse_reply(reply: object) -> tuple[list[Rule], list[RedactionError]]:
    """Returns the rules and the errors; any error makes the episode invalid. As in
    verifiers' own scoring, only the text after the last ``</think>`` is read, and a
    reply that holds ``<think>`` and no ``</think>`` has no answer."""
    if not isinstance(reply, str):
        return [], [RedactionError("malformed_json", f"the reply is {type(reply).__name__}, not text")]
    if len(reply) > MAX_RAW_REPLY_CHARS:
        return [], [RedactionError("malformed_json", f"the reply has {len(reply):,} characters, thinking included; "
                                                     f"the limit is {MAX_RAW_REPLY_CHARS:,}")]
    thinking = None
    if "</think>" in reply:
        thinking, reply = reply.rsplit("</think>", 1)
    elif "<think>" in reply:
        # Thinking cut off by the token limit, as verifiers reads it: a <think> anywhere
        # without a </think> (a mention in prose too, which the system prompt warns of).
        return [], [RedactionError("malformed_json", "the reply opens <think> and never closes it (no </think>): "
                                                     "no answer")]
    if len(reply) > MAX_REPLY_CHARS:
        return [], [RedactionError("malformed_json", f"the answer (the text after the last </think>) has "
                                                     f"{len(reply):,} characters; the limit is {MAX_REPLY_CHARS:,}")]
    obj = _load_object(reply, thinking)
    if isinstance(obj, RedactionError):
        return [], [obj]
    if _plainly_valid(obj):
        return [Rule(r["pattern"], r["replacement"]) for r in obj["rules"]], []
    rule_count = len(obj["rules"]) if isinstance(obj.get("rules"), list) else 0
    if rule_count > MAX_RULES:
        # Past the limit only the first extra rule is checked: a reply of 100,000 empty
        # rules would otherwise cost seconds and megabytes of error entries.
        obj = dict(obj, rules=obj["rules"][:MAX_RULES + 1])
    found = sorted(_validator().iter_errors(obj), key=lambda e: (_path_key(e.absolute_path), e.validator))
    errors: list[RedactionError] = []
    for e in found[:MAX_ERRORS]:
        path = list(e.absolute_path)
        rule = path[1] if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int) else None
        errors.append(RedactionError(_code_for(e), _message(e, rule_count), rule))
    if len(found) > MAX_ERRORS:
        last = errors[-1]
        errors[-1] = RedactionError(last.code, f"{last.message} (and {len(found) - MAX_ERRORS} more errors)", last.rule)
    if errors:
        return [], errors
    return [Rule(r["pattern"], r["replacement"]) for r in obj["rules"]], []
