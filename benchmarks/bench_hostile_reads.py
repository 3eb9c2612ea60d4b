"""What hostile traces files cost their readers (SECURITY.md, "Amplification").

    uv run python benchmarks/bench_hostile_reads.py [--against DIR]

Times, in CPU seconds (median of 3), the readers a run or archive from outside goes
through, on inputs an adversarial review of 2026-12-03 built against them:

- the Episode reader of `report`, `rescore` and `compare` (`boundary.episodes`) on
  16 MiB of ``{}`` lines, 16 MiB of line breaks and 16 MiB of blank CRLF lines;
- `audit seal` / `validate`'s line reader (`audit._tracefile.read_trace_file`) on one
  16 MiB line of ``[[],[],...]`` and on 16 MiB of ``a`` lines;
- `audit verify`'s reading of a signed payload (`audit._statement.loads`) of 16 MiB of
  ``{}``.

``--against DIR`` times another source tree (a clone at an older commit) in a child
process (once each: the old readers took up to 71 s an input), for a before/after
figure from one run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

MIB = 1 << 20


REPEAT = [3]


def _cpu(fn) -> float:
    times = []
    for _ in range(REPEAT[0]):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def measure() -> dict[str, float]:
    from redaction_pressure.boundary.episodes import EpisodeReader

    def episodes(data: bytes) -> None:
        sum(1 for _ in EpisodeReader(lambda p: None).read(io.BytesIO(data), hashlib.sha256()))

    out = {
        "episode reader, 16 MiB of {} lines": _cpu(lambda: episodes(b"{}\n" * (16 * MIB // 3))),
        "episode reader, 16 MiB of line breaks": _cpu(lambda: episodes(b"\n" * (16 * MIB))),
        "episode reader, 16 MiB of blank CRLF lines": _cpu(lambda: episodes(b"  \r\n" * (4 * MIB))),
    }
    from audit import _statement
    from audit._tracefile import read_trace_file

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_text('{"traces": [' + "[]," * (16 * MIB // 3) + "[]]}\n")
        out["audit line reader, a 16 MiB line of [[],[],...]"] = _cpu(lambda: read_trace_file(path))
        path.write_bytes(b"a\n" * (8 * MIB))
        out["audit line reader, 16 MiB of 'a' lines"] = _cpu(lambda: read_trace_file(path))
    payload = b'{"x": [' + b"{}," * (16 * MIB // 3) + b"{}]}"

    def statement() -> None:
        with contextlib.suppress(_statement.StatementError):
            _statement.loads(payload)
    out["signed payload of 16 MiB of {}"] = _cpu(statement)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", type=Path, help="another source tree, timed in a child process")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        REPEAT[0] = 1  # the tree --against names may take a minute an input
    here = measure()
    if args.json:
        print(json.dumps(here))
        return 0
    other = None
    if args.against is not None:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json"], cwd=args.against,
                              env={"PYTHONPATH": str(args.against), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, check=True)
        other = json.loads(done.stdout.strip().splitlines()[-1])
    print(machine())
    for name, seconds in here.items():
        then = f"   against {other[name]:7.2f} s" if other else ""
        print(f"{name:52s} {seconds:7.2f} s CPU{then}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
