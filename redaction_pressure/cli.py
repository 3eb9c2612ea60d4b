"""The `redaction-pressure` command: eval (the embedded default job), tasks show, reply, score,
report, rescore, compare, export, serve.

Every usage error is one line on stderr and exit status 2, found before verifiers is
imported (importing it takes seconds); `eval`, `reply` and `score` exit 0 when they ran.
"""

from __future__ import annotations

import argparse
import errno
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from . import policies
from .boundary.files import replace_refusal
from .boundary.launch import safe_spawned_paths
from .boundary.terminal import printable, quiet_stdout, sane_streams
from .corpus.levels import LEVELS
from .scoring.allowance import DEFAULT_MAX_BUDGET_S, DEFAULT_MAX_CPU_S
from .scoring.summary import split_label
from .task.splits import PUBLIC, SPLITS, PrivateSeedError, read_private_secret

DEFAULT_LEVEL = 1

if TYPE_CHECKING:  # rich and the task builder are imported where used: startup stays fast
    from rich.console import Console
    from rich.text import Text

    from .corpus.stream import Record
    from .scoring.answer import RedactionError
    from .task.tasks import RedactionTask

TRACES = "traces.jsonl"
MAX_LISTED = 100  # differences `rescore` prints one by one


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line (argparse prints the whole usage first,
    which pushes the reason off a small terminal)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich exits 1 here, the code `compare` and `rescore` give a difference: raise
            # instead, so the command exits with the verdict it reached (`main`).
            self.quiet = True
            raise BrokenPipeError

    # soft_wrap: the terminal may wrap long lines, but no newline is ever inserted,
    # so text piped to a file or `less` keeps its character positions.
    return _Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def _verdict(args: argparse.Namespace, code: int) -> int:
    """``code``, kept as the exit status should printing it fail (`... | head`): a reader
    that closed the pipe early does not turn a difference into a pass, nor a pass into one."""
    args.exit_status = code
    return code


def _task(args: argparse.Namespace) -> RedactionTask:
    from .task.tasks import load_task

    try:
        return load_task(args.split, args.index, level=args.level)
    except (IndexError, ValueError, TypeError, PrivateSeedError) as exc:
        raise UsageError(str(exc)) from None


def _check_run_dir(out: Path, named: bool, force: bool) -> None:
    """Everything that would make the run fail to write, found before the slow import.
    Creates the directory (a probe file proves it is writable). A run directory that is,
    or holds, a symbolic link (anywhere, and at or on the way to every path eval writes:
    a cloned repository may ship ``runs/dev-baseline/configs/resolved/eval.json`` linked
    to a file of the user's) is refused before anything is written."""
    from .boundary.files import RUN_DIR_WRITES, LinkedOutputError, refuse_links

    try:
        refuse_links(out, RUN_DIR_WRITES, what="run directory")
    except LinkedOutputError as exc:
        raise UsageError(str(exc)) from None
    for parent in (out, *out.parents):
        if parent.exists() and not parent.is_dir():
            if parent == out:
                raise UsageError(f"--out {out} is an existing file; --out names a run directory")
            raise UsageError(f"cannot create run directory {out}: {parent} is a file, not a directory")
    traces = out / TRACES
    if traces.exists() and not traces.is_file():
        raise UsageError(f"{traces} exists and is not a file; choose another --out")
    if named and traces.exists() and not force:
        # The default run directory is ours to replace; one the user named is not.
        raise UsageError(f"{traces} exists; pass --force to overwrite it or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write run directory {out}: {exc.strerror or exc}") from None


def _level_mix(text: str | None) -> dict[int, float] | None:
    """``1=2,3=1`` as {1: 2.0, 3: 1.0}; checked by the task builder's own rules."""
    if text is None:
        return None
    from .task.tasks import check_level_mix

    mix: dict[int, float] = {}
    try:
        for part in text.split(","):
            text_level, _, weight = part.partition("=")
            level = int(text_level)
            if level in mix:
                raise ValueError(f"level {level} is given twice")
            mix[level] = float(weight)
        check_level_mix(mix)
    except ValueError as exc:
        reason = str(exc) if "level" in str(exc) else f"{text!r} is not LEVEL=WEIGHT,... (e.g. 1=2,2=1)"
        raise UsageError(f"--level-mix: {reason}") from None
    return mix


