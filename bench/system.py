"""Facts about the machine and the processes a run measures: machine info, git
revision, RSS, Valkey memory."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import valkey

ROOT = Path(__file__).resolve().parent.parent


def machine() -> dict[str, Any]:
    cpu = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(_mem_total_kb() / 1024 / 1024, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def cpu_times() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs since boot from /proc/stat; (0, 0) where there is none."""
    stat = Path("/proc/stat")
    if not stat.exists():
        return 0, 0
    fields = [int(x) for x in stat.read_text(encoding="utf-8").splitlines()[0].split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_percent(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The share of CPU time the hypervisor gave to other guests between two ``cpu_times``. Pure.

    A virtual machine's neighbours slow every number of a run; a run with a
    high steal is not comparable.
    """
    total = after[1] - before[1]
    return round(100.0 * (after[0] - before[0]) / total, 1) if total > 0 else None


def _mem_total_kb() -> int:
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return 0
    for line in meminfo.read_text(encoding="utf-8").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1])
    return 0


def git_revision() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


def rss_mb(pid: int | None = None) -> float:
    """Resident set size of a process (this one by default) in MB, from /proc."""
    status = Path(f"/proc/{pid or os.getpid()}/status")
    for line in status.read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def used_memory(client: valkey.Valkey) -> int:
    """INFO memory used_memory in bytes; on a cluster client, summed over the primaries."""
    primaries = getattr(client, "get_primaries", None)
    if primaries is not None:
        each: Any = [client.info("memory", target_nodes=n) for n in primaries()]
        return sum(int(info["used_memory"]) for info in each)
    info: Any = client.info("memory")
    return int(info["used_memory"])


def child_env(settings: Any, **overrides: str) -> dict[str, str]:
    """The environment of a child process (`kenning mcp`, the RSS probe) on the bench's private
    Valkey, data dir, key prefix and embedder backend, never the user's; ``overrides``
    are more KENNING_* values."""
    env = {
        **os.environ,
        "KENNING_DATA_DIR": str(settings.data_dir),
        "KENNING_VALKEY_PORT": str(settings.valkey_port),
        "KENNING_KEY_PREFIX": settings.key_prefix,
        "KENNING_EMBEDDING_BACKEND": settings.embedding_backend,
        **overrides,
    }
    env.pop("KENNING_VALKEY_URL", None)
    return env
