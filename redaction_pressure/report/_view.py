"""Turns a run's traces into the plain data the page template shows.

Scores on the page are the recorded ones (what the run claims); the character marks
come from this build's rescoring (`_marks`), and where the two disagree the episode
says so. Rescoring spends only what the reader grants (`scoring.allowance`): an episode
whose trace states a larger budget, or that comes after the CPU granted is spent, is
shown NOT CHECKED, with its recorded scores and no marks. The split shown is the one
the traces' commitments and seeds prove (`task.splits.prove_split`), never their label
alone; a label that disagrees is said loudly. Every string taken from a trace is made
printable first (`printable`): the template escapes HTML, this removes control, bidi
and surrogate characters that could garble or spoof what a reader sees.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..boundary.episodes import failed
from ..boundary.launch import fork_context
from ..boundary.terminal import printable as shown
from ..build.identity import build_identity
from ..results.classes import DECOY_CLASSES, SECRET_CLASSES, add_tallies, trace_tallies
from ..results.coverage import coverage_of, ranges
from ..results.evaluated import describe as describe_evaluated
from ..results.evaluated import evaluated_of
from ..results.labels import disagreement, label_problems
from ..results.recorded import METRICS, count_of, number_in, score_copies
from ..results.stats import METHOD, estimates, even, spread
from ..scoring.allowance import Allowance
from ..scoring.answer import parse_reply
from ..scoring.reward import WEIGHTS
from ..scoring.scanner import DEFAULT_BUDGET_S
from ..scoring.summary import MEAN_OVER_TASKS, split_label
from ..task.splits import prove_split
from ..task.tasks import DEFAULT_LEVEL, DEFAULT_N_EVAL, DEFAULT_N_SHOWN
from . import _marks

if TYPE_CHECKING:
    from ..task.tasks import RedactionTask
    from ._runfile import Run
    from ._verdict import Verification

# A trace as read from traces.jsonl, and the plain data the page template reads.
JSON = dict[str, Any]

HIST_BINS = 20
MAX_BUDGET_STATED = 1e6  # seconds: a budget beyond this is no number at all (the builder's own cap is lower)
MAX_REPLY_SHOWN = 4000
MAX_MESSAGE = 300
STANDARD_PARAMS = {"n_shown": DEFAULT_N_SHOWN, "n_eval": DEFAULT_N_EVAL, "budget_s": DEFAULT_BUDGET_S,
                   "level": DEFAULT_LEVEL}
PRIVATE_UNPROVEN_LABEL = "private_eval claimed, UNPROVEN: seed derivation not checked"
PRIVATE_UNPROVEN_WARNING = (
    "PRIVATE LABEL UNPROVEN (seed derivation not checked): the traces carry a private commitment, but nothing here "
    "derives their seeds from the committed secret (the report never reads it), and anyone can invent a private "
    "commitment and seeds. These may be scores of any split; only `audit verify --private-seed-env` checks the "
    "seeds.")
BUILD_KEYS = ("environment_version", "corpus_version", "reward_schema_version", "source_digest",
              "source_digest_algorithm", "regex_version")


def printable(value: object, limit: int | None = None) -> str:
    s = value if isinstance(value, str) else str(value)
    if limit is not None and len(s) > limit:
        s = s[:limit] + f"… [{len(s) - limit} more characters]"
    return shown(s, keep="\n\t")


def _dict(value: object) -> JSON:
    return value if isinstance(value, dict) else {}


def _count(value: object, default: float | None = None) -> float | None:
    """A recorded count (`results.recorded.count_of`), else ``default``."""
    found = count_of(value)
    return default if found is None else found


def recorded_reply(trace: JSON) -> str:
    """The content of the last node with ``sampled: true`` ("" if none), list content
    joined from its parts' text, as the taskset adapter reads it."""
    nodes = trace.get("nodes")
    replies = [n.get("message") for n in nodes if isinstance(n, dict) and n.get("sampled") is True] \
        if isinstance(nodes, list) else []
    content = _dict(replies[-1]).get("content") if replies else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _scores(trace: JSON) -> JSON:
    """The recorded scores the page shows and sums: info.redaction's where recorded, else
    rewards' (`results.recorded.score_copies`). A trace whose two copies disagree, or
    that records a score that is not a number in [0, 1], has no score the page trusts:
    all four are None (shown as —, left out of every figure) and ``distrust`` says why."""
    info = _dict(trace.get("info"))
    red = _dict(info.get("redaction"))
    metrics = _dict(trace.get("metrics"))
    copies = score_copies(trace)
    distrust = copies.distrust() or disagreement(trace)
    failure = _failure(trace)
    out: JSON = dict.fromkeys(METRICS) if distrust or failure else copies.best()
    out["distrust"], out["failed"] = distrust, failure
    out["valid"] = _count(red.get("valid"), _count(metrics.get("valid")))
    if out["valid"] is not None and out["valid"] > 1:
        out["valid"] = None
    for name in ("secrets_total", "secrets_removed", "removed_chars", "collateral_chars", "matches"):
        out[name] = _count(red.get(name), _count(metrics.get(name)))
    errors = info.get("redaction_errors")
    out["errors"] = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    out["secret_classes"] = trace_tallies(trace, SECRET_CLASSES)
    out["decoy_classes"] = trace_tallies(trace, DECOY_CLASSES)
    if failure:
        for name in ("valid", "secrets_total", "secrets_removed", "removed_chars", "collateral_chars", "matches"):
            out[name] = None
        out["secret_classes"], out["decoy_classes"], out["errors"] = {}, {}, []
    return out