def cmd_eval(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise UsageError("-n must be at least 1")
    if args.split == "private_eval":
        try:
            read_private_secret()
        except PrivateSeedError as exc:
            raise UsageError(str(exc)) from None
    elif args.n > PUBLIC[args.split].size:
        raise UsageError(f"the {args.split} split has {PUBLIC[args.split].size} tasks; -n {args.n} is too many")
    mix = _level_mix(args.level_mix)
    if mix is not None and args.level != DEFAULT_LEVEL:
        raise UsageError("give --level or --level-mix, not both")
    levels = "-mix" if mix else f"-level{args.level}" if args.level != 1 else ""
    out = Path(args.out or f"runs/{args.split}-{args.policy}{levels}")
    _check_run_dir(out, named=bool(args.out), force=args.force)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    start = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=args.json or not sys.stdout.isatty(), transient=True) as progress:
        bar = progress.add_task(f"loading verifiers, then scoring {args.split}", total=args.n)
        from .boundary.files import LinkedOutputError
        from .run import read_traces, run_policy
        try:
            from .taskset import RedactionConfig

            config = RedactionConfig(split=args.split, level=args.level, level_mix=mix)
            path = run_policy(args.split, args.policy, args.n, out, config=config,
                              on_done=lambda: progress.advance(bar))
        except LinkedOutputError as exc:  # a link appeared while the run was scored
            print(f"redaction-pressure: error: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            print(f"redaction-pressure: error: writing the run to {out} failed: {exc.strerror or exc}",
                  file=sys.stderr)
            return 1
    from .results.summary import summarize
    from .results.text import eval_lines

    summary = summarize(read_traces(path), families=args.families) | {"policy": args.policy, "run_dir": str(out)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console = _console()
        for line in eval_lines(summary, path, args.policy, time.perf_counter() - start,
                               all_classes=args.classes, families=args.families):
            console.print(line, markup=False)
    return 0


def _span_lines(record: Record) -> list[str]:
    """One line per labelled span, in text order: kind, [start:end) in the record
    text, family, and the exact characters (as a JSON string, so nothing wraps)."""
    labels = [(s, "SECRET") for s in record.secrets] + [(d, "DECOY") for d in record.decoys]
    labels.sort(key=lambda x: (x[0].start, x[0].end, x[1]))
    return [f"  {kind:<6} [{s.start}:{s.end}) {s.family}: {json.dumps(record.text[s.start:s.end])}"
            for s, kind in labels]


def cmd_tasks_show(args: argparse.Namespace) -> int:
    task = _task(args)
    public = task.split != "private_eval"
    if args.json:
        data = {"id": task.id, "split": task.split, "split_label": split_label(task.split),
                "system_prompt": task.system_prompt, "prompt": task.prompt,
                "shown": [r.as_dict() for r in task.shown],
                "heldout": [r.as_dict() for r in task.heldout] if public else "hidden (private split)",
                "identity": task.task_data()["identity"], "level": task.level}
        if public:
            data["attributes"] = task.attributes
        print(json.dumps(data, indent=2))
        return 0
    plain = args.plain or not sys.stdout.isatty()
    out: Callable[[str], None]
    rule: Callable[[str], None]
    if plain:
        out = lambda text: print(text)  # noqa: E731
        rule = lambda title: print(f"===== {title} =====")  # noqa: E731
    else:
        console = _console()
        out = lambda text: console.print(text, markup=False)  # noqa: E731
        rule = console.rule
    rule(f"{task.id} — {split_label(task.split)}")
    drawn = "; ".join(f"{k} {v}" for k, v in task.attributes.items() if k != "level") if public else \
        "not shown for a private task"
    out(f"difficulty level {task.level}" + (" (the standard benchmark)" if task.level == 1 else "")
        + f"; drawn: {drawn}")
    out(f"templates: {', '.join(task.templates)}\nsecret families: {', '.join(task.secret_families)}\n"
        f"decoy families: {', '.join(task.decoy_families)}")
    rule("system prompt")
    out(task.system_prompt)
    rule("prompt (shown records)")
    out(task.prompt)
    if not public:
        rule("held-out records are hidden for private_eval")
        return 0
    rule(f"held-out records ({len(task.heldout)}): text verbatim, then each SECRET and DECOY "
         "with its [start:end) span in that text")
    for i, r in enumerate(task.heldout):
        out(f"--- record {i + 1} ({r.template}) ---")
        if plain:
            out(r.text)
        else:
            console.print(_mark(r.text, [(s.start, s.end, "bold red") for s in r.secrets]
                                + [(d.start, d.end, "green") for d in r.decoys]))
        for line in _span_lines(r):
            out(line)
    return 0


def _mark(text: str, spans: list[tuple[int, int, str]]) -> Text:
    from rich.text import Text

    t = Text(text)
    for start, end, style in spans:
        t.stylize(style, start, end)
    return t


def cmd_reply(args: argparse.Namespace) -> int:
    task = _task(args)
    sys.stdout.write(policies.POLICIES[args.policy](task) + "\n")
    return 0


def _other_problems(task: RedactionTask, reply: str, errors: Sequence[RedactionError]) -> list[dict[str, Any]]:
    """Rule problems the score did not reach. A reply that breaks the answer schema is
    rejected before any pattern compiles, so a bad regex in the same reply would only
    show up on the next attempt; listing it now saves that round trip. Advisory: the
    reward is what `score_completion` says."""
    from .scoring.answer import MAX_PATTERN_CHARS, MAX_RULES, _load_object, rule_error
    from .scoring.pattern_guard import Refused, compile_bounded, compile_error, refusal

    if not errors or any(e.code not in ("bad_entry", "unsafe_replacement", "too_many_rules") for e in errors):
        return []
    obj = _load_object(reply)
    if not isinstance(obj, dict) or not isinstance(obj.get("rules"), list):
        return []
    found: list[dict[str, Any]] = []
    deadline = time.perf_counter() + task.budget_s
    for i, rule in enumerate(obj["rules"][:MAX_RULES]):
        if time.perf_counter() > deadline:
            break
        pattern = rule.get("pattern") if isinstance(rule, dict) else None
        if not isinstance(pattern, str) or not 1 <= len(pattern) <= MAX_PATTERN_CHARS:
            continue
        try:
            compile_bounded(pattern)
        except Refused as exc:
            found.append(rule_error("invalid_regex", i, refusal(pattern, exc)).as_dict())
        except Exception as exc:  # noqa: BLE001 - hostile input may reach any corner of regex's compiler
            found.append(rule_error("invalid_regex", i, compile_error(pattern, exc)).as_dict())
    return found


MAX_REPLY_FILE_BYTES = 16 << 20  # any reply the scorer reads: 4,000,000 characters of at most 4 bytes each


def _read_reply(name: str) -> str:
    """The reply text of ``name`` ('-': stdin), bounded: a link to /dev/zero, a FIFO with
    no writer or a sparse file of gigabytes is one clear error, not a hang or a
    MemoryError. (A reply over the scorer's own limit is read and refused by the scorer.)"""
    from .boundary.files import InputFileError, read_bounded

    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_REPLY_FILE_BYTES + 1)
            if len(data) > MAX_REPLY_FILE_BYTES:
                raise InputFileError(f"stdin holds more than {MAX_REPLY_FILE_BYTES:,} bytes")
        else:
            data = read_bounded(Path(name), MAX_REPLY_FILE_BYTES, follow_links=True)
        return data.decode("utf-8")
    except InputFileError as exc:
        raise UsageError(f"cannot read reply file {name}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read reply file {name}: {reason}") from None


