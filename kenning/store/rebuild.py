"""Rebuilding the memory index without a moment where searches read an incomplete index.

The index searches use is never dropped while it serves: a rebuild creates a new generation of the
current schema beside it (``schema.generation_name``), records what it builds under
``indexes.rebuild_key`` (so health says "rebuilding, N of M" instead of drift), waits until the new
generation holds every memory the live one holds, then switches the registry in one HSET. Every
process re-reads the registry (``Context.index``), so all of them follow the switch; the old index
is dropped only after ``grace`` seconds, longer than any process takes to re-read. Hashes are never
touched (FT.DROPINDEX without DD).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import valkey

from kenning.core import schema
from kenning.core.errors import BackendUnavailable
from kenning.store.client import call, text
from kenning.store.indexes import (
    IndexInfo,
    info,
    live_indexes,
    rebuild_key,
    registry_key,
    wait_for_backfill,
)


@dataclass(frozen=True)
class Rebuilding:
    """A rebuild in progress: the index being built, how many memories it holds and must hold."""

    index: str
    indexed: int
    total: int

    def describe(self) -> str:
        return (
            f"rebuilding the memory index: {self.indexed} of {self.total} memories in {self.index}"
        )


def status(client: valkey.Valkey, prefix: str) -> Rebuilding | None:
    """The rebuild in progress, if one is (read by health checks of every process)."""
    raw = {text(k): text(v) for k, v in call(client.hgetall, rebuild_key(prefix)).items()}
    if not raw.get("index"):
        return None
    current = info(client, raw["index"])
    indexed = 0 if current is None else current.num_docs
    return Rebuilding(raw["index"], indexed, int(raw.get("total", "0") or 0))


def rebuild(
    client: valkey.Valkey,
    prefix: str,
    dim: int,
    *,
    timeout: float,
    grace: float,
    switch: Callable[[str], None] | None = None,
    waiting: Callable[[], None] | None = None,
) -> IndexInfo:
    """Rebuild the memory index as a new generation; returns FT.INFO of the new live index.

    ``switch(name)`` is called once the registry names the new index (the calling process follows
    at once; others within their re-read interval); ``waiting()`` is called while the new index
    backfills (tests look at health from there).
    """
    old = live_indexes(client, prefix).get(schema.INDEX)
    before = None if old is None else info(client, old)
    total = 0 if before is None else before.num_docs
    name = schema.generation_name(prefix, dim, time.time_ns() // 1_000_000)
    call(client.hset, rebuild_key(prefix), mapping={"index": name, "total": str(total)})
    try:
        call(client.execute_command, *schema.create_args(name, schema.memory_prefix(prefix), dim))
        if waiting is not None:
            waiting()
        done = wait_for_backfill(client, name, timeout)
        if old is not None and before is not None:
            done = _caught_up(client, name, old, timeout)
        call(client.hset, registry_key(prefix), schema.INDEX, name)
    except BaseException:
        if info(client, name) is not None:
            call(client.execute_command, "FT.DROPINDEX", name)
        raise
    finally:
        call(client.delete, rebuild_key(prefix))
    if switch is not None:
        switch(name)
    if old is not None and old != name and before is not None:
        time.sleep(grace)
        call(client.execute_command, "FT.DROPINDEX", old)
    return done


def _caught_up(client: valkey.Valkey, name: str, old: str, timeout: float) -> IndexInfo:
    """Wait until the new index holds as many memories as the live one (both see every write made
    since the new one exists; the backfill flag alone has read "done" early on RediSearch)."""
    deadline = time.monotonic() + timeout
    while True:
        current, live = info(client, name), info(client, old)
        held = 0 if current is None else current.num_docs
        wanted = 0 if live is None else live.num_docs
        if current is not None and held >= wanted:
            return current
        if time.monotonic() > deadline:
            raise BackendUnavailable(
                f"index {name} holds {held} of {wanted} memories after {timeout:.0f}s; "
                "the live index was kept"
            )
        time.sleep(0.05)