def _failure(trace: JSON) -> str | None:
    """``type: message`` of a failed rollout (marked failed itself, or in an Episode
    marked failed: `boundary.episodes`), else None. What it records is not counted, as
    `rescore`, `compare` and `audit seal` do not count it."""
    if not failed(trace):
        return None
    errors = trace.get("errors")
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    kind, message = first.get("type"), first.get("message")
    text = kind if isinstance(kind, str) else "failed (no error recorded)"
    return text + (f": {message}" if isinstance(message, str) and message else "")


def _error(e: JSON) -> dict[str, str]:
    return {"code": printable(e.get("code"), 60), "message": printable(e.get("message", ""), MAX_MESSAGE)}


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _episode(n: int, trace: JSON, rollout: int, full_text: bool = True, allowance: Allowance | None = None) -> JSON:
    """An episode's view: its marks, then `rescore`'s verdict on it (the task its marks
    built is reused)."""
    grant = allowance or Allowance()
    ep, marked = _shown(n, trace, rollout, full_text, grant)
    ep["status"] = _judge(n, trace, grant, marked)
    return ep


def _shown(n: int, trace: JSON, rollout: int, full_text: bool, grant: Allowance) -> tuple[JSON, Any]:
    """The episode's view with its marks, and (task, scorer's verdict) when the marks
    rescored its reply (None when they did not)."""
    env = _dict(_dict(trace.get("info")).get("environment"))
    s = _scores(trace)
    reply = recorded_reply(trace)
    leak = not s["failed"] and (s["secrets_total"] is None or s["secrets_removed"] is None
                                or s["secrets_removed"] < s["secrets_total"])
    ep: JSON = {
        "n": n, "task_id": printable(env.get("task_id") or _dict(_dict(trace.get("task")).get("data")).get("id")
                                     or f"episode {n}", 80),
        "rollout": rollout, "scores": s, "fmt": {k: _fmt(s[k]) for k in ("reward", *WEIGHTS)},
        "leak": leak, "coll": bool(s["collateral_chars"]), "err": bool(s["errors"]), "failed": bool(s["failed"]),
        "episode_errors": [_error(e) for e in s["errors"] if not isinstance(e.get("rule"), int)],
        "rules": [], "reply": None, "notes": [], "records": [], "unchecked": None, "unreproduced": False,
        "marks_note": None,  # the marks' reward where it is not the recorded one (`_judged` says why)
    }
    marked = None
    if s["failed"]:
        ep["notes"].append(f"FAILED ROLLOUT ({printable(s['failed'], 600)}): verifiers counts it failed (its resume "
                           "runs it again), so whatever it records is not counted in the figures above.")
    elif s["distrust"]:
        ep["notes"].append(f"NOT TRUSTED: {printable(s['distrust'], 600)}. Neither copy is shown or counted in the "
                           "figures above.")
    rules, parse_errors = parse_reply(reply)
    rule_errors: defaultdict[int, list[dict[str, str]]] = defaultdict(list)
    for e in s["errors"]:
        if isinstance(e.get("rule"), int) and not isinstance(e.get("rule"), bool):
            rule_errors[e["rule"]].append(_error(e))
    if parse_errors or not rules:
        ep["reply"] = printable(reply, MAX_REPLY_SHOWN)
    budget = number_in(_dict(env.get("task_params")).get("budget_s"), 0, MAX_BUDGET_STATED)
    refusal = grant.budget_refusal(budget) if budget is not None else grant.cpu_refusal()
    task: RedactionTask | None = None
    removal = None
    if refusal is not None:
        ep["unchecked"] = refusal
        ep["notes"].append(f"NOT CHECKED: this reply was not rescored, because {refusal}. The scores shown are "
                           "the recorded ones; no marks.")
    else:
        with grant.charging(in_process=True):
            try:
                task = _marks.task_for(trace)
            except _marks.NotRegenerated as exc:
                ep["notes"].append(f"Held-out records not shown: {exc}.")
            except (ValueError, TypeError, IndexError, OverflowError, RecursionError) as exc:
                ep["notes"].append(f"Held-out records not shown: the task could not be rebuilt "
                                   f"({type(exc).__name__}).")
            removal = _marks.removal(task, reply) if task is not None else None
            if task is not None and removal is not None and removal.score is not None:
                marked = (task, removal.score)
    counts = removal.rule_matches if removal else None
    for i, rule in enumerate(rules):
        ep["rules"].append({"n": i + 1, "pattern": printable(rule.pattern), "replacement": printable(rule.replacement),
                            "matches": counts[i] if counts else None, "errors": rule_errors.pop(i, [])})
    for i, errs in sorted(rule_errors.items()):  # errors naming a rule the reply does not parse into
        ep["episode_errors"] += [dict(e, message=f"(rule {i + 1}) {e['message']}") for e in errs]
    if removal is None or task is None:  # the one implies the other
        return ep, marked
    if removal.outcome.reward != s["reward"] and not s["failed"]:
        ep["marks_note"] = (f"This build rescores the reply to reward {removal.outcome.reward:.4f}; the run recorded "
                            f"{_fmt(s['reward'], 4)}. The marks below show this build's rescoring.")
    if removal.errors and not s["errors"]:
        ep["episode_errors"] += [_error(e.as_dict()) for e in removal.errors]
    for i, (record, gone) in enumerate(zip(task.heldout, removal.removed, strict=False)):
        segs, leaked, destroyed, collateral = _marks.segments(record, gone)
        rec = {"i": i + 1, "template": record.template, "segs": segs, "secrets": len(record.secrets),
               "leaked": leaked, "destroyed": destroyed, "collateral": collateral, "lines": None, "omitted": 0}
        if not full_text:
            rec["lines"], rec["omitted"] = _marks.flawed_lines(segs)
        ep["records"].append(rec)
    return ep, marked


