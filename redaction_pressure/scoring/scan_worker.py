"""A scan worker process: ``python -m redaction_pressure.scoring.scan_worker``.

It runs one scan at a time on one thread, so `regex`'s ``timeout`` (which counts the
process's CPU time) and the episode deadline (`time.process_time`) both measure the
CPU spent on exactly this episode, whatever else runs on the machine. It speaks
length-prefixed pickles (`multiprocessing.connection`) on the pipes it was started
with, and exits when its parent closes them.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from multiprocessing.connection import Connection


def serve(requests: Connection, replies: Connection) -> None:
    from ..build.identity import source_digest
    from .score import scan_rules

    replies.send(("ready", os.getpid(), source_digest()))
    while True:
        try:
            texts, rules, budget_s = requests.recv()
        except EOFError:
            return
        wall, cpu = time.perf_counter(), time.process_time()
        removed, matches, errors = scan_rules(texts, rules, budget_s)
        replies.send((removed, matches, errors, time.process_time() - cpu, time.perf_counter() - wall))


def main() -> None:
    # Ctrl-C in a terminal reaches the whole process group; the parent decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.dup(1)
    os.dup2(2, 1)  # stray prints go to stderr, never into the reply pipe
    sys.stdout = sys.stderr
    serve(Connection(0, writable=False), Connection(out, readable=False))


if __name__ == "__main__":
    main()
