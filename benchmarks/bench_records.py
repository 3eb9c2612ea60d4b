"""Realistic records (issue 21): the share of each template's records that its
format's own parser accepts (json with a duplicate-key hook, PyYAML with a
duplicate-key check, tomllib, configparser strict, python-dotenv, python-hcl2 and a
duplicate check, shlex, ast; Kubernetes Secret types against their data), the share
of URLs with a userinfo whose percent-encoding is valid, and how much of a list of
placeholders and documentation values (tests/support/false_positives.py) the union of
every catalogue oracle removes, over dev (64 tasks) and train 0..N-1 (default 200).

    uv run --frozen python benchmarks/bench_records.py [--train N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redaction_pressure import CORPUS_VERSION, catalog, load_task
from redaction_pressure.scoring.pattern_guard import compile_bounded
from tests.support.false_positives import FALSE_POSITIVES
from tests.support.record_parsers import _USERINFO_URL as USERINFO_URL
from tests.support.record_parsers import PARSERS, check, url_problems

HOW = {"dotenv": "python-dotenv, no repeated key", "yaml_config": "PyYAML, no repeated key",
       "json_config": "json, no repeated key", "ini_config": "configparser(strict=True)", "toml_config": "tomllib",
       "k8s_secret": "PyYAML; Secret type matches its data; base64", "k8s_secret_json": "json; as k8s_secret",
       "gcp_service_account": "json; the key file's fields", "npmrc": "configparser (npm's ini), no repeated key",
       "pypirc": "configparser(strict=True); index-servers", "terraform": "python-hcl2, no repeated attribute",
       "python_source": "ast, no repeated name", "shell_history": "shlex, every line",
       "js_source": "node --check (when node is installed)"}


def _node_accepts(node: str, text: str) -> bool:
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([node, "--check", f.name], capture_output=True).returncode == 0
    finally:
        Path(f.name).unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=200, help="train tasks (default 200)")
    parser.add_argument("--level-tasks", type=int, default=64, help="dev tasks per level 2..5 (default 64)")
    args = parser.parse_args()
    total, valid = Counter(), Counter()
    urls = bad_urls = 0
    tasks = [load_task("dev", i) for i in range(64)] + [load_task("train", i) for i in range(args.train)]
    node = shutil.which("node")
    js_valid = 0
    for task in tasks:
        for record in task.shown + task.heldout:
            total[record.template] += 1
            if record.template == "js_source" and node:
                js_valid += _node_accepts(node, record.text)
            valid[record.template] += not check(record)
            urls += len(USERINFO_URL.findall(record.text))
            bad_urls += len(url_problems(record.text))
    print(f"bench_records: {CORPUS_VERSION}, dev 0..63 and train 0..{args.train - 1} ({len(tasks)} tasks)")
    print(f"{'template':<22} {'records':>8} {'parser accepts':>15}  parser")
    for name in sorted(total):
        if name == "js_source" and node:
            share = f"{100 * js_valid / total[name]:.1f}%"
        else:
            share = f"{100 * valid[name] / total[name]:.1f}%" if name in PARSERS else "-"
        print(f"{name:<22} {total[name]:>8} {share:>15}  {HOW.get(name, 'log or PEM: no parser')}")
    structured = sum(total[n] for n in PARSERS)
    accepted = sum(valid[n] for n in PARSERS)
    print(f"structured records a valid file of their format: {accepted} of {structured} "
          f"({100 * accepted / structured:.1f}%)")
    print(f"URLs with a userinfo: {urls}, valid percent-encoding: {urls - bad_urls} "
          f"({100 * (urls - bad_urls) / max(urls, 1):.1f}%)")
    oracles = [compile_bounded(p).pattern for e in catalog() if e["kind"] == "secret" for p in e["oracle"]]
    touched = [fp for fp in FALSE_POSITIVES if any(p.search(fp + "\n") for p in oracles)]
    print(f"placeholders and documentation values ({len(FALSE_POSITIVES)}): the union of the catalogue's "
          f"{len(oracles)} oracle patterns removes text from {len(touched)}")
    for fp in touched:
        print(f"  touched: {fp[:100]}")
    # Every higher level's records too (sections, key blocks, encoded credentials).
    level_total = level_valid = 0
    for level in (2, 3, 4, 5):
        for i in range(args.level_tasks):
            for record in (lambda t: t.shown + t.heldout)(load_task("dev", i, level=level)):
                if record.template in PARSERS:
                    level_total += 1
                    level_valid += not check(record) and not url_problems(record.text)
    print(f"levels 2-5, dev 0..{args.level_tasks - 1} each: {level_valid} of {level_total} structured records "
          f"a valid file of their format ({100 * level_valid / max(level_total, 1):.1f}%)")
    return 1 if touched or accepted < structured or bad_urls or level_valid < level_total else 0


if __name__ == "__main__":
    sys.exit(main())