def _judge(n: int, trace: JSON, grant: Allowance, marked: tuple[RedactionTask, Any] | None) -> str | None:
    """`rescore`'s verdict on the trace (the one definition of "reproduced": the task
    rebuilt from what the trace reveals, its prompt matched, the reward, parts and errors
    compared, a time-out retried with the budget extended 4x), under the reader's
    allowance; None when the page does not judge (a verified or refused archive).
    Red team, 2026-12-04: a forged run whose prompts were edited by a byte could not be
    rebuilt for the marks, and so was counted nowhere; the marks' own scan has no retry,
    so an honest run recorded on a faster machine looked forged."""
    if not grant.judge:
        return None
    from ..rescore import BUDGET_EXTENSION, rescore_traces

    def scored(task: RedactionTask, reply: str) -> Any:
        """The marks' verdict, when they scored this very reply on the same task data."""
        if marked is None or reply != recorded_reply(trace):
            return None
        t, score = marked
        same = (t.id, t.seed, t.params, t.prompt, t.heldout) == (task.id, task.seed, task.params, task.prompt,
                                                                 task.heldout)
        return score if same else None
    outcome = rescore_traces([(n, 0, trace)], grant.max_budget_s, retry_cap_s=grant.max_budget_s * BUDGET_EXTENSION,
                             allowance=grant, use_secret=False, scored=scored)
    return outcome.statuses[0] if outcome.statuses else "differs"


