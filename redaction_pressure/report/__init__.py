"""`redaction-pressure report`: one self-contained HTML page of a run (eval, vf-eval or
a sealed archive) that shows what a reply's rules did, character by character.

The page is rendered by Jinja2 with autoescaping on for every value: record text,
rules and replies are attacker-controlled, and only the template's own markup is
markup. It references nothing outside itself (no scripts at all, inline CSS and SVG,
a Content-Security-Policy that forbids loads), so it opens offline and cannot phone
home; the episode filters are CSS checkboxes.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from markupsafe import Markup

from ..boundary.files import linked_step, replace_file
from ..build.identity import source_digest
from ..build.versions import ENVIRONMENT_VERSION
from ..scoring.allowance import DEFAULT_MAX_BUDGET_S, DEFAULT_MAX_CPU_S, Allowance
from ._runfile import RunError, read_run
from ._verdict import NOT_ASKED, Verification, read_statement, read_verdict_file, run_verify
from ._view import build_view

if TYPE_CHECKING:  # jinja2 is imported on first render
    import jinja2

__all__ = ["RunError", "Verification", "render_report", "render_report_checked", "write_report", "write_report_checked"]

OPEN_RECORDS_UP_TO = 64  # episodes; above that, record lists start folded
FULL_TEXT_UP_TO = 256  # episodes; above that, only the lines with a flaw are shown


_CONTENT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def content(text: str) -> Markup:
    """Escapes ``text`` for element content (never an attribute): there only ``&`` and
    ``<`` can start markup (``>`` is escaped too, for readers). Autoescape would also
    turn every quote into ``&#34;``, a tenth of a record's bytes."""
    return Markup(str(text).translate(_CONTENT))


_CSS_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def css_string(text: str) -> Markup:
    """``text`` as a quoted CSS string for the page's ``<style>``, where HTML escaping
    means nothing (a raw-text element): every character but ASCII letters, digits, ``_``,
    ``.`` and ``-`` becomes a six-digit ``\\hhhhhh`` escape, so the string can end
    neither itself (``"``, ``\\``, a newline) nor the style element (``<``). Spaces are
    escaped too: CSS swallows one whitespace character after an escape."""
    return Markup('"' + "".join(c if c in _CSS_PLAIN else f"\\{ord(c):06x}" for c in str(text)) + '"')


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    import jinja2

    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["content"] = content
    env.filters["css_string"] = css_string
    return env.from_string(files(__package__).joinpath("report.html.j2").read_text(encoding="utf-8"))


def render_report(run_path: Path, *, public_key: Path | None = None, verdict: Path | None = None,
                  full_text: bool | None = None, jobs: int = 1, max_budget_s: float = DEFAULT_MAX_BUDGET_S,
                  max_cpu_s: float = DEFAULT_MAX_CPU_S, strict: bool = False) -> str:
    """The report page of the run at ``run_path`` (`render_report_checked`'s page)."""
    return render_report_checked(run_path, public_key=public_key, verdict=verdict, full_text=full_text, jobs=jobs,
                                 max_budget_s=max_budget_s, max_cpu_s=max_cpu_s, strict=strict)[0]


class Rendered(NamedTuple):
    page: str
    verification: Verification  # the verification the page shows
    unreproduced: int  # episodes whose recorded reward this build does not give (a caller's exit status)
    unchecked: int  # episodes this build did not check (beyond the reader's limits, unproven private seeds)
    split_established: bool  # the traces' commitments and seeds prove one split (a private one never, here)
    unread: int = 0  # lines or entries of the traces the reader could not read (`rescore` counts each a difference)


class Written(NamedTuple):
    path: Path
    verification: Verification
    unreproduced: int
    unchecked: int
    split_established: bool
    unread: int = 0


