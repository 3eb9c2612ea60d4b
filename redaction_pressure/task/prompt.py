"""What the model reads: the rules of the game and the labelled shown records.

The system prompt states every rule that can void a reply or cost it reward, with the
numbers the validator, the pattern guard and the scanner use: they are read from
those modules' constants here, never written twice (a test parses them back out of
the text and compares). It describes the game and the answer format; it never
describes a stream's formats, which only the shown records reveal.
"""

from __future__ import annotations

from functools import cache

from ..corpus.stream import Record
from ..scoring.answer import (
    ALLOWED_REPLACEMENTS,
    ANSWER_CHOICE,
    ANSWER_TEMPLATE,
    MAX_PATTERN_CHARS,
    MAX_RAW_REPLY_CHARS,
    MAX_REPLY_CHARS,
    MAX_RULES,
)
from ..scoring.pattern_guard import (
    FULL_FOLD_FACTOR,
    GRAPHEME_COST,
    LINEBREAK_COST,
    MAX_COMPILED_COST,
    MAX_NESTING,
    MAX_REPLY_COST,
    PATTERN_BASE_COST,
)
from ..scoring.reward import WEIGHTS as _W
from ..scoring.scanner import DEFAULT_BUDGET_S, MAX_MATCHES

SPAN_NOTATION = "[start:end)"


def _replacements() -> str:
    return " or ".join(f'"{r}"' for r in ALLOWED_REPLACEMENTS)


