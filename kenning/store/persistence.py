"""The append-only file, compacted so that no fork can deadlock valkey-search.

valkey-search 1.2.1 deadlocks the whole server, for good, when an FT.SEARCH arrives while a fork
child is alive (an AOF rewrite, a BGSAVE, a replica's full sync) and a write made inside a script
or MULTI/EXEC is still queued for the index (valkey-io/valkey-search#1260, fixed after 1.2.1 by
#1292): FT.SEARCH drains that queue on the main thread and waits for the writer threads, which the
fork suspended and which only the main thread resumes. Every Kenning write is a script (a unit of
work: kenning.store.unit) and every recall an FT.SEARCH, so Valkey's own automatic AOF rewrite,
which forks whenever the file has doubled, would sooner or later stop the store (reproduced here:
tests/kenning/store/test_persistence.py). Kenning's Valkey therefore runs with automatic rewrites
off (``auto-aof-rewrite-percentage 0``, and no RDB snapshots: ``save ""``), and maintenance
compacts the file itself when it has grown as much as Valkey would have waited for (``due``):
writes are paused (``CLIENT PAUSE WRITE``: scripts wait, searches and reads go on), the index
queue is drained by one search, the rewrite forks and runs, and writes resume once it is done
(``compact``). While paused, no script can queue a write, so no search meets the deadlock; a
write waits for the rewrite (seconds for 100,000 memories) instead. The queue is one per index
and only a search of that index empties it, so the drain searches every index on the server
(FT._LIST): another prefix's, and both generations during a rebuild. An index that rejects
Kenning's query (another application's schema) cannot be drained: the compaction refuses rather
than fork. RediSearch has no such queue, and the same compaction serves it, without the drain.
``forks`` names a server's settings that fork on their own (a Valkey Kenning did not configure),
for the doctor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kenning.core.errors import BackendUnavailable, StoreError
from kenning.core.query import MATCH_ALL
from kenning.store import layout
from kenning.store.client import guarded, text

MIN_BYTES = 64 * 1024 * 1024  # Valkey's auto-aof-rewrite-min-size
GROWTH = 1.0  # Valkey's auto-aof-rewrite-percentage 100: the file has doubled since its rewrite
PAUSE_SECONDS = 120.0  # the most writes are held for one rewrite; they resume then in any case
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class AofState:
    """One server's append-only file, from ``INFO persistence``."""

    enabled: bool
    size: int  # bytes now
    base: int  # bytes after the last rewrite
    rewriting: bool

    def idle(self) -> str:
        """Why a compaction that was not forced rewrote nothing now."""
        if not self.enabled:
            return "the append-only file is off"
        if self.rewriting:
            return "a rewrite is already running"
        return "not due" if not self.due() else "due"

    def due(self, min_bytes: int = MIN_BYTES, growth: float = GROWTH) -> bool:
        """Whether the file has grown as Valkey's own automatic rewrite would wait for."""
        return (
            self.enabled
            and not self.rewriting
            and self.size >= min_bytes
            and self.size >= self.base * (1.0 + growth)
        )


@dataclass(frozen=True)
class Compacted:
    """A compaction: each server's file before and after, and how long writes waited."""

    servers: int
    before: int
    after: int
    paused_seconds: float

    def public(self) -> dict[str, Any]:
        return {
            "servers": self.servers,
            "before": self.before,
            "after": self.after,
            "paused_seconds": round(self.paused_seconds, 3),
        }


def state(client: Any, node: Any = None) -> AofState:
    info = _info(client, node)
    if "aof_enabled" not in info:  # never read as "off": the server is not one Kenning knows
        raise StoreError(
            "INFO persistence has no aof_enabled field: the append-only file cannot be read",
            hint="Kenning needs Valkey 7.2 or later (or Redis 7); see docs/operations.md",
        )
    return AofState(
        enabled=_int(info.get("aof_enabled")) == 1,
        size=_int(info.get("aof_current_size")),
        base=_int(info.get("aof_base_size")),
        rewriting=_int(info.get("aof_rewrite_in_progress")) == 1
        or _int(info.get("aof_rewrite_scheduled")) == 1,
    )


