"""Contradiction records: one hash per contradiction plus the small indexes that find them.

Keys (all under the store prefix):
- ``contra:rec:{id}``   the record (hash; JSON for the structured fields)
- ``contra:all``        every record id, scored by detection time (sorted set)
- ``contra:open``       the open ones (sorted set), so listing blockers never reads closed records
- ``contra:key:{key}``  ids of the records touching one memory (set)
- ``contra:pairs`` "keyA|keyB" (sorted) -> id of its open or resolved record, so
  a pair is stored once and
                        never flagged twice; a closed record (a side left) releases it

Each write touches one key at a time (no multi-key transactions), so this stays cluster-safe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import valkey

from kenning.core.models import iso
from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Op, Unit, Units

STATUSES: tuple[str, ...] = ("open", "resolved", "closed")
_JSON = ("evidence", "projects", "prior")
_FLOAT = ("similarity", "detected_at", "resolved_at")
_EMPTY = ("", "{}", "[]")  # a text, mapping or list with nothing in it


@dataclass(frozen=True)
class Contradiction:
    """Two memories that disagree, and what became of it.

    ``second_tier`` is the optional LLM verdict: ``unknown`` until a checker has actually answered;
    it never turns into "not a contradiction" by failing.
    """

    id: str
    a: str
    b: str
    status: str = "open"
    detector: str = "polarity"
    evidence: dict[str, Any] = field(default_factory=dict)
    similarity: float = 0.0
    detected_at: float = 0.0
    detected_by: str = ""
    second_tier: str = "unknown"
    second_tier_note: str = ""
    decision: str = ""
    note: str = ""
    resolved_by: str = ""
    resolved_at: float = 0.0
    closed_reason: str = ""
    merged_key: str = ""
    projects: tuple[str, ...] = ()
    # key -> belief fields before the resolution
    prior: dict[str, Any] = field(default_factory=dict)

    def other(self, key: str) -> str:
        return self.b if key == self.a else self.a

    def public(self) -> dict[str, Any]:
        data = asdict(self)
        data["projects"] = list(self.projects)
        data["detected_at"] = iso(self.detected_at)
        data["resolved_at"] = iso(self.resolved_at) if self.resolved_at else None
        data.pop("prior")
        return data

    def encode(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name in _JSON:
                out[spec.name] = json.dumps(
                    list(value) if spec.name == "projects" else value, sort_keys=True
                )
            elif isinstance(value, float):
                out[spec.name] = repr(value)
            else:
                out[spec.name] = str(value)
        return out

    def stored(self) -> tuple[dict[str, str], tuple[str, ...]]:
        """``encode`` split into the fields a record's hash holds and the empty ones it leaves out
        (``decode`` restores them; ~0.1 KB less per record: issue 38). Numbers are always kept:
        a decision is gated on ``resolved_at`` as read."""
        out = self.encode()
        empty = tuple(name for name, value in out.items() if value in _EMPTY)
        return {k: v for k, v in out.items() if k not in empty}, empty

    @classmethod
    def decode(cls, raw: dict[str, str]) -> Contradiction:
        names = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for name, value in raw.items():
            if name not in names:
                continue
            if name in _JSON:
                loaded = json.loads(value or "null")
                values[name] = tuple(loaded or ()) if name == "projects" else (loaded or {})
            elif name in _FLOAT:
                values[name] = float(value or 0.0)
            else:
                values[name] = value
        return cls(**values)


# what a decision on a record was made from: a unit deciding it is gated on these
DECIDED = ("status", "decision", "resolved_at")


class _Ops:
    """Collects ``_queue``'s writes as ops (the methods a Unit and a pipeline share)."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def hset(self, key: str, mapping: dict[str, str]) -> None:
        self.ops.append(("HSET", key, tuple(v for pair in mapping.items() for v in pair)))

    def zadd(self, key: str, mapping: dict[str, float]) -> None:
        flat = tuple(v for member, score in mapping.items() for v in (repr(score), member))
        self.ops.append(("ZADD", key, flat))

    def zrem(self, key: str, *members: str) -> None:
        self.ops.append(("ZREM", key, members))

    def sadd(self, key: str, *members: str) -> None:
        self.ops.append(("SADD", key, members))

    def hdel(self, key: str, *names: str) -> None:
        self.ops.append(("HDEL", key, names))


def pair_id(a: str, b: str) -> str:
    """The order-free name of a pair of memory keys."""
    first, second = sorted((a, b))
    return f"{first}|{second}"


