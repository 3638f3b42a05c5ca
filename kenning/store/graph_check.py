"""The search graph's self-check and repair: every stored memory searched by its own vector.

An HNSW graph built by a bulk load, a restore or a reindex can leave a stored memory with few or no
links in (docs/benchmarks.md, issue 41): the KNN of a recall over many projects then never reaches
it, whatever its similarity. ``check`` searches every memory hash under the store's prefix by its
own vector at the default depth (k 10, the recall's EF_RUNTIME), pipelined in batches. A memory is
**missed** when its key is absent from the ten while a returned row is farther than the memory
itself (identical copies elsewhere that fill the ten are ties, not misses: bench/rebuild_recall.py
counts the same way).

A missed memory is re-inserted into the graph by writing its vector field twice: first a copy with
the lowest bit of one component flipped (a change of ~1e-7 in one of 384 components), then the
stored bytes again. Each write re-inserts the point on both engines: RediSearch re-indexes a hash on
every write of an indexed field; valkey-search ignores a write of an identical vector
(``IsVectorMatch``) but re-inserts a changed one (``markDelete`` + ``addPoint``: new links), so the
second write, a change again, puts the stored bytes back into the graph. Before the first write each
memory's stored bytes go into a journal hash (``journal_key``), removed after the second: a check
cut between the two writes (Valkey gone, the process killed) leaves the journal, and the next
repairing check first puts those bytes back (``recover``), so no vector stays nudged. Each write is
a script that changes the field only if it still holds what the check read (a memory deleted or
re-embedded meanwhile is left alone; no hash is brought back), no other field is touched
(``updated_at``, the audit log and every other field stay as they were). Between the two writes the
engine's mutation queue is let to drain (valkey-search merges queued writes of one key: both at once
would read as no change). The missed memories are searched again after the repair (and re-inserted
again, up to ``ROUNDS`` times, while one is still missed). Re-inserting a point can prune the links
into another (an identical twin's above all: measured at 50k on RediSearch's restored graph, 1,099
re-inserted left 96 others of a 10,000 sample missed), so after a repair every memory is searched
again, up to ``PASSES`` full passes.

A missed memory whose vector another memory holds byte for byte (its text kept in another project,
written before the store spread every vector: kenning.store.vectors) is not re-inserted with the
same bytes -- that prunes its copy in turn -- but written once spread for its key, as the store
writes every vector now (``spread_copies``: a change of 1e-3 of its length, one guarded write, no
journal needed since either value is a whole vector). That is the one field the check may change,
and only for such copies; the count is the result's ``spread``.

What no pass makes reachable is listed (kenning.store.unreachable): every KNN on the checked index
then scores those memories exactly, so a stored memory is never missed at the default depth; the
result's ``exact`` counts them (``unfound``: any beyond the list's limit).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import valkey

from kenning.core import schema
from kenning.core.query import Search
from kenning.store import layout, unreachable, vectors
from kenning.store.client import call, guarded, text

log = logging.getLogger(__name__)

K = 10
BATCH = 200  # KNNs (and vector reads) per round trip
TIE = 1e-4  # a returned row this close to the memory's own similarity is as near as it
ROUNDS = 3  # re-insertions of a memory still missed after the last
PASSES = 3  # full passes over every memory (a repair can leave another one unreachable)
SETTLE_SECONDS = 30.0  # at most this long for the engine to take in the first write

# Writes ARGV[2] into the vector field only when the hash still holds ARGV[1] there. One key per
# script (cluster-safe).
_SWAP = """
if redis.call('HGET', KEYS[1], ARGV[3]) == ARGV[1] then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
  return 1
