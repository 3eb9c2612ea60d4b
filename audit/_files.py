"""Archive members are read, and the audit's files written, through the project's one
file boundary (`redaction_pressure.contract`: `open_regular`, `read_bounded`,
`write_new`).

An archive is a directory someone else wrote. Its members (``traces.jsonl``,
``manifest.toml``, ``manifest.dsse.json``) are opened with ``O_NOFOLLOW`` and
``O_NONBLOCK`` and must be regular files: a member that is a symbolic link (which could
point at any file of the evaluator's, or at ``/dev/zero``), a FIFO (which would block),
a device or a directory is refused with a reason. Reads are capped by the caller's
limit, never by the file. Files the audit writes (keys, archive members) are never
written over an existing name nor through a link, and never seen half-written.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from redaction_pressure.contract import InputFileError, file_kind, open_regular, write_new

MemberError = InputFileError  # a member that is missing, a link, not a regular file or too large

__all__ = ["MemberError", "member_kind", "open_member", "read_member", "write_new"]


def member_kind(path: Path) -> str | None:
    """None for a regular file (not followed through a link); otherwise what it is."""
    return file_kind(path)


def open_member(path: Path, max_bytes: int | None = None) -> BinaryIO:
    """A binary file object for ``path``, a regular file that is not a symbolic link (of
    at most ``max_bytes`` by ``fstat``, when given). Raises MemberError or OSError."""
    return open_regular(path, max_bytes=max_bytes)


def read_member(path: Path, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of a regular, non-link file (one more than the limit
    tells the caller it is too large, as a file that grows while read can be). Raises
    MemberError or OSError."""
    with open_member(path) as f:
        data: bytes = f.read(limit + 1)
    return data
