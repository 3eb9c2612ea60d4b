"""Replies as real models write them, and what each must yield (issue 20, item 5).

Each case is a reply template and its pinned outcome. ``{ORACLE}`` stands for the
task's oracle answer as compact JSON, ``{ORACLE_PRETTY}`` for it indented; a valid
case holding the oracle must score exactly 1.0 on any task, so the corpus does not
depend on which records a corpus version draws. ``error`` is (code, the message's
start); ``valid`` cases state what they score. The README's answer section lists the
same cases by name (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

_PREFIXES = ("ghp", "gho", "glpat", "xoxb", "xoxp", "npm", "pypi", "sk_live", "rk_live", "hf", "gsk", "r8",
             "dckr_pat", "dop_v1", "doo_v1", "sntryu", "sntrys", "shpat", "shpss", "shpca", "shppa", "rubygems",
             "glrt", "gldt")


@dataclass(frozen=True)
class Case:
    name: str
    readme: str  # how the README's table describes it
    template: str
    error: tuple[str, str] | None = None  # (code, message start)
    reward: str = "1.0"  # valid cases: "1.0" (the oracle's answer was read), "valid" (valid, any reward)
    extra_rule: str | None = None  # JSON of a rule put before the oracle's in {ORACLE_WITH}


def _long_alternation() -> str:
    shapes = "|".join(f"{p}_[A-Za-z0-9_-]{{20,512}}" for p in _PREFIXES * 3)
    return '{"pattern": "\\\\b(?:' + shapes + ')\\\\b", "replacement": "[REDACTED]"}'


WITH_RULE = "```json\n{ORACLE_WITH}\n```"  # the oracle's answer with the case's extra_rule in front


CASES: tuple[Case, ...] = (
    Case("fenced", "the answer in a ````` ```json ````` block", "```json\n{ORACLE_PRETTY}\n```"),
    Case("prose-around", "prose before and after the ````` ```json ````` block",
         "Here are my rules, one per family I saw:\n\n```json\n{ORACLE_PRETTY}\n```\n\nThey keep every decoy."),
    Case("bare", "the bare JSON object as the whole reply", "{ORACLE_PRETTY}"),
    Case("inline-in-prose", "a JSON object inside prose, no fence", "My answer is {ORACLE} and nothing else."),
    Case("think-then-answer", "a closed `<think>` block (holding its own draft JSON), then the answer",
         '<think>Maybe {"rules": [{"pattern": "x", "replacement": ""}]}? No.</think>\n```json\n{ORACLE_PRETTY}\n```'),
    Case("draft-then-final", "two ````` ```json ````` blocks, a draft then the final answer: the last is read",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\n'
         "Final:\n```json\n{ORACLE_PRETTY}\n```"),
    Case("backticks-in-prose", "a draft block, prose that mentions ````` ```json ````` inline, then the final block",
         'Draft:\n```json\n{"rules": [{"pattern": "(AKIA", "replacement": ""}]}\n```\n'
         "Here is the corrected final answer in a ```json fenced block:\n```json\n{ORACLE_PRETTY}\n```"),
    Case("stray-backticks", "a draft block, a lone ````` ``` ````` inside a line of prose, then the final block",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\n'
         "Plain JSON vs ``` fences. Final:\n```json\n{ORACLE_PRETTY}\n```"),
    Case("final-closes-on-its-json-line", "a draft block, then the final block closed at the end of its JSON line",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\nFinal:\n```json\n{ORACLE}```\n'),
    Case("final-in-four-backticks", "a draft block, then the final in a ``````` ````json ``````` fence",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\nFinal:\n'
         "````json\n{ORACLE_PRETTY}\n````\n"),
    Case("final-opener-after-prose", "a draft block, then `Final answer: ```json` on one line and the final",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\nFinal answer: ```json\n'
         "{ORACLE_PRETTY}\n```\n"),
    Case("unclosed-final-block", "a format example in a block, then the final block never closed (as Markdown reads "
         "it, it runs to the end)",
         'The format is:\n```json\n{"rules": [{"pattern": "...", "replacement": "[REDACTED]"}]}\n```\n'
         "My answer:\n```json\n{ORACLE_PRETTY}\n"),
    Case("one-line-final-after-draft", "a draft block, then `Final answer: ```json {...}```` on one line",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\n'
         "Final answer: ```json {ORACLE}```"),
    Case("crlf-final-after-prose", "CRLF line endings, a draft block, then `Final answer: ```json` and the final",
         'Draft:\r\n```json\r\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\r\n```\r\nFinal answer: ```json\r\n'
         "{ORACLE}```\r\n"),
    Case("unfenced-final-after-draft", "a draft block inside `<thinking>` tags, then the final as bare JSON",
         '<thinking>\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\n</thinking>\n'
         "{ORACLE_PRETTY}"),
    Case("tilde-final-after-draft", "a draft block, then the final in a `~~~json` fence",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\nFinal:\n~~~json\n'
         "{ORACLE_PRETTY}\n~~~\n"),
    Case("final-fence-then-prose", "a draft block, then the final whose closing fence has prose after it",
         'Draft:\n```json\n{"rules": [{"pattern": "AKIA", "replacement": ""}]}\n```\nFinal:\n```json\n'
         "{ORACLE_PRETTY}\n``` Let me know if you need changes."),
    Case("draft-then-broken-final", "a draft block, then a final block that is not JSON (a trailing comma): the "
         "draft is read", 'Draft:\n```json\n{ORACLE}\n```\nFinal:\n```json\n{"rules": [{"pattern": "a", '
         '"replacement": ""},]}\n```'),
    Case("answer-then-illustration", "the answer, then a plain fenced block illustrating a kept line",
         "```json\n{ORACLE_PRETTY}\n```\nA line like\n```\nDB_PASSWORD=${DB_PASSWORD}\n```\nis kept."),
    Case("answer-then-json-example",
         "the answer, then a ````` ```json ````` block without `\"rules\"` (an example record)",
         '```json\n{ORACLE_PRETTY}\n```\nExample:\n```json\n{"password": "${DB_PASSWORD}"}\n```'),
    Case("uppercase-tag", "a ````` ```JSON ````` block", "```JSON\n{ORACLE_PRETTY}\n```"),
    Case("jsonc-tag", "a ````` ```jsonc ````` block holding plain JSON", "```jsonc\n{ORACLE_PRETTY}\n```"),
    Case("python-block", "the object inside a ````` ```python ````` block (`rules = {...}`)",
         "```python\nrules = {ORACLE}\n```"),
    Case("one-line-fence", "a fence on one line (````` ```json {...}``` `````)", "```json {ORACLE}```"),
    Case("long-alternation", "a 2,000-character alternation of vendor shapes beside the answer",
         WITH_RULE, extra_rule=(_long_alternation()), reward="valid"),
    Case("long-thinking", "250,000 characters of thinking, then the answer (only the answer's length counts)",
         "<think>" + "Let me check each record again. " * 8_000 + "</think>\n```json\n{ORACLE_PRETTY}\n```"),
    Case("parens-in-sets", "an alternation of 18 `(?<=[\\s(=:])...` lookbehinds (a `(` in a set is a literal)",
         WITH_RULE, extra_rule='{"pattern": "(?:' + "|".join(f"(?<=[\\\\s(=:])t{i}_[A-Za-z0-9]{{20}}"
                                                          for i in range(18)) + ')", "replacement": "[REDACTED]"}',
         reward="valid"),
    Case("verbose-pattern", "a `(?x)` verbose pattern with a comment and a `#` in a set",
         WITH_RULE, extra_rule=('{"pattern": "(?x) \\\\b zq9 [#] 7 \\\\b  # never in a record", "replacement": ""}')),
    Case("scoped-flags", "scoped inline flags `(?i:...)`",
         WITH_RULE, extra_rule=('{"pattern": "(?i:zq9#7qz)[0-9]+", "replacement": ""}')),
    Case("variable-lookbehind", "a variable-length lookbehind",
         WITH_RULE, extra_rule=('{"pattern": "(?<=(?:zq9#|zq97#)\\\\s*=\\\\s*)\\\\S+", "replacement": ""}')),
    Case("named-group-and-hash", "a named group `(?P<prefix>...)` and a set holding `#`, 40 groups",
         WITH_RULE, extra_rule=('{"pattern": "(?P<prefix>zq9_)[A-Za-z0-9#]{36}' + "(?:[q])" * 20
                                + '", "replacement": ""}')),
    Case("keep-in-conditional", "`\\K` inside a conditional's branch",
         WITH_RULE, extra_rule=('{"pattern": "(?(?=zq9)zq9\\\\K[0-9]{3}|zq8[0-9]{3})", "replacement": ""}')),
    Case("open-ended-pem", "a PEM rule with `{64,10000}`",
         WITH_RULE, extra_rule=('{"pattern": "-----BEGIN ZQ9 PRIVATE KEY-----[A-Za-z0-9+/=\\\\s]{64,10000}-----END ZQ9 '
                    'PRIVATE KEY-----", "replacement": "[REDACTED]"}')),
    Case("24-prefix-rules", "24 rules of the form `\\b<prefix>_[A-Za-z0-9_-]{20,512}`",
         '{"rules": [' + ", ".join('{"pattern": "\\\\b' + p + '_[A-Za-z0-9_-]{20,512}", "replacement": "[REDACTED]"}'
                                   for p in _PREFIXES) + "]}", reward="valid"),
    Case("single-backslash-b", 'a single `\\b` in JSON (a backspace character, not a word boundary)',
         '{"rules": [{"pattern": "\\bAKIA[0-9A-Z]{16}\\b", "replacement": "[REDACTED]"}]}', reward="valid"),
    Case("single-backslash-d", "a single `\\d` in JSON", '{"rules": [{"pattern": "\\d+", "replacement": ""}]}',
         error=("malformed_json", "no answer: the reply is not valid JSON (Invalid \\escape")),
    Case("escaped-single-quote", "`\\'` inside a pattern (JSON escapes `\"` but not `'`): the hint says so",
         '{"rules": [{"pattern": "(?<=password[\\"\\\']?=)[^\\\\s]+", "replacement": ""}]}',
         error=("malformed_json", "no answer: the reply is not valid JSON (Invalid \\escape")),
    Case("unescaped-double-quote", 'a `"` inside a pattern written as it is (`["\']`): the hint says to write `\\"`',
         '```json\n{"rules": [\n {"pattern": "(?<=[=:]\\\\s*["\']?)[A-Za-z0-9]{32}", '
         '"replacement": "[REDACTED]"}\n]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting ',' delimiter")),
    Case("trailing-comma", "a trailing comma", '```json\n{"rules": [{"pattern": "a", "replacement": ""},]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting value")),
    Case("comment", "a `//` comment in the JSON",
         '```json\n{"rules": [\n // keys\n {"pattern": "a", "replacement": ""}]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON")),
    Case("single-quotes", "a Python dict with single quotes", "{'rules': [{'pattern': 'a', 'replacement': ''}]}",
         error=("malformed_json", "no answer: the reply is not valid JSON")),
    Case("yaml", "YAML instead of JSON", "rules:\n  - pattern: AKIA\n    replacement: '[REDACTED]'\n",
         error=("malformed_json", 'no answer: the reply holds no JSON object')),
    Case("list-of-rules", "a bare JSON list of rules", '[{"pattern": "a", "replacement": ""}]',
         error=("malformed_json", 'expected a JSON object {"rules": [...]}, got a list')),
    Case("fenced-list-of-one-rule", "a ````` ```json ````` block holding a list of one rule",
         '```json\n[{"pattern": "a", "replacement": ""}]\n```',
         error=("malformed_json", 'expected a JSON object {"rules": [...]} in the ```json block, got a list')),
    Case("verbose-and-comment-alternation", "`(?x)` and `(?#...)` before 18 `(?<=[\\s(=:])...` lookbehinds",
         WITH_RULE, extra_rule='{"pattern": "(?x)(?#tokens)(?:' + "|".join(f"(?<=[\\\\s(=:])t{i}_[A-Za-z0-9]{{20}}"
                                                                         for i in range(18)) + ')", "replacement": ""}',
         reward="valid"),
    Case("quoted-block", "the answer in a Markdown quote (`> ` before every line)",
         "> ```json\n> {\"rules\": [{\"pattern\": \"a\",\n>   \"replacement\": \"\"}]}\n> ```",
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting value at line 1 "
                "column 1); its lines start with \">\"")),
    Case("non-breaking-spaces", "JSON indented with non-breaking spaces (U+00A0)",
         '```json\n{"rules": [\n\u00a0\u00a0{"pattern": "a", "replacement": ""}]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting value at line 2 "
                "column 1); there is a U+00A0 space")),
    Case("description-key", 'a rule with a `"description"` key',
         '{"rules": [{"pattern": "a", "replacement": "", "description": "AWS keys"}]}',
         error=("bad_entry", 'rule 1 has keys other than "pattern" and "replacement": "description"')),
    Case("one-bad-rule", "one rule that does not compile among good ones (PCRE's `\\x{41}`)",
         '{"rules": [{"pattern": "AKIA[0-9A-Z]{16}", "replacement": ""}, {"pattern": "\\\\x{41}", '
         '"replacement": ""}]}',
         error=("invalid_regex", "rule 2: does not compile")),
    Case("prose-only", "prose without JSON", "I would redact every token.",
         error=("malformed_json", "no answer: the reply holds no JSON object")),
    Case("open-brackets-after-answer", "the answer unfenced, then notes whose code spans leave 17 `{` open (only "
         "the answer's own nesting counts)", "My rules:\n{ORACLE_PRETTY}\n\nWhy:\n"
         + "".join(f"- record {i}: the value after `\"data\": {{`\n" for i in range(1, 18))),
    Case("curly-quotes", "JSON with curly quotes (\u201c \u201d) copied from formatted text",
         "{\u201crules\u201d: [{\u201cpattern\u201d: \u201ca\u201d, \u201creplacement\u201d: \u201c\u201d}]}",
         error=("malformed_json", "no answer: the reply is not valid JSON (Expecting property name enclosed in "
                "double quotes at line 1 column 2); there is a curly quote")),
    Case("empty-rules-aside", 'the fenced answer, then prose that mentions `{"rules": []}` (an object with no rules '
         "does not replace a fenced answer that has some)",
         '```json\n{ORACLE_PRETTY}\n```\n(With no secrets in the records the answer would be {"rules": []}.)'),
    Case("format-restated-after", "the fenced answer, then the format restated with a placeholder pattern "
         '(`{"pattern": "<pattern>", ...}`: an object whose every pattern is a placeholder is passed over)',
         '```json\n{ORACLE_PRETTY}\n```\nFormat used: {"rules": [{"pattern": "<pattern>", "replacement": '
         '"[REDACTED]"}]}'),
    Case("placeholder-in-same-fence", "the answer and a placeholder object in one fenced block",
         '```json\n{ORACLE}\n{"rules": [{"pattern": "...", "replacement": "[REDACTED]"}]}\n```'),
    Case("empty-rules-fenced-aside", 'the fenced answer, then `{"rules": []}` in a fenced block of its own (an '
         "object with no rules, fenced or not, does not replace an answer that has some)",
         '```json\n{ORACLE_PRETTY}\n```\nWith no secrets it would be:\n```json\n{"rules": []}\n```'),
    Case("format-reminder-ellipsis", "the fenced answer, then the format restated with `<...>` as its pattern (text "
         "in angle brackets, not only ASCII words, is a placeholder)",
         '```json\n{ORACLE_PRETTY}\n```\nFormat used: {"rules": [{"pattern": "<...>", "replacement": "[REDACTED]"}]}'),
    Case("null-rules-aside", 'the fenced answer, then prose that mentions `{"rules": null}` (its `"rules"` is not a '
         "non-empty list: an object with no rules)",
         '```json\n{ORACLE_PRETTY}\n```\nIf a stream had no secrets at all, the answer would be {"rules": null}.'),
    Case("unfenced-answer-then-fenced-empty", 'the answer unfenced, then `{"rules": []}` in a fenced block (read only '
         "if no other object has rules)",
         'Final answer:\n{ORACLE}\n\nIf nothing were secret:\n```json\n{"rules": []}\n```'),
    Case("example-then-broken-answer", "the format's example in prose, then an answer that is not JSON (a "
         "trailing comma): the answer's error, not the example's zero",
         'I answer as {"rules": [{"pattern": "<regex>", "replacement": "[REDACTED]"}]}.\n\n```json\n'
         '{"rules": [{"pattern": "a", "replacement": ""},]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting value at line 1 "
                "column 48); JSON allows no trailing comma")),
    Case("answer-inside-thinking", "the answer written before `</think>`, only a remark after it",
         "<think>\n```json\n{ORACLE}\n```\n</think>\nSee the rules above.",
         error=("malformed_json", 'no answer: the text after the last </think> holds no JSON object ({"rules": '
                '[...]}); only that text is read (a {"rules": ...} object is written before that </think>)')),
    Case("unquoted-keys", "JavaScript-style keys without quotes",
         '```json\n{rules: [{pattern: "a", replacement: ""}]}\n```',
         error=("malformed_json", "no answer: the ```json block is not valid JSON (Expecting property name enclosed "
                "in double quotes at line 1 column 2); JSON keys are written in double quotes")),
    Case("empty-reply", "an empty reply (the text went to a reasoning field)", "",
         error=("malformed_json", "no answer: the reply's text is empty")),
    Case("think-mentioned", "the answer, then prose that writes the tag `<think>` with no `</think>` (verifiers "
         "reads no answer either; the system prompt warns of it)",
         "```json\n{ORACLE_PRETTY}\n```\n(No <think> block was needed.)",
         error=("malformed_json", "the reply opens <think> and never closes it")),
    Case("unclosed-think", "a `<think>` that never closes",
         "<think>planning\n```json\n{ORACLE}\n```",
         error=("malformed_json", "the reply opens <think> and never closes it")),
    Case("extra-key", 'an extra top-level key (`"explanation"`)',
         '{"rules": [{"pattern": "a", "replacement": ""}], "explanation": "..."}',
         error=("bad_entry", 'the answer object may hold only "rules"; it also has "explanation"')),
    Case("flags-key", 'a rule with a `"flags"` key', '{"rules": [{"pattern": "a", "replacement": "", "flags": "i"}]}',
         error=("bad_entry", 'rule 1 has keys other than "pattern" and "replacement": "flags"')),
    Case("masked-replacement", 'replacement `"***"`', '{"rules": [{"pattern": "a", "replacement": "***"}]}',
         error=("unsafe_replacement", 'rule 1: replacement must be exactly "[REDACTED]" or ""')),
    Case("group-reference", "replacement `\\1`", '{"rules": [{"pattern": "(a)", "replacement": "\\\\1"}]}',
         error=("unsafe_replacement", 'rule 1: replacement must be exactly "[REDACTED]" or ""')),
    Case("too-many-rules", "25 rules", '{"rules": [' + ", ".join(['{"pattern": "a", "replacement": ""}'] * 25) + "]}",
         error=("too_many_rules", "the reply has 25 rules; the limit is 24")),
    Case("pattern-too-long", "a 5,000-character pattern",
         '{"rules": [{"pattern": "a", "replacement": ""}, {"pattern": "' + "b" * 5000 + '", "replacement": ""}]}',
         error=("bad_entry", "rule 2: pattern is 5000 characters; the limit is 4096")),
    Case("compile-bomb", "a nested counted repeat `(?:a{1000}){1000}`",
         '{"rules": [{"pattern": "(?:a{1000}){1000}", "replacement": ""}]}',
         error=("invalid_regex",
                "rule 1: refused before compiling: its compiled size is 1,002,018 units; the limit is 20,000")),
    Case("recursion", "recursion `(?R)`", '{"rules": [{"pattern": "a(?R)?b", "replacement": ""}]}',
         error=("invalid_regex", "rule 1: refused before compiling: recursion and subroutine calls")),
    Case("bad-regex", "an unbalanced parenthesis", '{"rules": [{"pattern": "(AKIA", "replacement": ""}]}',
         error=("invalid_regex", "rule 1: does not compile: missing )")),
)