def _judged(episodes: list[JSON]) -> None:
    """Each episode marked as its verdict says: NOT REPRODUCED, or NOT CHECKED (beyond the
    reader's limits, or a private seed not proven the split's)."""
    for ep in episodes:
        status, note = ep.pop("status", None), ep.pop("marks_note", None)
        if note is not None:
            # With the verdict reproduced, the marks differ only where their scan (which
            # has no retry) ran out of time here.
            ep["notes"].append(note if status != "reproduced" else
                               "The marks below are from a scan that ran out of time here; rescored with the budget "
                               "extended 4x, as `rescore` and `audit verify` retry, the recorded reward reproduces.")
        if status == "differs":
            ep["unreproduced"] = True
            ep["notes"].append("NOT REPRODUCED: this build's rescoring (as `redaction-pressure rescore` does it) does "
                               "not give the recorded reward, scores or errors for this reply, or cannot rebuild the "
                               "task the trace names from what it reveals")
        elif status == "unproven" and not ep["unchecked"]:
            ep["unchecked"] = ("rescored, and reproduced, on the private seed its trace reveals; that the seed is the "
                               "split's is not checked (the report never reads the private secret: `audit verify` "
                               "with it does)")
            ep["notes"].append(f"NOT CHECKED: {ep['unchecked']}.")
        elif status == "not_checked" and not ep["unchecked"]:
            ep["unchecked"] = ("this build could not check it: beyond --max-budget or --max-cpu, or a private trace "
                               "that reveals no seed")
            ep["notes"].append(f"NOT CHECKED: {ep['unchecked']}.")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _task_key(trace: JSON) -> tuple[int, int] | None:
    """(task index, level) of a trace that records a sane one."""
    env = _dict(_dict(trace.get("info")).get("environment"))
    index, level = _int(env.get("task_index")), _int(_dict(env.get("task_params")).get("level", 1))
    return None if index is None or index < 0 or level is None else (index, level)


def _listed(numbers: list[int]) -> str:
    """``1, 4, 9, …``: the first 20 episode numbers a problem names."""
    return ", ".join(map(str, numbers[:20])) + (", …" if len(numbers) > 20 else "")


def _coverage(traces: list[JSON], split: str | None, failed_rollouts: int = 0) -> str:
    """Which tasks the run's rollouts cover, failed rollouts left out and named: a task
    whose only rollout failed is missing, as in the archive `audit seal --allow-failed`
    makes of the run (so failing the worst episodes cannot pass for a complete run)."""
    indices = [k[0] for k in map(_task_key, traces) if k is not None]
    failed = f"; {failed_rollouts} failed rollout{'s' if failed_rollouts != 1 else ''} not counted" \
        if failed_rollouts else ""
    if not indices:
        return "no task indices recorded" + failed
    if split is None:
        return f"{len(set(indices))} tasks of an unestablished split{failed} (task indices {ranges(set(indices))})"
    return f"{coverage_of(split, indices)['label']}{failed} (task indices {ranges(set(indices))})"


