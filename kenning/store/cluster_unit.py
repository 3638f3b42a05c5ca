"""The unit of work on Valkey Cluster: split by slot, the first half atomic, a sweep for the rest.

On one server a unit is one script over every key it names (kenning.store.unit). On a cluster a
script may only name keys of one slot, so ``ClusterUnits`` cuts a unit into pieces, one per slot:

1. the home piece, on the slot of the unit's first gate (else its first write): its gates, its
   writes, the history links of the records in that slot (``{prefix}events:{<key>}``, each entry
   the whole event) and, when other pieces follow, the unit's pending entry (the other pieces as
   they will be sent) in the slot's ``{prefix}pending:{<tag>}`` hash. One script: either all of it
   or, when a gate fails, nothing.
2. the other pieces: writes on other slots (derived index entries, the other side of a decision,
   another record's history link) and the events' append to the audit partition of the home slot
   (``{prefix}audit:{<tag>}``, kenning.store.slots). Each is one script that records itself done
   (``{prefix}done:{<tag>}``) with its writes, so sending it again changes nothing.
3. the pending entry deleted.

A crash after 1 leaves the pending entry: ``repair`` (the sweep) finds it on every slot and sends
2 and 3 again. The gates of a piece on another slot (a decision over two memories in two slots)
are checked before 1, with nothing written, and again in 2; a write between the two checks leaves
that piece unapplied and its unit pending, which the sweep reports (``Repaired.blocked``) instead
of forcing. Docs: docs/cluster.md.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kenning.core import schema
from kenning.core.errors import BackendUnavailable
from kenning.store import indexes, layout, slots
from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.locks import Lease
from kenning.store.unit import APPLIED, Committed, KeyList, Op, Unit, Units

# KEYS[1]: the slot's done hash (a piece on another slot) or the home piece's pending hash;
# ARGV[1]: the unit id ('' for the home piece, which is never sent twice; '?' checks the gates
# only, writing nothing); ARGV[2]: the op count, then each op as in kenning.store.unit's script,
# plus XADDE (an event appended under its own id when that is newer than the stream's last, else
# under a new one). Returns {1, ids appended...}, {0} / {-1} (a gate failed), {2} (done before).
PIECE_SCRIPT = """
local uid = ARGV[1]
if uid ~= '' and uid ~= '?' and redis.call('HEXISTS', KEYS[1], uid) == 1 then return {2} end
local at = 2
local function take() at = at + 1; return ARGV[at - 1] end
local function newer(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)')
  local bm, bs = string.match(b, '(%d+)-(%d+)')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local ops = tonumber(take())