def cmd_score(args: argparse.Namespace) -> int:
    from .scoring.answer import reply_notes
    from .scoring.score import score_completion

    task = _task(args)
    reply = _read_reply(args.reply_file)
    s = score_completion(task, reply)
    other = _other_problems(task, reply, s.errors)
    result = {"task": task.id, "split": task.split, "split_label": split_label(task.split),
              "reward": s.reward, "recall": s.recall, "precision": s.precision, "clean": s.clean,
              "valid": s.valid, **s.metrics(), "redaction_errors": [e.as_dict() for e in s.errors],
              "other_problems": other, "notes": reply_notes(reply),
              "secret_families": s.secret_families, "decoy_families": s.decoy_families,
              "secret_classes": s.secret_classes, "decoy_classes": s.decoy_classes}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    console = _console()
    console.rule(f"{task.id} — {split_label(task.split)}")
    for k in ("reward", "recall", "precision", "clean", "valid"):
        console.print(f"{k:>16}: {result[k]:.4f}")
    for k in ("secrets_total", "secrets_removed", "removed_chars", "collateral_chars", "matches"):
        console.print(f"{k:>16}: {result[k]}")
    leaked = [f"{fam} {total - removed} of {total}" for fam, (total, removed) in sorted(s.secret_families.items())
              if removed < total]
    destroyed = [f"{fam} {hit} of {total}" for fam, (total, hit) in sorted(s.decoy_families.items()) if hit]
    console.print(f"{'secrets leaked':>16}: {', '.join(leaked) or 'none'}", markup=False)
    console.print(f"{'decoys damaged':>16}: {', '.join(destroyed) or 'none'}", markup=False)
    for e in s.errors:
        console.print(f"error {e.code}: {e.message}", markup=False)
    for p in other:
        console.print(f"also wrong, not scored (the reply was already invalid): {p['code']}: {p['message']}",
                      markup=False)
    for note in result["notes"]:
        console.print(f"note (the verdict stands): {note}", markup=False)
    problems = len(s.errors) + len(other)
    console.print(f"{task.id} — {split_label(task.split)}: reward {s.reward:.4f} · recall {s.recall:.4f} · "
                  f"precision {s.precision:.4f} · clean {s.clean:.0f} · "
                  + ("valid (no errors)" if s.valid
                     else f"INVALID ({problems} problem{'s' if problems != 1 else ''} above)"),
                  markup=False)
    return 0


def _task_options(p: argparse.ArgumentParser, index_required: bool) -> None:
    p.add_argument("--split", choices=SPLITS, default="dev",
                   help="which split the task comes from (default: dev; private_eval needs "
                        "$REDACTION_PRESSURE_PRIVATE_SEED)")
    p.add_argument("--level", type=int, choices=LEVELS, default=DEFAULT_LEVEL, metavar="L",
                   help=f"difficulty level, one of {', '.join(map(str, LEVELS))} (default: {DEFAULT_LEVEL}, the "
                        "standard benchmark)")
    if index_required:
        p.add_argument("--index", type=int, required=True, metavar="I",
                       help="the task's index in the split (required; dev has 0..63)")
    else:
        p.add_argument("--index", type=int, default=0, metavar="I",
                       help="the task's index in the split (default: 0; dev has 0..63)")


_POLICY_NOTES = {
    "oracle": "the generator's own knowledge of the task's families; scores 1.0",
    "baseline": "a fixed, task-independent rule set like a scanner's default config",
    "induce": "rules learned from the shown records only, as a model should",
    "inaction": "no rules; scores 0.0",
    "first-char": "the exploit that deletes each secret's first character; scores 0.0",
}


def _policies_epilog() -> str:
    return "policies:\n" + "\n".join(f"  {name:<11} {_POLICY_NOTES.get(name, '')}".rstrip()
                                     for name in sorted(policies.POLICIES))


