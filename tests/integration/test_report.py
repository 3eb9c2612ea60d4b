"""`redaction-pressure report`: the page parses, holds every episode, marks exactly what
the scorer removed, escapes hostile text, references nothing outside itself, says
whether an archive was verified, and renders in a real browser (headless chromium)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

from redaction_pressure import PRIVATE_SEED_ENV, load_task, policies, score_completion
from redaction_pressure.compare import compare_runs
from redaction_pressure.corpus.stream import Record, Span
from redaction_pressure.report import RunError, _marks, _view, css_string, render_report, write_report
from redaction_pressure.scoring.answer import parse_reply

CLI = [sys.executable, "-m", "redaction_pressure.cli"]
AUDIT = [sys.executable, "-m", "audit"]
HOSTILE = "</script><img src=x onerror=alert(1)>"
CHROMIUM = "/usr/bin/chromium"
SECRET = "report-tests-private-secret-0123456789abcdef-not-real"
VOID = {"meta", "br", "input", "img", "link", "hr", "col", "wbr", "source", "area", "base", "embed", "track"}


def write_run(out_dir: Path, items: list[tuple[str, int, str]], **params) -> Path:
    """A run directory whose traces are scored through verifiers' `Task.score`, exactly
    as `redaction-pressure eval` does, for arbitrary replies (split, index, reply), with
    task parameters ``params`` (load_task's)."""
    import verifiers.v1 as vf

    from redaction_pressure.taskset import offline_trace, to_row

    async def score_all():
        episodes = []
        for split, index, reply in items:
            row = to_row(load_task(split, index, **params))
            trace = offline_trace(row, reply, model="test-model")
            await row.score(trace)
            episodes.append(vf.Episode(env=vf.EnvInfo(id="redaction-pressure"), task=trace.task, traces=[trace],
                                       ok=trace.ok, run=vf.EvalRunInfo(id="rp-test-run", name="test")))
        return episodes

    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "traces.jsonl", "wb") as f:
        for ep in asyncio.run(score_all()):
            f.write(ep.model_dump_json(exclude_none=True).encode() + b"\n")
    return out_dir


def css_unescape(body: str) -> str:
    """The text of a CSS string's body (between its quotes)."""
    return re.sub(r"\\([0-9a-fA-F]{1,6}) ?|\\(.)",
                  lambda m: chr(int(m.group(1), 16)) if m.group(1) else m.group(2), body)


class Hover:
    """What a mark shows on hover, read from the page's CSS as a browser reads it: the
    mark class's ``::after`` content, with ``var(--f)`` the family its family class
    (``.A``, ``.B1``) names."""

    def __init__(self, css: str):
        family_rule = r'\.([A-Z][0-9a-z]*)\{--f:"((?:[^"\\]|\\.)*)"\}'
        self.families = {m[1]: css_unescape(m[2]) for m in re.finditer(family_rule, css)}
        self.contents = {m[1]: m[2] for m in re.finditer(r"pre \.(\w)::after\{content:([^;}]+)\}", css)}
        # a kept decoy is any <u> but a leak's: "pre u:not(.l)::after"
        # A kept decoy is any <u> in a <pre> but a leak's: only that rule gives its hover
        # text (an old-style "pre .k::after" names a class no kept mark carries), and it
        # must draw the dotted underline the legend shows.
        kept = re.search(r"pre u:not\(\.l\)::after\{content:([^;}]+)\}", css)
        self.contents["k"] = kept[1] if kept else None
        # A removed secret is any <s> in a <pre> without another kind's class.
        removed = re.search(r"pre s::after\{content:([^;}]+)\}", css)
        self.contents["r"] = removed[1] if removed else None
        dotted = r"(?:^|[\n,}])[^{}]*pre u:not\(\.l\)[^{}]*\{[^}]*border-bottom:2px dotted"
        self.kept_dotted = re.search(dotted, css) is not None

    def text(self, classes: str) -> str | None:
        kind, *rest = classes.split()
        family = [self.families.get(c) for c in rest if re.fullmatch(r"[A-Z][0-9a-z]*", c)]
        content = self.contents.get(kind)
        if content is None or len(family) > 1 or (family and family[0] is None):
            return None
        out = []
        for string, var in re.findall(r'"((?:[^"\\]|\\.)*)"|(var\(--f\))', content):
            if var:
                if not family:
                    return None  # an undefined variable: the browser shows nothing
                out.append(family[0])
            else:
                out.append(css_unescape(string))
        return "".join(out)


# The end tags HTML makes optional that the page leaves out: an open <td> or <th> ends
# at the next cell, row or the table's end, an open <tr> at the next row or the table's end.
_CLOSED_BY = {"td": ("td", "th"), "th": ("td", "th"), "tr": ("td", "th", "tr")}
_CLOSED_BY_END = {"tr": ("td", "th"), "table": ("td", "th", "tr")}


class Page(HTMLParser):
    """Parses a page strictly enough to fail on unbalanced markup, and keeps what the
    tests look at: tags with attributes, each episode's text, each <pre>'s text and
    its marks: (mark class, text, hover text), a mark being an <s> or <u> with a class,
    and each mark's offset in the <pre>'s text ("at")."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.episodes: dict[str, list[str]] = {}
        self.pres: list[dict] = []  # {"episode": id, "text": str, "marks": [(class, text, hover)], "at": [int]}
        self.styles: list[str] = []
        self.data: list[str] = []
        self._episode = None
        self._pre = None
        self._mark = None
        self._ln = False
        self.feed(text)
        self.close()
        hover = self.hover = Hover("".join(self.styles))
        for pre in self.pres:
            pre["marks"] = [(classes.split()[0], t, hover.text(classes)) for classes, t in pre["marks"]]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in VOID:
            return
        while self.stack and self.stack[-1] in _CLOSED_BY.get(tag, ()):
            self.stack.pop()  # an end tag HTML lets a page leave out (a rules table's)
        self.stack.append(tag)
        if tag == "section" and "ep" in (a.get("class") or "").split():
            self._episode = a["id"]
            self.episodes[self._episode] = []
        if tag == "pre" and self._episode:
            self._pre = {"episode": self._episode, "text": "", "marks": [], "at": []}
        if self._pre is not None and tag == "span" and a.get("class") == "ln":
            self._ln = True
        elif self._pre is not None and tag in ("s", "u") and a.get("class"):
            classes = a["class"]
            if tag == "u" and "l" not in classes.split():
                classes = "k " + classes  # as the CSS reads it: u:not(.l) is a kept decoy
            if tag == "s" and not {"p", "d", "c"} & set(classes.split()):
                classes = "r " + classes  # as the CSS reads it: any other <s> is a removed secret
            self._mark = [classes, ""]
            self._pre["at"].append(len(self._pre["text"]))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack and self.stack[-1] in _CLOSED_BY_END.get(tag, ()):
            self.stack.pop()
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()
        if tag == "section" and self._episode:
            self._episode = None
        if tag == "pre" and self._pre is not None:
            self.pres.append(self._pre)
            self._pre = None
        if tag == "span" and self._ln:
            self._ln = False
        if tag in ("s", "u") and self._mark is not None and self._pre is not None:
            self._pre["marks"].append(tuple(self._mark))
            self._mark = None

    def handle_data(self, data):
        self.data.append(data)
        if self.stack and self.stack[-1] == "style":
            self.styles.append(data)
        if self._episode:
            self.episodes[self._episode].append(data)
        if self._pre is not None and not self._ln:
            self._pre["text"] += data
            if self._mark is not None:
                self._mark[1] += data

    def text(self) -> str:
        return "".join(self.data)


def parse(text: str) -> Page:
    return Page(text)


def text_of(html: str, episode: str) -> str:
    """The HTML of one episode's section."""
    return html.split(f'id="{episode}"', 1)[1].split("</section>", 1)[0]


def payload_of(archive: Path) -> bytes:
    return base64.b64decode(json.loads((archive / "manifest.dsse.json").read_text())["payload"])


FIXTURES: dict = {}


def _with_collateral(task) -> str:
    """The baseline's rules and one more that removes a character outside every span of
    every held-out record (at the first offset where there is one), so the run shows a
    removed character that is no secret whatever the corpus draws."""
    def outside(at: int) -> bool:
        return all(at < len(r.text) and not any(x.start <= at < x.end for x in r.secrets + r.decoys)
                   for r in task.heldout)
    at = next(i for i in range(10_000) if outside(i))
    rules, _ = parse_reply(policies.baseline(task))
    rules = [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]
    rules.append({"pattern": rf"(?<=\A[\s\S]{{{at}}})[\s\S]", "replacement": "[REDACTED]"})
    return json.dumps({"rules": rules})


