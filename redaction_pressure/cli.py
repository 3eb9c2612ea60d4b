"""The `redaction-pressure` command: eval (the embedded default job), tasks show, score.

Usage errors exit 2 with a one-line reason; `eval` and `score` exit 0 when they ran.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import policies
from ._splits import PUBLIC, SPLITS, PrivateSeedError, read_private_secret
from ._summary import split_label, summarize


class UsageError(Exception):
    pass


def _console():
    from rich.console import Console

    return Console(stderr=False, highlight=False)


def _task(args):
    from ._task import load_task

    try:
        return load_task(args.split, args.index)
    except (IndexError, ValueError, TypeError, PrivateSeedError) as exc:
        raise UsageError(str(exc)) from None


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _print_summary(summary: dict, run_path: Path, elapsed: float, policy: str) -> None:
    from rich.table import Table

    console = _console()
    console.print(f"[bold]redaction-pressure eval — {summary['split_label']}[/]", soft_wrap=True)
    head = Table()
    head.add_column("metric")
    head.add_column("value", justify="right")
    head.add_row("policy", policy)
    head.add_row("traces", str(summary["traces"]))
    head.add_row("mean reward", f"{summary['mean_reward']:.3f}")
    head.add_row("mean recall", f"{summary['mean_recall']:.3f}")
    head.add_row("mean precision", f"{summary['mean_precision']:.3f}")
    head.add_row("clean-gate rate", f"{summary['clean_rate']:.3f}")
    head.add_row("invalid episodes", str(summary["invalid"]) + (f"  {summary['errors']}" if summary["errors"] else ""))
    console.print(head)
    fam = Table(title="secret families (held-out records)", title_justify="left")
    for col, just in (("family", "left"), ("labelled", "right"), ("removed", "right"), ("leaked", "right")):
        fam.add_column(col, justify=just)
    for name, v in sorted(summary["secret_families"].items(), key=lambda kv: -kv[1]["leaked"]):
        style = "red" if v["leaked"] else None
        fam.add_row(name, str(v["labelled"]), _pct(v["removed"], v["labelled"]), str(v["leaked"]), style=style)
    console.print(fam)
    dec = Table(title="decoy families (must survive)", title_justify="left")
    for col, just in (("family", "left"), ("present", "right"), ("destroyed", "right")):
        dec.add_column(col, justify=just)
    for name, v in sorted(summary["decoy_families"].items(), key=lambda kv: -kv[1]["destroyed"]):
        dec.add_row(name, str(v["present"]), f"{v['destroyed']} ({_pct(v['destroyed'], v['present'])})",
                    style="red" if v["destroyed"] else None)
    console.print(dec)
    console.print(f"wrote {run_path} in {elapsed:.1f} s — seal it with: audit seal {run_path.parent} "
                  f"--key KEY.pem --out ARCHIVE_DIR", soft_wrap=True)


def cmd_eval(args) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if args.n < 1:
        raise UsageError("-n must be at least 1")
    if args.split == "private_eval":
        try:
            read_private_secret()
        except PrivateSeedError as exc:
            raise UsageError(str(exc)) from None
    elif args.n > PUBLIC[args.split].size:
        raise UsageError(f"the {args.split} split has {PUBLIC[args.split].size} tasks; -n {args.n} is too many")
    out = Path(args.out or f"runs/{args.split}-{args.policy}")
    if args.out and (out / "traces.jsonl").exists() and not args.force:
        # The default run directory is ours to replace; one the user named is not.
        raise UsageError(f"{out}/traces.jsonl exists; pass --force to overwrite or choose another --out")
    start = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=args.json or not sys.stdout.isatty(), transient=True) as progress:
        bar = progress.add_task(f"loading verifiers, then scoring {args.split}", total=args.n)
        from ._run import read_traces, run_policy
        path = run_policy(args.split, args.policy, args.n, out, on_done=lambda: progress.advance(bar))
    summary = summarize(read_traces(path)) | {"policy": args.policy, "run_dir": str(out)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(summary, path, time.perf_counter() - start, args.policy)
    return 0


def _mark(text: str, spans: list[tuple[int, int, str]]):
    from rich.text import Text

    t = Text(text)
    for start, end, style in spans:
        t.stylize(style, start, end)
    return t


def cmd_tasks_show(args) -> int:
    task = _task(args)
    public = task.split != "private_eval"
    if args.json:
        data = {"id": task.id, "split": task.split, "split_label": split_label(task.split),
                "system_prompt": task.system_prompt, "prompt": task.prompt,
                "shown": [r.as_dict() for r in task.shown],
                "heldout": [r.as_dict() for r in task.heldout] if public else "hidden (private split)",
                "identity": task.task_data()["identity"]}
        print(json.dumps(data, indent=2))
        return 0
    console = _console()
    console.rule(f"{task.id} — {split_label(task.split)}")
    console.print(f"templates: {', '.join(task.templates)}\nsecret families: {', '.join(task.secret_families)}\n"
                  f"decoy families: {', '.join(task.decoy_families)}")
    console.rule("system prompt")
    console.print(task.system_prompt, markup=False)
    console.rule("prompt (shown records)")
    console.print(task.prompt, markup=False)
    if not public:
        console.rule("held-out records are hidden for private_eval")
        return 0
    console.rule(f"held-out records ({len(task.heldout)}): [red]secret[/] [green]decoy[/]")
    for i, r in enumerate(task.heldout):
        console.print(f"[bold]record {i + 1} ({r.template})[/]")
        console.print(_mark(r.text, [(s.start, s.end, "bold red") for s in r.secrets]
                            + [(d.start, d.end, "green") for d in r.decoys]))
    return 0


def cmd_score(args) -> int:
    from ._scoring import score_completion

    task = _task(args)
    try:
        reply = sys.stdin.read() if args.reply_file == "-" else Path(args.reply_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read reply file {args.reply_file}: {exc}") from None
    s = score_completion(task, reply)
    result = {"task": task.id, "split": task.split, "split_label": split_label(task.split),
              "reward": s.reward, "recall": s.recall, "precision": s.precision, "clean": s.clean,
              "valid": s.valid, **s.metrics(), "redaction_errors": [e.as_dict() for e in s.errors],
              "secret_families": s.secret_families, "decoy_families": s.decoy_families}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    console = _console()
    console.rule(f"{task.id} — {split_label(task.split)}")
    for k in ("reward", "recall", "precision", "clean", "valid"):
        console.print(f"{k:>16}: {result[k]:.4f}")
    for k in ("secrets_total", "secrets_removed", "removed_chars", "collateral_chars", "matches"):
        console.print(f"{k:>16}: {result[k]}")
    for e in s.errors:
        where = f" (rule {e.rule})" if e.rule is not None else ""
        console.print(f"[red]error {e.code}{where}:[/] {e.message}", markup=True, highlight=False)
    return 0


def cmd_report(args) -> int:
    import os

    from .report import RunError, write_report

    if args.public_key and args.verdict:
        raise UsageError("give --public-key (run `audit verify` now) or --verdict (read its --json output), not both")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    run = Path(args.run_dir)
    out = Path(args.out) if args.out else (run.parent if run.is_file() else run) / "report.html"
    start = time.perf_counter()
    try:
        path = write_report(run, out, public_key=args.public_key, verdict=args.verdict,
                            full_text=True if args.full_text else None, jobs=args.jobs or os.cpu_count() or 1)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc}") from None
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - start:.1f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="redaction-pressure", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("eval", help="run a built-in policy over a split and write traces.jsonl")
    e.add_argument("--policy", choices=sorted(policies.POLICIES), default="baseline")
    e.add_argument("--split", choices=SPLITS, default="dev")
    e.add_argument("-n", type=int, default=64, help="number of tasks (default 64: all of dev)")
    e.add_argument("--out", help="run directory (default runs/SPLIT-POLICY, replaced on each run)")
    e.add_argument("--force", action="store_true", help="overwrite an existing run directory's traces")
    e.add_argument("--json", action="store_true", help="print the summary as JSON")
    e.set_defaults(fn=cmd_eval)
    t = sub.add_parser("tasks", help="inspect tasks")
    tsub = t.add_subparsers(dest="tasks_command", required=True)
    show = tsub.add_parser("show", help="show a task's prompt and held-out records")
    show.add_argument("--split", choices=SPLITS, default="dev")
    show.add_argument("--index", type=int, default=0)
    show.add_argument("--json", action="store_true")
    show.set_defaults(fn=cmd_tasks_show)
    s = sub.add_parser("score", help="score a reply file against a task ('-' reads stdin)")
    s.add_argument("--split", choices=SPLITS, default="dev")
    s.add_argument("--index", type=int, default=0)
    s.add_argument("--json", action="store_true")
    s.add_argument("reply_file")
    s.set_defaults(fn=cmd_score)
    r = sub.add_parser("report", help="write one self-contained HTML page of a run or sealed archive")
    r.add_argument("run_dir", metavar="RUN_DIR", help="run directory, sealed archive, or traces.jsonl")
    r.add_argument("--out", help="HTML file to write (default RUN_DIR/report.html)")
    r.add_argument("--public-key", help="archives: run `audit verify` with this pinned key and show its verdict")
    r.add_argument("--verdict", help="archives: read the verdict from this `audit verify --json` output")
    r.add_argument("--full-text", action="store_true",
                   help="show every held-out line even in runs of more than 256 episodes")
    r.add_argument("--jobs", type=int, help="processes rebuilding tasks (default: all cores)")
    r.set_defaults(fn=cmd_report)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except UsageError as exc:
        print(f"redaction-pressure: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