end
return 0
"""


@dataclass(frozen=True)
class GraphCheck:
    """One self-check of the memory index: how many memories were searched by their own vector,
    how many it missed, how many were re-inserted, and how many it still misses after that."""

    index: str
    ef_runtime: int
    checked: int
    missed: int
    reinserted: int
    still_missed: int
    without_vector: int
    seconds: float
    at: float = 0.0
    missed_keys: list[str] = field(default_factory=list)  # the first few still missed
    spread: int = 0  # of the re-inserted, identical copies written spread (kenning.store.vectors)
    # of the still missed, those every KNN now scores exactly (kenning.store.unreachable)
    exact: int = 0

    @property
    def reachable(self) -> int:
        return self.checked - self.still_missed

    @property
    def unfound(self) -> int:
        """Memories the graph misses that no exact look-up covers either (over its limit)."""
        return self.still_missed - self.exact

    def describe(self) -> str:
        line = f"self-check: {self.reachable:,} of {self.checked:,} reachable"
        line += f"; {self.reinserted:,} re-inserted" if self.reinserted else ""
        if self.spread:
            copies = "copy" if self.spread == 1 else "copies"
            line += f" ({self.spread:,} identical {copies} spread)"
        if self.exact:
            line += (
                f"; {self.exact:,} the graph does not reach, found by exact search "
                f"(e.g. {self.missed_keys[0]})"
            )
        if self.unfound:
            line += f"; {self.unfound:,} still unreachable, beyond the exact search's list"
        return line

    def line(self) -> str:
        """``describe`` with the time it took and the depth it searched at (the CLI's line)."""
        return f"{self.describe()} ({self.seconds:.1f} s at EF_RUNTIME {self.ef_runtime})"

    def public(self) -> dict[str, Any]:
        return asdict(self)


def self_check_line(kept: dict[str, Any] | None) -> str:
    """The line for a result's ``self_check`` (``GraphCheck.public``), or that none ran."""
    return GraphCheck(**kept).line() if kept else "self-check: not run"


Rows = list[tuple[str, bytes]]


def stored(client: valkey.Valkey, prefix: str) -> Iterator[list[tuple[str, bytes | None]]]:
    """Every memory hash under ``prefix`` and its raw vector field, in batches."""
    keys: list[str] = []
    with guarded():
        for raw in client.scan_iter(match=schema.memory_prefix(prefix) + "*", count=1000):
            keys.append(text(raw))
            if len(keys) >= BATCH:
                yield _vectors(client, keys)
                keys = []
    if keys:
        yield _vectors(client, keys)


def _vectors(client: valkey.Valkey, keys: list[str]) -> list[tuple[str, bytes | None]]:
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.hget(key, schema.VECTOR_FIELD)
    return list(zip(keys, call(pipe.execute), strict=True))


def knn(index: str, raw: bytes, ef: int) -> Search:
    """The unfiltered KNN of a recall's depth: the ten nearest, keys and distances only."""
    return Search(
        index=index,
        knn=K,
        vector=raw,
        ef_runtime=ef,
        return_fields=(schema.DISTANCE_ALIAS,),
        limit=K,
    )


def missed(
    client: valkey.Valkey, index: str, rows: Sequence[tuple[str, bytes]], ef: int
) -> list[tuple[str, bytes]]:
    """The rows whose own vector's KNN does not return them (ties aside), one round trip."""
    return [(key, raw) for key, raw, _ in _missed(client, index, rows, ef)]


def _missed(
    client: valkey.Valkey, index: str, rows: Sequence[tuple[str, bytes]], ef: int
) -> list[tuple[str, bytes, list[str]]]:
    """``missed``, each with the keys its KNN returned as near as the memory itself (the copies
    of its text an identical vector would be)."""
    return [(key, raw, near) for key, raw, lost, near in _searched(client, index, rows, ef) if lost]


def _searched(
    client: valkey.Valkey, index: str, rows: Sequence[tuple[str, bytes]], ef: int
) -> list[tuple[str, bytes, bool, list[str]]]:
    """Each row searched by its own vector, one round trip: (key, bytes, whether it was missed,
    the other keys returned as near as the memory itself)."""
    if not rows:
        return []
    pipe = client.pipeline(transaction=False)
    for _, raw in rows:
        pipe.execute_command(*knn(index, raw, ef).args())  # type: ignore[no-untyped-call]
    out: list[tuple[str, bytes, bool, list[str]]] = []
    for (key, raw), reply in zip(rows, call(pipe.execute, raise_on_error=True), strict=True):
        found, sims = rows_of(reply)
        vector = schema.bytes_vector(raw)
        own = 1.0 if float(vector @ vector) > 0 else 0.0  # cosine of a vector with itself
        lost = key not in found and (len(sims) < K or min(sims) < own - TIE)
        near = [k for k, sim in zip(found, sims, strict=True) if sim >= own - TIE and k != key]
        out.append((key, raw, lost, near))
    return out


def identical(client: valkey.Valkey, lost: Sequence[tuple[str, bytes, list[str]]]) -> set[str]:
    """The missed memories whose vector another memory holds byte for byte (written before the
    store spread every vector: kenning.store.vectors), one round trip."""
    asked = [(key, raw, other) for key, raw, near in lost for other in near]
    if not asked:
        return set()
    pipe = client.pipeline(transaction=False)
    for _, _, other in asked:
        pipe.hget(other, schema.VECTOR_FIELD)
    held = call(pipe.execute)
    return {key for (key, raw, _), theirs in zip(asked, held, strict=True) if theirs == raw}


def rows_of(reply: Any) -> tuple[list[str], list[float]]:
    """A KNN reply's keys and similarities (1 - cosine distance), nearest first."""
    keys = [text(reply[i]) for i in range(1, len(reply) - 1, 2)]
    sims = [1.0 - float(_distance(reply[i + 1])) for i in range(1, len(reply) - 1, 2)]
    return keys, sims


def _distance(fields: Any) -> str:
    pairs = {text(fields[j]): text(fields[j + 1]) for j in range(0, len(fields) - 1, 2)}
    return pairs.get(schema.DISTANCE_ALIAS, "2")


def nudged(raw: bytes) -> bytes:
    """The vector with the lowest mantissa bit of its first component flipped: another vector to
    the engine, the same one to any similarity (a change of ~1e-7)."""
    bits = bytearray(raw)
    bits[0] ^= 1
    return bytes(bits)


def journal_key(prefix: str) -> str:
    """The repair's journal: each memory being re-inserted, and the vector bytes it held."""
    return f"{prefix}graph:repairing"


def recover(client: valkey.Valkey, prefix: str) -> int:
    """Put back the stored bytes of every memory a repair left nudged (cut between its two
    writes), where the hash still holds the nudged copy (one re-embedded since keeps its new
    vector); the journal emptied. The count put back."""
    journal = journal_key(prefix)
    held: dict[bytes, bytes] = call(client.hgetall, journal)
    if not held:
        return 0
    back = _swap(client, [(text(key), nudged(raw), raw) for key, raw in held.items()])
    call(client.hdel, journal, *held)
    return sum(back)


def reinsert(
    client: valkey.Valkey, prefix: str, index: str, rows: Sequence[tuple[str, bytes]]
) -> set[str]:
    """Re-insert each row's memory into the graph (two guarded writes of its vector field, the
    engine's queue drained between them, the stored bytes journaled until the second is done);
    the keys rewritten (a memory deleted or re-embedded since it was read is skipped)."""
    if not rows:
        return set()
    journal = journal_key(prefix)
    call(client.hset, journal, mapping=dict(rows))
    first = _swap(client, [(key, raw, nudged(raw)) for key, raw in rows])
    settle(client, index)
    moved = [row for row, done in zip(rows, first, strict=True) if done]
    if len(moved) < len(rows):  # forgotten or re-embedded since the check read them
        log.warning(
            "graph repair: %d of %d memories changed since read", len(rows) - len(moved), len(rows)
        )
    back = _swap(client, [(key, nudged(raw), raw) for key, raw in moved])
    settle(client, index)
    for (key, _), done in zip(moved, back, strict=True):
        if not done:  # written meanwhile by someone else, whose vector stands
            log.warning("graph repair: %s changed between the two writes; left as written", key)
    call(client.hdel, journal, *(key for key, _ in rows))
    return {key for (key, _), done in zip(moved, back, strict=True) if done}


def _swap(client: valkey.Valkey, writes: Sequence[tuple[str, bytes, bytes]]) -> list[bool]:
    if not writes:
        return []
    pipe = client.pipeline(transaction=False)
    for key, old, new in writes:
        swap = ("EVAL", _SWAP, 1, key, old, new, schema.VECTOR_FIELD)
        pipe.execute_command(*swap)  # type: ignore[no-untyped-call]
    return [bool(int(n)) for n in call(pipe.execute, raise_on_error=True)]


def settle(client: valkey.Valkey, index: str, timeout: float = SETTLE_SECONDS) -> None:
    """Wait until the engine has taken in every queued write (valkey-search's mutation queue is
    empty; RediSearch indexes a write before it replies)."""
    deadline = time.monotonic() + timeout
    while _queued(client, index) and time.monotonic() < deadline:
        time.sleep(0.01)


def _queued(client: valkey.Valkey, index: str) -> int:
    with guarded():
        reply = layout.info_reply(client, index)
    flat = list(reply) if isinstance(reply, list | tuple) else []
    data = {text(flat[i]): flat[i + 1] for i in range(0, len(flat) - 1, 2)}
    try:
        return int(float(text(data.get("mutation_queue_size", 0))))
    except ValueError:
        return 0


def scan(client: valkey.Valkey, prefix: str, index: str, ef: int) -> tuple[int, int, Rows, Rows]:
    """One pass over every stored memory: (checked, without a vector, the rows missed, the rows
    whose vector another memory holds byte for byte)."""
    checked = without = 0
    lost: Rows = []
    copies: Rows = []
    for batch in stored(client, prefix):
        rows = [(key, raw) for key, raw in batch if raw is not None]
        without += len(batch) - len(rows)
        checked += len(rows)
        searched = _searched(client, index, rows, ef)
        lost += [(key, raw) for key, raw, missed_it, _ in searched if missed_it]
        same = identical(client, [(key, raw, near) for key, raw, _, near in searched if near])
        copies += [(key, raw) for key, raw in rows if key in same]
    return checked, without, lost, copies


def repaired(
    client: valkey.Valkey, prefix: str, index: str, lost: Rows, ef: int
) -> tuple[set[str], set[str], Rows]:
    """Re-insert the missed rows and search them again, up to ``ROUNDS`` times: (the keys
    rewritten, those of them spread, the rows still missed). A missed memory whose vector another
    memory holds byte for byte is re-inserted spread (``spread_copies``: re-inserting the same
    bytes again would prune its copy's links in); any other with its own bytes (``reinsert``)."""
    still, rewritten, spread = lost, set[str](), set[str]()
    for _ in range(ROUNDS):
        if not still:
            break
        copies = {
            key
            for s in range(0, len(still), BATCH)
            for key in identical(client, _missed(client, index, still[s : s + BATCH], ef))
        }
        moved = spread_copies(client, index, [row for row in still if row[0] in copies])
        spread |= set(moved)
        rewritten |= set(moved) | reinsert(
            client, prefix, index, [row for row in still if row[0] not in copies]
        )
        still = [(key, moved.get(key, raw)) for key, raw in still]
        still = [
            row
            for s in range(0, len(still), BATCH)
            for row in missed(client, index, still[s : s + BATCH], ef)
        ]
    return rewritten, spread, still


def to_spread(copies: Rows) -> Rows:
    """Of each set of memories found holding the same bytes, all but the first key (it keeps
    them); one found alone is spread (the memory it shares them with was not found holding them:
    that one keeps them)."""
    groups: dict[bytes, Rows] = {}
    for key, raw in copies:
        groups.setdefault(raw, []).append((key, raw))
    out: Rows = []
    for rows in groups.values():
        ordered = sorted(rows)
        out += ordered if len(ordered) == 1 else ordered[1:]
    return out


def spread_copies(
    client: valkey.Valkey, index: str, rows: Sequence[tuple[str, bytes]]
) -> dict[str, bytes]:
    """Write each row's vector spread for its key (kenning.store.vectors.spread: moved by 1e-3
    of its length, as every vector written since is), one guarded write each: a new vector to
    both engines, so one write re-inserts it, and either value is a whole vector if the write is
    cut (no journal). The keys written and their new bytes (a memory changed since it was read
    is skipped)."""
    writes = [
        (key, raw, schema.vector_bytes(vectors.spread(key, schema.bytes_vector(raw))))
        for key, raw in rows
    ]
    done = _swap(client, writes)
    settle(client, index)
    return {key: new for (key, _, new), ok in zip(writes, done, strict=True) if ok}


def check(
    client: valkey.Valkey,
    prefix: str,
    index: str,
    *,
    ef: int,
    now: float,
    repair: bool = True,
) -> GraphCheck:
    """Search every stored memory by its own vector; re-insert (``repair``) the ones missed. With
    ``repair``, every memory whose vector another holds byte for byte is first written spread
    (``spread_copies``) and every memory searched again. An insertion can prune another point's
    links in (an identical twin's above all), so after a repair every memory is searched again,
    up to ``PASSES`` passes in all, until a pass misses none. Valkey going away mid-check raises
    ``BackendUnavailable`` (each write is one script)."""
    start = time.perf_counter()
    if repair:
        recover(client, prefix)  # what a repair cut between its two writes left nudged
    checked, without, lost, copies = scan(client, prefix, index, ef)
    first, still, rewritten, spread = len(lost), lost, set[str](), set[str]()
    if repair and copies:  # no two memories keep one vector (kenning.store.vectors)
        spread = set(spread_copies(client, index, to_spread(copies)))
        rewritten |= spread
        checked, without, still, _ = scan(client, prefix, index, ef)  # the graph they changed
    for done in range(1, PASSES + 1 if repair else 0):
        if not still:
            break
        fixed, moved, still = repaired(client, prefix, index, still, ef)
        rewritten |= fixed
        spread |= moved
        if not fixed or done == PASSES:
            break
        checked, without, still, _ = scan(client, prefix, index, ef)  # what the writes broke
    # what no pass made reachable is scored exactly by every KNN on this index from now on
    listed = unreachable.record(client, prefix, index, [key for key, _ in still])
    return GraphCheck(
        index=index,
        ef_runtime=ef,
        checked=checked,
        missed=first,
        reinserted=len(rewritten),
        still_missed=len(still),
        spread=len(spread),
        without_vector=without,
        seconds=time.perf_counter() - start,
        at=now,
        missed_keys=[key for key, _ in still[:10]],
        exact=listed,
    )
