"""Run a CLI's ``main(argv)`` in a forked child of the test process.

A console script such as ``vf-eval`` is ``sys.exit(main())`` around the package's own
``main``; running it as a subprocess first re-imports verifiers (~10 s of CPU each time
on the CI machine). A forked child of a test process that already imported it runs the
same ``main`` with the same argv at once. The child's stdout and stderr go to files the
parent reads back; it ends with ``os._exit``, so nothing of the test runner runs twice.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_forked(main: Callable[[list[str]], Any], argv: list[str], *, cwd: Path | None = None,
               environ: dict[str, str | None] | None = None, timeout: float = 120.0) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``main(argv)`` in a forked child, with a
    SystemExit turned into its status as the interpreter would (a message goes to
    stderr, status 1). ``environ`` changes the child's environment (None unsets a
    variable). A child that outlives ``timeout`` is killed and reported as -9."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with warnings.catch_warnings():
            # The child's at-fork hooks drop its copies of the parent's scan-worker
            # handles, which warns (to the parent's stderr: it is not redirected yet).
            warnings.simplefilter("ignore", ResourceWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                if cwd is not None:
                    os.chdir(cwd)
                for name, value in (environ or {}).items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
                result = main(argv)
                status = result if isinstance(result, int) else 0
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    status = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    status = 1
            except BaseException:  # noqa: BLE001 - reported to the parent as the child's stderr
                traceback.print_exc()
                status = 1
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(status)
        deadline = time.monotonic() + timeout
        while True:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(wait_status)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                code = -9
                break
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        return code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
