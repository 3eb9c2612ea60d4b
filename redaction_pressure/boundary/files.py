"""Files from outside: read bounded, written without following links.

Whatever a run, an archive or an argument names may be a symbolic link (to a file of
the reader's, or to ``/dev/zero``), a FIFO (whose reader blocks until a writer comes),
a device, or a sparse file of terabytes that costs nothing to make and everything to
read. So an input is opened with ``O_NONBLOCK`` (opening a FIFO never waits), must be a
regular file by ``fstat`` of the open descriptor (not of the path, which can change in
between), and its size from that ``fstat`` is checked against the reader's cap before a
byte is read; it is then read no further than the cap plus one byte, so a file that
grows while read is caught too. A member of a directory someone else wrote is opened
with ``O_NOFOLLOW`` as well; a file the user names on the command line may be a link
they made, so it is followed, but must still be a regular file within the cap.

An output never goes through a link, nor appears half-written: `write_new` creates a
file whose name must be free (the audit's keys and archive members: never
overwritten), `replace_file` renames a freshly, exclusively created file over its
target (a report page: rename replaces a link at the target, never the link's target).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

# A traces.jsonl of the standard task holds ~27 KB per trace, so this is ~38,000 traces:
# more than anyone renders or seals in one piece (seal such a run in parts).
MAX_TRACES_BYTES = 1 << 30
# A manifest takes ~185 bytes per trace (`audit._manifest.build_manifest`: its digest,
# task id and coverage entries), so a traces file at the cap, of traces of 18 KB (the
# least a real one holds), makes one of ~11 MB: 16 MiB is above any manifest `audit seal`
# writes (it refuses to write a larger one). Read by report, compare and `audit validate`
# alike; `audit verify` caps its copy of the signed predicate by the predicate's size.
MAX_MANIFEST_BYTES = 16 << 20

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class InputFileError(Exception):
    """A file that cannot be read as asked: missing, a link where none is followed, not
    a regular file, or larger than the reader accepts. The message is one line that
    says which."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _kind_at(path: Path, follow_links: bool) -> str | None:
    """What ``path`` is when it is not a regular file; None when it is, or cannot be told."""
    try:
        mode = (os.stat if follow_links else os.lstat)(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def file_kind(path: Path) -> str | None:
    """None for a regular file (not followed through a link); otherwise what it is:
    ``"missing"``, ``"a symbolic link"`` or ``"not a regular file"``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def too_large(name: str, size: int, limit: int) -> str:
    return f"{name} is {size:,} bytes, more than the {limit:,} bytes this reader accepts (not read)"


def open_regular(path: Path, *, follow_links: bool = False, max_bytes: int | None = None) -> BinaryIO:
    """A blocking binary file object for ``path``, which must be a regular file (and, with
    ``follow_links`` false, not a symbolic link) of at most ``max_bytes`` by ``fstat``.
    Raises InputFileError, or OSError when the file exists but cannot be opened."""
    path = Path(path)
    try:
        fd = os.open(path, _READ_FLAGS | (0 if follow_links else _NOFOLLOW))
    except FileNotFoundError:
        raise InputFileError(f"{path.name} is missing", missing=True) from None
    except OSError as exc:
        if not follow_links and (exc.errno == errno.ELOOP or os.path.islink(path)):
            raise InputFileError(f"{path.name} is a symbolic link; it must be a regular file "
                                 f"(links are not followed)") from None
        kind = _kind_at(path, follow_links)
        if kind is not None:  # a socket refuses to open (ENXIO): say what it is, not the errno
            raise InputFileError(f"{path.name} is not a regular file ({kind})") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{path.name} is not a regular file ({_kind(st.st_mode)})")
        if max_bytes is not None and st.st_size > max_bytes:
            raise InputFileError(too_large(path.name, st.st_size, max_bytes))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: Path, max_bytes: int, *, follow_links: bool = False) -> bytes:
    """The whole of a regular file of at most ``max_bytes`` (by ``fstat``, then by what
    is read: at most one byte more). Raises InputFileError or OSError."""
    with open_regular(path, follow_links=follow_links, max_bytes=max_bytes) as f:
        data: bytes = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputFileError(f"{Path(path).name} grew past {max_bytes:,} bytes while being read (not read further)")
    return data


_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK, errno.EXDEV}


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


def _write_exclusive(path: Path, data: bytes, mode: int, exact_mode: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
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


def replace_file(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Writes ``data`` to ``path``, replacing what is there (a file, or a link, never
    the link's target). The bytes go to a new file of a random name beside it, created
    exclusively without following links (``mkstemp``), synced, given ``mode`` narrowed
    by the umask (0600 where the umask cannot be read without changing it), and renamed
    over ``path``: a reader sees the old file or the new one,
    and a link planted at any name this writes to is never written through."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        give_mode(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def replace_refusal(out: Path, *, reads: tuple[Path, ...] = (), ours: Callable[[bytes], bool], force: bool,
                    option: str) -> str | None:
    """Why writing ``out`` would lose a file, or None. What this command writes (a file
    whose first bytes ``ours`` accepts: a page that names this generator, an export
    line) or an empty file is replaced; any other existing file only with ``force``;
    and never a file this command reads: an input file (by device and inode), or a
    member of the run or archive an input is or sits in (its traces, manifest and
    envelope, anything under its configs/), by path or by inode. Red team,
    2026-12-03: ``report --out`` and ``export --out`` replaced a run's own traces."""
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{option} {out}: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return f"{option} {out} is a directory; {option} names the file to write"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        # Red team, 2026-12-03: `report --out /dev/null --force`, run as root, replaced
        # /dev/null with the page (the output is written beside and renamed over).
        return (f"{option} {out} is a device or a socket, not a file; nothing replaces one, even with --force: "
                f"{option} names a file to write")
    if stat.S_ISREG(st.st_mode):
        if st.st_size == 0:
            return None
        try:
            with open_regular(out) as f:
                if ours(f.read(_HEAD_BYTES)):
                    return None
        except (InputFileError, OSError):
            pass
        if _read_by(out, st, reads):
            return f"{option} {out} is a file this command reads; write elsewhere"
    if force:
        return None
    return f"{option} {out} exists and is not a file this command wrote; pass --force to replace it"


_HEAD_BYTES = 1 << 22  # what `ours` sees of an existing output: a page's head, an export's first line


# What a run or an archive holds that a reader reads (or `vf-eval --resume` needs): an
# output never replaces one, whatever --force says. Other files in a run (a page, the
# user's notes) are the user's to replace with --force.
_READ_MEMBERS = ("traces.jsonl", "manifest.toml", "manifest.dsse.json")


def _read_by(out: Path, st: os.stat_result, reads: tuple[Path, ...]) -> bool:
    """Whether the existing file ``out`` (its lstat ``st``) is what a command reading
    ``reads`` reads: an input file itself (by inode), or a member of the run or archive
    an input is or sits in (by path, a run's configs/ included, or by inode)."""
    where = Path(os.path.realpath(out.parent)) / out.name
    for path in reads:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) == (st.st_dev, st.st_ino):
            return True
        base = Path(os.path.realpath(path if stat.S_ISDIR(info.st_mode) else Path(path).parent))
        if where.is_relative_to(base):
            rel = where.relative_to(base).parts
            if rel[0] == "configs" or (len(rel) == 1 and rel[0] in _READ_MEMBERS):
                return True
        for member in (*_READ_MEMBERS, "configs/resolved/eval.json"):
            with contextlib.suppress(OSError):
                found = os.stat(base / member)
                if (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino):
                    return True
    return False


