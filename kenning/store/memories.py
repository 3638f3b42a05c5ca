"""Memory hashes and FT.SEARCH over them.

A single read merges the memory's live recall counters (``kenning.store.recalls``) in the same round
trip, and so does ``nearest`` (a recall's reply shows them); other search results carry the hash's
own (folded) values, and callers that show them merge them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import valkey

from kenning.core import schema
from kenning.core.errors import StoreError
from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.store import ordering, prefilter, search_module, vectors
from kenning.store.audit import AuditEvent
from kenning.store.batch import Batch
from kenning.store.client import call, text
from kenning.store.decoded import Decoded, as_text
from kenning.store.hits import Hit, Near, SearchResult
from kenning.store.locks import Lease
from kenning.store.patches import Patch
from kenning.store.prefilter import Row
from kenning.store.recalls import Counter, Recalls
from kenning.store.unit import APPLIED, Op, Unit, Units
from kenning.store.unreachable import Unreachable, merged

# a model's embedding (written spread for its key) or a vector as a store wrote it
VectorIn = np.ndarray[Any, Any] | vectors.Stored


class MemoryStore:
    """Reads and writes memory hashes; runs searches built by ``kenning.core.query``."""

    def __init__(
        self,
        client: valkey.Valkey,
        prefix: str,
        *,
        exact_small_sets: bool | None = None,
        recalls: Recalls | None = None,
        units: Units | None = None,
    ) -> None:
        """``exact_small_sets``: whether ``prefilter`` answers filtered KNNs over small sets;
        None (the default) decides on first use: yes on valkey-search, no on RediSearch
        (docs/valkey-search.md). ``recalls``: the counters (the Store's, which settle its
        pending touches), else its own. ``units``: how units of work are sent (the cluster
        layout's split, kenning.store.cluster_unit), else on one server."""
        self.client = client
        self.prefix = prefix
        self.recalls = recalls or Recalls(client, prefix)
        self.decoded = Decoded()
        self.units = units or Units(client, prefix)
        self._exact_small_sets = exact_small_sets
        # what the graph does not reach, scored exactly in its KNNs (kenning.store.unreachable)
        self.unreachable = Unreachable(client, prefix)

    def new_key(self, namespace: str, ulid: str) -> str:
        return f"{schema.key_prefix(self.prefix, namespace)}{ulid}"

    def write(
        self,
        memory: Memory,
        vector: VectorIn | None,
        events: Sequence[AuditEvent],
        also: Sequence[Op] = (),
        *,
        then_release: Lease | None = None,
        then_read: str | None = None,
    ) -> str | None:
        """Write every field of the memory and record ``events``: one unit of work (store.unit).
        Fields the memory no longer has are removed in the same step; the index is current when it
        returns. ``also``: writes derived from this one (a sub-store's ``Op``s), in the same unit.
        ``then_release``: a lease given up right after the write, in the same round trip;
        ``then_read``: a string key read right after it (returned), in the same round trip.
        """
        fields = self._fields(memory, vector)
        stale = [f for f in schema.FIELD_NAMES if f not in fields]
        return self.units.commit(
            Unit(events).hset(memory.key, fields).hdel(memory.key, *stale).extend(also),
            then_release=then_release,
            then_read=then_read,
        ).read

    def update(self, key: str, changes: dict[str, Any], events: Sequence[AuditEvent]) -> bool:
        """Set some fields on one existing key and record ``events``, in one atomic step (None
        removes the field). No read-modify-write: a concurrent counter bump is never lost, and a
        forgotten memory is never re-created. False when the key no longer exists (nothing
        written, nothing recorded)."""
        return self.swap(key, {}, changes, None, events) == APPLIED

    def swap(
        self,
        key: str,
        expect: dict[str, Any],
        changes: dict[str, Any],
        vector: VectorIn | None,
        events: Sequence[AuditEvent],
    ) -> int:
        """``update`` only while every ``expect`` field still holds the value given (None =
        absent): APPLIED, GONE, or CHANGED when another writer changed one of them
        (nothing is written or recorded)."""
        sets, removes = schema.encode_changes(changes)
        guard, _ = schema.encode_changes(expect)
        fields: dict[str, str | bytes] = dict(sets)
        if vector is not None:
            fields[schema.VECTOR_FIELD] = vectors.field_bytes(key, vector)
        unit = Unit(events).patch(
            key, fields, removes, expect={name: guard.get(name, "") for name in expect}
        )
        return self.units.commit(unit).outcome

    def change(
        self,
        key: str,
        expect: dict[str, Any],
        changes: dict[str, Any],
        also: Sequence[Op] = (),
    ) -> Patch:
        """``changes`` of one memory (None removes a field) as a ``Patch`` applied only while
        every ``expect`` field holds the value given (None = absent): a decision's part."""
        sets, removes = schema.encode_changes(changes)
        guard, _ = schema.encode_changes(expect)
        return Patch(
            key,
            set=dict(sets),
            remove=removes,
            expect={name: guard.get(name, "") for name in expect},
            also=tuple(also),
        )

    def fields(self, memory: Memory, vector: VectorIn | None) -> list[Op]:
        """The writes of a new memory, for a decision that creates one (e.g. a merge)."""
        return [
            ("HSET", memory.key, tuple(v for p in self._fields(memory, vector).items() for v in p))
        ]

    def patch(self, change: Patch, events: Sequence[AuditEvent]) -> int:
        """Apply an encoded ``Patch`` (kenning.store.patches) with its ``events``:
        APPLIED, GONE or CHANGED."""
        unit = (
            Unit(events)
            .patch(change.key, change.set, change.remove, expect=change.expect)
            .extend(change.also)
        )
        return self.units.commit(unit).outcome

    def write_many(self, rows: Sequence[tuple[Memory, Any, Sequence[AuditEvent]]]) -> None:
        """``write`` for many memories (each with its vector and events): one pipelined round trip.

        Each memory is its own unit; a search after it returns sees every one."""
        self.units.commit_many(
            [
                Unit(events).hset(memory.key, self._fields(memory, vector))
                for memory, vector, events in rows
            ]
        )

    def _fields(self, memory: Memory, vector: VectorIn | None) -> dict[str, str | bytes]:
        """The hash fields of ``memory``, always with the namespace its key names: the one index
        finds a namespace's memories by that field. The vector is written spread for the key
        (kenning.store.vectors: no two memories hold the same vector), a ``Stored`` one as it
        is."""
        fields = schema.encode(memory, None)
        if vector is not None:
            fields[schema.VECTOR_FIELD] = vectors.field_bytes(memory.key, vector)
        fields["namespace"] = schema.namespace_of(memory.key, self.prefix) or memory.namespace
        return fields

    def patch_many(self, changes: Sequence[tuple[Patch, Sequence[AuditEvent]]]) -> list[int]:
        """``patch`` for many memories, one pipelined round trip; each one's outcome."""
        done = self.units.commit_many(
            [
                Unit(events).patch(p.key, p.set, p.remove, expect=p.expect).extend(p.also)
                for p, events in changes
            ]
        )
        return [c.outcome for c in done]

    def delete_many(
        self,
        gone: Sequence[tuple[str, Sequence[AuditEvent], Sequence[Op]]],
        expect: Sequence[Mapping[str, str]] = (),
    ) -> list[bool]:
        """``delete`` for many memories (each with its events and derived writes), one pipelined
        round trip; whether each one was there (and, given ``expect``, each one's fields still
        held those encoded values: else it is left as it is, unrecorded)."""
        guards = list(expect) or [{} for _ in gone]
        done = self.units.commit_many(
            [
                Unit(events).gate(key, guard).delete(key, self.recalls.key(key)).extend(also)
                for (key, events, also), guard in zip(gone, guards, strict=True)
            ]
        )
        return [c.applied for c in done]

    def read(self, key: str) -> Memory | None:
        """The memory with its live recall counters (hash and counter key in
        one round trip), or None."""
        self.recalls.settle()
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(key)
        self.recalls.queue_read(pipe, key)
        raw, counter = call(pipe.execute)
        if not raw:
            return None
        fields = {text(k): text(v) for k, v in raw.items() if text(k) != schema.VECTOR_FIELD}
        return Counter.parse(counter).decode(key, fields)

    def snapshots(self, keys: Sequence[str]) -> list[tuple[Memory, bytes | None] | None]:
        """Each memory whole -- every field and its vector (raw float32 bytes) from ONE HGETALL,
        so content and vector are of the same version -- with its live recall counters; None
        where the hash is gone. One pipelined round trip; times exactly as stored."""
        if not keys:
            return []
        self.recalls.settle()
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.hgetall(key)
            self.recalls.queue_read(pipe, key)
        replies = call(pipe.execute)
        out: list[tuple[Memory, bytes | None] | None] = []
        for key, raw, counter in zip(keys, replies[::2], replies[1::2], strict=True):
            if not raw:
                out.append(None)
                continue
            vector = raw.get(schema.VECTOR_FIELD.encode())
            fields = {text(k): text(v) for k, v in raw.items() if text(k) != schema.VECTOR_FIELD}
            out.append((Counter.parse(counter).decode(key, fields), vector))
        return out

    def read_vector(self, key: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        raw = call(self.client.hget, key, schema.VECTOR_FIELD)
        return None if raw is None else schema.bytes_vector(raw)

    def exists(self, key: str) -> bool:
        return bool(call(self.client.exists, key))

    def delete(self, key: str, events: Sequence[AuditEvent], also: Sequence[Op] = ()) -> bool:
        """Delete the hash and its recall counter and record ``events`` (one unit of work, with
        the derived writes ``also``); False when the hash was gone (nothing written or recorded)."""
        return self.units.commit(
            Unit(events).gate(key).delete(key, self.recalls.key(key)).extend(also)
        ).applied

    def search(self, query: Search) -> SearchResult:
        if ordering.implied(query):  # SORTBY a field a hash may leave out: two searches, merged
            field = query.sort_by or ""
            total, hits = ordering.merged(
                self._one, query, lambda h: getattr(h.memory, field, None) or 0.0
            )
            return SearchResult(total=total, hits=tuple(hits))
        return self._one(query)

    def _one(self, query: Search) -> SearchResult:
        (extra,) = self.unreachable.rows([query], [_named(query)])
        return _parse(call(self.client.execute_command, *query.args()), query, extra)

    def batch(self, wanted: Sequence[Near]) -> Batch:
        """KNNs sent in a caller's pipeline, answered with their rows' fields (``Batch``)."""
        return Batch(self.client, wanted, exact=self.exact_mode(), unreachable=self.unreachable)

    def search_many(self, queries: Sequence[Search]) -> list[SearchResult]:
        """Several searches in one round trip; results in query order.

        A KNN that reads only the rows within a distance is ``nearest``. On valkey-search a
        filtered KNN over a small set is answered exactly by ``prefilter`` (two more
        round trips, no graph walk)."""
        if not queries:
            return []
        named = [_named(q) for q in queries]
        exact = self._exact(queries, named)
        extra = iter(self.unreachable.rows(_graph(queries, exact), named))
        pipe = self.client.pipeline(transaction=False)
        for q, rows in zip(queries, exact, strict=True):
            if rows is None:
                pipe.execute_command(*q.args())  # type: ignore[no-untyped-call]
        replies = iter(call(pipe.execute, raise_on_error=True) if None in exact else ())
        return [
            _parse(next(replies), q, next(extra)) if rows is None else _exact_result(rows, q)
            for q, rows in zip(queries, exact, strict=True)
        ]

    def _exact(
        self, searches: Sequence[Search], fields: Sequence[Sequence[str]]
    ) -> list[list[Row] | None]:
        """``prefilter.exact`` on the engine that needs it (valkey-search),
        else None for every search."""
        if not self.exact_mode() or not any(prefilter.candidates(s) for s in searches):
            return [None] * len(searches)
        return prefilter.exact(self.client, searches, fields)

    def exact_mode(self) -> bool:
        """Whether ``prefilter`` answers filtered KNNs over small sets
        here (decided on first use)."""
        if self._exact_small_sets is None:
            found = search_module.detect(self.client)
            self._exact_small_sets = found is not None and found.name == search_module.VALKEY_SEARCH
        return self._exact_small_sets

    def nearest(self, wanted: Sequence[Near]) -> list[SearchResult]:
        """KNN searches (one round trip) that return only the distance (and each one's ``fields``),
        then every field of the rows kept and their live recall counters (not settled: ``Recalls``),
        for all of them at once, in a second round trip (HMGET, never the vector).

        A row is kept when it is within its ``max_distance`` and its ``accept(fields)`` holds. A
        recall over-fetches 25-200 rows and keeps the few above its relevance floor: sending and
        decoding every field of every row cost more than the second round trip (docs/benchmarks.md).
        Searches with other rules (a recall's candidates and its identifier searches) share both
        round trips. A row whose hash is gone by the read counts as a phantom, as in
        ``search_many``. A search ``prefilter`` answers (on valkey-search) reads only the vectors of
        its set (and ``fields``): its kept rows are read whole in the second round trip like the
        others. Reading every field of the whole set with the vectors cost 4-5 ms of a recall at
        250k memories (~200 HMGETs of every field) against ~10 rows kept (bench/FINDINGS.md,
        "valkey-search at scale").
        """
        if not wanted:
            return []
        found_rows = self._slim(wanted)
        near = [
            w.search.page(_kept(rows, w), lambda row: row[1])
            for w, rows in zip(wanted, found_rows, strict=True)
        ]
        kept = [key for rows in near for key, _ in rows]
        values, counters = self._read_rows(kept)
        out: list[SearchResult] = []
        spreads = [_spread(rows, w.search) for rows, w in zip(found_rows, wanted, strict=True)]
        for total, rows, spread in zip(
            [len(rows) for rows in found_rows], near, spreads, strict=True
        ):
            hits: list[Hit] = []
            phantoms = 0
            for key, distance in rows:
                # read in this order
                memory = self.decoded.memory(key, next(values), next(counters))
                if memory is None:
                    phantoms += 1
                    continue
                hits.append(Hit(memory, distance))
            out.append(
                SearchResult(total=total, hits=tuple(hits), phantoms=phantoms, distances=spread)
            )
        return out

    def _slim(self, wanted: Sequence[Near]) -> list[list[Row]]:
        """``nearest``'s first round trip: each KNN's rows with the distance and its ``fields``
        (``prefilter``'s where it answers), with the memories the graph misses among them
        (kenning.store.unreachable)."""
        searches = [w.search for w in wanted]
        exact = self._exact(searches, [w.fields for w in wanted])
        pipe = self.client.pipeline(transaction=False)
        for w, found in zip(wanted, exact, strict=True):
            if found is None:
                slim = replace(w.search, return_fields=(*w.fields, schema.DISTANCE_ALIAS))
                pipe.execute_command(*slim.args())  # type: ignore[no-untyped-call]
        replies = iter(call(pipe.execute, raise_on_error=True) if None in exact else ())
        found_rows = [_slim_rows(next(replies)) if found is None else found for found in exact]
        extra = self.unreachable.rows(_graph(searches, exact), [w.fields for w in wanted])
        return [
            merged(rows, more, w.search.knn)
            for rows, more, w in zip(found_rows, extra, wanted, strict=True)
        ]

    def _read_rows(self, keys: list[str]) -> tuple[Iterator[Any], Iterator[Counter]]:
        """The HMGET reply of every declared field (never the vector) of each of ``keys`` and
        its live recall counter, in one round trip."""
        if not keys:
            return iter(()), iter(())
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.hmget(key, list(schema.FIELD_NAMES))
        for key in keys:
            self.recalls.queue_read(pipe, key)
        replies = call(pipe.execute, raise_on_error=True)
        return iter(replies[: len(keys)]), (Counter.parse(r) for r in replies[len(keys) :])

    def count(self, query: Search) -> int:
        reply = call(
            self.client.execute_command, *replace(query, limit=0, offset=0, return_fields=()).args()
        )
        return int(reply[0]) if isinstance(reply, list) else int(reply)


def _parse(reply: Any, query: Search, extra: Sequence[Row] = ()) -> SearchResult:
    """One FT.SEARCH reply; a KNN's hits nearest first (``Search.page``), with the ``extra`` rows
    the graph missed (kenning.store.unreachable) among them."""
    if not isinstance(reply, list) or not reply:
        raise StoreError(f"unexpected FT.SEARCH reply: {reply!r:.200}")
    total = int(reply[0])
    if not query.return_fields:
        return SearchResult(
            total=total, hits=tuple(Hit(schema.decode(text(k), {}), None) for k in reply[1:])
        )
    hits: list[Hit] = []
    phantoms = 0
    for i in range(1, len(reply) - 1, 2):
        raw = reply[i + 1]
        fields = {
            raw[j].decode(): raw[j + 1].decode("utf-8", "replace")
            for j in range(0, len(raw) - 1, 2)
        }
        distance = fields.pop(schema.DISTANCE_ALIAS, None)
        if "created_at" not in fields:
            phantoms += 1  # the index still lists a hash that is gone
            continue
        hits.append(
            Hit(
                schema.decode(text(reply[i]), fields),
                float(distance) if distance is not None else None,
            )
        )
    if extra:
        rows = [(h.memory.key, h.distance, h) for h in hits]
        more = [(k, d, Hit(schema.decode(k, f), d)) for k, d, f in extra if "created_at" in f]
        hits = [hit for _, _, hit in merged(rows, more, query.knn)]
    return SearchResult(
        total=total, hits=tuple(query.page(hits, lambda hit: hit.distance)), phantoms=phantoms
    )


def _named(query: Search) -> tuple[str, ...]:
    """The fields a search returns, but the distance."""
    return tuple(f for f in query.return_fields if f != schema.DISTANCE_ALIAS)


def _graph(searches: Sequence[Search], exact: Sequence[object | None]) -> list[Search | None]:
    """The searches the graph answers (``prefilter`` answered none of them), else None."""
    return [s if done is None else None for s, done in zip(searches, exact, strict=True)]


def _spread(rows: list[Row], search: Search) -> tuple[float, ...]:
    """The distances of a KNN's rows, nearest first (at most its k)."""
    return tuple(sorted(row[1] for row in rows)[: search.knn or len(rows)])


def _slim_rows(reply: Any) -> list[Row]:
    """(key, distance, fields) of the rows of one slim KNN reply."""
    if not isinstance(reply, list) or not reply:
        raise StoreError(f"unexpected FT.SEARCH reply: {reply!r:.200}")
    rows: list[Row] = []
    for i in range(1, len(reply) - 1, 2):
        raw = reply[i + 1]
        found = {as_text(raw[j]): as_text(raw[j + 1]) for j in range(0, len(raw) - 1, 2)}
        rows.append((text(reply[i]), float(found.pop(schema.DISTANCE_ALIAS, "inf")), found))
    return rows


def _kept(rows: list[Row], near: Near) -> list[tuple[str, float]]:
    """(key, distance) of the rows within ``near.max_distance`` that ``near.accept(fields)``
    keeps, but none of ``near.skip``."""
    return [
        (key, distance)
        for key, distance, fields in rows
        if key not in near.skip
        and (near.max_distance is None or distance <= near.max_distance)
        and (near.accept is None or near.accept(fields))
    ]


def _exact_result(rows: list[Row], query: Search) -> SearchResult:
    """A ``search_many`` result from ``prefilter`` rows (nearest first), as
    ``_parse`` reads a KNN reply."""
    hits = [
        Hit(schema.decode(key, fields), distance)
        for key, distance, fields in rows
        if "created_at" in fields
    ]
    return SearchResult(
        total=len(rows),
        hits=tuple(query.page(hits, lambda hit: hit.distance)),
        phantoms=len(rows) - len(hits),
    )