def setUpModule():
    """The runs every test reads, scored once (verifiers' import dominates: ~10 s)."""
    tmp = Path(tempfile.mkdtemp(prefix="rp-report-test-"))
    oracle_tasks = [load_task("dev", i) for i in range(3)]
    base_tasks = [load_task("dev", i) for i in range(3, 7)]
    hostile_rule = json.dumps({"rules": [{"pattern": HOSTILE.replace("(", r"\(").replace(")", r"\)"),
                                          "replacement": "[REDACTED]"}]})
    mixed_items = [("dev", t.index, policies.baseline(t)) for t in base_tasks] + [
        ("dev", 7, hostile_rule),
        ("dev", 8, HOSTILE + " <b>not bold</b> \u202edesrever\u202c \x00"),
        ("dev", 9, json.dumps({"rules": [{"pattern": "(a", "replacement": "[REDACTED]"}]})),
        ("dev", 10, _with_collateral(load_task("dev", 10))),
    ]
    FIXTURES.update(
        tmp=tmp, oracle_tasks=oracle_tasks, base_tasks=base_tasks, mixed_items=mixed_items,
        oracle_run=write_run(tmp / "oracle", [("dev", t.index, policies.oracle(t)) for t in oracle_tasks]),
        mixed_run=write_run(tmp / "mixed", mixed_items))


def tearDownModule():
    shutil.rmtree(FIXTURES["tmp"], ignore_errors=True)


class ReportTestCase(unittest.TestCase):
    maxDiff = 4000

    @classmethod
    def setUpClass(cls):
        for k, v in FIXTURES.items():
            setattr(cls, k, v)

    def render(self, path, **kw) -> tuple[str, Page]:
        text = render_report(path, jobs=1, **kw)
        page = parse(text)
        self.assertEqual(page.errors, [], "unbalanced markup")
        self.assertEqual(page.stack, [], "unclosed elements")
        return text, page

    def render_traced(self, path) -> tuple[str, Page, int]:
        """`render`, and the peak of the memory Python allocated meanwhile."""
        import tracemalloc

        tracemalloc.start()
        try:
            text, page = self.render(path)
            return text, page, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


