"""The unit of work: a write and the audit events that record it, in one round trip, all or nothing.

A ``Unit`` is built from its audit events (at least one: a write without an event cannot be
expressed), then given its writes: ``gate`` (the key must exist, optionally with some fields still
as read: a compare-and-set), ``guard`` (fields only: create where absent, delete only what was
read), ``patch`` (a gated field update), ``set``, ``hset``, ``hdel``, ``delete``, ``zadd``,
``zrem``, ``sadd``, ``srem``. ``Units.commit`` sends it as ONE script (EVALSHA): Valkey runs a
script to the end before any other command, so either every write and every event is stored or, when
a gate fails, none is. The script XADDs each event to the global stream ``{prefix}audit`` and
RPUSHes its id to the history list of the memory it names ``{prefix}events:{key}``
(kenning.store.audit) in the same step, so no crash of the caller can leave a change without its
record or an event outside its memory's history.

Cluster story (DESIGN §2, docs/architecture.md "Rules"): a unit names the keys it writes, the
stream and the history lists, so it needs them on one server: true of the single Valkey Kenning
runs on by default. On Valkey Cluster those keys hash to different slots and one script cannot hold
them; the cluster layout splits each unit by slot instead (kenning.store.cluster_unit: the writes
and their history links on the home slot first, the other slots and the stream next, a sweep for
a lost second half)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import valkey

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.locks import Lease

# KEYS[1] = the audit stream; the others are named by index in ARGV. ARGV: the number of ops, then
# per op: its command, its key's index, its argument count, its arguments; then the number of
# events, then per event: its history list's key index (0 = none), its field count, its (field,
# value) pairs. A GATE op (always first) returns 0 when its key is gone and -1 when a guarded field
# differs ('' = absent) before anything is written; a GUARD op checks the fields only (the key may
# be absent: every field then reads ''). A PRUNE op removes a member (its 2nd argument) from a set
# (its 1st, a key index) when the op's hash is empty. Otherwise every op runs, then every event.
# Returns {1, event ids...} or {0} / {-1}.
UNIT_SCRIPT = """
local at = 1
local function take() at = at + 1; return ARGV[at - 1] end
local ops = tonumber(take())
for _ = 1, ops do
  local cmd, key, n = take(), KEYS[tonumber(take())], tonumber(take())
  local args = {}
  for j = 1, n do args[j] = take() end
  if cmd == 'PRUNE' then
    if redis.call('HLEN', key) == 0 then redis.call('SREM', KEYS[tonumber(args[1])], args[2]) end
  elseif cmd == 'GATE' or cmd == 'GUARD' then
    if cmd == 'GATE' and redis.call('EXISTS', key) == 0 then return {0} end
    for j = 1, n, 2 do
      if (redis.call('HGET', key, args[j]) or '') ~= args[j + 1] then return {-1} end
    end
  else
    redis.call(cmd, key, unpack(args))
  end
end
local out = {1}
local events = tonumber(take())
for e = 1, events do
  local link, n = tonumber(take()), tonumber(take())
  local fields = {}
  for j = 1, n do fields[j] = take() end
  local id = redis.call('XADD', KEYS[1], '*', unpack(fields))
  if link > 0 then redis.call('RPUSH', KEYS[link], id) end
  out[e + 1] = id