def _uncertainty(traces: list[JSON], scores: list[JSON]) -> tuple[dict[str, Any], list[JSON]]:
    """The run's means with their uncertainty ({metric: Estimate}), and each level's, from
    traces whose recorded scores are all numbers (clustered by task and level)."""
    clusters: dict[tuple[int, int], list[list[float]]] = defaultdict(list)
    for t, s in zip(traces, scores, strict=True):
        key = _task_key(t)
        row = [s["reward"], *(s[k] for k in WEIGHTS)]
        if key is not None and all(v is not None for v in row):
            clusters[key].append(row)
    names = ("reward", *WEIGHTS)
    overall = estimates(clusters, names)
    levels = sorted({level for _, level in clusters})
    per_level = []
    for level in levels:
        mine = {k: v for k, v in clusters.items() if k[1] == level}
        found = overall if len(levels) == 1 else estimates(mine, names)
        per_level.append({"level": level, "tasks": len(mine), "reward": found["reward"].pm(),
                          "interval": found["reward"].interval(),
                          "cells": {m: found[m].pm() for m in names}})
    several = spread({k: [row[0] for row in v] for k, v in clusters.items()})
    return {"estimates": overall, "spread": several.line() if several else None,
            "uneven": not even(list(clusters.values()))}, per_level


def _histogram(rewards: list[float]) -> JSON:
    bins = [0] * HIST_BINS
    for r in rewards:
        bins[min(HIST_BINS - 1, max(0, int(r * HIST_BINS)))] += 1
    top = max(bins) if rewards else 0
    width, height, left, bottom = 600, 160, 36, 24
    bw = width / HIST_BINS
    bars: list[JSON] = []
    for i, count in enumerate(bins):
        h = 0 if not top else round(height * count / top, 1)
        bars.append({"x": round(left + i * bw + 1, 1), "y": round(bottom // 2 + height - h, 1), "w": round(bw - 2, 1),
                     "h": h, "count": count, "lo": i / HIST_BINS, "hi": (i + 1) / HIST_BINS,
                     "tx": round(left + i * bw + bw / 2, 1)})
    return {"bars": bars, "top": top, "width": width + left + 28, "height": height + bottom + 14, "left": left,
            "base": bottom // 2 + height, "ticks": [{"x": left + i * width / 4, "label": f"{i / 4:.2f}"}
                                                   for i in range(5)]}


def _classes(scores: list[JSON]) -> tuple[list[JSON], list[JSON]]:
    """Leaks and damage by class, summed over the run (a stream's own family names stay in
    the episodes, where the marks name them)."""
    sec = add_tallies(s["secret_classes"] for s in scores)
    dec = add_tallies(s["decoy_classes"] for s in scores)
    secrets: list[JSON] = [
        {"family": printable(f, 80), "labelled": a, "removed": b, "leaked": a - b, "rate": (a - b) / a if a else 0.0}
        for f, (a, b) in sec.items()]
    decoys: list[JSON] = [{"family": printable(f, 80), "present": a, "destroyed": b, "rate": b / a if a else 0.0}
                          for f, (a, b) in dec.items()]
    secrets.sort(key=lambda r: (-r["leaked"], r["family"]))
    decoys.sort(key=lambda r: (-r["destroyed"], r["family"]))
    return secrets, decoys


def _distinct(traces: list[JSON], key: str) -> list[str]:
    return sorted({printable(_dict(_dict(t.get("info")).get("environment")).get(key), 200) for t in traces})


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def _flat(manifest: JSON) -> list[tuple[str, str]]:
    """Scalar manifest fields (one level of tables deep), for any manifest version."""
    rows: list[tuple[str, Any]] = []
    for key, value in manifest.items():
        if isinstance(value, dict):
            rows += [(f"{key}.{k}", v) for k, v in value.items() if not isinstance(v, (dict, list))]
        elif not isinstance(value, list):
            rows.append((key, value))
    return [(printable(k, 80), printable(v, 200)) for k, v in rows[:40]]


