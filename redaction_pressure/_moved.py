"""Old module paths that tests/test_audit*.py still import, served as aliases of the
modules' new homes (issue 14 moved the flat modules into subpackages while the audit
tests were being refactored on another branch). An import finder rather than stub
files at the old paths, so git follows every moved file as a rename. The alias is the
module object itself, so a test that patches the old name patches the code that runs.
Delete this module, and its one line in ``__init__``, once no test imports these."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

MOVED = {
    "redaction_pressure._answer": "redaction_pressure.scoring.answer",
    "redaction_pressure._identity": "redaction_pressure.build.identity",
    "redaction_pressure._run": "redaction_pressure.run",
    "redaction_pressure._scan_pool": "redaction_pressure.scoring.scan_pool",
    "redaction_pressure._schemas": "redaction_pressure.build.schemas",
    "redaction_pressure._splits": "redaction_pressure.task.splits",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self._specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Already executed under its new name; the import system has just replaced its
        # __spec__ with the alias's, so give the module its own back.
        for alias, spec in self._specs.items():
            if module.__spec__ is not None and module.__spec__.name == alias:
                module.__spec__ = spec


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