def render_report_checked(run_path: Path, *, public_key: Path | None = None, verdict: Path | None = None,
                          full_text: bool | None = None, jobs: int = 1, max_budget_s: float = DEFAULT_MAX_BUDGET_S,
                          max_cpu_s: float = DEFAULT_MAX_CPU_S, strict: bool = False) -> Rendered:
    """The report page of the run at ``run_path``, the verification it shows, and how
    many rescored episodes did not reproduce their recorded reward. Raises RunError for a path that
    holds no run, or an unreadable verdict file. ``full_text`` (default: runs of up to
    FULL_TEXT_UP_TO episodes) shows every held-out line; otherwise only lines with a
    leak, destroyed decoy or collateral damage, which keeps a 1,000-episode page under
    10 MB. ``jobs`` > 1 spreads task regeneration of large runs over forked worker
    processes (serially where a process cannot fork safely). Rescoring grants each trace
    at most ``max_budget_s`` of regex budget and the whole page ``max_cpu_s`` of CPU
    (`scoring.allowance`); episodes beyond that are shown NOT CHECKED, with their
    recorded scores and no marks. ``strict`` passes ``--strict`` to `audit verify` (with
    ``public_key``): a tolerated budget retry or time-dependent episode fails it."""
    run = read_run(Path(run_path))
    allowance = Allowance(max_budget_s, max_cpu_s, shared=jobs > 1)
    verification: Verification = NOT_ASKED
    if not run.archive and (public_key is not None or verdict is not None):
        raise RunError(f"{run.path} is not a sealed archive (no manifest.toml or manifest.dsse.json): "
                       "--public-key and --verdict apply to archives only")
    if run.archive:
        if public_key is not None:
            verification = run_verify(run.path, Path(public_key), read_statement, run.shown, jobs=jobs,
                                      max_budget_s=max_budget_s, max_cpu_s=max_cpu_s, strict=strict)
            if not verification.verified:
                # Red team, 2026-12-03: traces swapped into an archive spent the whole
                # --max-cpu being rescored after `audit verify` had refused them.
                allowance.withheld = ("the archive did not verify with the key given (--public-key), and its traces "
                                      "are not rescored")
        elif verdict is not None:
            verification = read_verdict_file(Path(verdict), read_statement(run.path), run.shown)
    if full_text is None:
        full_text = len(run.traces) <= FULL_TEXT_UP_TO
    view = build_view(run, verification, full_text, jobs, allowance)
    verification = verification.as_shown(len(run.traces), view["counted"], run.problem_count)
    view["verification"] = verification
    html = _template().render(v=view, version=ENVIRONMENT_VERSION, installed_digest=source_digest(),
                              open_records=len(view["episodes"]) <= OPEN_RECORDS_UP_TO)
    return Rendered(html, verification, view["unreproduced"], view["unchecked"], view["split_established"],
                    run.problem_count)


def write_report(run_path: Path, out: Path, **kw: Any) -> Path:
    """Renders and writes the page (`write_report_checked`)."""
    return write_report_checked(run_path, out, **kw)[0]


def write_report_checked(run_path: Path, out: Path, **kw: Any) -> Written:
    """Renders and writes the page atomically (a half-written page never replaces a good
    one) and never through a link (`boundary.files.replace_file`: the run's directory,
    where the page goes by default, is someone else's); returns where, and the
    verification the page shows (a caller's exit status follows it)."""
    out = Path(out)
    _refuse_linked_out(Path(run_path), out)
    html, verification, unreproduced, unchecked, established, unread = render_report_checked(run_path, **kw)
    _refuse_linked_out(Path(run_path), out)  # again: rendering can take seconds
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_file(out, html.encode("utf-8"))
    return Written(out, verification, unreproduced, unchecked, established, unread)


def _refuse_linked_out(run_path: Path, out: Path) -> None:
    link = linked_step(run_path if run_path.is_dir() else run_path.parent, out)
    if link is not None:
        raise RunError(f"--out {out} goes through {link}, a symbolic link inside the run: "
                       "nothing is written through links; write the page elsewhere")
