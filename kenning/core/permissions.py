"""File modes of the data dir: every memory is in Valkey's AOF there, so it is private to the user
(directories 700, files 600). Valkey has no umask option: the embedded server is started with umask
077 and whatever an earlier run left looser is tightened at start-up (docs/reliability.md)."""

from __future__ import annotations

import stat
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def loose(root: Path) -> list[Path]:
    """``root`` and the paths under it that the group or others may read, write or enter."""
    if not root.exists():
        return []
    paths = [root, *sorted(root.rglob("*"))]
    return [p for p in paths if not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077]


def tighten(root: Path) -> list[Path]:
    """Make ``root`` and everything under it private; the paths that were not (an OSError, e.g. a
    file of another user, propagates)."""
    found = loose(root)
    for path in found:
        path.chmod(PRIVATE_DIR if path.is_dir() else PRIVATE_FILE)
    return found
