"""The audit reaches the environment only through `redaction_pressure.contract` and the
top-level API, and the contract's surface changes only on purpose."""

from __future__ import annotations

import ast
import inspect
import unittest
from pathlib import Path

import redaction_pressure
from redaction_pressure import contract

ROOT = Path(__file__).resolve().parents[2]
AUDIT = ROOT / "audit"

# The contract's surface: each callable's signature, each constant's type. Changing an
# entry changes what an audit checks; update it together with the environment version.
SURFACE = {
    "Allowance": "class",
    "DEFAULT_MAX_BUDGET_S": "float",
    "DEFAULT_MAX_CPU_S": "float",
    "InputFileError": "class",
    "MAX_MANIFEST_BYTES": "int",
    "MEAN_OVER_TASKS": "str",
    "MAX_TRACES_BYTES": "int",
    "SplitProof": "class",
    "file_kind": "(path: 'Path') -> 'str | None'",
    "fork_context": "() -> 'BaseContext | None'",
    "open_regular": "(path: 'Path', *, follow_links: 'bool' = False, max_bytes: 'int | None' = None) -> 'BinaryIO'",
    "prove_split": "(traces: 'Iterable[tuple[object, object, object, object]]') -> 'SplitProof'",
    "read_bounded": "(path: 'Path', max_bytes: 'int', *, follow_links: 'bool' = False) -> 'bytes'",
    "scrub_environment": "(*also: 'str') -> 'None'",
    "check_json_nesting": "(text: 'str') -> 'None'",
    "check_json_density": "(text: 'str', size: 'int', per_bytes: 'tuple[int, int, int]') -> 'None'",
    "TooManyValues": "class",
    "VALUE_BYTES": "tuple",
    "MIN_TRACE_BYTES": "int",
    "loads_toml": "(text: 'str') -> 'dict[str, Any]'",
    "NestedTooDeeply": "class",
    "printable": "(value: 'object', keep: 'str' = '') -> 'str'",
    "write_new": "(path: 'Path', data: 'bytes', mode: 'int', *, exact_mode: 'bool') -> 'None'",
    "CORPUS_VERSION": "str",
    "DEFAULT_BUDGET_S": "float",
    "DEFAULT_LEVEL": "int",
    "DEFAULT_N_EVAL": "int",
    "DEFAULT_N_SHOWN": "int",
    "ENVIRONMENT_VERSION": "str",
    "LEVELS": "tuple",
    "PRIVATE_SIZE": "int",
    "PUBLIC_SPLITS": "dict",
    "REWARD_SCHEMA_VERSION": "str",
    "SPLIT_LABELS": "dict",
    "WEIGHTS": "dict",
    "PrivateSeedError": "class",
    "RedactionTask": "class",
    "Score": "class",
    "available_cpus": "() -> 'int'",
    "build_identity": "() -> 'dict'",
    "configure_scan_pool": "(size: 'int | None', fork: 'bool' = False) -> 'None'",
    "json_path": "(parts: 'Iterable[str | int]') -> 'str'",
    "prestart_scan_pool": "() -> 'None'",
    "private_commitment": "(secret: 'bytes') -> 'str'",
    "private_seed": "(secret: 'bytes', index: 'int') -> 'int'",
    "read_private_secret": "(env_var: 'str' = 'REDACTION_PRESSURE_PRIVATE_SEED') -> 'bytes'",
    "scan_pool_setting_problem": "() -> 'str | None'",
    "schema_dir": "() -> 'Path'",
    "score_completion": None,  # checked below against the top-level API
    "source_digest": "() -> 'str'",
    "stop_scan_pool": "() -> 'None'",
    "summary_means": "(traces: 'list[dict]') -> 'dict'",
    "STANDARD_EVALUATIONS": "dict",
    "class_summary": "(traces: 'list[dict[str, Any]]') -> 'dict[str, Any]'",
    "coverage_label": "(split: 'str', task_indices: 'list[int]', rollouts: 'list[int]', "
                      "excluded: 'dict[str, Any] | None' = None) -> 'str'",
    "coverage_of": "(split: 'str', indices: 'Iterable[int]', excluded: 'dict[str, Any] | None' = None) "
                   "-> 'dict[str, Any]'",
    "describe_evaluated": "(evaluated: 'dict[str, Any]') -> 'str'",
    "durable_key": "(split: 'str', index: 'int', n_shown: 'int', n_eval: 'int', budget_s: 'float', "
                   "level: 'int' = 1) -> 'str'",
    "evaluated_of": "(traces: 'Sequence[object]', runs: 'Sequence[object]') -> 'tuple[dict[str, Any], list[str]]'",
    "level_summaries": "(traces: 'list[dict[str, Any]]', overall: 'dict[str, Any] | None' = None) "
                       "-> 'list[dict[str, Any]]'",
    "run_uncertainty": "(traces: 'list[dict[str, Any]]') -> 'dict[str, Any]'",
    "sane_streams": "() -> 'None'",
    "quiet_stdout": "() -> 'None'",
    "task_from_seed": None,
    "task_hash": "(data: 'Mapping[str, Any]') -> 'str'",
}


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in a file; ``names`` is empty for
    ``import module``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module, [a.name for a in node.names]))
    return out