local out = {1}
for _ = 1, ops do
  local cmd, key, n = take(), KEYS[tonumber(take())], tonumber(take())
  local args = {}
  for j = 1, n do args[j] = take() end
  if cmd == 'GATE' or cmd == 'GUARD' then
    if cmd == 'GATE' and redis.call('EXISTS', key) == 0 then return {0} end
    for j = 1, n, 2 do
      if (redis.call('HGET', key, args[j]) or '') ~= args[j + 1] then return {-1} end
    end
  elseif uid == '?' then
  elseif cmd == 'PRUNE' then
    if redis.call('HLEN', key) == 0 then redis.call('SREM', KEYS[tonumber(args[1])], args[2]) end
  elseif cmd == 'XADDE' then
    local id = table.remove(args, 1)
    local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
    if #last > 0 and not newer(id, last[1][1]) then
      args[#args + 1] = 'eid'; args[#args + 1] = id; id = '*'
    end
    out[#out + 1] = redis.call('XADD', key, id, unpack(args))
  else
    redis.call(cmd, key, unpack(args))
  end
end
if uid ~= '' and uid ~= '?' then
  redis.call('HSET', KEYS[1], uid, '1')
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[#ARGV]))
end
return out
"""
log = logging.getLogger(__name__)
DONE_BEFORE = 2
# how long a piece's done mark is kept: longer than any unit stays pending before a sweep
DONE_TTL = 7 * 86400
# a unit younger than this may still be on its way (its second half in flight): the sweep waits
GRACE_SECONDS = 30.0
_ids = itertools.count(random.randrange(1 << 40))


def event_id(now: float | None = None) -> str:
    """An event's own id, ``<ms>-<n>`` like a stream id, unique per process and in time order."""
    millis = int((time.time() if now is None else now) * 1000)
    return f"{millis}-{next(_ids)}"


@dataclass
class Piece:
    """The ops of one unit on one slot, and the script's KEYS and ARGV for them."""

    at: int
    marker: str
    ops: list[Op] = field(default_factory=list)

    def gated(self) -> bool:
        return any(command in ("GATE", "GUARD") for command, _, _ in self.ops)

    def encode(self, uid: str) -> tuple[list[str], list[Any]]:
        keys = KeyList(self.marker)
        return keys.keys, [uid, len(self.ops), *keys.ops(self.ops), DONE_TTL]


@dataclass(frozen=True)
class Split:
    """A unit cut by slot: its id, its home piece, the pieces after it and its events' ids."""

    uid: str
    home: Piece
    rest: tuple[Piece, ...]
    event_ids: tuple[str, ...]

    def pending(self) -> str:
        """The pending entry: the other pieces as the sweep will send them."""
        sent = []
        for piece in self.rest:
            keys, args = piece.encode(self.uid)
            sent.append({"keys": keys, "args": [_packed(a) for a in args]})
        return json.dumps(sent, separators=(",", ":"))


@dataclass(frozen=True)
class Repaired:
    """What a sweep did: units completed, and units left pending because a gate on another slot
    changed between the unit's check and its second half (nothing of that piece written)."""

    completed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    waiting: int = 0  # pending entries younger than the grace, left to their writers


class ClusterUnits(Units):
    """``Units`` for the cluster layout: each unit is split by slot (module docstring)."""

    def commit(
        self, unit: Unit, *, then_release: Lease | None = None, then_read: str | None = None
    ) -> Committed:
        committed = self.commit_many([unit])[0]
        if then_release is not None:
            then_release.release()
        if then_read is not None:
            read = call(self.client.get, then_read)
            committed = replace(committed, read=None if read is None else text(read))
        return committed

    def commit_many(self, units: Sequence[Unit]) -> list[Committed]:
        splits = [self.split(unit) for unit in units]
        blocked = self._check_first(splits)
        home = self.send([(s.home, "") for s, b in zip(splits, blocked, strict=True) if not b])
        outcomes = iter(home)
        results: list[Committed] = []
        applied: list[Split] = []
        for split, stopped in zip(splits, blocked, strict=True):
            outcome = stopped if stopped else int(next(outcomes)[0])
            results.append(Committed(outcome, split.event_ids if outcome == APPLIED else ()))
            if outcome == APPLIED and split.rest:
                applied.append(split)
        try:
            self.finish(applied)
        except BackendUnavailable as exc:
            # the first halves are stored with their pending entries: the sweep completes them,
            # so the write is not reported as failed (a retry would write it twice)
            log.warning("%d units left to the repair sweep: %s", len(applied), exc.message)
        return results

    def finish(self, splits: Sequence[Split]) -> list[str]:
        """Send the second halves, then drop the pending entries of those that all applied; the
        ids of the units left pending (a gate on another slot changed)."""
        sent = self.send([(p, s.uid) for s in splits for p in s.rest])
        replies = iter(sent)
        done: list[Split] = []
        left: list[Split] = []
        for split in splits:
            outcomes = [int(next(replies)[0]) for _ in split.rest]
            (done if all(o in (APPLIED, DONE_BEFORE) for o in outcomes) else left).append(split)
        self._drop_pending([(s.home.marker, s.uid) for s in done])
        return [s.uid for s in left]

    def split(self, unit: Unit) -> Split:
        uid = event_id()
        ids = tuple(event_id() for _ in unit.events)
        ops: list[Op] = [*unit.gates, *unit.ops]
        for event, eid in zip(unit.events, ids, strict=True):
            if event.key:
                entry = json.dumps({"id": eid, **event.fields()}, separators=(",", ":"))
                ops.append(("RPUSH", slots.events_key(self.prefix, event.key), (entry,)))
        anchor = slots.slot(ops[0][1]) if ops else slots.slot(unit.events[0].actor)
        stream = slots.audit_key(self.prefix, slots.partition(anchor))
        for event, eid in zip(unit.events, ids, strict=True):
            flat = [v for pair in event.fields().items() for v in pair]
            ops.append(("XADDE", stream, (eid, *flat)))
        home_at = slots.slot(ops[0][1])
        pieces: dict[int, Piece] = {}
        for op in ops:
            at = slots.slot(op[1])
            if at not in pieces:
                marker = (slots.pending_key if at == home_at else slots.done_key)(self.prefix, at)
                pieces[at] = Piece(at, marker)
            pieces[at].ops.append(op)
        home = pieces.pop(home_at)
        rest = tuple(pieces.values())
        if rest:
            home.ops.append(("HSET", home.marker, (uid, "")))
        split = Split(uid, home, rest, ids)
        if rest:  # the entry names the pieces: filled in once they are encoded
            home.ops[-1] = ("HSET", home.marker, (uid, split.pending()))
        return split

    def repair(self, *, grace: float = GRACE_SECONDS) -> Repaired:
        """The sweep: every slot's pending units older than ``grace`` get their second half sent
        again (each piece at most once: the done marks) and their entries dropped."""
        pipe: Any = self.client.pipeline(transaction=False)
        for at in range(slots.SLOTS):
            pipe.hgetall(slots.pending_key(self.prefix, at))
        found = call(pipe.execute)
        cutoff = (time.time() - grace) * 1000
        due: list[tuple[int, str, list[dict[str, Any]]]] = []
        waiting = 0
        for at, entries in enumerate(found):
            for uid, payload in entries.items():
                name = text(uid)
                if int(name.partition("-")[0]) > cutoff:
                    waiting += 1
                    continue
                due.append((at, name, json.loads(text(payload))))
        return self._complete(due, waiting)

    def _complete(self, due: list[tuple[int, str, list[dict[str, Any]]]], waiting: int) -> Repaired:
        sends = [
            (piece["keys"], [_unpacked(a) for a in piece["args"]])
            for _, _, pieces in due
            for piece in pieces
        ]
        replies = iter(self._eval(sends))
        completed: list[tuple[str, str]] = []
        blocked: list[str] = []
        for at, uid, pieces in due:
            outcomes = [int(next(replies)[0]) for _ in pieces]
            if all(o in (APPLIED, DONE_BEFORE) for o in outcomes):
                completed.append((slots.pending_key(self.prefix, at), uid))
            else:
                blocked.append(uid)
        self._drop_pending(completed)
        return Repaired(tuple(uid for _, uid in completed), tuple(blocked), waiting)

    def _check_first(self, splits: Sequence[Split]) -> list[int]:
        """The gates of pieces on other slots, checked before anything is written: 0 where all
        hold, else the first failed outcome (GONE or CHANGED)."""
        checks = [(i, p) for i, s in enumerate(splits) for p in s.rest if p.gated()]
        blocked = [0] * len(splits)
        if not checks:
            return blocked
        for (i, _), reply in zip(checks, self.send([(p, "?") for _, p in checks]), strict=True):
            if int(reply[0]) != APPLIED and not blocked[i]:
                blocked[i] = int(reply[0])
        return blocked

    def send(self, pieces: Sequence[tuple[Piece, str]]) -> list[Any]:
        return self._eval([piece.encode(uid) for piece, uid in pieces])

    def _eval(self, sends: Sequence[tuple[list[str], list[Any]]]) -> list[Any]:
        if not sends:
            return []
        pipe: Any = self.client.pipeline(transaction=False)
        for keys, args in sends:
            # EVAL with the body: a cluster pipeline refuses EVALSHA, and a node that failed over
            # may not have the script loaded
            pipe.execute_command("EVAL", PIECE_SCRIPT, len(keys), *keys, *args)
        replies = list(call(pipe.execute, raise_on_error=True))
        self.settle([key for keys, args in sends for key in _hashes(keys, args)])
        return replies

    def settle(self, written: Sequence[str]) -> None:
        """``settle_searches`` for the hashes this unit's scripts wrote."""
        settle_searches(self.client, self.prefix, written)

    def _drop_pending(self, entries: Sequence[tuple[str, str]]) -> None:
        if not entries:
            return
        pipe: Any = self.client.pipeline(transaction=False)
        for key, uid in entries:
            pipe.hdel(key, uid)
        call(pipe.execute, raise_on_error=True)


def _packed(value: Any) -> Any:
    """A script argument as JSON can hold it: bytes (a vector) as base64 in a one-key object."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode()}
    return value


def _unpacked(value: Any) -> Any:
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value


def _hashes(keys: list[str], args: list[Any]) -> list[str]:
    """The hashes a piece writes or deletes (HSET, HSETNX, HDEL, DEL ops), from its encoded ARGV:
    a deleted memory, too, is still found by a search fanned out from another node until its own
    node next runs a command."""
    found: list[str] = []
    i, ops = 2, int(args[1])
    for _ in range(ops):
        command, index, count = args[i], int(args[i + 1]), int(args[i + 2])
        if command in ("HSET", "HSETNX", "HDEL", "DEL") and keys[index - 1] not in found:
            found.append(keys[index - 1])
        i += 3 + count
    return found


def history_entry(raw: Any) -> AuditEvent:
    """One element of a cluster history list (the whole event, with its id) as an event."""
    data = json.loads(text(raw))
    return AuditEvent.from_entry(data.pop("id"), data)


def settle_searches(client: Any, prefix: str, written: Sequence[str]) -> None:
    """Make the memory hashes a script just wrote searchable from every shard: valkey-search
    indexes a script's writes when its node next runs a search, and a search another node
    fans out to it does not count (measured on valkey-search 1.2.1: a third of the writes
    missed by the search right after; none with this). One empty search on each node that
    holds such a hash; nothing on one server, where the search runs on that node anyway."""
    memories = {k for k in written if k.startswith(schema.memory_prefix(prefix))}
    if not memories or not layout.clustered(client):
        return
    index = call(client.hget, indexes.registry_key(prefix), schema.INDEX)
    if index is None:
        return  # no index yet: nothing to be searchable in
    cluster: Any = client
    nodes = {
        cluster.get_node_from_key(key).name: cluster.get_node_from_key(key) for key in memories
    }
    for node in nodes.values():
        call(
            cluster.execute_command,
            "FT.SEARCH",
            text(index),
            "@namespace:{kenning_settle}",
            "LIMIT",
            "0",
            "0",
            "DIALECT",
            "2",
            target_nodes=node,
        )