def compact(
    client: Any, *, drain: bool, force: bool = False, pause: float = PAUSE_SECONDS
) -> Compacted | None:
    """Rewrite the append-only file of each server whose file is ``due`` (every one with the AOF
    on when ``force``), writes paused meanwhile and, when ``drain`` (valkey-search), every index's
    queue emptied first (the module docstring says why); None when none was. Valkey going away
    raises ``BackendUnavailable``, an index that cannot be drained ``StoreError`` before any
    fork; writes resume in every case."""
    nodes = client.get_primaries() if layout.clustered(client) else [None]
    done = [_one(client, node, drain=drain, force=force, pause=pause) for node in nodes]
    ran = [d for d in done if d is not None]
    if not ran:
        return None
    return Compacted(
        servers=len(ran),
        before=sum(d[0] for d in ran),
        after=sum(d[1] for d in ran),
        paused_seconds=max(d[2] for d in ran),
    )


def _one(
    client: Any, node: Any, *, drain: bool, force: bool, pause: float
) -> tuple[int, int, float] | None:
    before = state(client, node)
    if not before.enabled or before.rewriting or not (force or before.due()):
        return None
    start = time.monotonic()
    _command(client, node, "CLIENT", "PAUSE", str(int(pause * 1000)), "WRITE")
    try:
        if drain:
            _drain(client, node)
        _command(client, node, "BGREWRITEAOF")
        while state(client, node).rewriting:
            if time.monotonic() - start > pause:
                raise BackendUnavailable(
                    f"the append-only file's rewrite took over {pause:.0f} s; writes resumed",
                    hint="the rewrite goes on in Valkey; see its log",
                )
            time.sleep(POLL_SECONDS)
    finally:
        _command(client, node, "CLIENT", "UNPAUSE")
    return before.size, state(client, node).size, time.monotonic() - start


def _drain(client: Any, node: Any) -> None:
    """One search of every index on the server: valkey-search empties an index's queue of script
    writes on that index's next search, so none is left for a search during the fork to wait on.
    Raises ``StoreError`` for an index whose schema rejects Kenning's query."""
    for raw in _command(client, node, "FT._LIST") or []:
        name = text(raw)
        try:
            _command(client, node, "FT.SEARCH", name, MATCH_ALL, "LIMIT", "0", "0", "DIALECT", "2")
        except StoreError as exc:
            raise StoreError(
                f"nothing rewritten: index {name!r} is not Kenning's and rejects its query "
                f"({exc.message}), so the writes queued for it cannot be drained, and a search of "
                "it during the rewrite could deadlock valkey-search 1.2.1",
                hint="rewrite the file while that index's application is stopped, or move it to "
                "a server of its own",
            ) from exc


def forks(client: Any) -> list[str]:
    """The settings by which a server forks on its own while Kenning writes: an automatic AOF
    rewrite, RDB snapshots (``CONFIG GET``; each primary of a cluster, named)."""
    nodes = client.get_primaries() if layout.clustered(client) else [None]
    found: list[str] = []
    for node in nodes:
        where = "" if node is None else f" on {node.host}:{node.port}"
        rewrite = _config(client, node, "auto-aof-rewrite-percentage")
        if rewrite not in ("", "0"):
            found.append(f"auto-aof-rewrite-percentage {rewrite}{where}")
        save = _config(client, node, "save")
        if save.strip():
            found.append(f'save "{save}"{where}')
    return found


def _config(client: Any, node: Any, name: str) -> str:
    reply = _command(client, node, "CONFIG", "GET", name)
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2], strict=True)
    return next((text(v) for k, v in pairs if text(k) == name), "")


def _info(client: Any, node: Any) -> dict[str, str]:
    raw = _command(client, node, "INFO", "persistence")
    if isinstance(raw, dict):
        return {text(k): text(v) for k, v in raw.items()}
    lines = text(raw).splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line and not line.startswith("#"))


def _command(client: Any, node: Any, *args: str) -> Any:
    with guarded():
        if node is None:
            return client.execute_command(*args)
        return client.execute_command(*args, target_nodes=node)


def _int(value: Any) -> int:
    try:
        return int(float(text(value)))
    except (TypeError, ValueError):
        return 0
