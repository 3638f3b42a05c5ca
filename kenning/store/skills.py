"""What the skill compiler keeps beside the memories (docs/skills.md).

Keys:
  {prefix}skills:current              HASH    domain -> key of the skill memory written for it
  {prefix}skills:proposal:<id>        HASH    record (JSON), status, approved_by, approved_sha, approved_at
  {prefix}skills:proposals            ZSET    proposal id -> time it was proposed
  {prefix}skills:blessed              HASH    memory key -> JSON (who blessed it, when, why)
  {prefix}skills:references:<domain>  HASH    knowledge memory key -> JSON (who promoted it, when, why)
  {prefix}skills:lock:<domain>        STRING  a lease held while a skill is written

A proposal's status moves only through ``advance``, a compare-and-set on its one key, so two
approvals or two writes of one proposal can never both succeed.
"""  # noqa: E501

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import valkey

from kenning.core import schema
from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.locks import Lease
from kenning.store.unit import Op, Unit, Units

# Set the status (and the given fields) only when the status is still ARGV[1]. A status change that
# records nothing of its own (``mark``): ARGV = expected status, then field/value pairs.
_MARK = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
"""


class SkillStore:
    """The skill gate's records; each change goes with its audit events as one unit of work."""

    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.units = units or Units(client, prefix)

    def _key(self, *parts: str) -> str:
        return self.prefix + "skills:" + ":".join(parts)

    # --- proposals ----------------------------------------------------------------------
    def add_proposal(
        self, proposal_id: str, record: dict[str, Any], at: float, events: Sequence[AuditEvent]
    ) -> None:
        unit = Unit(events).hset(
            self._key("proposal", proposal_id),
            {"record": json.dumps(record, sort_keys=True), "status": "pending"},
        )
        self.units.commit(unit.zadd(self._key("proposals"), {proposal_id: at}))

    def proposal(self, proposal_id: str) -> dict[str, str] | None:
        raw = call(self.client.hgetall, self._key("proposal", proposal_id))
        return {text(k): text(v) for k, v in raw.items()} if raw else None

    def proposal_ids(self, limit: int) -> list[str]:
        """Newest first."""
        return [text(i) for i in call(self.client.zrevrange, self._key("proposals"), 0, limit - 1)]

    def advance(
        self,
        proposal_id: str,
        expected: str,
        status: str,
        events: Sequence[AuditEvent],
        **fields: str,
    ) -> bool:
        """Move a proposal from ``expected`` to ``status`` (with ``fields``) and record
        ``events``, one unit; False (nothing written or recorded) when it was not ``expected``."""
        key = self._key("proposal", proposal_id)
        unit = Unit(events).guard(key, {"status": expected}).hset(key, {"status": status, **fields})
        return self.units.commit(unit).applied

    def mark(self, proposal_id: str, expected: str, status: str, **fields: str) -> bool:
        """``advance`` without an event of its own: a proposal found stale, or written (the
        skill_write event on the skill memory records that)."""
        args = [expected, "status", status]
        for name, value in fields.items():
            args += [name, value]
        return bool(call(self.client.eval, _MARK, 1, self._key("proposal", proposal_id), *args))

    # --- written skills ------------------------------------------------------------------
    def current(self, domain: str) -> str | None:
        raw = call(self.client.hget, self._key("current"), domain)
        return None if raw is None else text(raw)

    def all_current(self) -> dict[str, str]:
        return {
            text(k): text(v) for k, v in call(self.client.hgetall, self._key("current")).items()
        }

    def set_current(self, domain: str, key: str) -> None:
        call(self.client.hset, self._key("current"), domain, key)

    def pointing(self, domain: str, key: str) -> list[Op]:
        """``set_current`` as a write of the skill memory's unit (kenning.store.unit)."""
        return [("HSET", self._key("current"), (domain, key))]

    def lease(self, domain: str, owner: str) -> Lease:
        return Lease(self.client, self._key("lock", domain), owner, ttl_seconds=30)

    # --- blessings and references ---------------------------------------------------------
    def bless(self, key: str, record: dict[str, Any], events: Sequence[AuditEvent]) -> None:
        blessed = {key: json.dumps(record, sort_keys=True)}
        self.units.commit(Unit(events).hset(self._key("blessed"), blessed))

    def blessed(self, keys: list[str]) -> set[str]:
        """The keys among ``keys`` a person blessed (one round trip)."""
        if not keys:
            return set()
        found = call(self.client.hmget, self._key("blessed"), keys)
        return {k for k, v in zip(keys, found, strict=True) if v is not None}

    def promote(
        self, domain: str, key: str, record: dict[str, Any], events: Sequence[AuditEvent]
    ) -> None:
        reference = {key: json.dumps(record, sort_keys=True)}
        self.units.commit(Unit(events).hset(self._key("references", domain), reference))

    def references(self, domain: str) -> list[str]:
        return sorted(text(k) for k in call(self.client.hkeys, self._key("references", domain)))

    def drop_reference(self, domain: str, key: str) -> None:
        call(self.client.hdel, self._key("references", domain), key)

    # --- vectors ------------------------------------------------------------------------
    def vectors(self, keys: list[str]) -> dict[str, np.ndarray[Any, np.dtype[np.float32]]]:
        """The stored vector of each key that has one (one round trip)."""
        if not keys:
            return {}
        pipe: Any = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.hget(key, schema.VECTOR_FIELD)
        raw = call(pipe.execute, raise_on_error=True)
        return {k: schema.bytes_vector(v) for k, v in zip(keys, raw, strict=True) if v is not None}

    def existing(self, keys: list[str]) -> set[str]:
        """The keys among ``keys`` that exist (one round trip)."""
        if not keys:
            return set()
        pipe: Any = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.exists(key)
        found = call(pipe.execute, raise_on_error=True)
        return {k for k, n in zip(keys, found, strict=True) if n}
