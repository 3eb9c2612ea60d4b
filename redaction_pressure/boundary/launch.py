"""Starting Python processes that run the installed build, and nothing a directory brings.

``python -m package`` and ``python -c`` put the current directory first on
``sys.path``: a ``redaction_pressure/``, ``audit/``, ``regex/`` or ``jsonschema/`` folder
beside an archive would run inside the verifier (and ``PYTHONPATH``, a user site or
``PYTHONSTARTUP`` would do the same from the environment). A child is therefore started
isolated (``-I``: neither the current directory nor a script's directory on its path,
no ``PYTHON*`` variables, no user site), and the project's own packages are loaded by
absolute path from the directory this build was imported from (`PACKAGE_ROOT`), never
found by a search; everything else comes from the interpreter's own site-packages. A
child's environment is minimal (`child_environment`): the private secret and whatever
else the caller holds never reach a process that does not derive seeds.

Forked children (scan workers, the job workers of `audit verify --jobs N` and of the
report) share the caller's imported modules and ``sys.path``, which a console script
never starts with the current directory on; they drop the caller's environment down to
the same minimal one (`scrub_environment`). Where a process cannot fork safely
(`fork_context` is None: macOS, Windows), parallel work runs serially in the caller
rather than through ``spawn``, whose children start as ``python -c`` with the current
directory first on their path.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing.context import BaseContext
from pathlib import Path

# The directory holding this build's packages: site-packages for a wheel, the source
# tree for an editable install. redaction_pressure and audit ship in one wheel.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

# Variables a child may see: the locale (text encoding), where temporary files go, and
# what Windows needs to start a process. Nothing else of the caller's crosses.
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT")

# Run as ``python -I -c BOOTSTRAP ROOT MODULE PACKAGES ARGS...``: loads each of PACKAGES
# (comma-separated) from ROOT by path, then runs MODULE as ``__main__`` with ARGS.
_BOOTSTRAP = """\
import importlib.util, os, runpy, sys
root, module, packages = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
for name in packages:
    where = os.path.join(root, name)
    init = os.path.join(where, "__init__.py")
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[where])
    if not os.path.isfile(init) or spec is None or spec.loader is None:
        sys.exit(f"the installed build has no package {name!r} in {root}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
sys.argv = [module, *sys.argv[4:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def python_command(module: str, *args: str, packages: tuple[str, ...] = ("redaction_pressure",)) -> list[str]:
    """The command that runs ``python -m module args...`` with this interpreter, isolated,
    ``packages`` (the ones ``module`` needs of this project, in import order) loaded from
    `PACKAGE_ROOT`."""
    return [sys.executable, "-I", "-c", _BOOTSTRAP, str(PACKAGE_ROOT), module, ",".join(packages), *args]


def has_package(name: str) -> bool:
    """Whether this build ships ``name`` beside redaction_pressure (audit does, in the
    same wheel)."""
    return (PACKAGE_ROOT / name / "__init__.py").is_file()


def child_environment(*also: str) -> dict[str, str]:
    """The environment of a child process: `KEPT_VARIABLES` and the variables named in
    ``also`` that the caller has set."""
    return {k: v for k, v in os.environ.items() if k in KEPT_VARIABLES or k in also}


def scrub_environment(*also: str) -> None:
    """Reduces this (forked) process's environment to `child_environment`, so neither it
    nor anything it starts holds the caller's secrets."""
    keep = child_environment(*also)
    for name in [k for k in os.environ if k not in keep]:
        del os.environ[name]


def safe_spawned_paths() -> None:
    """Python processes a library starts for this one (verifiers' env-server pool spawns
    its workers and multiprocessing's resource tracker; a spawned child starts as
    ``python -c``, whose path begins with the current directory) start without the
    current directory on their path: ``PYTHONSAFEPATH`` (CPython 3.11+), inherited through
    the environment, does for them what ``-I`` does for the children this project
    starts itself."""
    os.environ["PYTHONSAFEPATH"] = "1"


def fork_context() -> BaseContext | None:
    """The ``fork`` start method where it is safe (POSIX, not macOS), else None: the
    caller then works serially (see the module docstring)."""
    if os.name != "posix" or sys.platform == "darwin" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")
