"""The source digest: one documented algorithm, the same for a wheel install and an
editable install of one tree, and sensitive to every behaviour-bearing file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import redaction_pressure
from redaction_pressure.build.identity import compute_digest, digest_files, source_digest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(redaction_pressure.__file__).resolve().parent


class Sensitivity(unittest.TestCase):
    def test_covers_sources_and_schemas_only(self):
        names = [n for n, _ in digest_files(PACKAGE, ROOT / "schemas")]
        self.assertIn("redaction_pressure/scoring/reward.py", names)
        self.assertIn("schemas/answer-v2.schema.json", names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        self.assertEqual(names, sorted(names))

    def test_covers_every_subpackage_and_schema(self):
        """The scoring code lives in subpackages; a digest that skipped one would vouch
        for code it never hashed."""
        names = {n for n, _ in digest_files(PACKAGE, ROOT / "schemas")}
        for sub in ("build", "corpus", "corpus/families", "task", "scoring", "policies", "report"):
            self.assertIn(f"redaction_pressure/{sub}/__init__.py", names)
        self.assertIn("redaction_pressure/scoring/scan_worker.py", names)
        self.assertIn("redaction_pressure/corpus/families/examples.py", names)
        self.assertEqual({n for n in names if n.startswith("schemas/")},
                         {f"schemas/{p.name}" for p in (ROOT / "schemas").glob("*.schema.json")})

    def test_any_file_change_changes_the_digest(self):
        with tempfile.TemporaryDirectory() as tmp:
            pkg, schemas = Path(tmp) / "redaction_pressure", Path(tmp) / "schemas"
            shutil.copytree(PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__", "_schemas"))
            shutil.copytree(ROOT / "schemas", schemas)
            base = compute_digest(pkg, schemas)
            self.assertEqual(base, source_digest())
            for name, _ in digest_files(pkg, schemas):
                path = Path(tmp) / name
                original = path.read_bytes()
                path.write_bytes(original + b"\n")
                self.assertNotEqual(compute_digest(pkg, schemas), base, name)
                path.write_bytes(original)
            (pkg / "__pycache__").mkdir(exist_ok=True)
            (pkg / "__pycache__" / "x.pyc").write_bytes(b"junk")
            self.assertEqual(compute_digest(pkg, schemas), base)


@unittest.skipUnless(shutil.which("uv"), "needs uv")
class WheelVersusEditable(unittest.TestCase):
    """Integration (~10 s): builds a wheel, installs it in a fresh venv."""

    def test_same_digest(self):
        self.assertEqual(Path(redaction_pressure.__file__).resolve().parents[1], ROOT)  # editable here
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
            run = lambda *cmd: subprocess.run(cmd, cwd=tmp, env=env, check=True,  # noqa: E731
                                              capture_output=True, text=True, timeout=600)
            run("uv", "build", "--wheel", "-o", f"{tmp}/dist", str(ROOT))
            wheel = next(Path(tmp, "dist").glob("*.whl"))
            run("uv", "venv", "-q", "--python", sys.executable, f"{tmp}/venv")
            py = f"{tmp}/venv/bin/python"
            run("uv", "pip", "install", "-q", "--python", py, str(wheel))
            out = run(py, "-c", "import redaction_pressure as r, redaction_pressure.build.identity as i;"
                                "print(r.__file__); print(i.source_digest())").stdout.split()
        self.assertIn(f"{tmp}/venv", out[0])
        self.assertEqual(out[1], source_digest())


if __name__ == "__main__":
    unittest.main()
