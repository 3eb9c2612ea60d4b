"""The HTML page of `compare --html`: self-contained like the run report (no scripts, no
network, a Content-Security-Policy that forbids every load), rendered by Jinja2 with
autoescape on, since every name and path on it comes from the runs compared."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..boundary.files import replace_file
from ..build.versions import ENVIRONMENT_VERSION
from ..results.recorded import METRICS
from ..results.stats import METHOD, Estimate
from ._view import printable

if TYPE_CHECKING:
    import jinja2

    from ..compare import Compared


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    import jinja2

    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.from_string(files(__package__).joinpath("compare.html.j2").read_text(encoding="utf-8"))


def _pm(e: Estimate, signed: bool = False) -> str:
    mean = f"{e.mean:+.3f}" if signed else f"{e.mean:.3f}"
    return mean + (f" ± {e.se:.3f}" if e.se is not None else "")


def _pair(p: tuple[float, float] | None) -> str:
    return "—" if p is None else f"{p[0]:+.3f} to {p[1]:+.3f}"


def _rate(r: float | None) -> str:
    return "—" if r is None else f"{100 * r:.0f}%"


def _dir(x: float | None, better_when_lower: bool) -> str:
    if not x:
        return ""
    return "up" if (x < 0) == better_when_lower else "down"


def view(compared: Compared) -> dict[str, Any]:
    c = compared.comparison
    runs = []
    for k, name in ((0, "A"), (1, "B")):
        run, v = compared.runs[k], compared.verifications[k]
        runs.append({"name": name, "path": printable(run.path, 400), "archive": run.archive,
                     "verified": bool(v and v.verified), "state": printable(compared.run_state(k), 800),
                     "evaluated": printable(compared.described(k).rsplit(" — ", 1)[-1], 600)})
    tables = []
    for title, rows in (("Secrets leaked, by class (leak rate)", c.secret_classes),
                        ("Decoys destroyed, by class (damage rate)", c.decoy_classes)):
        tables.append({"title": title, "rows": [
            {"name": printable(r["class"], 80), "a": f"{r['a_bad']} of {r['a_total']}", "a_rate": _rate(r["a_rate"]),
             "b": f"{r['b_bad']} of {r['b_total']}", "b_rate": _rate(r["b_rate"]),
             "change": "—" if r["change_pts"] is None else f"{r['change_pts']:+.0f} pts",
             "dir": _dir(r["change_pts"], True)} for r in rows]})
    return {
        "headline": c.headline(), "mismatches": [printable(m, 600) for m in c.mismatches],
        "not_reproduced": [printable(m, 600) for m in compared.not_reproduced],
        "not_checked": [printable(m, 600) for m in compared.not_checked],
        "context": printable(compared.context(), 600), "runs": runs, "paired": len(c.paired),
        "only_a": c.only_a, "only_b": c.only_b,
        "metrics": [{"name": m, "a": _pm(c.a_est[m]), "b": _pm(c.b_est[m]), "diff": _pm(c.diff[m], True),
                     "ci": _pair(c.diff[m].ci95), "boot": _pair(c.diff[m].bootstrap95)} for m in METRICS],
        "wins": c.wins, "ties": c.ties, "losses": c.losses, "by_level": c.by_level,
        "method": METHOD,
        "class_tables": tables,
        "tasks": [{"index": t["index"], "level": t["level"], "a": f"{t['a_reward']:.3f}", "b": f"{t['b_reward']:.3f}",
                   "d": f"{t['b_minus_a']:+.3f}", "dir": _dir(t["b_minus_a"], False)} for t in c.tasks],
    }


def render(compared: Compared) -> str:
    return _template().render(v=view(compared), version=ENVIRONMENT_VERSION)


def write(compared: Compared, out: Path) -> Path:
    """Writes the page atomically, never through a link (`boundary.files.replace_file`)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_file(out, render(compared).encode("utf-8"))
    return out