class PageContent(ReportTestCase):
    def test_holds_every_episode_with_its_records_verbatim(self):
        for run, tasks in ((self.oracle_run, self.oracle_tasks),
                           (self.mixed_run, self.base_tasks)):
            _, page = self.render(run)
            n = sum(1 for line in (run / "traces.jsonl").read_text().splitlines() if line.strip())
            self.assertEqual(list(page.episodes), [f"ep-{i}" for i in range(1, n + 1)])
            for k, task in enumerate(tasks):
                pres = [p["text"] for p in page.pres if p["episode"] == f"ep-{k + 1}"]
                self.assertEqual(pres, [r.text for r in task.heldout])
                self.assertIn(task.id, "".join(page.episodes[f"ep-{k + 1}"]))

    def test_oracle_marks_every_secret_removed_and_nothing_else(self):
        _, page = self.render(self.oracle_run)
        for k, task in enumerate(self.oracle_tasks):
            marks = [m for p in page.pres if p["episode"] == f"ep-{k + 1}" for m in p["marks"]]
            removed = "".join(t for c, t, _ in marks if c == "r")
            self.assertEqual(removed, "".join(r.text[s.start:s.end] for r in task.heldout for s in r.secrets))
            self.assertFalse([m for m in marks if m[0] in ("l", "p", "d", "c")])
        self.assertIn("1.000", page.text())  # mean reward of the oracle

    def test_marks_agree_with_the_scorer(self):
        """Characters marked removed (secret, part of a leak, decoy, other) are exactly
        the scorer's removed_chars; leaked secrets are its secrets_total - secrets_removed."""
        _, page = self.render(self.mixed_run)
        for k, task in enumerate(self.base_tasks):
            score = score_completion(task, policies.baseline(task))
            ep = f"ep-{k + 1}"
            marks = [m for p in page.pres if p["episode"] == ep for m in p["marks"]]
            removed = sum(len(t) for c, t, _ in marks if c in ("r", "p", "d", "c"))
            self.assertEqual(removed, score.metrics()["removed_chars"], task.id)
            leaked = sum(1 for r in task.heldout for s in r.secrets
                         if any(c in ("l", "p") for c, t, _ in self._marks_in(page, ep, r, s)))
            self.assertEqual(leaked, score.outcome.secrets_total - score.outcome.secrets_removed, task.id)
            destroyed = sum(v[1] for v in score.decoy_families.values())
            self.assertIn(f"{destroyed} destroyed decoy(s)", "".join(page.episodes[ep]))
            for c, _, hover in marks:
                self.assertTrue(hover, f"mark of class {c} shows nothing on hover")

    def test_hover_names_family_and_what_happened(self):
        """Every mark's hover text (the page's CSS, as a browser composes it) names the
        family of the labelled span it lies in and what happened to it, in the words the
        legend uses; a removed character outside every span is "not a secret"."""
        _, page = self.render(self.mixed_run)
        said = {"r": "{}: removed", "p": "{}: removed, but the secret leaks", "l": "{}: LEAKED",
                "d": "decoy {}: DESTROYED", "k": "decoy {}: kept"}
        seen = set()
        # The baseline's episodes, and the last one, whose reply also removes a character
        # outside every span.
        episodes = [*enumerate(self.base_tasks, 1), (len(self.mixed_items), load_task("dev", 10))]
        for k, task in episodes:
            pres = [p for p in page.pres if p["episode"] == f"ep-{k}"]
            for record, pre in zip(task.heldout, pres, strict=True):
                spans = [(s, True) for s in record.secrets] + [(d, False) for d in record.decoys]
                for (c, t, hover), at in zip(pre["marks"], pre["at"], strict=True):
                    self.assertEqual(record.text[at:at + len(t)], t)
                    inside = [(sp, secret) for sp, secret in spans if sp.start <= at and at + len(t) <= sp.end]
                    seen.add(c)
                    if c == "c":
                        self.assertEqual(hover, "not a secret: removed")
                        self.assertFalse(inside, t)
                        continue
                    self.assertEqual(len(inside), 1, (c, t))
                    span, secret = inside[0]
                    self.assertEqual(secret, c in "rpl", (c, t))
                    self.assertEqual(hover, said[c].format(span.family))
        self.assertLessEqual({"r", "l", "k", "d", "c"}, seen)  # every kind but "p"
        self.assertTrue(page.hover.kept_dotted, "a kept decoy's <u> is not drawn with the legend's dotted underline")

    def _marks_in(self, page, ep, record, span):
        """The marks of ``page`` inside ``span`` of ``record`` (located by the record's text)."""
        pre = next(p for p in page.pres if p["episode"] == ep and p["text"] == record.text)
        out, pos = [], 0
        unmarked = pre["text"]
        # Rebuild positions: walk the marks in order, finding each in the text after pos.
        for c, t, title in pre["marks"]:
            at = unmarked.index(t, pos)
            if at < span.end and at + len(t) > span.start:
                out.append((c, t, title))
            pos = at + len(t)
        return out

    def test_rules_show_their_matches_and_errors(self):
        _, page = self.render(self.mixed_run)
        task = self.base_tasks[0]
        rules = json.loads(policies.baseline(task).split("```json", 1)[-1].split("```")[0]
                           if "```" in policies.baseline(task) else policies.baseline(task))["rules"]
        text = "".join(page.episodes["ep-1"])
        for rule in rules:
            self.assertIn(rule["pattern"], text)
        # Per-rule match counts add up to the episode's total matches.
        counts = _marks.removal(task, policies.baseline(task)).rule_matches
        self.assertEqual(sum(counts), score_completion(task, policies.baseline(task)).matches)
        invalid = "".join(page.episodes["ep-7"])
        self.assertIn("invalid_regex", invalid)
        self.assertIn("INVALID", invalid)
        # Rules are numbered from 1, as every message a person reads counts them.
        html = text_of(self.render(self.mixed_run)[0], "ep-1")
        self.assertEqual(re.findall(r"<tr><td>(\d+)<td>", html), [str(i) for i in range(1, len(rules) + 1)])

    def test_rules_shared_by_episodes_are_listed_once(self):
        """The baseline sends the same rules to every task: the first episode lists them,
        the next ones link to it with their own match counts, rule by rule. A rule with
        an error of its own is always listed in full."""
        text, page = self.render(self.mixed_run)
        first = text_of(text, "ep-1")
        for k, task in enumerate(self.base_tasks[1:], 2):
            reply = policies.baseline(task)
            counts = _marks.removal(task, reply).rule_matches
            html = text_of(text, f"ep-{k}")
            self.assertNotIn('<table class="rules">', html)
            self.assertIn(f'The same {len(counts)} rules as <a href="#ep-1">#1</a>; matches, rule by rule: '
                          + ", ".join(map(str, counts)), html)
            self.assertEqual(sum(counts), score_completion(task, reply).matches)
        self.assertIn('<table class="rules">', first)
        self.assertIn("#eps .ep:target{display:block!important}", "".join(page.styles))  # linked from under a filter
        self.assertIn('<th>errors<tr>', text_of(text, "ep-7"))  # the invalid rule's table, in full
        self.assertIn("invalid_regex", "".join(page.episodes["ep-7"]))

    def test_summaries_by_class_with_uncertainty_names_in_the_episodes(self):
        text, page = self.render(self.mixed_run)
        shown = page.text()
        for needle in ("Secrets leaked, by class", "Decoys destroyed, by class", "mean reward (reward-v1)",
                       "95% CI", "bootstrap", "SplitMix64", "evaluated"):
            self.assertIn(needle, shown)
        self.assertRegex(shown, r"\d\.\d{3} ± \d\.\d{3}mean reward")
        tables = text.split("<h2>Episodes</h2>")[0]
        task = self.base_tasks[0]
        score = score_completion(task, policies.baseline(task))
        invented = [f for f in score.secret_families if f not in score.secret_classes]
        self.assertTrue(invented)
        hovers = {m[2] for p in page.pres if p["episode"] == "ep-1" for m in p["marks"]}
        for name in invented:  # a stream's own names: not summed in the tables, named by its episode's marks
            self.assertNotIn(f">{name}<", tables)
            self.assertTrue({f"{name}: LEAKED", f"{name}: removed"} & hovers, name)
        self.assertIn(">house_format<", tables)

    def test_filters_classes_follow_the_recorded_metrics(self):
        text, page = self.render(self.mixed_run)
        sections = [a for t, a in page.tags if t == "section"]
        traces = [json.loads(line)["traces"][0] for line in (self.mixed_run / "traces.jsonl").read_text().splitlines()]
        for a, t in zip(sections, traces, strict=True):
            m = t["metrics"]
            classes = a["class"].split()
            self.assertEqual("leak" in classes, m["secrets_removed"] < m["secrets_total"])
            self.assertEqual("coll" in classes, m["collateral_chars"] > 0)
            self.assertEqual("err" in classes, m["errors"] > 0)
        for f in ("f-leak", "f-coll", "f-err"):
            self.assertIn(("input", {"type": "checkbox", "class": "fi", "id": f}), page.tags)
            self.assertIn(f"#{f}:checked~#eps", text)

    def test_split_label_and_coverage(self):
        _, page = self.render(self.oracle_run)
        text = page.text()
        self.assertIn("PUBLIC DEV SPLIT — NOT a private evaluation", text)
        self.assertNotIn("PRIVATE EVALUATION SPLIT", text)
        self.assertIn("PARTIAL: 3 of 64 dev tasks, 1 rollout each; missing tasks 3–63 (task indices 0–2)", text)
        self.assertNotIn("verification", text)  # a plain run is not an archive

    def test_private_banner_is_distinct(self):
        """An honest private run: the report holds no secret, so it never derives a seed
        and never claims the split private; it says the label is unproven."""
        task = load_task("dev", 0)
        with mock.patch.dict(os.environ, {PRIVATE_SEED_ENV: SECRET}):
            run = write_run(self.tmp / "private", [("private_eval", i, policies.oracle(task)) for i in range(2)])
        with mock.patch.dict(os.environ):
            os.environ.pop(PRIVATE_SEED_ENV, None)
            _, page = self.render(run)
        text = " ".join(page.text().split())
        self.assertNotIn("PRIVATE EVALUATION SPLIT", text)
        self.assertIn("SPLIT NOT ESTABLISHED", text)
        self.assertIn("PRIVATE LABEL UNPROVEN (seed derivation not checked)", text)
        self.assertIn("only `audit verify --private-seed-env` checks the seeds", text)
        # (the records may hold "PUBLIC" themselves: a PUBLIC KEY block)
        self.assertNotRegex(text, r"PUBLIC \w+ SPLIT|NOT a private evaluation")
        self.assertEqual(split_class(page), "unknown")
        # Rebuilt from the seeds the traces reveal, never from the private secret.
        self.assertEqual(len(page.pres), 2 * task.n_eval)

    def test_an_invented_private_commitment_is_no_private_split(self):
        """Attack (red team a19): dev traces relabelled private_eval with a made-up
        ``private-sha256:`` commitment and their seeds removed got the purple "PRIVATE
        EVALUATION SPLIT (from the traces' split commitment and seeds)" banner."""
        run = self.tmp / "invented-private"
        run.mkdir(exist_ok=True)
        lines = []
        for line in (self.oracle_run / "traces.jsonl").read_text().splitlines():
            ep = json.loads(line)
            trace = ep["traces"][0]
            for where in (trace["info"]["environment"], trace["task"]["data"]["identity"]):
                where.update(split="private_eval", split_commitment="private-sha256:" + "ab" * 32)
                where.pop("task_seed", None)
            trace["task"]["data"]["split"] = "private_eval"
            lines.append(json.dumps(ep))
        (run / "traces.jsonl").write_text("\n".join(lines) + "\n")
        text, page = self.render(run)
        shown = " ".join(page.text().split())
        self.assertNotIn("PRIVATE EVALUATION SPLIT", shown)
        self.assertNotIn("private evaluation split", shown.lower().replace("not a private evaluation", ""))
        self.assertIn("PRIVATE LABEL UNPROVEN (seed derivation not checked)", shown)
        self.assertIn("private_eval claimed, UNPROVEN: seed derivation not checked", shown)
        self.assertIn("— as claimed by a private commitment, UNPROVEN", shown)
        self.assertEqual(split_class(page), "unknown")  # the red banner
        self.assertNotIn('class="banner private"', text)

    def test_a_label_does_not_make_dev_private(self):
        """Attack: dev traces whose split fields say private_eval. Their public commitment
        and public seeds prove dev, and the page says so loudly (it showed the private
        banner)."""
        run = self.tmp / "relabelled"
        run.mkdir(exist_ok=True)
        lines = []
        for line in (self.oracle_run / "traces.jsonl").read_text().splitlines():
            ep = json.loads(line)
            trace = ep["traces"][0]
            for where in (trace["info"]["environment"], trace["task"]["data"], trace["task"]["data"]["identity"]):
                where["split"] = "private_eval"
            lines.append(json.dumps(ep))
        (run / "traces.jsonl").write_text("\n".join(lines) + "\n")
        _, page = self.render(run)
        text = " ".join(page.text().split())
        self.assertNotIn("PRIVATE EVALUATION SPLIT", text)
        self.assertIn("PUBLIC DEV SPLIT — NOT a private evaluation", text)
        self.assertIn("labelled private_eval, committed as public dev: NOT a private evaluation", text)
        self.assertEqual(split_class(page), "unknown")  # the red banner, not the blue one of an honest run
        self.assertIn("Scores (public dev split (not a private evaluation))", text)

    def test_deterministic_and_parallel_gives_the_same_page(self):
        one = render_report(self.mixed_run, jobs=1)
        self.assertEqual(one, render_report(self.mixed_run, jobs=1))
        with mock.patch.object(_view, "PARALLEL_FROM", 1):
            self.assertEqual(one, render_report(self.mixed_run, jobs=2))

    def test_compact_mode_keeps_only_flawed_lines(self):
        _, page = self.render(self.mixed_run, full_text=False)
        shown = [p for p in page.pres if p["episode"] == "ep-1"]
        self.assertTrue(shown)
        flawed = {"l", "p", "d", "c"}
        for p in shown:
            for line in p["text"].split("\n"):
                if line:
                    self.assertTrue(any(c in flawed and t in line for c, t, _ in p["marks"]), line)
        full_lines = sum(r.text.count("\n") + 1 for r in self.base_tasks[0].heldout)
        self.assertLess(sum(p["text"].count("\n") for p in shown), full_lines)

    def test_size_per_episode(self):
        """The page's bytes beyond the record text and rule patterns it must show: a fixed
        head (style, summaries) plus a bounded amount per episode, record and mark (the
        benchmark measures 64 and 1,000 episodes; this catches a regression such as a
        family name or a rule table repeated for every mark or episode)."""
        text, page = self.render(self.mixed_run)
        shown = sum(len(p["text"].encode()) for p in page.pres)
        patterns = sum(len(r.pattern.encode()) for r in parse_reply(policies.baseline(self.base_tasks[0]))[0])
        marks = sum(len(p["marks"]) for p in page.pres)
        self.assertGreater(marks, 500)
        markup = len(text.encode()) - shown - patterns
        self.assertLess(markup, 25_000 + 1_000 * len(self.mixed_items) + 80 * len(page.pres) + 24 * marks,
                        (markup, len(page.pres), marks))


