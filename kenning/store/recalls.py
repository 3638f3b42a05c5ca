"""Live recall counters, kept beside the memory hashes (docs/memory-model.md, "Usage counters").

Every write to an indexed hash makes the search module re-index the whole document, vector included,
so a recall never writes the memories it returns. The touch writes one small hash per returned
memory, ``{prefix}recalled:{memory key}`` (``count``, ``last``), and adds the memory key to the set
``{prefix}recalled:dirty``; each command names one key (cluster-safe; in the cluster layout the
counter sits in its memory's slot, ``{prefix}recalled:{<memory key>}``).

The rule for the live value: the counter key when it exists, else the memory hash's own
``recall_count`` / ``last_recalled``. A new counter key starts from the count the caller read from
the hash (it is the live value exactly when no counter key exists), so counts written before this
layout keep counting. ``fold`` (maintenance) copies the counter into the hash, which is what FT
SORTBY sees, and lets a counter that no touch changed since expire (``SETTLED_TTL``); a touch
cancels that expiry. The fold only ever copies a value and never subtracts, so a
concurrent touch is never lost.

A recall's touch is written behind its reply (``Store.log_recall``, kenning.store.writer): every
read here (``live``, ``fold``, ``drop``, and ``MemoryStore.read``) first calls ``settle``, which
waits for this process's pending touches, so a reader in the same process sees every recall that
returned before it asked. ``queue_read`` does not wait: a recall reads its hits' counters with it
(``MemoryStore.nearest``) after its look-up round trip settled them (``Store.look_up``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import valkey
from valkey.client import Pipeline

from kenning.core import schema
from kenning.core.models import Memory
from kenning.store import cluster_unit, layout, slots
from kenning.store.client import call, text
from kenning.store.patches import PATCH_SCRIPT, Patch

Command = tuple[Any, ...]  # one command's arguments, as sent
FOLD_BATCH = 500
# A folded counter key no touch changed since: the hash holds its value, so it may go. Far longer
# than a recall's read-then-touch (the only moment that reads the hash's count to
# start a new counter key).
SETTLED_TTL = 86_400
_TOUCH = """
redis.call('HSETNX', KEYS[1], 'count', ARGV[2])
local n = redis.call('HINCRBY', KEYS[1], 'count', 1)
redis.call('HSET', KEYS[1], 'last', ARGV[1])
redis.call('PERSIST', KEYS[1])
return n
"""
_SETTLE = """
if redis.call('HGET', KEYS[1], 'count') ~= ARGV[1] then return 0 end
return redis.call('EXPIRE', KEYS[1], ARGV[2])
"""


@dataclass(frozen=True)
class Counter:
    """A memory's counter key as read: ``count`` is None when there is none
    (the hash holds the value)."""

    count: int | None
    last: float | None

    @classmethod
    def parse(cls, reply: Sequence[Any]) -> Counter:
        count, last = reply
        return cls(
            None if count is None else int(text(count)), None if last is None else float(text(last))
        )

    def decode(self, key: str, fields: dict[str, str]) -> Memory:
        """The memory of hash ``fields`` with these live values: ``applied(schema.decode(...))``
        with one Memory built, not two (a recall decodes 25-60 rows)."""
        if self.count is None:
            return schema.decode(key, fields)
        live = {**fields, "recall_count": str(self.count)}
        if self.last is None:
            live.pop("last_recalled", None)
        else:
            live["last_recalled"] = repr(self.last)
        return schema.decode(key, live)

    def applied(self, memory: Memory) -> Memory:
        """The memory with these live values (unchanged when there is no counter key)."""
        if self.count is None:
            return memory
        return replace(memory, recall_count=self.count, last_recalled=self.last)


def _settled() -> None:
    """No touch is ever written behind (a store built without a writer)."""


class Recalls:
    """The counter keys of one key prefix: touch, live reads, fold, forget."""

    def __init__(
        self, client: valkey.Valkey, prefix: str, settle: Callable[[], None] = _settled
    ) -> None:
        """``settle`` waits for the touches this process still has to write
        (see the module docstring)."""
        self.client = client
        self.prefix = prefix
        self.dirty = f"{prefix}recalled:dirty"
        self.settle = settle
        self.clustered = layout.clustered(client)

    def key(self, memory_key: str) -> str:
        """The counter of ``memory_key``; in the cluster layout in the memory's own slot (its key
        as hash tag), so reading a memory by key needs only its own shard."""
        if self.clustered:
            return slots.beside(self.prefix, "recalled", memory_key)
        return f"{self.prefix}recalled:{memory_key}"

    # --- touch (the end of every recall) ----------------------------------------------------
    def touches(self, memories: Sequence[Memory], now: float) -> list[Command]:
        """count += 1, last = now for each memory (one command each, its reply the new count),
        then one SADD to the dirty set; nothing for no memories. Never a memory hash. A touch
        starts a new counter key from the count the memory was read with
        (see the module docstring)."""
        if not memories:
            return []
        return [
            *(
                ("EVAL", _TOUCH, 1, self.key(m.key), repr(now), str(m.recall_count))
                for m in memories
            ),
            ("SADD", self.dirty, *(m.key for m in memories)),
        ]

    @staticmethod
    def counted(memories: Sequence[Memory], now: float) -> list[Memory]:
        """The memories as their touch leaves them: the live count read + 1, recalled ``now``. Pure.

        Exact for one caller at a time; two recalls of the same memory that read it before either
        touch landed both show the same count, while the stored counter (HINCRBY) counts both.
        """
        return [replace(m, recall_count=m.recall_count + 1, last_recalled=now) for m in memories]

    # --- live reads -------------------------------------------------------------------------
    def queue_read(self, pipe: Pipeline, memory_key: str) -> None:
        """Queue the read of one counter key (``Counter.parse`` reads the
        reply); does not ``settle``."""
        pipe.hmget(self.key(memory_key), ["count", "last"])

    def live(self, memories: Sequence[Memory]) -> list[Memory]:
        """The memories with their live counters, in one round trip (after ``settle``)."""
        if not memories:
            return []
        self.settle()
        pipe = self.client.pipeline(transaction=False)
        for memory in memories:
            self.queue_read(pipe, memory.key)
        replies = call(pipe.execute)
        return [Counter.parse(r).applied(m) for m, r in zip(memories, replies, strict=True)]

    # --- forget -----------------------------------------------------------------------------
    def queue_forget(self, pipe: Pipeline, memory_keys: Sequence[str]) -> None:
        for memory_key in memory_keys:  # one key per command: cluster-safe
            pipe.delete(self.key(memory_key))

    def drop(self, memory_keys: Sequence[str]) -> None:
        """Delete the live counters of these memories (a restore brings the
        backup's): one round trip."""
        if memory_keys:
            self.settle()  # a touch written behind must not land after the drop
            pipe = self.client.pipeline(transaction=False)
            self.queue_forget(pipe, memory_keys)
            call(pipe.execute)

    # --- fold (maintenance) -----------------------------------------------------------------
    def fold(self, *, batch: int = FOLD_BATCH) -> dict[str, int]:
        """Copy the counters touched since the last fold into their memory hashes (for FT SORTBY).

        Pops what was dirty when it started, ``batch`` keys at a time: touches arriving meanwhile
        wait for the next fold. A counter whose memory is gone (a touch that landed after a
        forget) is deleted.
        """
        self.settle()
        todo = int(call(self.client.scard, self.dirty))
        folded = orphans = 0
        while todo > 0:
            keys = [text(k) for k in call(self.client.spop, self.dirty, min(batch, todo)) or []]
            if not keys:
                break
            todo -= len(keys)
            done, gone = self._fold(keys)
            folded, orphans = folded + done, orphans + gone
        return {"folded": folded, "orphans_removed": orphans}

    def _fold(self, keys: list[str]) -> tuple[int, int]:
        pipe = self.client.pipeline(transaction=False)
        for memory_key in keys:
            self.queue_read(pipe, memory_key)
        counters = [(k, Counter.parse(r)) for k, r in zip(keys, call(pipe.execute), strict=True)]
        # forgotten meanwhile: nothing to fold
        counters = [(k, c) for k, c in counters if c.count is not None]
        pipe = self.client.pipeline(transaction=False)
        # one HSET per memory: the re-index is paid here, off the hot path
        for memory_key, counter in counters:
            sets, removes = schema.encode_changes(
                {"recall_count": counter.count, "last_recalled": counter.last}
            )
            pipe.execute_command(  # type: ignore[no-untyped-call]
                "EVAL", PATCH_SCRIPT, 1, memory_key, *Patch(memory_key, sets, removes).args()
            )
        written = call(pipe.execute)
        # a script's writes, searchable from every shard before a sort reads them (on a cluster)
        cluster_unit.settle_searches(self.client, self.prefix, [k for k, _ in counters])
        pipe = self.client.pipeline(transaction=False)
        orphans = 0
        for (memory_key, counter), exists in zip(counters, written, strict=True):
            if exists:
                pipe.execute_command(  # type: ignore[no-untyped-call]
                    "EVAL", _SETTLE, 1, self.key(memory_key), str(counter.count), str(SETTLED_TTL)
                )
            else:
                pipe.delete(self.key(memory_key))
                orphans += 1
        call(pipe.execute)
        return len(counters) - orphans, orphans
