"""What the model reads: the rules of the game and the labelled shown records."""

from __future__ import annotations

from ..corpus.stream import Record

SYSTEM_PROMPT = """\
You write secret-redaction rules. You will see labelled records (config files, logs, \
shell history, source code) from one stream; your rules will then be run on later, \
unseen records of the same stream.

Answer with one JSON object, in a ```json fenced block:
{"rules": [{"pattern": "<regex>", "replacement": "[REDACTED]"}]}

- At most 24 rules. They run in order, each over the whole text of every record, \
with the Python `regex` module (VERSION0 syntax; lookarounds allowed).
- "replacement" must be exactly "[REDACTED]" or "" (no group references).
- Scoring is per character of the original text: a secret counts only if every one \
of its characters is removed; removing any character that is not part of a secret \
(decoys, look-alikes, keys, punctuation, placeholders) costs you. Only the labelled \
span is secret: for a URL or header, that is the password or token itself.
- Invalid JSON, invalid or too costly patterns (recursion, fuzzy matching and \\K \
inside lookarounds are refused), more than 10000 matches, or running out of the \
2-second regex time budget score zero."""


def _record_block(i: int, record: Record) -> str:
    lines = [f"### Record {i + 1} ({record.template})", "```text", record.text.rstrip("\n"), "```"]
    if record.secrets:
        lines.append("Secrets in this record:")
        for s in record.secrets:
            lines.append(f"- {s.family} [{s.start}:{s.end}]: {record.text[s.start:s.end]!r}")
    else:
        lines.append("Secrets in this record: none")
    return "\n".join(lines)


def render_prompt(shown: tuple[Record, ...], n_eval: int, policy: str) -> str:
    """``policy`` states in words which optional categories the stream treats as
    secret; formats are never described, only shown."""
    blocks = "\n\n".join(_record_block(i, r) for i, r in enumerate(shown))
    return (f"Here are {len(shown)} labelled records. Every secret is listed with its family "
            f"and its [start:end) character span; everything else must survive. {policy}\n\n{blocks}\n\n"
            f"Write the rules that will redact the next {n_eval} records of this stream.")
