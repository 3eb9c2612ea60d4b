"""The identity every task and trace carries, and the source digest of the build.

Source digest algorithm ``rp-source-v1``: take every ``*.py`` file under the installed
``redaction_pressure`` package and every ``*.schema.json`` file of its schema
directory, name each by a logical POSIX path (``redaction_pressure/<relative path>``
and ``schemas/<file name>``), sort by that name, and hash with SHA-256 the
concatenation, for each file, of ``name + NUL + decimal byte length + NUL + bytes``.
Bytecode, caches and metadata are ignored, and the schema directory is found the same
way the package loads it, so a wheel install and an editable install of one tree
produce the same digest.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import regex

from .schemas import schema_dir
from .versions import CORPUS_VERSION, ENVIRONMENT_VERSION, REWARD_SCHEMA_VERSION

DIGEST_ALGORITHM = "rp-source-v1"
_PACKAGE = Path(__file__).resolve().parents[1]


def digest_files(package_dir: Path, schemas: Path) -> list[tuple[str, Path]]:
    files = [(f"redaction_pressure/{p.relative_to(package_dir).as_posix()}", p)
             for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts]
    files += [(f"schemas/{p.name}", p) for p in schemas.glob("*.schema.json")]
    return sorted(files)


def compute_digest(package_dir: Path, schemas: Path) -> str:
    h = hashlib.sha256()
    for name, path in digest_files(package_dir, schemas):
        data = path.read_bytes()
        h.update(name.encode() + b"\x00" + str(len(data)).encode() + b"\x00" + data)
    return h.hexdigest()


@lru_cache(maxsize=1)
def source_digest() -> str:
    return compute_digest(_PACKAGE, schema_dir())


def build_identity() -> dict:  # type: ignore[type-arg]  # the contract's pinned signature text (tests/unit/test_contract.py)
    """The build half of the identity (the same for every task of this build)."""
    return {
        "environment_version": ENVIRONMENT_VERSION,
        "corpus_version": CORPUS_VERSION,
        "reward_schema_version": REWARD_SCHEMA_VERSION,
        "source_digest": source_digest(),
        "source_digest_algorithm": DIGEST_ALGORITHM,
        "regex_version": regex.__version__,
    }
