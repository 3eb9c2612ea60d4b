"""What the README's quick start costs a new user: download and disk size.

    uv run python benchmarks/bench_install_size.py [--cache DIR]

Download: for every distribution installed in this environment, the size uv.lock
records for the wheel this interpreter would pick (best-ranked compatible tag), or
the sdist when there is no wheel. Disk: `du` of `.venv` and of uv's cache (pass the
cache of a fresh install with --cache; the default is `uv cache dir`, which may hold
other projects' packages too).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]


def download_bytes() -> tuple[int, int]:
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in md.distributions()}
    rank = {tag: i for i, tag in enumerate(sys_tags())}
    total = count = 0
    for pkg in lock["package"]:
        name = canonicalize_name(pkg["name"])
        if installed.get(name) != pkg.get("version") or ("source" in pkg and "editable" in pkg["source"]):
            continue
        best = None
        for wheel in pkg.get("wheels", []):
            tags = parse_wheel_filename(wheel["url"].rsplit("/", 1)[1])[3]
            score = min((rank[t] for t in tags if t in rank), default=None)
            if score is not None and (best is None or score < best[0]):
                best = (score, wheel.get("size", 0))
        size = best[1] if best else pkg.get("sdist", {}).get("size", 0)
        total += size
        count += 1
    return total, count


def du_bytes(*paths: Path) -> int:
    """Bytes on disk; a file hard-linked from several of ``paths`` (uv links the venv
    to its cache where it can) counts once."""
    out = subprocess.run(["du", "-skc", *map(str, paths)], capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1].split()[0]) * 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, help="uv cache directory to measure (default: `uv cache dir`)")
    args = ap.parse_args(argv)
    cache = args.cache or Path(subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True,
                                              check=True).stdout.strip())
    dl, n = download_bytes()
    mb = lambda b: f"{b / 1e6:.0f} MB"  # noqa: E731
    print(f"download (wheels for {n} locked packages, this platform): {mb(dl)}")
    print(f".venv on disk: {mb(du_bytes(ROOT / '.venv'))}")
    if cache.is_dir():
        print(f"uv cache on disk ({cache}): {mb(du_bytes(cache))}")
        print(f".venv and uv cache together (hard links counted once): {mb(du_bytes(ROOT / '.venv', cache))}")
    else:
        print(f"uv cache {cache} does not exist", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
