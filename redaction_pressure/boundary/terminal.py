"""Text from a run or an archive, made safe to show.

A trace's strings (a model name, a run name, a split commitment, an error message) reach
terminals and pages; written raw, an escape sequence could rewrite what a reader sees
(``\\x1b[2K\\r`` erases a line and prints a fake one) and a bidi override reorder it
(red team, 2026-12-03: `compare`, `rescore` and `audit seal` printed them raw while
`audit verify` escaped them). Every command prints such text through `printable`.
"""

from __future__ import annotations

import os
import sys


def printable(value: object, keep: str = "") -> str:
    """``value`` as text with every character Python does not call printable (control
    characters, so every escape sequence; bidi overrides; line and paragraph
    separators) written as its escape (``\\x1b``, ``\\u202e``), except those in ``keep``
    (a page keeps ``\\n`` and ``\\t`` of a reply)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


def quiet_stdout() -> None:
    """Points standard output at the null device: after a reader closed the pipe or the
    output filled up, nothing is left to flush at exit (which would raise again)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def sane_streams() -> None:
    """Standard streams every command can write to: a character the terminal's
    encoding lacks (a ± or − in an ASCII or Latin-1 locale) is written as its escape,
    not raised (review of 2026-12-04: `rescore`, `compare` and `eval` printed a
    traceback, and `audit verify` called a genuine archive's check an internal error,
    exit 1), and a stream the caller closed (``>&-``) becomes the null device."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process's life
        elif callable(getattr(stream, "reconfigure", None)):
            stream.reconfigure(errors="backslashreplace")