def give_mode(fd: int, mode: int = 0o644) -> None:
    """Gives a file made by ``mkstemp`` (0600) ``mode`` narrowed by the umask, as a file
    written in place would have (it keeps 0600 where the umask cannot be read)."""
    umask = _umask()
    if umask is not None:
        os.fchmod(fd, mode & ~umask)


def _umask() -> int | None:
    """This process's umask, read without setting it (``os.umask`` would change it for
    every thread for a moment); None where the kernel does not say (non-Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


# What `redaction-pressure eval` writes in its run directory (`run.run_policy`; the config
# by verifiers' own writer, which opens the path by name and creates its directories).
RUN_DIR_WRITES = ("traces.jsonl", "configs/resolved/eval.json")
MAX_WALK = 10_000  # entries of an output directory looked at for links (a run directory holds a handful)


class LinkedOutputError(Exception):
    """An output directory holds a symbolic link where a writer would write (one line)."""


def link_in(directory: Path, members: tuple[str, ...] = (), limit: int = MAX_WALK) -> Path | None:
    """The first symbolic link found at ``directory`` itself, on the way to it when it is
    relative (``runs`` of ``runs/dev-baseline``: the parts the current directory
    supplies), at or on the way to any of ``members`` (paths relative to it, e.g.
    ``configs/resolved/eval.json``), or anywhere under it (walked without following
    links, at most ``limit`` entries: the members are always checked whole), else None.
    A directory someone else made (a cloned repository that ships ``runs/``, or ``runs``
    itself as a link) may hold a link to any file of the user's, which a writer that
    opens a path by name would write through. The parts of an absolute path are the
    user's own choice (``/tmp`` is a link on some systems) and are not checked."""
    directory = Path(directory)
    parts = directory.parts
    candidates = [] if directory.is_absolute() else [Path(*parts[:k]) for k in range(1, len(parts))]
    candidates.append(directory)
    for member in members:
        parts = Path(member).parts
        candidates += [directory.joinpath(*parts[:k]) for k in range(1, len(parts) + 1)]
    for path in candidates:
        if os.path.islink(path):
            return path
    seen, stack = 0, [directory]
    while stack and seen < limit:
        try:
            entries = os.scandir(stack.pop())
        except OSError:  # not a directory (yet), or unreadable: the writer will say
            continue
        with entries:
            for entry in entries:
                seen += 1
                if entry.is_symlink() and not _resume_marker(directory, entry):
                    return Path(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                if seen >= limit:
                    break
    return None


def _resume_marker(directory: Path, entry: os.DirEntry[str]) -> bool:
    """verifiers' own ``logs/latest -> attempt_N`` (left by ``vf-eval --resume``): a link
    to a sibling by plain name, in a directory nothing here writes to. Any link it names
    is itself found by the walk."""
    if Path(entry.path) != directory / "logs" / "latest":
        return False
    try:
        target = os.readlink(entry.path)
    except OSError:
        return False
    return target not in ("", ".", "..") and "/" not in target and "\\" not in target


def linked_step(base: Path, path: Path) -> Path | None:
    """The first symbolic link inside ``base`` on the way to ``path``'s directory, else
    None. A writer that puts its file inside someone else's directory (a run or archive
    it was given) must not be led out of it by a linked subdirectory there; ``base``
    itself, and links outside it, are the caller's choice. The path is walked as
    written: ``link/..`` is not collapsed, since the system follows the link before it
    goes up; and "inside" is decided by where each step really is, so an alias of
    ``base`` is ``base``."""
    real_base = os.path.realpath(base)
    path = Path(path)
    step = Path(path.anchor) if path.is_absolute() else Path.cwd()
    parts = path.parent.parts[1:] if path.is_absolute() else path.parent.parts
    for part in parts:
        following = step / part
        if os.path.islink(following):
            where = os.path.realpath(step)
            if where == real_base or where.startswith(real_base.rstrip(os.sep) + os.sep):
                return following
        step = following
    return None


def refuse_links(directory: Path, members: tuple[str, ...] = (), what: str = "the output directory") -> None:
    """Raises LinkedOutputError when `link_in` finds a link in ``directory``."""
    found = link_in(directory, members)
    if found is not None:
        target = os.readlink(found) if os.path.islink(found) else "?"
        raise LinkedOutputError(f"{what} {directory} is or holds a symbolic link ({found} -> {target[:200]}): "
                                f"nothing is written through links; remove it or choose another directory")