end
return out
"""
APPLIED, GONE, CHANGED = 1, 0, -1
Op = tuple[str, str, tuple[Any, ...]]  # a write of a unit: its command, its key, its arguments


@dataclass(frozen=True)
class Committed:
    """A unit's outcome: APPLIED (every write and event stored), GONE or CHANGED (a gate failed:
    nothing was written), and the ids of its events in the audit stream."""

    outcome: int
    event_ids: tuple[str, ...] = ()
    read: str | None = None  # ``commit(then_read=...)``: the value read right after the unit

    @property
    def applied(self) -> bool:
        return self.outcome == APPLIED


@dataclass
class Unit:
    """Writes (each on one key) and the audit events that record them; see the module docstring."""

    events: Sequence[AuditEvent]
    gates: list[Op] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.events:
            raise ValueError("a unit of work records its writes: give it at least one audit event")

    def gate(self, key: str, expect: Mapping[str, str] | None = None) -> Unit:
        """Write nothing unless ``key`` exists and each ``expect`` field
        holds its value ('' = absent)."""
        self.gates.append(("GATE", key, tuple(v for pair in (expect or {}).items() for v in pair)))
        return self

    def guard(self, key: str, expect: Mapping[str, str]) -> Unit:
        """Write nothing unless each ``expect`` field of the hash ``key`` holds its value ('' =
        absent; the hash itself may be absent): e.g. create a field only where it is not set yet."""
        self.gates.append(("GUARD", key, tuple(v for pair in expect.items() for v in pair)))
        return self

    def patch(
        self,
        key: str,
        sets: Mapping[str, str | bytes],
        remove: Sequence[str] = (),
        expect: Mapping[str, str] | None = None,
    ) -> Unit:
        """Set and remove fields of an existing hash, gated as ``gate`` (never
        re-creates a deleted one)."""
        return self.gate(key, expect).hset(key, sets).hdel(key, *remove)

    def hset(self, key: str, mapping: Mapping[str, Any]) -> Unit:
        return self._op("HSET", key, [v for pair in mapping.items() for v in pair])

    def set(self, key: str, value: str, *, ttl: int | None = None) -> Unit:
        return self._op("SET", key, (value,) if ttl is None else (value, "EX", ttl))

    def expire(self, key: str, seconds: int) -> Unit:
        return self._op("EXPIRE", key, (seconds,))

    def hsetnx(self, key: str, name: str, value: str) -> Unit:
        return self._op("HSETNX", key, (name, value))

    def prune(self, key: str, names: str, member: str) -> Unit:
        """Remove ``member`` from the set ``names`` when the hash ``key`` has no field left."""
        return self._op("PRUNE", key, (names, member))

    def extend(self, ops: Sequence[Op]) -> Unit:
        """Writes a sub-store prepared (e.g. index entries derived from a memory), in their
        order; its gates (``GATE``/``GUARD`` ops) join this unit's, checked before any write."""
        for command, key, args in ops:
            if command in ("GATE", "GUARD"):  # a gate checks before anything is written
                self.gates.append((command, key, tuple(args)))
            else:
                self._op(command, key, args)
        return self

    def hdel(self, key: str, *fields: str) -> Unit:
        return self._op("HDEL", key, fields)

    def delete(self, *keys: str) -> Unit:
        for key in keys:
            self._op("DEL", key, ())
        return self

    def zadd(self, key: str, mapping: Mapping[str, float]) -> Unit:
        return self._op(
            "ZADD", key, [v for member, score in mapping.items() for v in (repr(score), member)]
        )

    def zrem(self, key: str, *members: str) -> Unit:
        return self._op("ZREM", key, members)

    def sadd(self, key: str, *members: str) -> Unit:
        return self._op("SADD", key, members)

    def srem(self, key: str, *members: str) -> Unit:
        return self._op("SREM", key, members)

    def _op(self, command: str, key: str, args: Sequence[Any]) -> Unit:
        # HSET, HDEL, ZADD... with nothing to write are left out
        if args or command in ("DEL", "PRUNE"):
            self.ops.append((command, key, tuple(args)))
        return self


class Units:
    """Sends units of work: ``commit`` one, ``commit_many`` a batch in one pipelined round trip."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.stream = f"{prefix}audit"
        self.script = client.register_script(UNIT_SCRIPT)

    def commit(
        self, unit: Unit, *, then_release: Lease | None = None, then_read: str | None = None
    ) -> Committed:
        """Send ``unit``; with ``then_release`` the lease is released right after it, in the same
        round trip (Valkey runs a connection's commands in order: the release never precedes the
        writes); with ``then_read`` the string at that key is read after them, in the same round
        trip (``Committed.read``)."""
        keys, args = self.encode(unit)
        if then_release is None and then_read is None:
            return _committed(call(self.script, keys=keys, args=args))
        pipe: Any = self.client.pipeline(transaction=False)
        # EVAL with the body, not the registered script: a pipeline holding a Script sends SCRIPT
        # EXISTS first (a round trip), and a NOSCRIPT reply would leave the
        # release done and the write not.
        pipe.eval(UNIT_SCRIPT, len(keys), *keys, *args)
        if then_release is not None:
            then_release.queue_release(pipe)
        if then_read is not None:
            pipe.get(then_read)
        replies = call(pipe.execute, raise_on_error=True)
        committed = _committed(replies[0])
        return (
            committed
            if then_read is None
            else replace(committed, read=None if replies[-1] is None else text(replies[-1]))
        )

    def commit_many(self, units: Sequence[Unit]) -> list[Committed]:
        if not units:
            return []
        pipe: Any = self.client.pipeline(transaction=False)
        for unit in units:
            keys, args = self.encode(unit)
            self.script(keys=keys, args=args, client=pipe)
        return [_committed(reply) for reply in call(pipe.execute, raise_on_error=True)]

    def encode(self, unit: Unit) -> tuple[list[str], list[Any]]:
        """The script's KEYS and ARGV for ``unit``."""
        keys = KeyList(self.stream)
        ops = unit.gates + unit.ops
        args: list[Any] = [len(ops), *keys.ops(ops), len(unit.events)]
        for event in unit.events:
            flat = [v for pair in event.fields().items() for v in pair]
            link = keys.place(f"{self.prefix}events:{event.key}") if event.key else 0
            args += [link, len(flat), *flat]
        return keys.keys, args


class KeyList:
    """A script's KEYS (``first``, then each key once, as met) and the ARGV of its ops."""

    def __init__(self, first: str) -> None:
        self.keys = [first]
        self.index: dict[str, int] = {}

    def place(self, key: str) -> int:
        """The key's 1-based index in KEYS, added when new."""
        if key not in self.index:
            self.keys.append(key)
            self.index[key] = len(self.keys)
        return self.index[key]

    def ops(self, ops: Sequence[Op]) -> list[Any]:
        """Per op: its command, its key's index, its argument count, its arguments."""
        args: list[Any] = []
        for command, key, given in ops:
            # PRUNE's set is a key too
            values = (self.place(given[0]), given[1]) if command == "PRUNE" else given
            args += [command, self.place(key), len(values), *values]
        return args


def _committed(reply: Any) -> Committed:
    return Committed(int(reply[0]), tuple(text(i) for i in reply[1:]))
