"""verifiers' conventions: the dependency range and package metadata trainers expect,
the committed vf-eval config (parsed by verifiers' own config loader), and eval run
directories that verifiers' own `vf-replay` accepts (its ``main`` in a forked child of
this process, which has verifiers imported already: a subprocess would spend ~10 s
importing it again), and the README's tables of arguments and metrics."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tempfile
import tomllib
import unittest
from pathlib import Path
from unittest import mock
from urllib.parse import urlparse

from pydantic_config import cli
from verifiers.v1.cli.output import saved_config_path, write_config
from verifiers.v1.cli.replay import main as vf_replay_main
from verifiers.v1.cli.resolve import narrow_config
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.configs.client import resolve_api_key, resolve_headers

from redaction_pressure.run import eval_config, read_traces, run_policy
from redaction_pressure.taskset import RedactionConfig
from tests.support.forked import run_forked

ROOT = Path(__file__).resolve().parents[2]
CONFIG = "configs/vf-eval-dev.toml"
VALIDATE_CONFIG = "configs/vf-validate-dev.toml"


def parse_eval_config(*argv: str) -> EvalConfig:
    """What `vf-eval ARGV` resolves, through the same two calls its main() makes."""
    return cli(narrow_config(EvalConfig, list(argv)), args=list(argv))


class PackageMetadata(unittest.TestCase):
    def test_pyproject(self):
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        verifiers = [d for d in project["dependencies"] if d.startswith("verifiers")]
        self.assertEqual(verifiers, ["verifiers>=0.4,<0.5"])  # a range: trainers install verifiers editable
        self.assertEqual(project["license"], "Apache-2.0")
        self.assertTrue((ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License"))
        self.assertIn("verifiers", project["keywords"])
        from redaction_pressure import ENVIRONMENT_VERSION
        self.assertEqual(project["version"], ENVIRONMENT_VERSION)  # one version, in traces and on PyPI
        lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
        ours = next(p for p in lock["package"] if p["name"] == "redaction-pressure")
        locked = next(d for d in ours["metadata"]["requires-dist"] if d["name"] == "verifiers")
        self.assertEqual(locked["specifier"], ">=0.4,<0.5")  # the lock was regenerated


class CommittedConfig(unittest.TestCase):
    def test_readme_uses_the_committed_config(self):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        self.assertIn(f"vf-eval @ {CONFIG}", readme)

    def test_parses_with_verifiers_loader(self):
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            config = parse_eval_config("@", CONFIG)
            overridden = parse_eval_config("@", CONFIG, "--model", "other", "--env.taskset.split", "train")
        finally:
            os.chdir(cwd)
        taskset = config.env.taskset
        self.assertIsInstance(taskset, RedactionConfig)
        self.assertEqual((taskset.split, taskset.n_shown, taskset.n_eval, taskset.budget_s), ("dev", 8, 16, 2.0))
        self.assertIsNone(taskset.num_tasks)  # all 64 dev tasks
        self.assertEqual(config.env.agent.harness.id, "null")
        self.assertEqual(config.env.agent.runtime.type, "subprocess")
        self.assertFalse(config.push)
        self.assertEqual((config.output_dir / config.run.dir).as_posix(), "outputs/dev-my-model")
        self.assertEqual((overridden.model, overridden.env.taskset.split), ("other", "train"))

    def test_validate_config_parses_with_verifiers_loader(self):
        from verifiers.v1.cli.validate import _narrow

        argv = ["@", str(ROOT / VALIDATE_CONFIG)]
        config = cli(_narrow(argv), args=argv)
        self.assertIsInstance(config.taskset, RedactionConfig)
        self.assertEqual((config.taskset.split, config.runtime.type, config.run.name),
                         ("dev", "subprocess", "dev-validate"))


KEY_VARS = {"PRIME_API_KEY": "sk-prime", "OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant",
            "OPENROUTER_API_KEY": "sk-or"}


def endpoint_problems(path: Path) -> list[str]:
    """Why the resolved config at ``path`` could reach a model endpoint other than this
    machine, or send a key: every URL anywhere in it must be loopback, and the client
    vf-eval builds from it (with the usual key variables set) must send none."""
    def loopback(url: str) -> bool:
        host = urlparse(url).hostname or ""
        try:
            return host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    text = path.read_text(encoding="utf-8")
    problems = [f"non-loopback URL {url}" for url in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"']*", text)
                if not loopback(url)]
    with mock.patch.dict(os.environ, KEY_VARS):
        config = parse_eval_config("@", str(path))  # validated as vf-eval does, key variables set
        clients = [config.client, config.env.agent.client]
        for client in filter(None, clients):
            if not loopback(client.base_url):
                problems.append(f"client base_url {client.base_url}")
            if resolve_api_key(client) != "EMPTY":
                problems.append(f"client sends the key in ${client.api_key_var}")
            if resolve_headers(client) or client.headers_from_env:
                problems.append(f"client sends headers {sorted(resolve_headers(client))}")
    if config.env.taskset.task.judges:
        problems.append("judges (model calls) configured")
    if config.push:
        problems.append("push (upload) is on")
    return problems


def readme_table(heading: str) -> list[list[str]]:
    """The cells of the first table under ``heading`` in the README, header row and rule skipped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
        elif rows:
            break
    return rows[2:]