class Hostile(ReportTestCase):
    def assert_inert(self, text: str, page: Page):
        self.assertFalse([t for t, _ in page.tags if t in ("script", "img", "iframe", "object", "embed", "link")])
        self.assertFalse([a for _, a in page.tags for k in a if k.startswith("on")])

    def test_hostile_replies_render_as_text(self):
        text, page = self.render(self.mixed_run)
        self.assert_inert(text, page)
        self.assertNotIn(HOSTILE, text)  # never raw in the bytes...
        shown = page.text()
        self.assertIn(HOSTILE, shown)  # ...but readable as text (the unparsed reply)
        self.assertIn(HOSTILE.replace("(", r"\(").replace(")", r"\)"), shown)  # the rule's pattern
        self.assertIn("<b>not bold</b>", shown)
        self.assertNotIn("\u202e", text)  # bidi override made visible, not obeyed
        self.assertIn("\\u202e", shown)
        self.assertNotIn("\x00", text)

    def test_hostile_record_text_is_escaped(self):
        task = load_task("dev", 3)
        evil = "<script>alert(1)</script> key=AKIA" + HOSTILE + " & \"q\" 'x'"
        record = Record(text=evil, template="evil", secrets=(Span(10, 30, "evil_family\"><img onerror=x>"),),
                        decoys=(Span(40, 60, "decoy</pre>"),))
        fake = dataclasses.replace(task, heldout=(record,) * task.n_eval)
        run = write_run(self.tmp / "evil", [("dev", 3, json.dumps({"rules": [{"pattern": "img[^>]*",
                                                                             "replacement": ""}]}))])
        with mock.patch.object(_marks, "task_for", return_value=fake):
            text, page = self.render(run)
        self.assert_inert(text, page)
        pres = [p["text"] for p in page.pres]
        self.assertEqual(pres, [evil] * task.n_eval)
        hovers = {m[2] for p in page.pres for m in p["marks"]}
        self.assertIn('evil_family"><img onerror=x>: LEAKED', hovers)
        self.assertIn("decoy decoy</pre>: kept", hovers)
        css = "".join(page.styles)
        for name in ('evil_family"><img onerror=x>', "decoy</pre>"):  # in the CSS only as escapes
            self.assertNotIn(name, text)
        self.assertNotIn("<", css)
        families = re.findall(r'--f:("[^"]*")', css)
        self.assertTrue(families)
        for quoted in families:
            self.assertRegex(quoted, r'^"(?:[A-Za-z0-9_.-]|\\[0-9a-f]{6})*"$')

    def test_css_strings_end_neither_themselves_nor_the_style(self):
        """Family names reach the page only as CSS strings in its <style> (a raw-text
        element, where HTML escaping means nothing): quoted, with every character that
        could end the string or the element escaped, and read back unchanged."""
        for name in ('a"b', "a\\b", "x\ny", "</style><script>alert(1)</script>", "a< b", "a\\00003c b",
                     "tab\there", "é 😀 \u202e", "", "plain_name-1.2"):
            quoted = str(css_string(name))
            self.assertRegex(quoted, r'^"(?:[A-Za-z0-9_.-]|\\[0-9a-f]{6})*"$', name)
            self.assertEqual(css_unescape(quoted[1:-1]), name)

    def test_broken_lines_and_fields_are_listed_not_fatal(self):
        run = self.tmp / "broken"
        run.mkdir()
        lines = (self.oracle_run / "traces.jsonl").read_text().splitlines()
        ep = json.loads(lines[0])
        t = ep["traces"][0]
        private = copy.deepcopy(ep)
        pt = private["traces"][0]
        pt["info"]["environment"]["split"] = "private_eval"
        del pt["info"]["environment"]["task_seed"]
        pt["task"]["data"]["split"] = pt["task"]["data"]["identity"]["split"] = "private_eval"  # labels agree
        pt["task"]["data"]["identity"].pop("task_seed", None)
        other = copy.deepcopy(ep)
        other["traces"][0]["task"]["data"]["prompt"] = "a prompt of another corpus"
        junk = copy.deepcopy(ep)
        junk["traces"][0]["info"] = {"environment": "nope", "redaction": [1, 2]}
        junk["traces"][0]["rewards"] = None
        lone = copy.deepcopy(ep)
        lone["traces"][0]["nodes"][-1]["message"]["content"] = "\ud800 not JSON"
        surrogate = json.dumps(lone)  # ensure_ascii: the lone surrogate travels as a \\ud800 escape
        (run / "traces.jsonl").write_text("\n".join([
            lines[0], "{not json", json.dumps({"traces": "x"}), json.dumps(private), json.dumps(other),
            json.dumps(junk), json.dumps({"traces": [7]}), surrogate]) + "\n")
        _text, page = self.render(run)
        self.assertEqual(len(page.episodes), 5)
        self.assertIn("\\ud800", "".join(page.episodes["ep-5"]))
        shown = page.text()
        self.assertIn("line 2 is not JSON", shown)
        self.assertIn("line 3 is not an Episode", shown)
        self.assertIn("line 7 holds 1 trace entry in 16 bytes, under 1,024 bytes each", shown)
        self.assertIn("does not reveal its task seed", "".join(page.episodes["ep-2"]))
        self.assertIn("another corpus or build", "".join(page.episodes["ep-3"]))
        self.assertIn("no info.environment", "".join(page.episodes["ep-4"]))
        self.assertIn("SPLIT NOT ESTABLISHED", shown)
        self.assertIn("a trace records no split commitment", shown)
        self.assertIn(f"{t['rewards']['recall']['score']:.3f}", "".join(page.episodes["ep-2"]))

    def test_copies_that_disagree_are_flagged_and_not_counted(self):
        """Attack (red team a10): honest rewards.* but info.redaction.{reward, recall,
        precision, clean} = 1.0: the headline read info.redaction (mean reward 1.000)
        while `rescore` checked only rewards.*."""
        run = self.tmp / "two-copies"
        run.mkdir(exist_ok=True)
        lines = (self.mixed_run / "traces.jsonl").read_text().splitlines()
        ep = json.loads(lines[0])
        ep["traces"][0]["info"]["redaction"].update(reward=1.0, recall=1.0, precision=1.0, clean=1.0)
        (run / "traces.jsonl").write_text("\n".join([json.dumps(ep), *lines[1:4]]) + "\n")
        _, page = self.render(run)
        text = " ".join(page.text().split())
        self.assertIn("NOT TRUSTED: 1 episode(s) record scores no reader should trust (the two copies, rewards and "
                      "info.redaction, disagree or one is missing, or a value is not a number in [0, 1]; episodes 1)",
                      text)
        episode = " ".join("".join(page.episodes["ep-1"]).split())
        self.assertIn("NOT TRUSTED: its two recorded copies of the scores disagree (reward ", episode)
        self.assertIn("1.0000 in info.redaction", episode)
        honest = [json.loads(line)["traces"][0]["info"]["redaction"]["reward"] for line in lines[1:4]]
        mean = math.fsum(honest) / 3
        self.assertIn(f"{mean:.3f} ± ", text)  # the headline is the three trusted episodes'
        self.assertNotIn("1.000 ± ", text)

    def test_absurd_numbers_and_types_are_malformed_never_a_traceback(self):
        """Attacks (red team a02, a08, a09): 1e308 scores and weights (OverflowError in the
        bootstrap's fsum), integers of 4,299 digits (OverflowError in math.isfinite, and
        tallies whose sums could not be printed), lists where numbers and strings belong."""
        big = 10 ** 4299
        deep: object = 0
        for _ in range(900):
            deep = [deep]
        edits = [
            lambda t: t["rewards"].__setitem__("recall", {"score": 1e308, "weight": 1e308}),
            lambda t: t["info"]["redaction"].__setitem__("reward", big),
            lambda t: t["rewards"]["recall"].__setitem__("score", big),
            lambda t: t["info"]["redaction"].__setitem__("secret_classes", {"house_format": [9 * big, 0]}),
            lambda t: t["info"]["redaction"].__setitem__("secrets_total", big),
            lambda t: t["info"]["environment"]["task_params"].__setitem__("budget_s", big),
            lambda t: t["info"]["environment"]["task_params"].__setitem__("level", 10 ** 4000),
            lambda t: t["info"]["environment"].__setitem__("split_commitment", ["x"]),
            lambda t: t["info"]["environment"].__setitem__("task_id", deep),
            lambda t: t["info"]["redaction"].__setitem__("secret_classes", {"x": [1e308, -1e308]}),
        ]
        line = (self.mixed_run / "traces.jsonl").read_text().splitlines()[0]
        for k, edit in enumerate(edits):
            with self.subTest(edit=k):
                run = self.tmp / f"absurd-{k}"
                run.mkdir(exist_ok=True)
                eps = []
                for copy in range(3):
                    ep = json.loads(line)
                    edit(ep["traces"][0])
                    ep["traces"][0]["id"] = f"rollout-{copy}"  # three rollouts, not one trace thrice
                    eps.append(json.dumps(ep))
                (run / "traces.jsonl").write_text("\n".join(eps) + "\n")
                _, page = self.render(run)
                if k == 8:  # 905 levels: refused by every reader before the decoder recurses
                    self.assertEqual(len(page.episodes), 0)
                    self.assertIn("line 1 is nested too deeply: 905 levels; at most 64 are read", page.text())
                    continue
                self.assertEqual(len(page.episodes), 3)
                if k < 3:
                    self.assertIn("its recorded scores are malformed", page.text())
                    self.assertIn("not a number in [0, 1]", page.text())

    def test_a_file_of_empty_traces_costs_what_its_bytes_do(self):
        """Attack (red team a07): lines of ``{"traces": [{}, {}, ...]}`` (3 bytes a
        "trace"): 2 MiB made the report hold 3.1 GB and write a 266 MB page, one section
        per empty object."""
        run = self.tmp / "empty-traces"
        run.mkdir(exist_ok=True)
        line = '{"traces": [' + ",".join(["{}"] * 100_000) + "]}\n"
        honest = (self.mixed_run / "traces.jsonl").read_text().splitlines(keepends=True)[0]
        padded = json.loads(honest)
        padded["traces"][0]["id"] = "another-rollout"  # not a copy of the line before
        padded["traces"] += [{}] * 3  # not traces, in a line large enough for its one
        # entries of a few hundred bytes, few values each: past the value bound, under the trace bound
        small = '{"traces": [' + ",".join(['{"info": {}, "pad": "' + "x" * 500 + '"}'] * 100) + "]}\n"
        (run / "traces.jsonl").write_text(line * 7 + honest + json.dumps(padded) + "\n" + small)
        text, page, peak = self.render_traced(run)
        self.assertEqual(len(page.episodes), 2)
        self.assertLess(len(text), 200_000)
        self.assertLess(peak, 100 << 20)
        shown = " ".join(page.text().split())
        # (since 0.16.0 such a line is refused before it is decoded: it holds a value per 3 bytes)
        self.assertIn("traces.jsonl line 1 holds too many values for its 300,014 bytes", shown)
        self.assertIn("3 trace entries are not a trace object (an object holding a task or info object; the first "
                      "in traces.jsonl line 9); they are not read", shown)
        self.assertIn(f"traces.jsonl line 10 holds 100 trace entries in {len(small):,} bytes, under 1,024 bytes each",
                      shown)

    def test_a_trace_padded_with_values_costs_what_its_bytes_do(self):
        """Red team, 2026-12-03: traces padded with ``[[],[],...]`` (3 bytes a value, 56
        bytes a list once read): 392 MB made `report` hold 10 GB, and the machine killed
        it. A line holding more arrays and objects, strings or values than
        `VALUE_BYTES` allows for its bytes is one problem, unread; a training trace's
        token ids, logprobs and masks are read."""
        import random

        from redaction_pressure.boundary.episodes import VALUE_BYTES, EpisodeReader

        run = self.tmp / "padded-traces"
        run.mkdir(exist_ok=True)
        honest = (self.mixed_run / "traces.jsonl").read_text().splitlines(keepends=True)[0]
        lines = []
        for pad in ([[]] * 1_000_000, ["ab"] * 700_000, [1] * 1_500_000):
            padded = json.loads(honest)
            padded["traces"][0]["pad"] = pad
            lines.append(json.dumps(padded, separators=(",", ":")) + "\n")
        (run / "traces.jsonl").write_text(honest + "".join(lines))
        _, page, peak = self.render_traced(run)
        self.assertEqual(len(page.episodes), 1)
        self.assertLess(peak, 80 << 20)  # read, the three lines would hold 1,000,000 lists, 700,000 strings and more
        shown = " ".join(page.text().split())
        for n, (line, what, each) in enumerate(zip(lines, ("arrays and objects", "strings", "values"), VALUE_BYTES,
                                                   strict=True), 2):
            self.assertIn(f"traces.jsonl line {n} holds too many values for its {len(line.encode()):,} bytes (it may "
                          f"hold", shown)
            self.assertIn(f"{what}; at most one per {each} bytes are read; a real trace has", shown)
        # A training trace (token ids, logprobs, a mask per token) and every fixture line are read.
        r = random.Random(7)
        trained = json.loads(honest)
        trained["traces"][0].update(token_ids=[r.randrange(100, 200_000) for _ in range(9000)],
                                    logprobs=[-r.random() * 5 for _ in range(1200)], mask=[True] * 9000)
        problems: list[str] = []
        texts = [json.dumps(trained, separators=(",", ":")) + "\n", json.dumps(trained) + "\n"]
        texts += [ln for d in (self.mixed_run, self.oracle_run) for ln in (d / "traces.jsonl").read_text().splitlines()]
        for text in texts:  # a reader each: the first two are one trace, which one reader reads once
            list(EpisodeReader(problems.append)._line(1, text.encode()))
        self.assertEqual(problems, [])

    def test_the_number_of_traces_read_is_capped(self):
        from redaction_pressure.boundary import episodes

        with mock.patch.object(episodes, "MAX_TRACES", 2):
            _, page = self.render(self.mixed_run)
        self.assertEqual(list(page.episodes), ["ep-1", "ep-2"])
        self.assertIn("the file holds more than 2 traces, the most this reader reads: the traces after the first 2 "
                      "(from traces.jsonl line 3 on) are not read", " ".join(page.text().split()))

    def test_not_a_run(self):
        with self.assertRaises(RunError):
            render_report(self.tmp / "missing")
        empty = self.tmp / "empty"
        empty.mkdir(exist_ok=True)
        with self.assertRaisesRegex(RunError, "holds no traces.jsonl"):
            render_report(empty)
        with self.assertRaisesRegex(RunError, "not a sealed archive"):
            render_report(self.oracle_run, verdict=self.tmp / "verdict.json")


