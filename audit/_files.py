"""Opening archive members without following links, and writing new files.

An archive is a directory someone else wrote. Its members (``traces.jsonl``,
``manifest.toml``, ``manifest.dsse.json``) are opened with ``O_NOFOLLOW`` and must be
regular files: a member that is a symbolic link (which could point at any file of the
evaluator's, or at ``/dev/zero``), a FIFO (which would block), a device or a directory
is refused with a reason. ``O_NONBLOCK`` keeps opening a FIFO from blocking; it has no
effect on regular files. Reads are capped by the caller's limit, never by the file.

Files the audit writes (keys, archive members) are never written over an existing
name nor through a link, and never seen half-written: `write_new` writes a
temporary file created with ``O_EXCL | O_NOFOLLOW`` and the file's mode from its
first byte, syncs it, and hard-links it into place (``link`` fails if the name is
taken, whatever is there).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class MemberError(Exception):
    """An archive member that is missing or not a regular file (the message says which)."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def member_kind(path: Path) -> str | None:
    """None for a regular file (not followed through a link); otherwise what it is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def open_member(path: Path) -> BinaryIO:
    """A binary file object for ``path``, a regular file that is not a symbolic link.
    Raises MemberError (missing, a link, not a regular file) or OSError (unreadable)."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise MemberError(f"{path.name} is missing", missing=True) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise MemberError(f"{path.name} is a symbolic link; archive members must be regular files "
                              f"(links are not followed)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MemberError(f"{path.name} is not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_member(path: Path, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of a regular, non-link file (one more than the limit
    tells the caller it is too large). Raises MemberError or OSError."""
    with open_member(path) as f:
        data: bytes = f.read(limit + 1)
    return data


def write_new(path: Path, data: bytes, mode: int, *, exact_mode: bool) -> None:
    """Creates ``path`` holding ``data``; raises FileExistsError if the name is taken.
    ``exact_mode``: the mode is ``mode`` whatever the umask (a public key must be
    readable); otherwise the umask narrows it, as for any file the user creates (an
    archive of a private evaluation stays as private as the user's umask says).

    The file is written under a temporary name and hard-linked into place, so a
    half-written file never appears under ``path``; on a filesystem without hard links
    (FAT, some network and FUSE mounts) it is created under ``path`` directly, still
    exclusively and without following links."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        _write_exclusive(tmp, data, mode, exact_mode)
        os.link(tmp, path)  # atomic, and fails with FileExistsError if path exists
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        _write_exclusive(path, data, mode, exact_mode)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK, errno.EXDEV}


def _write_exclusive(path: Path, data: bytes, mode: int, exact_mode: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        if exact_mode:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