class ReadmeTables(unittest.TestCase):
    def test_environment_arguments_are_the_taskset_config(self):
        import verifiers.v1 as vf

        rows = readme_table("## Environment arguments")
        fields = {k: f for k, f in RedactionConfig.model_fields.items() if k not in vf.TasksetConfig.model_fields}
        self.assertEqual([r[0].strip("`") for r in rows], list(fields))
        for name, _, default, description in rows:
            with self.subTest(argument=name):
                self.assertEqual(json.loads(default.strip("`")), fields[name.strip("`")].default)
                self.assertTrue(description)

    def test_metrics_are_what_traces_record(self):
        from redaction_pressure import load_task, score_completion
        from redaction_pressure.scoring.reward import WEIGHTS

        names = [r[0].strip("`") for r in readme_table("## Metrics")]
        score = score_completion(load_task("dev", 0), "{}")
        self.assertEqual(names, ["reward", *WEIGHTS, *score.metrics()])


class PolicyRunConfig(unittest.TestCase):
    def test_the_check_sees_a_hosted_endpoint(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = parse_eval_config("--env.taskset.id", "redaction-pressure")
            path = write_config(config, Path(tmp))  # verifiers' defaults: the hosted endpoint, $PRIME_API_KEY
            problems = endpoint_problems(path)
        self.assertTrue(any("non-loopback URL https://" in p for p in problems), problems)
        self.assertIn("client sends the key in $PRIME_API_KEY", problems)

    def test_an_eval_config_reaches_no_endpoint_and_names_its_policy(self):
        cases = [("dev", "baseline", 64, 0, None), ("train", "induce", 5, 100, RedactionConfig(level_mix={1: 1.0})),
                 ("dev", "oracle", 2, 5, RedactionConfig(n_shown=4, budget_s=1.0))]
        for split, policy, n, start, taskset in cases:
            with self.subTest(split=split, policy=policy), tempfile.TemporaryDirectory() as tmp:
                path = write_config(eval_config(split, policy, n, start, Path(tmp) / "run", taskset), Path(tmp))
                self.assertEqual(endpoint_problems(path), [])
                config = parse_eval_config("@", str(path))
                self.assertEqual((config.model, config.env.policy), (f"policy:{policy}", policy))


class RunDirectory(unittest.TestCase):
    def test_eval_run_dir_is_a_vf_run_dir(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "runs" / "dev-oracle"
            run_policy("dev", "oracle", 2, run_dir, start=5)
            saved = saved_config_path(run_dir)
            self.assertEqual(saved, run_dir / "configs" / "resolved" / "eval.json")
            config = parse_eval_config("@", str(saved))  # how `vf-eval @ ... --resume` reads it
            self.assertEqual((config.env.taskset.split, config.env.taskset.num_tasks,
                              config.env.taskset.start_index), ("dev", 2, 5))
            self.assertEqual(config.output_dir / config.run.dir, run_dir)
            self.assertEqual(endpoint_problems(saved), [])
            recorded = {t["task"]["data"]["index"]: t["rewards"] for t in read_traces(run_dir / "traces.jsonl")}

            out = Path(tmp) / "replay"
            code, stdout, stderr = run_forked(vf_replay_main, [str(run_dir), "--output-dir", str(out), "--no-rich"],
                                              cwd=Path(tmp))
            self.assertEqual(code, 0, stdout + stderr)
            self.assertNotIn("Traceback", stdout + stderr)
            replayed = {t["task"]["data"]["index"]: t["rewards"] for t in read_traces(out / "traces.jsonl")}
        self.assertEqual(sorted(recorded), [5, 6])
        self.assertEqual(replayed, recorded)  # re-scored offline, to the same rewards
        self.assertEqual({k: v["score"] for k, v in recorded[5].items()}, {"recall": 1.0, "precision": 1.0,
                                                                            "clean": 1.0})

    def test_run_dir_is_identical_across_runs_but_for_ids_and_clock(self):
        """verifiers stamps every episode and trace with a fresh id and wall-clock times
        (as vf-eval does); everything else, scores and identity included, repeats."""
        def strip(x):
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k not in ("id", "timestamp", "timing")}
            return [strip(v) for v in x] if isinstance(x, list) else x

        with tempfile.TemporaryDirectory() as tmp:
            a, b = Path(tmp) / "a" / "run", Path(tmp) / "b" / "run"
            for d in (a, b):
                run_policy("dev", "baseline", 2, d)
            lines = [[json.loads(x) for x in (d / "traces.jsonl").read_text().splitlines()] for d in (a, b)]
            self.assertEqual(len(lines[0]), 2)
            self.assertEqual(strip(lines[0]), strip(lines[1]))
            self.assertEqual([e["run"]["id"] for e in lines[0]], [e["run"]["id"] for e in lines[1]])
            ja = json.loads((a / "configs/resolved/eval.json").read_text())
            jb = json.loads((b / "configs/resolved/eval.json").read_text())
            self.assertEqual(ja.pop("output_dir"), str(a.parent))
            self.assertEqual(jb.pop("output_dir"), str(b.parent))
            self.assertEqual(ja, jb)

if __name__ == "__main__":
    unittest.main()
