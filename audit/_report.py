"""Renders a verification report for people (a rich table) or programs (JSON).

Archive contents are hostile text: everything shown is passed as plain ``Text`` (no
rich markup is interpreted) after control characters are escaped, so an archive
cannot restyle the report or send escape sequences to the evaluator's terminal.

The task parameters are always shown. With non-standard parameters the header says so
in bold and the verdict line reads ``VERIFIED — NON-STANDARD TASK PARAMETERS ...``: the
result is genuine for those parameters but is not the standard benchmark (the signed
label says the same).

The verdict line always says the coverage, recomputed from the traces
(``complete: all 64 dev tasks, 1 rollout each`` or ``PARTIAL: 3 of 64 dev tasks, ...``),
and how many episodes are time-dependent; an archive of the 0.1.x releases (manifest
v1) gets one line saying which release verifies it.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ._labels import STANDARD_TASK_PARAMS, describe_params
from ._verify import FAILED, PASSED, SKIPPED, V1_MESSAGE, Report

MAX_HUMAN_DETAILS = 20
_STYLE = {PASSED: ("PASS", "bold green"), FAILED: ("FAIL", "bold red"), SKIPPED: ("SKIP", "yellow")}


def safe(text: object) -> str:
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)


def console(file: TextIO | None = None) -> Console:
    file = file or sys.stdout
    return Console(file=file, highlight=False, soft_wrap=False, width=None if file.isatty() else 120)


def render_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2)


def render_human(report: Report, out: Console) -> None:
    out.print(Text(f"audit verify {safe(report.archive)}", style="bold"))
    out.print(Text(f"pinned key id: {report.pinned_key_id}"))
    m = report.manifest
    if m:
        out.print(Text.assemble("split: ", (safe(m["split"]["name"]), "bold"), f" — {safe(m['summary']['label'])}"))
        out.print(Text(f"run: {safe(m['run_id'])}   sealed: {safe(m['created'])}   "
                       f"traces: {m['counts']['traces']} in {m['counts']['episodes']} episodes"))
        if report.coverage:
            style = "" if report.coverage["complete"] else "bold yellow"
            out.print(Text.assemble("coverage: ", (safe(report.coverage["label"]), style)))
        params = describe_params(m["task_params"])
        if report.standard_task_params:
            out.print(Text(f"task parameters: {params} (standard)"))
        else:
            out.print(Text.assemble("task parameters: ", (params, "bold"), "  ",
                                    ("NON-STANDARD (the standard benchmark uses "
                                     f"{describe_params(STANDARD_TASK_PARAMS)}): "
                                     "this is not a standard benchmark result", "bold red")))
    table = Table(show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("result", overflow="fold")
    for c in report.checks:
        label, style = _STYLE[c.status]
        if c.not_checked:
            label, style = "NOT CHECKED", "bold yellow"
        table.add_row(Text(c.title), Text(label, style=style), Text(safe(c.summary)))
    out.print(table)
    for c in report.checks:
        if c.status != FAILED or not c.details:
            continue
        out.print(Text(f"{c.title} — {len(c.details)} problem(s):", style="bold red"))
        for d in c.details[:MAX_HUMAN_DETAILS]:
            out.print(Text(f"  - {safe(d)}"))
        if len(c.details) > MAX_HUMAN_DETAILS:
            out.print(Text(f"  ... and {len(c.details) - MAX_HUMAN_DETAILS} more (use --json to see them all)"))
    if report.manifest_v1:
        out.print(Text(f"NOT VERIFIED: this archive was {V1_MESSAGE}.", style="bold yellow"))
        return
    if report.failed:
        names = ", ".join(c.name for c in report.failed)
        out.print(Text(f"FAILED: {len(report.failed)} check(s) failed ({names}); do not trust this result.",
                       style="bold red"))
    else:
        not_checked = [c.title for c in report.checks if c.not_checked]
        tail = f" ({'; '.join(not_checked)}: not checked)" if not_checked else ""
        if report.coverage:
            tail += f"; {report.coverage['label']}"
        if report.time_dependent:
            tail += (f"; {report.time_dependent} TIME-DEPENDENT episode(s): recorded time-outs (reward 0) that this "
                     f"machine finishes")
        label = m["summary"]["label"] if m else ""
        if m and not report.standard_task_params:
            out.print(Text(f"VERIFIED — NON-STANDARD TASK PARAMETERS ({describe_params(m['task_params'])}), NOT THE "
                           f"STANDARD BENCHMARK: every check that ran passed — {safe(label)}{tail}",
                           style="bold yellow"))
        else:
            out.print(Text(f"VERIFIED: every check that ran passed — {safe(label)}{tail}", style="bold green"))