class NoExternalReference(ReportTestCase):
    def test_self_contained(self):
        for run in (self.oracle_run, self.mixed_run):
            text, page = self.render(run)
            for tag, attrs in page.tags:
                self.assertNotIn(tag, ("script", "link", "iframe", "img", "object", "embed", "base", "form"))
                for name in ("src", "href", "action", "xlink:href", "srcset", "poster", "data"):
                    value = attrs.get(name)
                    self.assertTrue(value is None or value.startswith("#"), (tag, name, value))
            css = "".join(page.styles)
            self.assertNotIn("@import", css)
            self.assertNotIn("url(", css)
            self.assertNotIn("@font-face", css)
            self.assertNotIn("style=", text)
            csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
            self.assertTrue(csp and "default-src 'none'" in csp[0]["content"])


def split_class(page: Page) -> str:
    return next(a.get("class", "") for t, a in page.tags if a.get("id") == "split").split()[-1]


def seal(run: Path, owner: str, out: Path) -> Path:
    """``run`` sealed into ``out`` with ``owner``'s key (made once), in process."""
    from audit._keys import keygen, load_private_key
    from audit._seal import seal as seal_run

    keys = FIXTURES["tmp"] / f"keys-{owner}"
    if not keys.exists():
        keygen(keys)
    seal_run(run, load_private_key(keys / "signing-key.pem"), out)
    return keys / "signing-key.pub.pem"