def _policy_option(p: argparse.ArgumentParser, default: str | None) -> None:
    p.epilog = _policies_epilog()
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    names = ", ".join(sorted(policies.POLICIES))
    if default is None:
        p.add_argument("--policy", choices=sorted(policies.POLICIES), required=True, metavar="P",
                       help=f"built-in policy, one of: {names} (required)")
    else:
        p.add_argument("--policy", choices=sorted(policies.POLICIES), default=default, metavar="P",
                       help=f"built-in policy, one of: {names} (default: {default})")


def _jobs(args: argparse.Namespace) -> int:
    """--jobs, checked; when not given, every CPU this process may use."""
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {args.jobs})")
    from .scoring.scan_pool import available_cpus

    return int(args.jobs or available_cpus())


def _check_verify_options(args: argparse.Namespace, has_key: bool) -> None:
    """The options `report` and `compare` share for the `audit verify` they may run and
    the rescoring they do."""
    if args.strict and not has_key:
        raise UsageError("--strict applies to the `audit verify` that --public-key runs; give --public-key")
    _jobs(args)
    for flag, value in (("--max-budget", args.max_budget), ("--max-cpu", args.max_cpu)):
        if not 0 < value < float("inf"):
            raise UsageError(f"{flag} must be a positive number of seconds (got {value:g})")


# What the pages and exports this CLI writes look like: a file that does not is not
# replaced without --force (`boundary.files.replace_refusal`). Not a prefix any HTML file
# or chat JSONL has (a review, 2026-12-03: "<!DOCTYPE html>" replaced a user's page).
_GENERATOR = b'<meta name="generator" content="redaction-pressure">'
_EXPORT_KEYS = frozenset({"messages", "split", "index", "level", "key", "reward"})


_OLDER_PAGE = re.compile(rb"<title>redaction-pressure (?:report|comparison) \xe2\x80\x94 ")  # before the tag


def _a_page(head: bytes) -> bool:
    return head.startswith(b"<!DOCTYPE html>") and (_GENERATOR in head[:1024]
                                                     or _OLDER_PAGE.search(head[:1024]) is not None)


def _an_export(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0]
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and set(first) == _EXPORT_KEYS


def cmd_report(args: argparse.Namespace) -> int:
    from .report import RunError, write_report_checked
    from .report._verdict import NOT_VERIFIED

    if args.public_key and args.verdict:
        raise UsageError("give --public-key (run `audit verify` now) or --verdict (read its --json output), not both")
    _check_verify_options(args, bool(args.public_key))
    run = Path(args.run_dir)
    out = Path(args.out) if args.out else (run if run.is_dir() else run.parent) / "report.html"
    reads = (run, *(Path(p) for p in (args.public_key, args.verdict) if p))
    refusal = replace_refusal(out, reads=reads, ours=_a_page, force=args.force, option="--out")
    if refusal is not None:
        raise UsageError(refusal)
    start = time.perf_counter()
    try:
        path, verification, unreproduced, unchecked, established, unread = write_report_checked(
            run, out, public_key=args.public_key, verdict=args.verdict, full_text=True if args.full_text else None,
            jobs=_jobs(args), max_budget_s=args.max_budget, max_cpu_s=args.max_cpu, strict=args.strict)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        # writing the page fails at its name or its temporary file beside it; a failure at
        # a path the report reads, or anywhere else, names that path
        named = Path(exc.filename) if exc.filename is not None else None
        reading = named is not None and any(named == p or p in named.parents for p in reads)
        writing = named is None or (not reading and named.parent == out.parent)
        raise UsageError(f"cannot write {out}: {exc.strerror if named else exc}" if writing
                         else path_problem(exc)) from None
    failed = bool(args.public_key or args.verdict) and verification.state == NOT_VERIFIED
    verified = bool(args.public_key) and verification.verified
    not_checked = not verified and (unchecked or not established)
    unread = 0 if verified else unread
    _verdict(args, 1 if failed or unreproduced or unread else 3 if not_checked else 0)
    print(printable(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - start:.1f} s"))
    if failed:
        # The page says so too; a script that checks the exit status must see it.
        how = verification.how
        if how.upper().startswith("NOT VERIFIED:"):
            how = how[len("NOT VERIFIED:"):].lstrip()
        print(printable(f"NOT VERIFIED: {how}"), file=sys.stderr)
        return 1
    if unreproduced:
        print(f"NOT REPRODUCED: {unreproduced} episode(s) record a reward this build does not give their reply "
              "(or name a task it cannot rebuild); the page's figures are the run's recorded scores "
              "(`redaction-pressure rescore` lists each difference)", file=sys.stderr)
        return 1
    if unread:
        # Red team, 2026-12-04: `rescore` failed a run with a line it could not read and
        # the report passed it, though the same reader read both.
        print(f"NOT READ: {unread} problem(s) reading the run's traces (a line or entry not read, a copy of a "
              "trace, a number too long to read: the page lists them at the top); `redaction-pressure rescore` "
              "counts each as a difference", file=sys.stderr)
        return 1
    if not_checked:
        print(f"NOT CHECKED: {unchecked} episode(s) were not checked here (beyond --max-budget or --max-cpu, or on "
              "private seeds the report cannot prove); the page says which" if unchecked else
              "NOT CHECKED: the run's split is not established by its commitments and seeds (the page's banner "
              "says why)", file=sys.stderr)
        return 3
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    from .rescore import RescoreError, rescore

    if not 0 < args.max_budget <= 60:
        raise UsageError("--max-budget must be in (0, 60] seconds")
    if not 0 < args.max_cpu < float("inf"):
        raise UsageError(f"--max-cpu must be a positive number of seconds (got {args.max_cpu:g})")
    jobs = _jobs(args)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("rescoring"), BarColumn(), TextColumn("{task.completed} traces"), TimeElapsedColumn(),
                  console=_console(stderr=True), disable=not sys.stderr.isatty(), transient=True) as progress:
        bar = progress.add_task("rescore", total=None)
        try:
            outcome = rescore(Path(args.run_dir), args.max_budget, on_trace=lambda: progress.advance(bar),
                              max_cpu_s=args.max_cpu, jobs=jobs)
        except RescoreError as exc:
            raise UsageError(str(exc)) from None
    code = _verdict(args, outcome.exit_code)
    if args.json:
        print(json.dumps(outcome.as_dict(), indent=2))
        return code
    listed = outcome.differences + outcome.not_rescored
    for line in listed[:MAX_LISTED]:
        print(printable(line))
    total = outcome.difference_count + outcome.not_rescored_count
    if total > MAX_LISTED:
        print(f"... and {total - MAX_LISTED} more (--json lists the first {len(listed)})")
    if outcome.other_builds:
        print(f"note: {outcome.other_builds} trace(s) were recorded by another build of redaction-pressure "
              "(another source digest); a difference may come from that")
    print(printable(outcome.headline()))
    return code