class ContradictionStore:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.units = units or Units(client, prefix)

    def _k(self, *parts: str) -> str:
        return self.prefix + "contra:" + ":".join(parts)

    def save(self, record: Contradiction, events: Sequence[AuditEvent]) -> None:
        """Write the record and keep every index in step with its status, in one round trip: with
        ``events`` as one unit of work (kenning.store.unit); without, only where the events that
        record it follow on memory writes (opening: both sides' ``dispute``) or on the
        sides still there (closing)."""
        if events:
            self.units.commit(self._queue(Unit(events), record))
        else:
            call(self._queue(self.client.pipeline(transaction=False), record).execute)

    def saving(self, record: Contradiction, *, read: Contradiction) -> list[Op]:
        """The writes of ``save`` as ops for a decision's unit, gated on the record still being
        as ``read`` (its status, decision and time of resolution): a concurrent decision on the
        same record makes the unit write nothing."""
        seen, _ = read.stored()  # a field left out reads '': the gate's absent
        gate = tuple(v for name in DECIDED for v in (name, seen.get(name, "")))
        return [("GATE", self._k("rec", record.id), gate), *self._queue(_Ops(), record).ops]

    def _queue(self, target: Any, record: Contradiction) -> Any:
        """The record's writes on ``target`` (a Unit or a pipeline: one key per command)."""
        fields, empty = record.stored()
        target.hset(self._k("rec", record.id), mapping=fields)
        if empty:  # a field emptied since the last write must not keep its old value
            target.hdel(self._k("rec", record.id), *empty)
        target.zadd(self._k("all"), {record.id: record.detected_at})
        if record.status == "open":
            target.zadd(self._k("open"), {record.id: record.detected_at})
        else:
            target.zrem(self._k("open"), record.id)
        # by the time of the decision, for the dashboard's per-day chart
        if record.status == "resolved":
            target.zadd(self._k("resolved"), {record.id: record.resolved_at})
        else:
            target.zrem(self._k("resolved"), record.id)
        for key in (record.a, record.b):
            target.sadd(self._k("key", key), record.id)
        if record.status != "closed":  # a closed record no longer holds its pair (see release_pair)
            target.hset(self._k("pairs"), mapping={pair_id(record.a, record.b): record.id})
        return target

    def get(self, record_id: str) -> Contradiction | None:
        raw = call(self.client.hgetall, self._k("rec", record_id))
        if not raw:
            return None
        return Contradiction.decode({text(k): text(v) for k, v in raw.items()})

    def many(self, ids: list[str]) -> list[Contradiction]:
        """The records that exist, in the order given (one pipelined round trip)."""
        if not ids:
            return []
        pipe = self.client.pipeline(transaction=False)
        for record_id in ids:
            pipe.hgetall(self._k("rec", record_id))
        return [
            Contradiction.decode({text(k): text(v) for k, v in raw.items()})
            for raw in call(pipe.execute)
            if raw
        ]

    def ids(self, *, open_only: bool, offset: int = 0, limit: int = 100) -> list[str]:
        """Record ids, newest first."""
        name = self._k("open") if open_only else self._k("all")
        rows = call(self.client.zrevrange, name, offset, offset + limit - 1)
        return [text(r) for r in rows]

    def count(self, *, open_only: bool) -> int:
        return int(call(self.client.zcard, self._k("open") if open_only else self._k("all")))

    def per_window(self, windows: Sequence[tuple[float, float]], *, resolved: bool) -> list[int]:
        """How many records were detected (or, ``resolved``, decided) in each [start, end) window
        (one round trip). Records resolved before this index existed are not
        in it (docs/dashboard.md)."""
        name = self._k("resolved") if resolved else self._k("all")
        pipe = self.client.pipeline(transaction=False)
        for start, end in windows:
            pipe.zcount(name, repr(start), "(" + repr(end))
        return [int(n) for n in call(pipe.execute)]

    def for_key(self, key: str) -> list[str]:
        return sorted(text(r) for r in call(self.client.smembers, self._k("key", key)))

    def for_keys(self, keys: list[str]) -> list[str]:
        """The ids of the records touching any of ``keys`` (one pipelined round trip), sorted."""
        if not keys:
            return []
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.smembers(self._k("key", key))
        return sorted({text(r) for members in call(pipe.execute) for r in members})

    def pair(self, a: str, b: str) -> str | None:
        raw = call(self.client.hget, self._k("pairs"), pair_id(a, b))
        return None if raw is None else text(raw)

    def claim_pair(self, a: str, b: str, record_id: str) -> bool:
        """Reserve a pair for a new record (HSETNX); False when a record for it exists already."""
        return bool(call(self.client.hsetnx, self._k("pairs"), pair_id(a, b), record_id))

    def release_pair(self, a: str, b: str) -> None:
        """Let a pair be flagged again (its record was closed because a side left, not decided)."""
        call(self.client.hdel, self._k("pairs"), pair_id(a, b))