_worker_allowance: Allowance | None = None


def _start_worker(allowance: Allowance) -> None:
    """Once in each forked worker: the allowance it charges (its CPU figure is the
    parent's, shared), and the minimal environment of a fresh process."""
    global _worker_allowance
    from ..boundary.launch import scrub_environment

    scrub_environment()
    _worker_allowance = allowance


def _episode_job(job: tuple[int, JSON, int, bool]) -> JSON:
    return _episode(*job, allowance=_worker_allowance)


PARALLEL_FROM = 64  # episodes; below that, worker start-up costs more than it saves


def _episodes(traces: list[JSON], full_text: bool, jobs: int, allowance: Allowance) -> list[JSON]:
    """Every episode's view, in trace order. Regenerating tasks dominates the cost, so
    large runs are spread over ``jobs`` forked processes (a forked worker imports
    nothing from the current directory; where forking is not safe the work stays here);
    the page is the same either way, but for which episodes a spent CPU allowance
    leaves NOT CHECKED."""
    seen: Counter[str] = Counter()
    work: list[tuple[int, JSON, int, bool]] = []
    for n, t in enumerate(traces, 1):
        index = _dict(_dict(t.get("info")).get("environment")).get("task_index")
        seen[str(index)] += 1
        work.append((n, t, seen[str(index)], full_text))
    context = fork_context()
    if jobs <= 1 or len(work) < PARALLEL_FROM or context is None:
        return [_episode(*w, allowance=allowance) for w in work]
    from concurrent.futures import ProcessPoolExecutor

    # Tasks of one index sit together in a chunk, so each worker regenerates them once.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                             initargs=(allowance,)) as pool:
        return list(pool.map(_episode_job, work, chunksize=max(1, len(work) // (4 * jobs))))


def family_class(n: int) -> str:
    """The ``n``-th family's class: an upper-case letter, then ``n // 26`` in base 36
    when not 0 (the commonest 26 families get one character, the next 910 two; no other
    class on the page has an upper-case letter)."""
    digits, high = "", n // 26
    while high:
        high, d = divmod(high, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + digits
    return chr(65 + n % 26) + digits


def _family_classes(episodes: list[JSON]) -> list[JSON]:
    """Numbers the families that the marks shown name (the most marked first, so the
    commonest get the shortest class) and puts its class in place of the family in
    every run shown: the page names a family once, in its CSS (`family_class`), and a
    mark's hover text (what happened, to which family) comes from its two classes.
    Returns [{"id", "name"}] in id order; names are made printable."""
    shown: list[list[_marks.Segment]] = []
    for e in episodes:
        for rec in e["records"]:
            shown += [rec["segs"]] if rec["lines"] is None else [segs for _, segs in rec["lines"]]
    counts = Counter(f for segs in shown for _, _, f in segs if f)
    ids = {f: family_class(i) for i, (f, _) in enumerate(sorted(counts.items(), key=lambda fc: (-fc[1], fc[0])))}
    for segs in shown:
        segs[:] = [(c, t, ids[f] if f else "") for c, t, f in segs]
    return [{"id": i, "name": printable(f)} for f, i in ids.items()]


def _shared_rules(episodes: list[JSON]) -> None:
    """Marks each episode whose rules (patterns and replacements, in order) are those of
    an earlier episode, and that has no rule error of its own: it shows its match counts
    and a link to that episode's table rather than the same table again (a policy that
    sends the same rules every time repeated some 2 kB an episode)."""
    first: dict[tuple[tuple[str, str], ...], int] = {}
    for e in episodes:
        e["rules_as"] = None
        if not e["rules"]:
            continue
        key = tuple((r["pattern"], r["replacement"]) for r in e["rules"])
        if key not in first:
            first[key] = e["n"]
        elif not any(r["errors"] for r in e["rules"]):
            e["rules_as"] = first[key]


def build_view(run: Run, verification: Verification, full_text: bool, jobs: int = 1,
               allowance: Allowance | None = None) -> JSON:
    traces = run.traces
    # A trace whose labels do not describe the task its data rebuilds establishes nothing:
    # not the split, not the parameters (an edited run would otherwise pass for another).
    label_issues = [label_problems(t) for t in traces]
    mislabelled = [n for n, found in enumerate(label_issues, 1) if found]
    labelled = [t for t, found in zip(traces, label_issues, strict=True) if not found]
    envs = [_dict(_dict(t.get("info")).get("environment")) for t in labelled]
    proof = prove_split((e.get("split"), e.get("split_commitment"), e.get("task_index"), e.get("task_seed"))
                        for e in envs)
    split = proof.proven
    label = split_label(split) if split is not None else "split NOT ESTABLISHED by the traces' commitments and seeds"
    kind, warning = proof.kind, proof.disagreement() or ""
    if proof.private_unproven:  # the report holds no secret: it never derives a private seed
        kind, label = "unknown", PRIVATE_UNPROVEN_LABEL
        warning = "; ".join(w for w in (PRIVATE_UNPROVEN_WARNING, warning) if w)
    grant = allowance or Allowance()
    # `audit verify` rescored every trace already; a failed one leaves them unjudged
    grant.judge = not verification.verified and grant.withheld is None
    episodes = _episodes(traces, full_text, jobs, grant)
    _judged(episodes)
    families = _family_classes(episodes)
    _shared_rules(episodes)
    scores = [e["scores"] for e in episodes]
    secrets, decoys = _classes(scores)
    figures, per_level = _uncertainty(traces, scores)
    evaluated, mixed = evaluated_of(traces, run.runs)
    installed = build_identity()
    build: list[JSON] = []
    for key in BUILD_KEYS:
        values = _distinct(traces, key)
        build.append({"key": key, "vals": values, "same": values == [printable(installed[key])]})
    params: list[JSON] = []
    for t in labelled:
        p = _dict(_dict(_dict(t.get("info")).get("environment")).get("task_params"))
        if p not in params:
            params.append(p)
    rewards = [s["reward"] for s in scores if s["reward"] is not None]
    est = figures["estimates"]

    def pm(metric: str, values: Sequence[float | None]) -> str:
        """The metric's mean over tasks with its standard error (the figures the intervals
        are about); the bare mean of the recorded values when no trace names its task."""
        found = est[metric]
        mean = found.mean if found.tasks else _mean(values)
        return _fmt(mean) + (f" ± {found.se:.3f}" if found.se is not None and mean is not None else "")
    headline = {
        "episodes": len(episodes), "mean_reward": pm("reward", rewards),
        "mean_recall": pm("recall", [s["recall"] for s in scores]),
        "mean_precision": pm("precision", [s["precision"] for s in scores]),
        "clean_rate": pm("clean", [s["clean"] for s in scores]),
        "intervals": {m: est[m].interval() for m in est},
        "invalid": sum(1 for s in scores if s["errors"] or s["valid"] == 0),
        "with_leaks": sum(e["leak"] for e in episodes), "with_collateral": sum(e["coll"] for e in episodes),
        "secrets_total": sum(s["secrets_total"] or 0 for s in scores),
        "secrets_leaked": sum(r["leaked"] for r in secrets),
        "decoys_destroyed": sum(r["destroyed"] for r in decoys),
    }
    unchecked = Counter(e["unchecked"] for e in episodes if e["unchecked"])
    standard = all(p == STANDARD_PARAMS for p in params) and (bool(params) or not traces)
    problems = list(run.problems)
    if mislabelled:
        shown = _listed(mislabelled)
        first = label_issues[mislabelled[0] - 1]
        problems.insert(0, f"LABELS DISAGREE: {len(mislabelled)} episode(s) are labelled as tasks other than those "
                           f"their task data rebuilds (episodes {shown}; the first: "
                           f"{printable('; '.join(first[:3]), 400)}): they establish neither the "
                           f"split nor the task parameters shown, and their scores are left out of every figure")
    distrusted = [e["n"] for e in episodes if e["scores"]["distrust"]]
    if distrusted:
        shown = _listed(distrusted)
        problems.insert(0, f"NOT TRUSTED: {len(distrusted)} episode(s) record scores no reader should trust (the "
                           f"two copies, rewards and info.redaction, disagree or one is missing, or a value is not a "
                           f"number in [0, 1]; episodes {shown}); their scores are left out of every figure on this "
                           f"page")
    failed_rollouts = [e["n"] for e in episodes if e["scores"]["failed"]]
    if failed_rollouts:
        shown = _listed(failed_rollouts)
        first_failure = printable(episodes[failed_rollouts[0] - 1]["scores"]["failed"], 300)
        problems.insert(0, f"FAILED: {len(failed_rollouts)} of {len(episodes)} rollout(s) failed (episodes {shown}; "
                           f"the first: {first_failure}); what they record is left out of every figure on this page")
    left_out = set(mislabelled) | set(distrusted) | set(failed_rollouts)
    # Red team, 2026-12-04: a run whose every recorded score was raised to 1.0 (both
    # copies, tallies too) headed the page "1.000 mean reward", exit 0, with the
    # rescoring's disagreement only in notes 64 episodes down.
    unreproduced = [e["n"] for e in episodes if e["unreproduced"]]
    if unreproduced:
        shown = _listed(unreproduced)
        other = [b["key"] for b in build if not b["same"]]
        problems.insert(0, f"NOT REPRODUCED: {len(unreproduced)} of {len(episodes)} episode(s) record a reward this "
                           f"build does not give their reply (episodes {shown}): the figures on this page are the "
                           "run's recorded scores, which this build's rescoring contradicts"
                           + (f" (the run names another build: {', '.join(other)} differ)" if other else "")
                           + "; `redaction-pressure rescore` lists each difference")
    return {
        "split_established": proof.agrees and not proof.private_unproven and split is not None,
        "unreproduced": len(unreproduced),
        "counted": len(traces) - len(left_out),  # traces the figures count
        "title": f"redaction-pressure report — {label}", "split": split or "unknown", "split_label": label,
        "proven_kind": kind, "split_kind": kind if proof.agrees else "unknown",
        "split_warning": printable(warning, 900),
        "unchecked": sum(unchecked.values()), "unchecked_why": [printable(w, 300) for w in unchecked],
        "unchecked_hint": any("--max-" in w for w in unchecked),
        "run_path": printable(run.path), "archive": run.archive,
        "manifest": _flat(run.manifest) if run.manifest else [],
        "manifest_problem": run.manifest_problem, "verification": verification, "problems": problems,
        "coverage": _coverage([t for t, e in zip(traces, episodes, strict=True) if not e["failed"]], split,
                              len(failed_rollouts)) + (" — as claimed by a private commitment, UNPROVEN"
                                                if proof.private_unproven else ""), "build": build,
        "evaluated": printable(describe_evaluated(evaluated), 600),
        "evaluated_mixed": [printable(m, 300) for m in mixed if traces],
        "levels": per_level, "spread": figures["spread"], "method": METHOD,
        "mean_over_tasks": MEAN_OVER_TASKS if figures["uneven"] else "",
        "task_params": [printable(", ".join(f"{k}={v}" for k, v in p.items()) or "none recorded", 300)
                        for p in params[:5]], "standard_params": standard, "headline": headline,
        "histogram": _histogram(rewards), "secret_classes": secrets, "decoy_classes": decoys,
        "episodes": episodes, "full_text": full_text, "families": families,
    }
