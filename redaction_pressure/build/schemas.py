"""Finds the versioned JSON Schemas whether the package runs from a wheel (where the
build copies ``schemas/`` to ``redaction_pressure/_schemas/``) or from the source tree
(editable installs, where they stay in the repository's ``schemas/``)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parents[1]


def schema_dir() -> Path:
    for candidate in (_PACKAGE / "_schemas", _PACKAGE.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("redaction-pressure schemas are missing from this installation")


@cache
def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
    return schema