def cmd_compare(args: argparse.Namespace) -> int:
    keys = [Path(k) for k in args.public_key or []]
    if len(keys) > 2:
        raise UsageError("--public-key is given once (both runs) or twice (A's key, then B's)")
    for key in keys:
        if not key.is_file():
            raise UsageError(f"--public-key {key} is not a file")
    pair = (keys[0], keys[-1]) if keys else (None, None)
    _check_verify_options(args, bool(keys))
    html = Path(args.html) if args.html else None
    if html is not None and html.is_dir():
        raise UsageError(f"--html {html} is a directory; --html names the page to write")
    if html is not None:
        refusal = replace_refusal(html, reads=(Path(args.run_a), Path(args.run_b), *keys), ours=_a_page,
                                  force=args.force, option="--html")
        if refusal is not None:
            raise UsageError(refusal)
    from .compare import CompareRefused, compare_runs
    from .report import RunError
    from .results.compare_text import compare_lines

    try:
        done = compare_runs(Path(args.run_a), Path(args.run_b), keys=pair, allow_mismatch=args.allow_mismatch,
                            jobs=_jobs(args), max_budget_s=args.max_budget,
                            max_cpu_s=args.max_cpu, strict=args.strict)
    except (RunError, CompareRefused) as exc:
        raise UsageError(str(exc)) from None
    code = _verdict(args, done.exit_code)
    if html is not None:
        from .report.compare_page import write

        try:
            write(done, html)
        except OSError as exc:
            raise UsageError(f"cannot write {html}: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps(done.as_dict(), indent=2))
    else:
        console = _console()
        lines = compare_lines(done.comparison, (done.described(0), done.described(1)), done.context(),
                              all_classes=args.classes)
        if done.not_checked:
            lines.insert(1, "NOT CHECKED: " + "; ".join(done.not_checked) + ": the figures are the runs' recorded "
                         "rewards (raise --max-budget or --max-cpu, or give the private secret)")
        if done.not_reproduced:
            lines.insert(1, "NOT REPRODUCED: " + "; ".join(done.not_reproduced) + ": the figures are the runs' "
                         "recorded rewards (`redaction-pressure rescore RUN` lists each difference)")
        for line in lines:
            console.print(printable(line), markup=False)
        if html is not None:
            console.print(f"wrote {html}", markup=False)
    return code


def cmd_export(args: argparse.Namespace) -> int:
    if args.split == "private_eval":
        raise UsageError("export writes training data, and the private_eval split is for evaluation only")
    if args.n < 1 or args.start < 0:
        raise UsageError("-n must be at least 1 and --start at least 0")
    if args.start + args.n > PUBLIC[args.split].size:
        raise UsageError(f"the {args.split} split has {PUBLIC[args.split].size} tasks; --start {args.start} "
                         f"-n {args.n} runs past its end")
    jobs = _jobs(args)
    out = Path(args.out) if args.out else None
    if out is None and sys.stdout.isatty():
        raise UsageError("export writes JSONL; give --out FILE or redirect stdout to a file")
    if out is not None:
        if out.is_dir():
            raise UsageError(f"--out {out} is a directory; --out names the JSONL file to write")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the directory of --out {out}: {exc.strerror or exc}") from None
        refusal = replace_refusal(out, ours=_an_export, force=args.force, option="--out")
        if refusal is not None:
            raise UsageError(refusal)
    if args.split == "dev":
        print("redaction-pressure: warning: dev is the evaluation split; a model trained on these lines has "
              "seen its answers, so its dev scores mean nothing", file=sys.stderr)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .export import ExportError, export

    start = time.perf_counter()
    with Progress(TextColumn(f"exporting {args.split} ({args.policy})"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=_console(stderr=True), disable=not sys.stderr.isatty(),
                  transient=True) as progress:
        bar = progress.add_task("export", total=args.n)
        try:
            done = export(args.split, args.policy, args.level, args.start, args.n, out,
                          jobs, on_line=lambda: progress.advance(bar))
        except ExportError as exc:
            print(f"redaction-pressure: error: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            raise UsageError(f"cannot write {out or 'stdout'}: {exc.strerror or exc}") from None
    print(f"wrote {done['examples']} examples ({args.split} {args.start}..{args.start + args.n - 1}, level "
          f"{args.level}, policy {args.policy}; mean reward {done['mean_reward']:.3f}) to {out or 'stdout'} in "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


class _AddressPrinter:
    """What `serve_env` reports the bound address to (it calls ``put``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def put(self, address: str) -> None:
        print(self.text.format(address=address), flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    if not Path(args.recipe).is_file():
        raise UsageError(f"recipe {args.recipe} is not a file (the committed one is configs/train-rl.toml)")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    overrides: dict[str, Any] = {"serve": {}}
    if args.address:
        overrides["serve"]["address"] = args.address
    if args.workers:
        overrides["serve"]["pool"] = {"type": "static", "num_workers": args.workers}
    from functools import partial

    from verifiers.v1.utils.logging import setup_logging

    from .recipe import RecipeError, load_recipe, serve

    try:
        recipe = load_recipe(args.recipe, stage=args.stage, overrides=overrides)
    except RecipeError as exc:
        raise UsageError(str(exc)) from None
    t = recipe.env.taskset
    mix = ", ".join(f"level {k}: {v:g}" for k, v in sorted(t.level_mix.items()))
    printer = _AddressPrinter(f"serving redaction-pressure {t.split} (stage {args.stage}: {mix}) on {{address}}; "
                              "Ctrl-C stops")
    serve(recipe, address_queue=printer, log_setup=partial(setup_logging, "INFO"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="redaction-pressure", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    e = sub.add_parser("eval", help="run a built-in policy over a split; write a run directory; print the scores",
                       description="Runs a built-in policy over a split with no model, scored through verifiers' "
                                   "own path, and writes RUN_DIR/traces.jsonl plus the resolved config "
                                   "(RUN_DIR/configs/resolved/eval.json) that vf-replay and audit seal read.")
    _policy_option(e, "baseline")
    e.add_argument("--split", choices=SPLITS, default="dev",
                   help="split to run (default: dev; private_eval needs $REDACTION_PRESSURE_PRIVATE_SEED)")
    e.add_argument("--level", type=int, choices=LEVELS, default=DEFAULT_LEVEL, metavar="L",
                   help=f"difficulty level, one of {', '.join(map(str, LEVELS))} (default: {DEFAULT_LEVEL}, the "
                        "standard benchmark)")
    e.add_argument("-n", type=int, default=64, metavar="N",
                   help="number of tasks, from index 0 (default: 64, all of dev)")
    e.add_argument("--out", metavar="RUN_DIR",
                   help="run directory (default: runs/SPLIT-POLICY, with -levelL or -mix above level 1, replaced on "
                        "each run; a named one is never replaced without --force)")
    e.add_argument("--force", action="store_true", help="replace the traces in an existing --out (default: off)")
    e.add_argument("--level-mix", metavar="L=W,...",
                   help="a weighted mix of levels instead of --level, e.g. 1=2,2=1: each task's level is drawn "
                        "from the weights by its index alone; the summary reports each level (default: none)")
    e.add_argument("--classes", action="store_true",
                   help="list every class of secrets and decoys, not only those that fit in 25 lines (default: off)")
    e.add_argument("--families", action="store_true",
                   help="also list every family by name, a stream's own invented names included; with --json, "
                        "add the per-family tables (default: off)")
    e.add_argument("--json", action="store_true", help="print the summary as JSON instead of text (default: off)")
    e.set_defaults(fn=cmd_eval)

    t = sub.add_parser("tasks", help="inspect tasks", description="Inspect tasks.")
    tsub = t.add_subparsers(dest="tasks_command", required=True, metavar="SUBCOMMAND")
    show = tsub.add_parser("show", help="show a task's prompt and held-out records with every secret and decoy",
                           description="Shows a task: its system prompt, the prompt (shown records), and the "
                                       "held-out records verbatim, each followed by its SECRET and DECOY spans.")
    _task_options(show, index_required=False)
    show.add_argument("--plain", action="store_true",
                      help="no colour (default: plain whenever stdout is not a terminal)")
    show.add_argument("--json", action="store_true", help="print the task as JSON (default: off)")
    show.set_defaults(fn=cmd_tasks_show)

    r = sub.add_parser("reply", help="print a built-in policy's reply for one task (what score reads)",
                       description="Prints a built-in policy's reply for one task to stdout, e.g. "
                                   "`redaction-pressure reply --policy baseline --index 3 > reply.txt`.")
    _policy_option(r, None)
    _task_options(r, index_required=True)
    r.set_defaults(fn=cmd_reply)

    s = sub.add_parser("score", help="score a reply file against one task",
                       description="Scores a reply against one task's held-out records and lists every "
                                   "problem with its rule number.")
    _task_options(s, index_required=True)
    s.add_argument("--json", action="store_true", help="print the result as JSON (default: off)")
    s.add_argument("reply_file", metavar="REPLY_FILE", help="file holding the reply ('-' reads stdin)")
    s.set_defaults(fn=cmd_score)
    r = sub.add_parser("report", help="write one self-contained HTML page of a run or sealed archive")
    r.add_argument("run_dir", metavar="RUN_DIR", help="run directory, sealed archive, or traces.jsonl")
    r.add_argument("--out", metavar="FILE", help="HTML file to write (default: RUN_DIR/report.html); an existing "
                                                 "file that is not a page is replaced only with --force")
    r.add_argument("--force", action="store_true", help="replace an existing --out that is not a page (never a file "
                                                        "the report reads) (default: off)")
    r.add_argument("--public-key", metavar="PUB", help="archives: run `audit verify` with this pinned key and show its "
                                                       "verdict (default: none, the page says \"not verified\")")
    r.add_argument("--verdict", metavar="FILE", help="archives: read the verdict from this `audit verify --json` "
                                                      "output (default: none)")
    r.add_argument("--strict", action="store_true",
                   help="with --public-key: run `audit verify --strict`, which fails a verification that tolerated a "
                        "4x budget retry or a time-dependent episode (default: off, tolerated and named)")
    r.add_argument("--full-text", action="store_true",
                   help="show every held-out line even in runs of more than 256 episodes (default: off)")
    r.add_argument("--jobs", type=int, metavar="N", help="processes rebuilding tasks (default: the CPUs this "
                                                          "process may use)")
    r.add_argument("--max-budget", type=float, default=DEFAULT_MAX_BUDGET_S, metavar="S",
                   help="the most regex budget a trace is granted when its reply is rescored; traces stating more are "
                        f"shown NOT CHECKED (default: {DEFAULT_MAX_BUDGET_S:g}, the standard budget)")
    r.add_argument("--max-cpu", type=float, default=DEFAULT_MAX_CPU_S, metavar="S",
                   help="the most scan CPU all rescoring may spend; episodes after that are shown NOT CHECKED "
                        f"(default: {DEFAULT_MAX_CPU_S:g})")
    r.set_defaults(fn=cmd_report)

    rs = sub.add_parser("rescore", help="rescore a run's recorded replies with this build; print what differs",
                        description="Rebuilds each task of a run (of `eval` or `vf-eval`, or a sealed archive) and "
                                    "rescores its recorded reply with this build. Prints each difference, then "
                                    "'64/64 rewards reproduced, mean 0.170 ± 0.016'. Reads traces.jsonl as data only: "
                                    "nothing the run names is imported or run. Exit 0 when every reward was "
                                    "reproduced, 1 when one differs or could not be rescored, 3 when none differs "
                                    "but some were NOT CHECKED (beyond --max-budget or --max-cpu; a private task is "
                                    "rebuilt from the seed its trace reveals, and without the secret that seed is "
                                    "not proven the split's): not a pass.")
    rs.add_argument("run_dir", metavar="RUN_DIR", help="run directory, sealed archive, or traces.jsonl")
    rs.add_argument("--max-budget", type=float, default=8.0, metavar="S",
                    help="largest regex budget a trace may ask for, in seconds; traces above it are not "
                         "rescored (default: 8.0, 4x the standard 2.0)")
    rs.add_argument("--max-cpu", type=float, default=DEFAULT_MAX_CPU_S, metavar="S",
                    help="the most scan CPU all rescoring may spend; traces after that are not rescored, NOT "
                         f"CHECKED (exit 3) (default: {DEFAULT_MAX_CPU_S:g})")
    rs.add_argument("--jobs", type=int, metavar="N", help="processes rebuilding tasks and rescoring (default: the "
                                                           "CPUs this process may use)")
    rs.add_argument("--json", action="store_true", help="print the outcome as JSON (default: off)")
    rs.set_defaults(fn=cmd_rescore)

    c = sub.add_parser("compare", help="compare two runs task by task: paired differences with intervals",
                       description="Pairs two runs (run directories, sealed archives or traces files) task by task: "
                                   "B's mean reward minus A's per task, the mean difference with its standard error "
                                   "and 95% intervals, wins/ties/losses, and how each class's leak and damage rates "
                                   "moved. Refuses runs of different splits, levels, task parameters or builds "
                                   "unless --allow-mismatch. Exit 0 when compared, 1 when an archive failed the "
                                   "verification asked for, 2 on usage errors and refused comparisons.")
    c.add_argument("run_a", metavar="RUN_A", help="the baseline: run directory, sealed archive or traces.jsonl")
    c.add_argument("run_b", metavar="RUN_B", help="the contender: run directory, sealed archive or traces.jsonl")
    c.add_argument("--allow-mismatch", action="store_true",
                   help="compare runs of different splits, levels, task parameters or builds anyway; the output "
                        "says what differs (default: off, such runs are refused)")
    c.add_argument("--public-key", action="append", metavar="PUB",
                   help="verify the archives with this pinned key (`audit verify`); give it twice for A's and B's "
                        "keys; both runs must then be sealed archives (default: none, archives are shown NOT "
                        "VERIFIED)")
    c.add_argument("--strict", action="store_true",
                   help="with --public-key: run `audit verify --strict`, which fails a verification that tolerated a "
                        "4x budget retry or a time-dependent episode (default: off, tolerated and named)")
    c.add_argument("--html", metavar="FILE", help="also write the comparison as one self-contained HTML page "
                                                  "(default: none); an existing file that is not a page is "
                                                  "replaced only with --force")
    c.add_argument("--force", action="store_true", help="replace an existing --html that is not a page (never a file "
                                                        "the comparison reads) (default: off)")
    c.add_argument("--classes", action="store_true", help="list every class whose rates moved (default: those that "
                                                          "moved most, as many as fit in 25 lines)")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON (default: off)")
    c.add_argument("--jobs", type=int, metavar="N", help="processes for `audit verify`, or rescoring a run no key "
                                                          "verified (default: the CPUs this process may use)")
    c.add_argument("--max-budget", type=float, default=DEFAULT_MAX_BUDGET_S, metavar="S",
                   help="verification, and rescoring of a run no key verified: the most regex budget a trace "
                        f"may state and be rescored (default: {DEFAULT_MAX_BUDGET_S:g})")
    c.add_argument("--max-cpu", type=float, default=DEFAULT_MAX_CPU_S, metavar="S",
                   help="verification, and rescoring of a run no key verified: the most scan CPU rescoring may "
                        f"spend, per run (default: {DEFAULT_MAX_CPU_S:g})")
    c.set_defaults(fn=cmd_compare)

    x = sub.add_parser("export", help="write (prompt, reply) pairs from a built-in policy as chat JSONL for "
                                      "supervised warm starts",
                       description="Writes one line per task: {\"messages\": [system, user, assistant]} with a "
                                   "built-in policy's reply, and the task's split, index, level, key and the "
                                   "reply's reward (schemas/sft-example-v1.schema.json). The bytes depend on the "
                                   "arguments only, not on --jobs or the machine.")
    x.add_argument("--policy", choices=("oracle", "induce"), default="oracle", metavar="P",
                   help="oracle (the generator's exact rules) or induce (rules learned from the shown records "
                        "alone) (default: oracle)")
    x.add_argument("--split", choices=SPLITS, default="train",
                   help="train or dev (default: train; private_eval is refused)")
    x.add_argument("--level", type=int, choices=LEVELS, default=DEFAULT_LEVEL, metavar="L",
                   help=f"difficulty level, one of {', '.join(map(str, LEVELS))} (default: {DEFAULT_LEVEL})")
    x.add_argument("-n", type=int, default=1000, metavar="N", help="number of tasks (default: 1000)")
    x.add_argument("--start", type=int, default=0, metavar="I", help="index of the first task (default: 0)")
    x.add_argument("--out", metavar="FILE", help="JSONL file to write, replaced only once complete; an existing "
                                                 "file that is not an export is replaced only with --force "
                                                 "(default: stdout, which must not be a terminal)")
    x.add_argument("--force", action="store_true", help="replace an existing --out that is not an export "
                                                        "(default: off)")
    x.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores)")
    x.set_defaults(fn=cmd_export)

    sv = sub.add_parser("serve", help="start the verifiers env servers of a training recipe (configs/train-rl.toml)",
                        description="Serves the environment of a training recipe as verifiers env servers (a "
                                    "pool of worker processes behind one ZMQ address, from its [env] and [serve] "
                                    "blocks) and prints the address a trainer's EnvClient connects to. Runs until "
                                    "Ctrl-C or SIGTERM.")
    sv.add_argument("recipe", metavar="RECIPE", help="the recipe file, e.g. configs/train-rl.toml")
    sv.add_argument("--stage", type=int, default=1, metavar="N",
                    help="curriculum stage whose level mix the taskset carries (default: 1)")
    sv.add_argument("--address", metavar="ADDR", help="ZMQ address to bind (default: the recipe's [serve] address)")
    sv.add_argument("--workers", type=int, metavar="N",
                    help="a static pool of N worker processes (default: the recipe's [serve.pool])")
    sv.set_defaults(fn=cmd_serve)
    return p


def _scan_workers_setting() -> None:
    """A bad ``$REDACTION_PRESSURE_SCAN_WORKERS`` is the user's setting, not a run's
    fault: a usage error before any command reads a run (red team, 2026-12-04: `rescore`
    called a genuine run "0/8 rewards reproduced", `report` printed a traceback)."""
    from .scoring.scan_pool import setting_problem
    problem = setting_problem()
    if problem:
        raise UsageError(problem)


def main(argv: list[str] | None = None) -> int:
    safe_spawned_paths()  # whatever a library spawns for a command never imports from the current directory
    sane_streams()
    args = build_parser().parse_args(argv)
    try:
        _scan_workers_setting()
        code: int = args.fn(args)
        return code
    except UsageError as exc:
        print(f"redaction-pressure: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `... | head` closed the pipe: not an error worth a traceback; a command that
        # had reached a verdict exits with it.
        quiet_stdout()
        status: int = getattr(args, "exit_status", 0)
        return status
    except OSError as exc:
        if exc.errno not in _OUTPUT_FAILURES:
            if exc.filename is None:
                raise
            # A path the command was given that the system refuses to look at (a name
            # too long, a directory on the way it may not search): before, `rescore` and
            # `compare` printed a traceback and exited 1, their code for a difference.
            print(f"redaction-pressure: error: {printable(path_problem(exc))}", file=sys.stderr)
            return 2
        # The output failed (a full disk, /dev/full): one line, and nothing left to flush.
        quiet_stdout()
        print(f"redaction-pressure: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1


def path_problem(exc: OSError) -> str:
    """One line for an OSError about a path: the path and the system's reason."""
    return f"cannot use {exc.filename}: {exc.strerror or exc}"


_OUTPUT_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


if __name__ == "__main__":
    sys.exit(main())