@cache
def system_prompt(budget_s: float = DEFAULT_BUDGET_S) -> str:
    """The system prompt of a task whose regex budget is ``budget_s`` seconds."""
    return f"""\
You write secret-redaction rules. You will see labelled records (config files, logs, \
shell history, source code) from one stream; your rules will then be run on later, \
unseen records of the same stream.

## Your answer
One JSON object, in a ```json fenced block:
{ANSWER_TEMPLATE}
- Only the key "rules"; each rule has exactly the keys "pattern" and "replacement".
- Patterns are JSON strings: write every backslash twice ("\\\\d", "\\\\b", "\\\\."); \
a single "\\b" or "\\f" is JSON for a backspace or form-feed character, not a regex \
escape; a ' needs no backslash ("\\'" is not JSON) and a " needs one (\\"). JSON allows no comments and no \
trailing commas inside the object (a comment or prose before or after it, in its fence \
or not, is not part of the answer).
- Which text is read: only what follows the last </think> (a reply that holds <think> \
and no </think> has no answer, as verifiers reads it: never write either tag in prose, \
before or after your answer); in it, {ANSWER_CHOICE}. A later block that is not valid \
JSON and holds no valid {{"rules": ...}} object is skipped, so an earlier draft is read \
instead. A > that starts a line is text: an object quoted over several lines is not JSON.
- So write your answer last: a {{"rules": ...}} object with a rule that is not a \
placeholder, written after it (an example in prose, in inline code or in any fence), is \
read instead of it.
- Any error in the answer voids the whole reply (it scores 0, however good its other \
rules): text that is not valid JSON, another key in the object or in a rule, a \
replacement other than the two allowed, a pattern that does not compile, or any limit \
below.

## How rules are applied
- Rules run in order, with the Python `regex` module (VERSION0 syntax, no flags set; \
inline flags such as (?i) and lookarounds are allowed). Each rule runs over the whole \
text of every record as the rules before it left it.
- Every match is replaced by the rule's "replacement", which must be exactly \
{_replacements()} (no group references). Inserted [REDACTED] markers are never source \
text: matching or removing them again earns and costs nothing.
- The score, over all the later records together, is {_W["recall"]:g} x recall + \
{_W["precision"]:g} x precision + {_W["clean"]:g} x clean, all measured on the original \
text. Recall: the share of secrets whose every character is gone (each secret counts \
once, whatever its length; a partly removed secret is missed). Precision: the share of \
removed characters that belong to fully removed secrets. Clean: 1 only if every secret \
is fully removed and no other character (decoys, look-alikes, keys, punctuation, \
placeholders) is removed, else 0: one missed secret or one removed character too many \
loses all {_W["clean"]:g} of it.

## Labels
- Every secret in a shown record is listed with its family and its {SPAN_NOTATION} \
span: 0-based character offsets into the record's text as shown between the fences, \
the end excluded; then its text as a Python string literal (a line break reads \\n, \
a backslash \\\\). A record's text ends with a line break the fences do not show (a \
few end with several, as key files do): rules see it (\\Z matches only after it).
- A label covers exactly the characters that are secret. For a credential inside a \
larger value (a password in a URL or connection string, a token after "Bearer " or \
"Basic ", a value after a key, header or command-line flag) that is only the \
credential; where the whole value is the credential (a webhook URL, a token, a \
private-key block from its BEGIN line to its END line) it is the whole value. A secret \
may span lines: its span then includes the line breaks and indentation inside it. A \
key block written inside a quoted string with \\n escapes is the whole string value \
between its quotes, escapes included.
- Whether a value is secret is decided only by what a rule can see in the text: the \
value itself (prefix, alphabet, length) and where it sits (the key, header, flag, \
section or block around it), with the policy the task states; never by whether a \
checksum is valid, nor by anything else a regex cannot test. A value left unlabelled \
beside a labelled one of the same shape differs from it in something a rule can see. \
Some set of rules within the limits below removes exactly the secrets, and nothing \
else, from every record of the stream, shown or later.

## Limits: a reply that breaks any of them scores zero
- At most {MAX_RULES} rules; each pattern 1 to {MAX_PATTERN_CHARS:,} characters; the \
answer (the text after the last </think>) at most {MAX_REPLY_CHARS:,} characters, the \
whole reply with its thinking at most {MAX_RAW_REPLY_CHARS:,}.
- Refused before compiling: recursion and subroutine calls ((?R), (?1), (?&name)), \
fuzzy matching ({{e<=1}}; a {{ that no backslash escapes, outside a set and not starting \
a repeat such as {{2,5}}, may be read as one when e, i, d, s or a digit follows it, as in \
{{s}}, ${{env:X}} or {{1<=e}}, and is then refused or does not compile: write a literal {{ \
as \\{{, "\\\\{{" in JSON), \\K inside a lookaround, named lists (\\L<name>), the \
LOCALE flag (?L), a lone surrogate character (an unpaired JSON "\\ud800"-"\\udfff" escape; the regex \
escape "\\\\ud800" is allowed), groups and sets nested deeper \
than {MAX_NESTING} levels (a parenthesis inside a set is a literal), a pattern whose \
compiled size exceeds {MAX_COMPILED_COST:,} units, and rules whose compiled sizes \
together exceed {MAX_REPLY_COST:,} units. A pattern costs {PATTERN_BASE_COST} units plus: 1 \
per character, escape (\\d, \\b, \\p{{L}}), ., ^ or $ (\\X: {GRAPHEME_COST}; \\R: {LINEBREAK_COST}; a comment (?#...), \
and under (?x) whitespace outside sets and # comments, nothing); 1 per alternative \
(the whole pattern, a group's contents, each side of a |) and 1 more per | list; 1 per \
group other than (?:...), (?|...) and flag groups such as (?i:...) or (?-s:...) (capturing, \
lookaround, atomic; flags such as (?i) cost nothing; a conditional (?(?=c)y|n) costs 1 \
plus c's contents, with y and n as alternatives (n left out still counts, as an empty one) and \
no cost for its | or its (?=)); a set 1 plus 1 per member \
([A-Za-z0-9] is 4), 1 more when, neither negated nor case-insensitive, it ends in an \
unescaped "-" right after a single character that is not its first member ([ab-] is 5, \
[a-z0-9-] 4), and a set of one member costs as that member ([a-z] is 1; under full case \
folding {FULL_FOLD_FACTOR}); a \
repeat 1 plus its body's cost times m+1 for {{m,n}} with n above m or {{m,}} (once for * and ?, twice \
for +), times m for {{m}} or {{m,m}} (once for {{0}}; {{1}} is its body alone), so nested repeats \
multiply ([A-Za-z0-9]{{32}} is 129 units, (?:a{{100}}){{100}} about 10,000); under full \
case folding ((?f) with (?i), or (?i) under (?V1)) a character, a backreference \
(\\1, \\g<1>, (?P=n)), \\N{{...}} or \\p{{...}} costs {FULL_FOLD_FACTOR} units instead of 1 and a \
set {FULL_FOLD_FACTOR + 1} per member. A refusal states the sizes.
- At most {MAX_MATCHES:,} matches in the whole episode, all rules together \
(zero-width matches count); a match that ends before it starts (\\K under (?r) can \
yield one) voids the reply too.
- All matching of the episode shares one budget of {budget_s:g} seconds of CPU time \
(compiling is not counted: the size limits bound it); running out of it scores zero. \
A rule's lookarounds are tried in order at every position: a lookbehind with an \
unbounded repeat that reads back over many lines, tried first, rereads the record at \
every character, and a few such rules spend the whole budget; put a lookaround that \
fails fast (one naming the key the value follows) before it."""


SYSTEM_PROMPT = system_prompt(DEFAULT_BUDGET_S)


def _record_block(i: int, record: Record) -> str:
    lines = [f"### Record {i + 1} ({record.template})", "```text", record.text.rstrip("\n"), "```"]
    if record.secrets:
        lines.append("Secrets in this record:")
        for s in record.secrets:
            lines.append(f"- {s.family} [{s.start}:{s.end}): {record.text[s.start:s.end]!r}")
    else:
        lines.append("Secrets in this record: none")
    return "\n".join(lines)


def render_prompt(shown: tuple[Record, ...], n_eval: int, policy: str) -> str:
    """``policy`` states in words which optional categories the stream treats as
    secret; formats are never described, only shown."""
    blocks = "\n\n".join(_record_block(i, r) for i, r in enumerate(shown))
    return (f"Here are {len(shown)} labelled records. Every secret is listed with its family "
            f"and its {SPAN_NOTATION} character span; everything else must survive. {policy}\n\n{blocks}\n\n"
            f"Write the rules that will redact the next {n_eval} records of this stream.")
