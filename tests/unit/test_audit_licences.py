"""No GPL in what an install of redaction-pressure pulls in.

The runtime dependency closure is read from uv.lock (the project's runtime
dependencies, following each locked package's dependencies and the extras asked for,
never the dev group), and each package's licence is read from its installed
distribution's metadata: ``License-Expression``, ``License`` and the ``License ::``
classifiers. GPL in any form (GPL-2.0, GPL-3.0+, AGPL, "GNU General Public License")
fails; the LGPL does not (it does not bind code that only imports the library)."""

from __future__ import annotations

import re
import tomllib
import unittest
from importlib import metadata
from pathlib import Path

LOCK = Path(__file__).resolve().parents[2] / "uv.lock"
PROJECT = "redaction-pressure"
_GPL = re.compile(r"\bA?GPL|GNU (Affero )?General Public License", re.IGNORECASE)
_LGPL = re.compile(r"\bLGPL|Lesser General Public", re.IGNORECASE)


def runtime_closure(lock: dict) -> set[str]:
    packages = {p["name"]: p for p in lock["package"]}
    seen, todo = set(), [(d["name"], tuple(d.get("extra", ()))) for d in packages[PROJECT]["dependencies"]]
    while todo:
        name, extras = todo.pop()
        key = (name, extras)
        if key in seen:
            continue
        seen.add(key)
        package = packages[name]
        deps = list(package.get("dependencies", []))
        for extra in extras:
            deps += package.get("optional-dependencies", {}).get(extra, [])
        todo += [(d["name"], tuple(d.get("extra", ()))) for d in deps]
    return {name for name, _ in seen}


def licence_texts(dist: metadata.Distribution) -> list[str]:
    meta = dist.metadata
    texts = [meta.get("License-Expression") or "", (meta.get("License") or "")[:300]]
    texts += [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return [t for t in texts if t]


def is_gpl(text: str) -> bool:
    """True for a GPL/AGPL licence text, expression or classifier; False for LGPL alone."""
    stripped = _LGPL.sub("", text)
    return bool(_GPL.search(stripped))


class NoGPL(unittest.TestCase):
    def test_the_detector(self):
        for text in ("GPL-3.0+", "GPLv3+", "GPL-2.0-only", "AGPL-3.0-or-later", "MIT OR GPL-3.0",
                     "License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)",
                     "License :: OSI Approved :: GNU Affero General Public License v3"):
            self.assertTrue(is_gpl(text), text)
        for text in ("MIT", "BSD-3-Clause", "Apache-2.0", "LGPL-3.0-or-later", "PSF-2.0", "MPL-2.0",
                     "License :: OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)",
                     "License :: OSI Approved :: MIT License"):
            self.assertFalse(is_gpl(text), text)

    def test_closure_comes_from_the_lock(self):
        closure = runtime_closure(tomllib.loads(LOCK.read_text(encoding="utf-8")))
        for name in ("jsonschema", "rfc3339-validator", "regex", "cryptography", "verifiers", "referencing"):
            self.assertIn(name, closure)
        for name in ("hypothesis", "securesystemslib", "in-toto-attestation"):  # dev only
            self.assertNotIn(name, closure)
        self.assertNotIn("rfc3987", closure)  # GPL-3.0+, pulled in by jsonschema[format]

    def test_no_runtime_dependency_declares_a_gpl_licence(self):
        closure = runtime_closure(tomllib.loads(LOCK.read_text(encoding="utf-8")))
        found, read = [], 0
        for name in sorted(closure):
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:  # locked for another platform only
                continue
            read += 1
            found += [f"{name}: {t}" for t in licence_texts(dist) if is_gpl(t)]
        self.assertGreater(read, len(closure) * 0.8, "most of the locked runtime closure must be installed")
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
