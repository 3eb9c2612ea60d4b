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
and, first, whatever the verification tolerated: ``VERIFIED — 1 of 64 rewards reproduced
only with a 4x budget ...`` or ``... TIME-DEPENDENT episode(s) ...``, never a plain
VERIFIED then (`--strict` fails such an archive instead). Traces the evaluator's limits
left unrescored make it ``NOT VERIFIED — k of n traces NOT CHECKED`` (exit 3). The JSON
report carries the same line (``verdict_line``). An archive of the 0.1.x releases
(manifest v1) gets one line saying which release verifies it.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from redaction_pressure.contract import describe_evaluated, printable

from ._labels import STANDARD_LEVELS, STANDARD_TASK_PARAMS, describe_levels, describe_params, is_standard
from ._manifest import mean_note
from ._verify import FAILED, INCOMPLETE, PASSED, SKIPPED, V1_MESSAGE, V2_MESSAGE, Report, tolerance_phrases

MAX_HUMAN_DETAILS = 20
_STYLE = {PASSED: ("PASS", "bold green"), FAILED: ("FAIL", "bold red"), SKIPPED: ("SKIP", "yellow"),
          INCOMPLETE: ("NOT CHECKED", "bold yellow")}


def safe(text: object) -> str:
    return printable(text)


def console(file: TextIO | None = None) -> Console:
    file = file or sys.stdout
    return Console(file=file, highlight=False, soft_wrap=False, emoji=False, width=None if file.isatty() else 120)


def render_json(report: Report) -> str:
    return json.dumps(report.as_dict() | {"verdict_line": verdict_line(report)[0]}, indent=2)


def _summary_label(report: Report) -> str:
    """The manifest's label, unless it claims the private split and this verification did
    not derive its seeds: the signer chose the secret, so the label is then a claim."""
    m = report.manifest
    label = safe(m["summary"]["label"]) if m else ""
    seeds = next((c for c in report.checks if c.name == "private-seeds"), None)
    if m and m["split"]["name"] == "private_eval" and (seeds is None or seeds.status != PASSED):
        label = label.replace("private evaluation split", "private evaluation split CLAIMED, UNPROVEN (its seeds "
                              "were not derived: give the private secret with --private-seed-env)", 1)
    return label


def verdict_line(report: Report) -> tuple[str, str]:
    """The one line that says what the verification found, and its style."""
    m = report.manifest
    if report.manifest_v1:
        return f"NOT VERIFIED: this archive was {V1_MESSAGE}.", "bold yellow"
    if report.manifest_v2:
        return f"NOT VERIFIED: this archive was {V2_MESSAGE}.", "bold yellow"
    if report.failed:
        names = ", ".join(c.name for c in report.failed)
        return f"FAILED: {len(report.failed)} check(s) failed ({names}); do not trust this result.", "bold red"
    not_checked = [c.title for c in report.checks if c.not_checked]
    tail = f" ({'; '.join(not_checked)}: not checked)" if not_checked else ""
    if report.coverage:
        tail += f"; {report.coverage['label']}"
    label = _summary_label(report)
    if report.incomplete:
        what = "; ".join(safe(c.summary) for c in report.incomplete)
        return (f"NOT VERIFIED — {what}: raise --max-budget or --max-cpu to check everything — "
                f"{label}{tail}", "bold yellow")
    tolerated = tolerance_phrases(report.budget_extended, report.time_dependent, report.traces,
                                  m["task_params"]["budget_s"]) if m else []
    head = "VERIFIED"
    if m and not report.standard_task_params:
        if not is_standard(m["task_params"]):
            head += f" — NON-STANDARD TASK PARAMETERS ({describe_params(m['task_params'])})"
        if m["levels"] != STANDARD_LEVELS:
            head += f" — {describe_levels(m['levels']).upper()}"
        head += ", NOT THE STANDARD BENCHMARK"
    if m:
        u = m["summary"]["uncertainty"]["reward"]
        tail += f"; mean reward {m['summary']['mean_reward']:.4f}" + (
            f" ± {u['se']:.4f} (95% CI {u['ci95'][0]:.4f}–{u['ci95'][1]:.4f})" if "se" in u else "") + (
            mean_note(m))
    if tolerated:
        return (f"{head} — {'; '.join(tolerated)} (tolerated; --strict refuses it): every check that ran "
                f"passed — {label}{tail}", "bold yellow")
    if head != "VERIFIED":
        return f"{head}: every check that ran passed — {label}{tail}", "bold yellow"
    return f"VERIFIED: every check that ran passed — {label}{tail}", "bold green"


def render_human(report: Report, out: Console) -> None:
    out.print(Text(f"audit verify {safe(report.archive)}", style="bold"))
    out.print(Text(f"pinned key id: {report.pinned_key_id}"))
    m = report.manifest
    if m:
        labels = next((c for c in report.checks if c.name == "split-labels"), None)
        if labels is not None and labels.status == FAILED:
            out.print(Text.assemble("split: ", (f"labelled {safe(m['split']['name'])}", "bold"), " — ",
                                    ("NOT ESTABLISHED: " + safe(labels.summary), "bold red")))
        else:
            out.print(Text.assemble("split: ", (safe(m["split"]["name"]), "bold"), f" — {_summary_label(report)}"))
        out.print(Text.assemble("evaluated: ", (safe(describe_evaluated(m["evaluated"])), "bold")))
        run = m["evaluated"]["run_name"] or "unnamed"
        out.print(Text(f"run: {safe(run)} (id {safe(m['run_id'])})   sealed: {safe(m['created'])} by "
                       f"{safe(m['sealed_by'])}   traces: {m['counts']['traces']} in {m['counts']['episodes']} "
                       f"episodes"))
        if report.coverage:
            style = "" if report.coverage["complete"] else "bold yellow"
            out.print(Text.assemble("coverage: ", (safe(report.coverage["label"]), style)))
        params = f"{describe_params(m['task_params'])}, {describe_levels(m['levels'])}"
        if report.standard_task_params:
            out.print(Text(f"task parameters: {params} (standard)"))
        else:
            out.print(Text.assemble("task parameters: ", (params, "bold"), "  ",
                                    ("NON-STANDARD (the standard benchmark uses "
                                     f"{describe_params(STANDARD_TASK_PARAMS)}, level {STANDARD_LEVELS[0]}): "
                                     "this is not a standard benchmark result", "bold red")))
        if len(m["by_level"]) > 1:
            for lv in m["by_level"]:
                u = lv["summary"]["uncertainty"]["reward"]
                pm = f" ± {u['se']:.4f}" if "se" in u else ""
                out.print(Text(f"  level {lv['level']}: {lv['coverage']['tasks']} tasks, mean reward "
                               f"{lv['summary']['mean_reward']:.4f}{pm}"))
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
        if c.status not in (FAILED, INCOMPLETE) or not c.details:
            continue
        what = "problem(s)" if c.status == FAILED else "line(s), traces NOT CHECKED first"
        out.print(Text(f"{c.title} — {len(c.details)} {what}:", style="bold red" if c.status == FAILED
                       else "bold yellow"))
        for d in c.details[:MAX_HUMAN_DETAILS]:
            out.print(Text(f"  - {safe(d)}"))
        if len(c.details) > MAX_HUMAN_DETAILS:
            out.print(Text(f"  ... and {len(c.details) - MAX_HUMAN_DETAILS} more (use --json to see them all)"))
    line, style = verdict_line(report)
    out.print(Text(line, style=style))
