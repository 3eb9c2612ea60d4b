"""The per-kind all-or-nothing ceiling of constant replies, from the labels alone.

    uv run python benchmarks/bench_constant_ceiling.py [--level L ...] [--train N]

Why: `bench_adversary.py` searches rule sets, and the replies stored in
``benchmarks/data/constant-replies/`` are what other adversaries found; both are only
as strong as their search. This script measures what any constant reply of the kind
they converge on can reach, without writing a rule: it groups every labelled span of
the held-out records (secrets and decoys) by the kind of value it is, and chooses for
each kind to remove all of its spans or none, knowing every label, fitted on train
tasks and measured on dev (SPEC §3's protocol). A reply that removes each kind
all-or-nothing is what a memoriser can write, so this ceiling is the figure a level
must push below 0.50, by a margin, for the spec's bound to be robust rather than
a property of one search.

Two class granularities:

- ``kind``: what a constant reply can tell apart. A stream's own credential and its
  look-alikes (house_format, house_key_id, house_client_id, house_sandbox_key, ...)
  share one class, since their prefixes and markers are drawn per stream; so do a
  key-scoped secret and the values under the service's other keys (context_secret,
  context_lookalike); a policy category (hosts, addresses, ...) is one class whether
  the stream's policy makes a value secret or not. Each catalogue family is its own
  class. This is the ceiling the stored replies approach.
- ``group``: every summary class apart (Span.group): an upper bound that also knows
  which of a stream's look-alikes is which, beyond what a constant reply can know.

Reward per task is reward-v1 (0.35 recall + 0.35 precision + 0.30 clean) over the
union of the chosen spans. Selection: greedy toggles from "remove every kind" and from
"remove nothing" until no toggle helps, on train; the better start on train is scored
on dev. Also printed: the remove-every-kind reply (recall 1.0) and its precision.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction_pressure import load_task

# A stream's own families: the summary classes a constant reply cannot separate.
_MERGE = {"house_format": "house", "house_key_id": "house", "house_client_id": "house",
          "house_sandbox_key": "house", "house_preview_key": "house", "house_webhook_id": "house",
          "house_placeholder": "house", "context_secret": "context", "context_lookalike": "context",
          "scoped_secret": "scoped", "scoped_lookalike": "scoped", "house_key_block": "key_block",
          "house_public_block": "key_block"}
# A policy category's stated exception (a stream's support address, egress range, ...)
# is the category to a reply that cannot read the statement.
_EXCEPTION_OF = {"support_email": "email_address", "egress_ip": "client_ip", "test_host": "internal_hostname",
                 "support_line": "phone_number", "test_account": "customer_id"}

Task = list[tuple[list[tuple[str, int, int, bool]], int]]  # per record: spans (class, start, end, secret), length


def _class(group: str, family: str, granularity: str) -> str:
    if granularity == "group":
        return group
    if group == "policy_exception":
        return _EXCEPTION_OF.get(family, group)
    if group.startswith("house_") and group not in _MERGE:
        return "house"  # house_format_base64 too: a base64 form is told from other base64 by nothing constant
    return _MERGE.get(group, group)


def load(split: str, n: int, level: int, granularity: str) -> list[Task]:
    tasks = []
    for i in range(n):
        t = load_task(split, i, level=level)
        recs = []
        for r in t.heldout:
            spans = [(_class(s.group or s.family, s.family, granularity), s.start, s.end, True) for s in r.secrets]
            spans += [(_class(s.group or s.family, s.family, granularity), s.start, s.end, False) for s in r.decoys]
            recs.append((spans, len(r.text)))
        tasks.append(recs)
    return tasks


def reward(task: Task, chosen: frozenset[str]) -> tuple[float, float, float]:
    total = full = full_chars = removed = collateral = 0
    for spans, n in task:
        gone = bytearray(n)
        for c, s, e, _ in spans:
            if c in chosen:
                gone[s:e] = b"\x01" * (e - s)
        in_secret = bytearray(n)
        for _, s, e, secret in spans:
            if secret:
                total += 1
                in_secret[s:e] = b"\x01" * (e - s)
                if gone[s:e].count(1) == e - s:
                    full += 1
                    full_chars += e - s
        removed += gone.count(1)
        collateral += gone.count(1) - (int.from_bytes(gone, "big") & int.from_bytes(in_secret, "big")).bit_count()
    recall = full / total if total else 0.0
    precision = full_chars / removed if removed else 0.0
    clean = 1.0 if total and full == total and collateral == 0 else 0.0
    return 0.35 * recall + 0.35 * precision + 0.30 * clean, recall, precision


def mean(tasks: list[Task], chosen: frozenset[str]) -> float:
    return statistics.fmean(reward(t, chosen)[0] for t in tasks)


def greedy(tasks: list[Task], classes: list[str], start: frozenset[str]) -> tuple[frozenset[str], float]:
    best, score = start, mean(tasks, start)
    improved = True
    while improved:
        improved = False
        for c in classes:
            trial = best ^ {c}
            s = mean(tasks, trial)
            if s > score + 1e-9:
                best, score, improved = trial, s, True
    return best, score


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", type=int, nargs="+", default=[1])
    ap.add_argument("--train", type=int, default=200, help="train tasks to fit on")
    ap.add_argument("--granularity", choices=("kind", "group", "both"), default="kind")
    args = ap.parse_args()
    grans = ("kind", "group") if args.granularity == "both" else (args.granularity,)
    for level in args.level:
        for gran in grans:
            train = load("train", args.train, level, gran)
            dev = load("dev", 64, level, gran)
            classes = sorted({c for t in train + dev for spans, _ in t for c, *_ in spans})
            everything = frozenset(classes)
            fits = [greedy(train, classes, everything), greedy(train, classes, frozenset())]
            chosen, train_score = max(fits, key=lambda f: f[1])
            dev_rows = [reward(t, chosen) for t in dev]
            all_rows = [reward(t, everything) for t in dev]
            print(f"level {level} [{gran}] remove-every-kind on dev: {statistics.fmean(r[0] for r in all_rows):.4f} "
                  f"(precision {statistics.fmean(r[2] for r in all_rows):.3f})")
            dev_mean, dev_recall, dev_precision = (statistics.fmean(r[k] for r in dev_rows) for k in range(3))
            print(f"level {level} [{gran}] all-or-nothing ceiling: train {train_score:.4f}  dev {dev_mean:.4f} "
                  f"(recall {dev_recall:.3f}, precision {dev_precision:.3f}); kept (not removed): "
                  f"{', '.join(sorted(everything - chosen)) or '-'}")


if __name__ == "__main__":
    main()
