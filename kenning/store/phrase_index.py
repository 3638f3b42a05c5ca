"""A phrase index in Valkey: normalised phrase -> {member: payload}, found by a query's n-grams.

Used by the graveyard (abandoned approach names -> the memories that recorded them) and by reinstate
hints (hint -> deprioritised memories). Maintained on write, so a look-up costs one SMISMEMBER for
all n-grams of the query plus one HGETALL per phrase that matched (pipelined) -- never a scan of the
store. ``Lookup`` sends the SMISMEMBERs of several indexes in a pipeline the
caller shares with other reads.

Keys (one hash tag per index, so every key of an index lives in one cluster slot and the Lua scripts
below stay cluster-safe):
  {prefix}{<name>}:names        SET   every phrase with at least one entry
  {prefix}{<name>}:e:<phrase>   HASH  member -> payload (JSON text or '')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import valkey
from valkey.client import Pipeline

from kenning.store.client import call, text
from kenning.store.unit import Op

_ADD = """
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""
_REMOVE = """
local removed = redis.call('HDEL', KEYS[2], ARGV[2])
if redis.call('HLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[1], ARGV[1]) end
return removed
"""


class PhraseIndex:
    def __init__(self, client: valkey.Valkey, prefix: str, name: str) -> None:
        self.client = client
        self.base = f"{prefix}{{{name}}}"
        self.names_key = f"{self.base}:names"

    def entries_key(self, phrase: str) -> str:
        return f"{self.base}:e:{phrase}"

    def adding(self, phrase: str, member: str, payload: str = "") -> list[Op]:
        """``add`` as writes of a unit (kenning.store.unit): the audited write that
        derives the entry carries it."""
        return [
            ("HSET", self.entries_key(phrase), (member, payload)),
            ("SADD", self.names_key, (phrase,)),
        ]

    def removing(self, phrase: str, member: str) -> list[Op]:
        """``remove`` as writes of a unit: the phrase leaves the index with its last entry."""
        entries = self.entries_key(phrase)
        return [("HDEL", entries, (member,)), ("PRUNE", entries, (self.names_key, phrase))]

    def add(self, phrase: str, member: str, payload: str = "") -> None:
        """Add (or replace) one member's entry under a normalised phrase; atomic on the server."""
        call(
            self.client.eval,
            _ADD,
            2,
            self.names_key,
            self.entries_key(phrase),
            phrase,
            member,
            payload,
        )

    def remove(self, phrase: str, member: str) -> bool:
        """Remove one member's entry; the phrase disappears with its last
        entry. True when it was there."""
        removed = call(
            self.client.eval, _REMOVE, 2, self.names_key, self.entries_key(phrase), phrase, member
        )
        return bool(removed)

    def lookup(self, phrases: Iterable[str]) -> dict[str, dict[str, str]]:
        """Entries of every given phrase that is in the index: {phrase: {member: payload}}."""
        look = Lookup((self,), phrases)
        pipe = self.client.pipeline(transaction=False)
        look.queue(pipe)
        return look.finish(self.client, call(pipe.execute))[0]

    def entries(self, phrase: str) -> dict[str, str]:
        return _decoded(call(self.client.hgetall, self.entries_key(phrase)))

    def phrases(self) -> list[str]:
        """Every phrase in the index, sorted."""
        return sorted(text(v) for v in call(self.client.smembers, self.names_key))


class Lookup:
    """The same phrases looked up in several indexes, the first step riding in a caller's pipeline.

    ``queue`` adds one SMISMEMBER per index to the pipeline; ``finish`` takes those replies and
    fetches the entries of the phrases present, all indexes in one more round trip
    (none when nothing matched).
    """

    def __init__(self, indexes: Sequence[PhraseIndex], phrases: Iterable[str]) -> None:
        self.indexes = tuple(indexes)
        self.wanted = sorted(set(phrases))

    def queue(self, pipe: Pipeline) -> None:
        """Queue the presence checks: one reply per index, none at all when there are no phrases."""
        if self.wanted:
            for index in self.indexes:
                pipe.smismember(index.names_key, self.wanted)

    def finish(
        self, client: valkey.Valkey, replies: Sequence[Any]
    ) -> list[dict[str, dict[str, str]]]:
        """Each index's {phrase: {member: payload}} from the replies ``queue`` asked for."""
        present = [
            [p for p, flag in zip(self.wanted, flags, strict=True) if flag] for flags in replies
        ]
        if not any(present):
            return [{} for _ in self.indexes]
        pipe = client.pipeline(transaction=False)
        for index, names in zip(self.indexes, present, strict=True):
            for name in names:
                pipe.hgetall(index.entries_key(name))
        raw = iter(call(pipe.execute))
        return [{name: _decoded(next(raw)) for name in names} for names in present]


def _decoded(raw: dict[Any, Any]) -> dict[str, str]:
    return {text(k): text(v) for k, v in raw.items()}