class AuditImportsOnlyTheContract(unittest.TestCase):
    def test_audit_modules_import_only_the_contract_and_the_top_level_api(self):
        files = sorted(AUDIT.rglob("*.py"))
        self.assertGreater(len(files), 10)
        allowed = {"redaction_pressure": set(redaction_pressure.__all__) | {"contract"},
                   "redaction_pressure.contract": set(contract.__all__)}
        problems = []
        for path in files:
            for line, module, names in _imports(path):
                if module.split(".")[0] != "redaction_pressure":
                    continue
                where = f"{path.relative_to(ROOT)}:{line}"
                if module not in allowed:
                    problems.append(f"{where} imports {module}")
                elif not names:
                    problems.append(f"{where} imports the module {module} (import names from it)")
                else:
                    problems.extend(f"{where} imports {module}.{n}, not in its __all__"
                                    for n in names if n not in allowed[module])
        self.assertEqual(problems, [])

    def test_the_check_catches_a_private_import(self):
        # the walk above must see imports nested in functions, as audit/cli.py has
        probe = ROOT / "tests" / "_contract_probe.py"
        probe.write_text("def f():\n    from redaction_pressure.task.tasks import task_from_seed\n", encoding="utf-8")
        try:
            self.assertEqual(_imports(probe), [(2, "redaction_pressure.task.tasks", ["task_from_seed"])])
        finally:
            probe.unlink()

    def test_no_dynamic_imports_in_audit(self):
        for path in AUDIT.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for word in ("importlib", "__import__", "sys.modules"):
                self.assertNotIn(word, text, f"{path.name} uses {word}")


class ContractSurface(unittest.TestCase):
    def test_exports_exactly_the_declared_surface(self):
        self.assertEqual(sorted(contract.__all__), sorted(SURFACE))
        for name in contract.__all__:
            self.assertTrue(hasattr(contract, name), name)

    def test_signatures_and_types_are_unchanged(self):
        for name, expected in SURFACE.items():
            value = getattr(contract, name)
            if expected is None:
                continue
            if expected == "class":
                self.assertTrue(inspect.isclass(value), name)
            elif callable(value):
                self.assertEqual(str(inspect.signature(value)), expected, name)
            else:
                self.assertEqual(type(value).__name__, expected, name)

    def test_scoring_is_the_function_the_taskset_uses(self):
        self.assertIs(contract.score_completion, redaction_pressure.score_completion)
        self.assertIs(contract.RedactionTask, redaction_pressure.RedactionTask)
        self.assertEqual(contract.ENVIRONMENT_VERSION, redaction_pressure.ENVIRONMENT_VERSION)
        params = list(inspect.signature(contract.task_from_seed).parameters)
        self.assertEqual(params[:4], ["split", "index", "seed", "commitment"])

    def test_every_export_is_documented(self):
        doc = contract.__doc__ or ""
        missing = [n for n in contract.__all__ if f"`{n}`" not in doc]
        self.assertEqual(missing, [])

    def test_weights_sum_to_one(self):
        self.assertAlmostEqual(sum(contract.WEIGHTS.values()), 1.0, places=12)


if __name__ == "__main__":
    unittest.main()