def verdict_json(archive: Path, public_key: Path) -> dict:
    """What `audit verify --json` prints for ``archive`` (in process)."""
    from audit._keys import load_public_key
    from audit._report import render_json
    from audit._verify import verify_archive

    return json.loads(render_json(verify_archive(archive, load_public_key(public_key))))


class Archives(ReportTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.archive = cls.tmp / "archive"
        cls.public_key = seal(cls.oracle_run, "owner", cls.archive)

    def verification(self, page: Page) -> str:
        return " ".join(page.text().split()).split("verification", 1)[1][:600]

    def verified(self) -> Page:
        """The page of the class's archive, verified with its own key: rendered (with its
        `audit verify` run) once for the tests that read it, as neither changes the archive."""
        cls = type(self)
        if "_verified" not in cls.__dict__:
            cls._verified = self.render(self.archive, public_key=self.public_key)[1]
        return cls._verified

    def test_unverified_by_default(self):
        _, page = self.render(self.archive)
        self.assertIn("(sealed archive)", page.text())
        self.assertIn("✘ not verified: no --public-key or --verdict was given", self.verification(page))
        self.assertIn("manifest_version", page.text())

    def test_runs_audit_verify_with_the_pinned_key(self):
        v = self.verification(self.verified())
        self.assertIn("✔ verified: `audit verify` ran here with the pinned key", v)
        self.assertIn("which names exactly the files shown", v)
        self.assertIn("VERIFIED: every check that ran passed", v)  # audit verify's own verdict line

    def test_wrong_key_is_not_verified(self):
        other = self.tmp / "other-archive"
        other_key = seal(self.oracle_run, "other", other)
        _, page = self.render(self.archive, public_key=other_key)
        v = self.verification(page)
        self.assertIn("✘ NOT VERIFIED", v)
        self.assertIn("signature", v)
        # Red team, 2026-12-03: what did not verify is not rescored (swapped traces spent
        # the whole --max-cpu); the recorded scores are shown, with no marks.
        shown = " ".join(page.text().split())
        self.assertIn("NOT CHECKED: this reply was not rescored, because the archive did not verify", shown)
        self.assertFalse(any(pre["marks"] for pre in page.pres))
        self.assertTrue(any(pre["marks"] for pre in self.verified().pres))

    def test_a_verdict_file_is_a_claim_never_a_badge(self):
        """Attacks: a hand-written passing verdict, another archive's genuine verdict, and
        this archive's own genuine verdict: none is a verification the report ran, so
        none gets "✔ verified" (the first two got it before)."""
        own = verdict_json(self.archive, self.public_key)
        self.assertEqual(own["statement_sha256"], hashlib.sha256(payload_of(self.archive)).hexdigest())
        other_archive = self.tmp / "another-archive"
        seal(write_run(self.tmp / "another-run", [("dev", 5, "{}")]), "owner", other_archive)
        others = verdict_json(other_archive, self.public_key)
        failed = dict(own, verdict="failed", exit_code=1,
                      checks=[{"name": "rescoring", "status": "failed", "summary": "2 rewards differ"}])
        cases = [({"verdict": "passed", "exit_code": 0}, "names no Statement digest"),
                 ({"verdict": "passed", "exit_code": 0, "run_id": own["run_id"]}, "names no Statement digest"),
                 (others, "is the verdict of another archive"),
                 (failed, "says `audit verify` did not pass"),
                 (["passed"], "is not an `audit verify --json` verdict"),
                 (own, "claimed by verdict file verdict.json, not re-checked here")]
        path = self.tmp / "verdict.json"
        for verdict, expected in cases:
            path.write_text(json.dumps(verdict))
            text, page = self.render(self.archive, verdict=path)
            v = self.verification(page)
            self.assertIn(expected, v, verdict)
            self.assertNotIn("✔", v)
            row = text.split("<td>verification</td>", 1)[1].split("</tr>", 1)[0]
            self.assertNotIn('class="ok"', row)  # never the green of a pass
        self.assertIn("⚠ UNCHECKED CLAIM — NOT VERIFIED HERE", v)  # the last case: this archive's own verdict
        self.assertIn('<span class="claim">', row)
        path.write_text(json.dumps(failed))
        _, page = self.render(self.archive, verdict=path)
        self.assertIn("2 rewards differ", page.text())

    def test_a_badge_covers_every_verified_trace(self):
        """Review of 2026-12-03: traces `audit verify` accepted but the page leaves out of
        its figures (named as another task with the task hash dropped: the labels
        disagree) gave "✔ verified" over a mean of the traces the signer kept. The badge
        now needs every verified trace read and counted."""
        episodes = [json.loads(line) for line in (self.oracle_run / "traces.jsonl").read_text().splitlines()]
        self.assertGreater(len(episodes), 1)
        for t in (episodes[0]["traces"][0]["task"], episodes[0].get("task")):
            t["data"]["name"] = "dev-999999"
            t.pop("hash", None)
        renamed = self.tmp / "renamed-run"
        renamed.mkdir()
        (renamed / "traces.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
        archive = self.tmp / "renamed-archive"
        key = seal(renamed, "owner", archive)
        self.assertEqual(verdict_json(archive, key)["verdict"], "passed")  # the audit accepts it
        _, page = self.render(archive, public_key=key)
        v = self.verification(page)
        self.assertNotIn("✔", v)
        self.assertIn(f"NOT VERIFIED as shown: `audit verify` passed for {len(episodes)} traces, but this reader "
                      f"read {len(episodes)} (0 problem(s) reading the file) and counts {len(episodes) - 1}", v)
        compared = compare_runs(self.archive, archive, keys=(self.public_key, key), allow_mismatch=True)
        self.assertTrue(compared.verifications[0].verified)
        self.assertFalse(compared.verifications[1].verified)
        self.assertTrue(compared.verification_failed)

    def test_a_verification_binds_the_files_shown(self):
        """The archive's traces.jsonl, or its manifest.toml, replaced: a genuine verdict
        of the sealed archive names a Statement whose subjects are not the files shown."""
        path = self.tmp / "verdict-of-sealed.json"
        path.write_text(json.dumps(verdict_json(self.archive, self.public_key)))
        for name, other in (("traces.jsonl", self.mixed_run / "traces.jsonl"), ("manifest.toml", None)):
            swapped = self.tmp / f"swapped-{name}"
            shutil.copytree(self.archive, swapped)
            if other is None:
                with open(swapped / name, "a") as f:
                    f.write("# an edit\n")
            else:
                shutil.copy(other, swapped / name)
            _, page = self.render(swapped, verdict=path)
            self.assertIn(f"the {name} shown is not the one this archive's signed Statement names",
                          self.verification(page))

    def test_strict_is_passed_to_audit_verify(self):
        """Attack (red team a13): a signer records a time-out on a reply (scores 0).
        `audit verify` fails it (this machine finishes the reply in far under a quarter
        of its budget, outside the 4x tolerance) and the page says so; what it does
        tolerate only `--strict` refuses, which the report passes on to it."""
        from audit import _rescore
        from tests.support import audit_fixtures as fx

        def slow_sealer(episodes):
            trace = episodes[1]["traces"][0]
            score = _rescore.score_completion(_rescore.task_of(trace), _rescore.recorded_reply(trace), budget_s=0.0)
            fx.record(trace, score)
        laundered = fx.seal_run(fx.tampered_run(fx.dev_run(), slow_sealer))
        key = fx.keys("owner")[1]
        _, page = self.render(laundered, public_key=key)
        v = self.verification(page)
        self.assertIn("✘ NOT VERIFIED: `audit verify` exited 1", v)
        self.assertNotIn("✔", v)
        with fx.verify_commands() as commands:
            _, page = self.render(self.archive, public_key=self.public_key, strict=True)
            self.render(self.archive, public_key=self.public_key)
        self.assertIn("✔ verified", self.verification(page))
        self.assertEqual([c.count("--strict") for c in commands], [1, 0])

    def test_unreadable_verdict_files_are_one_line_errors(self):
        fifo, zero, sparse = self.tmp / "verdict.fifo", self.tmp / "verdict-zero.json", self.tmp / "verdict-8g.json"
        os.mkfifo(fifo)
        zero.symlink_to("/dev/zero")
        with open(sparse, "wb") as f:
            f.truncate(8 << 30)
        for path, needle in ((self.tmp / "no-such-verdict.json", "is missing"), (fifo, "not a regular file (a FIFO)"),
                             (zero, "not a regular file (a device)"), (sparse, "8,589,934,592 bytes")):
            with self.assertRaises(RunError) as caught:
                render_report(self.archive, verdict=path)
            self.assertIn(needle, str(caught.exception))
            self.assertIn("cannot read the verdict file", str(caught.exception))


class FilesFromOutside(ReportTestCase):
    """Every input bounded before it is read, every output created without following a
    link (attacks that wrote through a planted link, or read gigabytes, before)."""

    def test_the_page_is_never_written_through_a_link(self):
        run = self.tmp / "linked-out"
        run.mkdir()
        shutil.copy(self.oracle_run / "traces.jsonl", run / "traces.jsonl")
        victim = self.tmp / "victim.txt"
        victim.write_text("precious\n")
        for planted in (run / "report.html.partial", run / "report.html"):
            planted.symlink_to(victim)
        out = write_report(run, run / "report.html", jobs=1)
        self.assertEqual(victim.read_text(), "precious\n")
        self.assertFalse(out.is_symlink())
        self.assertIn("redaction-pressure run report", out.read_text())
        self.assertEqual(sorted(p.name for p in run.iterdir() if p.name.startswith(".")), [])  # no temp file left

    def test_the_page_is_never_led_out_of_the_run_by_a_linked_directory(self):
        run = self.tmp / "linked-dir-out"
        run.mkdir()
        shutil.copy(self.oracle_run / "traces.jsonl", run / "traces.jsonl")
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir()
        (run / "html").symlink_to(elsewhere, target_is_directory=True)
        deep = elsewhere / "deep"
        deep.mkdir()
        (run / "up").symlink_to(deep, target_is_directory=True)
        alias = self.tmp / "alias-of-run"
        alias.symlink_to(run, target_is_directory=True)
        cases = [(run, run / "html" / "index.html"), (run, run / "html" / "new" / "index.html"),
                 # the system follows a link before it goes up from it: up/.. is elsewhere
                 (run, run / "up" / ".." / "index.html"),
                 # the run named by an alias is the same place
                 (alias, run / "html" / "index.html"), (run, alias / "html" / "index.html")]
        for run_path, out in cases:
            with self.subTest(out=str(out)), self.assertRaisesRegex(RunError, "symbolic link inside the run"):
                write_report(run_path, out, jobs=1)
        with contextlib.chdir(run), self.assertRaisesRegex(RunError, "symbolic link inside the run"):
            write_report(Path("."), Path("up/../rel.html"), jobs=1)
        self.assertEqual([p.name for p in elsewhere.rglob("*")], ["deep"])
        # A directory of the run's that is no link, and a page outside the run, are fine.
        (run / "pages").mkdir()
        self.assertTrue(write_report(run, run / "pages" / "index.html", jobs=1).is_file())
        self.assertTrue(write_report(run, elsewhere / "page.html", jobs=1).is_file())

    def test_huge_fifo_and_linked_inputs_are_one_line_errors(self):
        cases = {}
        sparse = self.tmp / "sparse-run"
        sparse.mkdir()
        with open(sparse / "traces.jsonl", "wb") as f:
            f.truncate(8 << 30)
        cases[sparse] = "8,589,934,592 bytes"
        fifo = self.tmp / "fifo-run"
        fifo.mkdir()
        os.mkfifo(fifo / "traces.jsonl")
        cases[fifo] = "not a regular file (a FIFO)"
        linked = self.tmp / "linked-run"
        linked.mkdir()
        (linked / "traces.jsonl").symlink_to(self.oracle_run / "traces.jsonl")
        cases[linked] = "symbolic link"
        for run, needle in cases.items():
            start = time.perf_counter()
            with self.assertRaises(RunError) as caught:
                render_report(run, jobs=1)
            self.assertIn(needle, str(caught.exception))
            self.assertEqual(len(str(caught.exception).splitlines()), 1)
            self.assertLess(time.perf_counter() - start, 2.0)

    def test_a_huge_manifest_is_a_problem_on_the_page(self):
        archive = self.tmp / "huge-manifest"
        archive.mkdir()
        shutil.copy(self.oracle_run / "traces.jsonl", archive / "traces.jsonl")
        with open(archive / "manifest.toml", "wb") as f:
            f.truncate(8 << 30)
        _, page = self.render(archive)
        self.assertIn("manifest.toml could not be read: manifest.toml is 8,589,934,592 bytes", page.text())

    def test_a_manifest_of_many_tables_is_a_problem_on_the_page(self):
        """Red team, 2026-12-04: 16 MB of lines each a fresh 8-part table path, unsigned,
        cost the report 81 s and 5.9 GB (a MemoryError traceback under a 3 GB limit)."""
        archive = self.tmp / "table-bomb"
        archive.mkdir()
        shutil.copy(self.oracle_run / "traces.jsonl", archive / "traces.jsonl")
        (archive / "manifest.toml").write_text("".join(f"[{i:x}.a.b.c.d.e.f.g]\n" for i in range(600_000)))
        start = time.process_time()
        _, page = self.render(archive)
        self.assertLess(time.process_time() - start, 30.0)
        self.assertIn("manifest.toml could not be read: it may make 4,800,000 tables; at most 200,000 are read",
                      page.text())


class RescoringCost(ReportTestCase):
    """The reader decides what rescoring costs: a trace's own budget (up to 60 s) is not
    granted beyond --max-budget, nor any rescoring beyond --max-cpu (a run of N such
    traces cost N x 60 CPU-seconds before)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        task = load_task("dev", 1)
        cls.long_run = write_run(cls.tmp / "budget-60", [("dev", 1, policies.baseline(task))], budget_s=60.0)

    def test_a_trace_gets_no_more_budget_than_the_reader_grants(self):
        with mock.patch.object(_marks, "score_with_masks", wraps=_marks.score_with_masks) as scored:
            _, page = self.render(self.long_run)
        self.assertEqual(scored.call_count, 0)
        episode = " ".join("".join(page.episodes["ep-1"]).split())
        self.assertIn("NOT CHECKED: this reply was not rescored, because its budget of 60 s is more than the 2 s "
                      "this reader grants a trace (--max-budget)", episode)
        self.assertEqual(page.pres, [])  # no marks
        self.assertIn("NOT CHECKED: 1 of 1 episode(s) were not checked here", " ".join(page.text().split()))
        with mock.patch.object(_marks, "score_with_masks", wraps=_marks.score_with_masks) as scored:
            _, page = self.render(self.long_run, max_budget_s=60)
        self.assertEqual([c.args[0].budget_s for c in scored.call_args_list], [60.0])  # granted when asked for
        self.assertEqual(len(page.pres), load_task("dev", 1).n_eval)

    def test_rescoring_stops_when_the_cpu_granted_is_spent(self):
        _, page = self.render(self.mixed_run, max_cpu_s=1e-9)
        text = " ".join(page.text().split())
        n = len(self.mixed_items)
        # the first is rescored for its marks, which spends the CPU: its verdict (`rescore`'s)
        # is then not checked either, and no episode counts as checked
        self.assertIn(f"NOT CHECKED: {n} of {n} episode(s) were not checked here", text)
        self.assertIn("the 1e-09 s of scan CPU this reader grants all traces were spent (--max-cpu)", text)
        marked = [ep for ep, parts in page.episodes.items() if "held-out records:" in "".join(parts)]
        self.assertEqual(marked, ["ep-1"])  # only the first was rescored


class Cli(ReportTestCase):
    def test_report_command(self):
        out = self.tmp / "cli" / "page.html"
        done = subprocess.run([*CLI, "report", str(self.oracle_run), "--out", str(out), "--jobs", "1"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("wrote", done.stdout)
        self.assertEqual(out.read_text(), render_report(self.oracle_run, jobs=1))
        default = subprocess.run([*CLI, "report", str(self.oracle_run)], capture_output=True, text=True, timeout=300)
        self.assertEqual(default.returncode, 0, default.stderr)
        self.assertTrue((self.oracle_run / "report.html").is_file())
        bad = subprocess.run([*CLI, "report", str(self.tmp / "nowhere")], capture_output=True, text=True, timeout=300)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("does not exist", bad.stderr)


class NotReproduced(ReportTestCase):
    """Red team, 2026-12-04: a run whose recorded scores (both copies, tallies too) were
    raised headed the page "1.000 mean reward", exit 0; this build's rescoring said
    otherwise only in a note inside each episode."""

    def test_forged_scores_head_the_page_and_exit_1(self):
        from tests.support import audit_fixtures as fx

        forged = {t.index for t in self.base_tasks}

        def raise_scores(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    index = t["info"]["environment"]["task_index"]
                    if index in forged:
                        task = load_task("dev", index)
                        fx.record(t, score_completion(task, policies.oracle(task)))
        run = fx.tampered_run(self.mixed_run, raise_scores)
        _, page = self.render(run)
        self.assertIn(f"NOT REPRODUCED: {len(forged)} of {len(self.mixed_items)} episode(s) record a reward this "
                      "build does not give their reply (episodes 1, 2, 3, 4)", page.text())
        self.assertIn(f"recorded: {len(forged)} NOT REPRODUCED", page.text())
        done = subprocess.run([*CLI, "report", str(run), "--out", str(run / "page.html")], capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn(f"NOT REPRODUCED: {len(forged)} episode(s) record a reward", done.stderr)
        # The genuine run: no such line, exit 0 (Cli.test_report_command).
        self.assertNotIn("NOT REPRODUCED", self.render(self.mixed_run)[1].text())

    def test_forged_tallies_beside_real_rewards_are_counted(self):
        """Red team, 2026-12-04, third round: real rewards, tallies forged to "0 secrets
        leaked, 0 decoys destroyed": the headline said so, exit 0."""
        from tests.support import audit_fixtures as fx

        def clean_tallies(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    r = t["info"]["redaction"]
                    for v in r["secret_classes"].values():
                        v[1] = v[0]
                    for v in r["decoy_classes"].values():
                        v[1] = 0
        run = fx.tampered_run(self.mixed_run, clean_tallies)
        _, page = self.render(run)
        self.assertRegex(" ".join(page.text().split()), r"NOT REPRODUCED: [1-8] of 8 episode\(s\)")

    def test_the_verdict_never_depends_on_the_secret_the_environment_holds(self):
        """Red team, 2026-12-04, third round: rescore's verdict read the private secret
        from the environment, so an honest private run exited 0 with --jobs 1 and the
        secret set, 3 with --jobs 2 (forked workers scrub it), 1 with another secret. The
        report never reads it: NOT CHECKED, exit 3, in every case."""
        from redaction_pressure.report import render_report_checked
        from tests.support import audit_fixtures as fx

        run = fx.private_run()
        for secret in (None, fx.SECRET, "another secret of the evaluator's, 0123456789abcdef"):
            with self.subTest(secret=secret), fx.env_var(PRIVATE_SEED_ENV, secret):
                got = render_report_checked(run, jobs=1)
                self.assertEqual((got.unreproduced, got.unchecked, got.split_established), (0, 4, False))
        with fx.env_var(PRIVATE_SEED_ENV, fx.SECRET):
            done = subprocess.run([*CLI, "report", str(run), "--out", str(self.tmp / "p.html"), "--force"],
                                  capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn("NOT CHECKED: 4 episode(s) were not checked here", done.stderr)
        text = " ".join(parse((self.tmp / "p.html").read_text()).text().split())
        self.assertIn("rescored, and reproduced, on the private seed its trace reveals", text)
        self.assertNotIn("Raise --max-budget", text)

    def test_a_run_that_is_not_one_split_is_not_a_pass(self):
        """Red team, 2026-12-04, third round: dev and train traces in one run exited 0
        under a red banner (rescore and compare exit 3)."""
        run = write_run(self.tmp / "two-splits", [("dev", 3, policies.baseline(load_task("dev", 3))),
                                                  ("train", 3, policies.baseline(load_task("train", 3)))])
        done = subprocess.run([*CLI, "report", str(run), "--out", str(run / "page.html")], capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn("NOT CHECKED: the run's split is not established", done.stderr)

    def test_a_reader_that_closes_the_pipe_gets_the_verdict(self):
        """Red team, 2026-12-04, third round: `report FORGED | head -c 0` exited 0."""
        from tests.support import audit_fixtures as fx

        def raise_scores(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    task = load_task("dev", t["info"]["environment"]["task_index"])
                    fx.record(t, score_completion(task, policies.oracle(task)))
        run = fx.tampered_run(self.mixed_run, raise_scores)
        p = subprocess.Popen([*CLI, "report", str(run), "--out", str(run / "page.html")], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        p.stdout.close()
        self.assertEqual(p.wait(timeout=300), 1)

    def test_a_forgery_the_marks_cannot_rebuild_is_counted(self):
        """Red team, 2026-12-04, second round: the forged run with a space added to each
        recorded prompt could not be rebuilt for the marks, so no episode was counted: the
        page said "1.000 mean reward", exit 0. `rescore`'s verdict is the page's now."""
        from tests.support import audit_fixtures as fx

        def forge(episodes):
            for ep in episodes:
                for t in ep["traces"]:
                    task = load_task("dev", t["info"]["environment"]["task_index"])
                    fx.record(t, score_completion(task, policies.oracle(task)))
                    for node in t["nodes"]:
                        for m in node["message"] if isinstance(node.get("message"), list) else [node.get("message")]:
                            if isinstance(m, dict) and m.get("role") == "user":
                                m["content"] += " "
                    t["task"]["data"]["prompt"] += " "
        run = fx.tampered_run(self.mixed_run, forge)
        done = subprocess.run([*CLI, "report", str(run), "--out", str(run / "page.html")], capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 1, done.stderr)
        page = parse((run / "page.html").read_text())
        n = len(self.mixed_items)
        self.assertIn(f"NOT REPRODUCED: {n} of {n} episode(s)", page.text())
        self.assertIn(f"recorded: {n} NOT REPRODUCED", page.text())

    def test_what_is_not_checked_is_not_a_pass(self):
        """Traces beyond --max-budget are NOT CHECKED: exit 3, never 0."""
        run = write_run(self.tmp / "budget4", [("dev", 0, policies.baseline(load_task("dev", 0, budget_s=4.0)))],
                        budget_s=4.0)
        done = subprocess.run([*CLI, "report", str(run), "--out", str(run / "page.html")], capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn("NOT CHECKED: 1 episode(s) were not checked here", done.stderr)
        done = subprocess.run([*CLI, "report", str(run), "--out", str(run / "page.html"), "--max-budget", "4",
                               "--force"], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the first chunk, by the PNG spec)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


class Browser(ReportTestCase):
    def test_headless_chromium_renders_the_page(self):
        if not Path(CHROMIUM).exists():
            if os.environ.get("CI"):
                self.fail(f"{CHROMIUM} is missing in CI: .ci/run installs Debian's chromium")
            self.skipTest(f"{CHROMIUM} is not installed (apt-get install chromium); CI installs it and runs this test")
        page = self.tmp / "browser.html"
        write_report(self.mixed_run, page, jobs=1)
        png, profile = self.tmp / "shot.png", self.tmp / "chromium-profile"
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1280,2000", page.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        self.assertEqual(png_size(png.read_bytes()), (1280, 2000))
        from PIL import Image  # dev dependency: decoding IDAT by hand in Python takes seconds

        with Image.open(png) as im:
            counts = im.convert("RGB").getcolors(maxcolors=1 << 24)
        total = sum(n for n, _ in counts)
        self.assertGreater(len(counts), 20, "the screenshot is (nearly) blank")
        white = sum(n for n, c in counts if c == (255, 255, 255))
        self.assertLess(white / total, 0.97, "the screenshot is (nearly) all white")
        # The public split banner's background (#ddf4ff) fills a visible area: the inline CSS applied.
        banner = sum(n for n, c in counts if c == (0xdd, 0xf4, 0xff))
        self.assertGreater(banner, 1280 * 30)


if __name__ == "__main__":
    unittest.main()
