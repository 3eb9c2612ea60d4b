"""Finds the versioned JSON Schemas whether the package runs from a wheel (where the
build copies ``schemas/`` to ``redaction_pressure/_schemas/``) or from the source tree
(editable installs, where they stay in the repository's ``schemas/``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parents[1]
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def schema_dir() -> Path:
    for candidate in (_PACKAGE / "_schemas", _PACKAGE.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("redaction-pressure schemas are missing from this installation")


@cache
def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
    return schema


def json_path(parts: Iterable[str | int]) -> str:
    """Where in a JSON document a schema error is, as the reply's author and the
    auditor both read it: ``$.rules[3].pattern``; a key that is not an identifier is
    quoted (``$["a b"]``), so a hostile key cannot pass for a path."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(str(part)):
            out += f".{part}"
        else:
            out += "[" + json.dumps(str(part)) + "]"
    return out
