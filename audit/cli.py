"""The ``audit`` command: the tool an outside evaluator runs, offline, to decide
whether a published redaction-pressure result can be trusted.

    audit digest [--json]
    audit validate PATH...
    audit keygen --out DIR
    audit seal RUN_DIR --key KEY.pem --out ARCHIVE_DIR [--allow-failed]
    audit verify ARCHIVE_DIR --public-key PUB.pem [--private-seed-env VAR] [--jobs N] [--max-budget S]
                 [--max-cpu S] [--strict] [--json]

Exit status: 0 success (verify: every check that ran passed); 1 the input was read
and found invalid, refused, or failed verification; 2 usage errors (bad arguments,
missing or unreadable files and keys, an output that already exists, a missing or
short private secret); 3 verify did not check everything the archive asks for within
the limits given (--max-budget, --max-cpu): not a pass; 4 the command could not
finish for a reason that is not its input's (its output closed or full, an internal
error): no verdict, and nothing about the input. It never imports verifiers,
and never prints a traceback for anything an input file contains.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from redaction_pressure.contract import (
    DEFAULT_MAX_BUDGET_S,
    DEFAULT_MAX_CPU_S,
    printable,
    quiet_stdout,
    sane_streams,
    scan_pool_setting_problem,
)

USAGE, INVALID, OK = 2, 1, 0
UNFINISHED = 4  # not the input's doing: an output closed or full, an internal error


class _Usage(Exception):
    pass


def _err(message: str) -> None:
    print(f"audit: error: {printable(message)}", file=sys.stderr)


def _digest(args: argparse.Namespace) -> int:
    from redaction_pressure.contract import build_identity

    identity = build_identity()
    if args.json:
        print(json.dumps(identity, indent=2))
    else:
        print(f"{identity['source_digest']}  {identity['source_digest_algorithm']}")
    return OK


def _validate(args: argparse.Namespace) -> int:
    from ._validate import UsageError, files_of, validate_file

    try:
        files = [f for p in args.paths for f in files_of(Path(p))]
    except UsageError as exc:
        raise _Usage(str(exc)) from None
    total = 0
    for f in files:
        errors = validate_file(f)
        total += len(errors)
        for line in errors:
            print(printable(line))
        if not errors:
            print(printable(f"{f}: valid"))
    print(f"{len(files)} file(s) checked, {total} error(s)", file=sys.stderr)
    return INVALID if total else OK


def _keygen(args: argparse.Namespace) -> int:
    from ._hygiene import refuse_if_tracked_path
    from ._keys import PRIVATE_NAME, keygen

    if not args.force:
        why = refuse_if_tracked_path(Path(args.out) / PRIVATE_NAME)
        if why is not None:
            raise _Usage(why)
    try:
        private, public, kid = keygen(Path(args.out))
    except FileExistsError as exc:
        raise _Usage(str(exc)) from None
    except OSError as exc:
        raise _Usage(f"cannot write keys into {args.out}: {exc.strerror or exc}") from None
    print(f"private key: {private} (mode 0600; keep it secret)")
    print(f"public key:  {public}")
    print(f"key id:      {kid}")
    return OK


def _cannot_use(exc: OSError) -> str:
    """A path the system refused, and why: a usage error, never a verdict."""
    return f"cannot use {exc.filename}: {exc.strerror or exc}"


def _seal(args: argparse.Namespace) -> int:
    from ._files import MemberError
    from ._keys import KeyFileError, load_private_key
    from ._seal import SealRefused, seal

    try:
        key = load_private_key(Path(args.key))
        sealed = seal(Path(args.run_dir), key, Path(args.out), allow_failed=args.allow_failed)
    except (KeyFileError, FileNotFoundError, FileExistsError) as exc:
        raise _Usage(str(exc)) from None
    except MemberError as exc:
        raise _Usage(f"cannot seal {args.run_dir}: {exc}") from None
    except OSError as exc:  # a full disk, a file size limit, a read-only mount; or a path that cannot be used
        out = Path(args.out)
        if exc.filename is not None and Path(exc.filename) != out and out not in Path(exc.filename).parents:
            raise _Usage(_cannot_use(exc)) from None
        raise _Usage(f"cannot write the archive into {args.out}: {exc.strerror or exc}") from None
    except SealRefused as exc:
        _err(f"refusing to seal: {exc.summary}")
        for reason in exc.reasons:
            print(f"  {printable(reason)}", file=sys.stderr)
        return INVALID
    from redaction_pressure.contract import describe_evaluated

    from ._manifest import mean_note
    m = sealed.manifest
    s = m["summary"]
    n = m["counts"]["traces"]
    if sealed.excluded:
        x = sealed.excluded
        print(printable(f"sealed {n} of {n + x['rollouts']} rollouts as a PARTIAL archive into {sealed.out_dir}: "
                        f"{x['reasons'] or 'failed rollouts'} left out"))
    else:
        print(printable(f"sealed {n} traces into {sealed.out_dir}"))
    print(printable(f"split {s['split']}: {s['label']}"))
    print(printable(f"coverage: {m['coverage']['label']}"))
    print(printable(f"evaluated: {describe_evaluated(m['evaluated'])}"))
    reward = s["uncertainty"]["reward"]
    pm = f" ± {reward['se']:.4f}" if "se" in reward else ""
    print(f"mean reward {s['mean_reward']:.4f}{pm}{mean_note(m)}; signed by key id "
          f"{sealed.keyid}")
    return OK


def _verify(args: argparse.Namespace) -> int:
    from redaction_pressure.contract import PrivateSeedError, read_private_secret

    from ._files import member_kind
    from ._keys import KeyFileError, load_public_key
    from ._report import console, render_human, render_json
    from ._verify import Limits, verify_archive

    archive = Path(args.archive)
    if not archive.is_dir():
        raise _Usage(f"{archive} is not a directory (ARCHIVE_DIR is what `audit seal --out` wrote)")
    if member_kind(archive / "traces.jsonl") != "missing" and all(
            member_kind(archive / n) == "missing" for n in ("manifest.toml", "manifest.dsse.json")):
        raise _Usage(f"{archive} is a run directory, not a sealed archive: seal it first with "
                     f"`audit seal {archive} --key KEY.pem --out ARCHIVE_DIR`, then verify ARCHIVE_DIR")
    if args.jobs is not None and args.jobs < 1:
        raise _Usage(f"--jobs must be at least 1 (got {args.jobs})")
    for flag, value in (("--max-budget", args.max_budget), ("--max-cpu", args.max_cpu)):
        if not 0 < value < float("inf"):
            raise _Usage(f"{flag} must be a positive number of seconds (got {value:g})")
    try:
        public_key = load_public_key(Path(args.public_key))
    except KeyFileError as exc:
        raise _Usage(str(exc)) from None
    secret = None
    if args.private_seed_env is not None:
        try:
            secret = read_private_secret(args.private_seed_env)
        except PrivateSeedError as exc:
            raise _Usage(str(exc)) from None
    from ._parallel import default_jobs

    limits = Limits(args.max_budget, args.max_cpu, args.strict)
    report = verify_archive(archive, public_key, secret, jobs=args.jobs or default_jobs(), limits=limits)
    if args.json:
        print(render_json(report))
    else:
        render_human(report, console())
    return report.exit_code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="audit", description=__doc__.split("\n\n")[0].replace("\n", " "))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("digest", help="print the installed build's source digest")
    p.add_argument("--json", action="store_true", help="print the whole build identity as JSON (default: off)")
    p.set_defaults(func=_digest)

    p = sub.add_parser("validate", help="schema-check traces.jsonl files, archives, manifests, envelopes")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a run or archive directory, traces.jsonl, manifest.toml or manifest.dsse.json (required)")
    p.set_defaults(func=_validate)

    p = sub.add_parser("keygen", help="create an Ed25519 signing key pair")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="directory for signing-key.pem (mode 0600) and signing-key.pub.pem (required)")
    p.add_argument("--force", action="store_true",
                   help="write the private key even inside a git work tree where it is not ignored (default: off)")
    p.set_defaults(func=_keygen)

    p = sub.add_parser("seal", help="sign a run directory into an archive directory")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory of vf-eval or redaction-pressure eval "
                                                      "(its traces.jsonl) (required)")
    p.add_argument("--key", required=True, metavar="KEY.pem", help="the signer's private key (required)")
    p.add_argument("--out", required=True, metavar="ARCHIVE_DIR",
                   help="the archive directory to create; it must not exist or be empty (required)")
    p.add_argument("--allow-failed", action="store_true",
                   help="seal the successful rollouts of a run with failed ones, as a PARTIAL archive whose "
                        "coverage names what is missing (default: off, a run with failures is refused)")
    p.set_defaults(func=_seal)

    p = sub.add_parser("verify", help="check a sealed archive, step by step")
    p.add_argument("archive", metavar="ARCHIVE_DIR", help="the archive directory `audit seal` wrote (required)")
    p.add_argument("--public-key", required=True, metavar="PUB.pem",
                   help="the signer's public key, pinned out of band (required)")
    p.add_argument("--private-seed-env", metavar="VAR",
                   help="environment variable holding the private_eval secret (checks the commitment and seeds) "
                        "(default: none, the private seeds are NOT CHECKED)")
    p.add_argument("--jobs", type=int, metavar="N", default=None,
                   help="parse, schema-check and rescore in N processes, at most one per CPU this process may "
                        "use (affinity and cgroup quota; the default: all of them); same report for any N")
    p.add_argument("--max-budget", type=float, default=DEFAULT_MAX_BUDGET_S, metavar="S",
                   help="the most regex budget a trace may state and still be rescored; traces stating more are "
                        f"NOT CHECKED, which is not a pass (exit 3) (default: {DEFAULT_MAX_BUDGET_S:g}, the "
                        "standard budget)")
    p.add_argument("--max-cpu", type=float, default=DEFAULT_MAX_CPU_S, metavar="S",
                   help="the most scan CPU rescoring may spend in all; traces after that are NOT CHECKED "
                        f"(exit 3) (default: {DEFAULT_MAX_CPU_S:g})")
    p.add_argument("--strict", action="store_true",
                   help="fail, rather than tolerate and name, rewards reproduced only with the budget extended 4x "
                        "and time-dependent episodes (default: off)")
    p.add_argument("--json", action="store_true", help="print the report as JSON (default: off)")
    p.set_defaults(func=_verify)
    return parser


def main(argv: list[str] | None = None) -> int:
    sane_streams()
    args = build_parser().parse_args(argv)
    try:
        problem = scan_pool_setting_problem()  # a local setting is never a verdict on an archive
        if problem:
            raise _Usage(problem)
        command: Callable[[argparse.Namespace], int] = args.func
        return command(args)
    except _Usage as exc:
        _err(str(exc))
        return USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `audit verify ... | head` closed the pipe: the verdict was not all written,
        # which says nothing about the archive.
        quiet_stdout()
        return UNFINISHED
    except Exception as exc:
        if os.environ.get("AUDIT_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.filename is not None:
            # a path given that the system refuses to look at (a name too long, a directory
            # on the way that may not be searched): a usage error, as a missing one is;
            # before, exit 4, "internal error"
            _err(_cannot_use(exc))
            return USAGE
        _err(f"internal error: {type(exc).__name__}: {exc} (set AUDIT_DEBUG=1 for a traceback); this says "
             "nothing about the input")
        return UNFINISHED


if __name__ == "__main__":
    raise SystemExit(main())
