"""Key hygiene: a private key must not land where `git add -A` would commit it.

`audit keygen` writes into a directory the user names, often inside the clone they
are working in. A key there is one careless commit away from being public, and a key
that was ever pushed must be treated as leaked. So writing one inside a git work
tree is refused unless git itself says the path is ignored (git's own answer, so
every .gitignore, .git/info/exclude and core.excludesFile rule counts, and a file
that is already tracked counts as not ignored). Where git cannot answer, the answer
is no: the user can always override with ``--force``.

Asking git inside a directory someone else may have handed over must not run what
that directory's ``.git/config`` names (``core.fsmonitor`` runs on every index read):
see ``_SAFE_CONFIG``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

_GIT_TIMEOUT_S = 10
_OVERRIDE = "pass --force to write it anyway"


# What a directory brings in its .git/config (or a `gitdir:` file pointing anywhere)
# is as hostile as the directory: nothing it names may run. Command-line settings
# outrank every config file, so these switch off each setting that makes the commands
# run here (`rev-parse`, `check-ignore`) execute something: the file-system monitor
# (run whenever git reads the index, as check-ignore does), hooks, a pager; and the
# untracked cache, which would make git write the index. The user's own global and
# system config still count (their core.excludesFile is one of the rules asked about).
_SAFE_CONFIG = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.untrackedCache=false",
                "core.pager=cat", "pager.check-ignore=false", "pager.rev-parse=false")
# The caller's environment, minus anything that would make git answer for another
# repository (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE...) or run or trace something
# (GIT_EXTERNAL_DIFF, GIT_TRACE*, GIT_CONFIG_PARAMETERS...): only what finds git and
# the user's own config is kept.
_KEPT_ENV = ("PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
             "GIT_EXEC_PATH", "SYSTEMROOT", "TMPDIR")


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
    return env | {"GIT_PAGER": "cat", "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
                  "LC_ALL": "C"}


def _git(git: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    safe = [arg for setting in _SAFE_CONFIG for arg in ("-c", setting)]
    try:
        return subprocess.run([git, "--no-pager", *safe, "-C", str(cwd), *args], capture_output=True, text=True,
                              errors="replace", stdin=subprocess.DEVNULL, env=_git_env(), timeout=_GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None


def _existing_dir(path: Path) -> Path:
    anchor = path.parent
    while not anchor.is_dir() and anchor != anchor.parent:
        anchor = anchor.parent
    return anchor


def _dot_git_above(directory: Path) -> Path | None:
    for d in (directory, *directory.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def refuse_if_tracked_path(path: str | os.PathLike[str]) -> str | None:
    """Returns why a private key may not be written to ``path`` (a file path, which
    need not exist yet), or None when it may: outside any git work tree, or ignored
    by git there. The message says how to fix it and how to override."""
    target = Path(os.path.realpath(os.path.abspath(path)))
    anchor = _existing_dir(target)
    git = shutil.which("git")
    top: Path | None = None
    if git is not None:
        found = _git(git, anchor, "rev-parse", "--show-toplevel")
        if found is not None and found.returncode == 0 and found.stdout.strip():
            top = Path(os.path.realpath(found.stdout.strip()))
    if top is None or git is None:  # (git is None only when top is)
        marked = _dot_git_above(anchor)
        if marked is None:
            return None
        why = "git is not installed" if git is None else "git could not read that repository"
        return (f"refusing to write a private key to {path}: it is inside the git repository {marked} and "
                f"{why}, so it cannot be checked that the key is git-ignored; write it outside the "
                f"repository, or {_OVERRIDE}")
    rel = os.path.relpath(target, top)
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    checked = _git(git, top, "check-ignore", "-q", "--", rel)
    if checked is not None and checked.returncode == 0:
        return None
    if checked is not None and checked.returncode == 1:
        parent = Path(rel).parent.as_posix()
        hint = f"add `/{parent}/` to {top / '.gitignore'}" if parent != "." else "add it to .gitignore"
        return (f"refusing to write a private key to {path}: it is inside the git work tree {top} and not "
                f"git-ignored (or already tracked), so `git add -A` would commit it; {hint}, write it "
                f"outside the repository, or {_OVERRIDE}")
    detail = (checked.stderr.strip().splitlines() or ["no answer"])[0] if checked is not None else "git did not run"
    return (f"refusing to write a private key to {path}: could not ask git whether it is ignored in {top} "
            f"({detail}); write it outside the repository, or {_OVERRIDE}")
