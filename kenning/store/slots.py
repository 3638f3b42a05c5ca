"""Hash slots and the cluster layout's key names: pure functions, no I/O.

Valkey Cluster places a key by CRC16 of its hash tag (the text between the first ``{`` and the
next ``}``, when not empty) or of the whole key, modulo 16384. A script's keys must share one slot,
so every key a cluster unit of work touches on its home slot is named for that slot here: a
record's history list takes the record key itself as its tag (``{prefix}events:{<key>}`` sits in
the record's slot and no record key has to change), and a per-slot record (the pending second
halves of units, kenning.store.cluster_unit) takes a short tag chosen to hash to that slot.

The audit stream is cut into ``PARTITIONS`` streams, one per group of 1,024 consecutive slots, each
named with a tag inside its group: a unit's events go to the partition of its home slot, which on a
cluster whose shards own slot ranges is usually the same shard.
"""

from __future__ import annotations

from functools import cache

from valkey.crc import key_slot

SLOTS = 16384
PARTITIONS = 16
GROUP = SLOTS // PARTITIONS


def hash_tag(key: str) -> str | None:
    """The key's hash tag (what Valkey hashes instead of the whole key), or None."""
    start = key.find("{")
    if start < 0:
        return None
    end = key.find("}", start + 1)
    if end <= start + 1:
        return None
    return key[start + 1 : end]


def slot(key: str | bytes) -> int:
    """The hash slot of ``key`` (hash tags honoured), as the server computes it."""
    raw = key if isinstance(key, bytes) else key.encode()
    return int(key_slot(raw))


@cache
def slot_tags() -> tuple[str, ...]:
    """For each slot, a short tag that hashes to it (built once, ~0.1 s)."""
    table: dict[int, str] = {}
    i = 0
    while len(table) < SLOTS:
        name = format(i, "x")
        table.setdefault(slot(name), name)
        i += 1
    return tuple(table[s] for s in range(SLOTS))


def tag_for(key: str) -> str:
    """A tag that puts another key in ``key``'s slot: the key itself when it has no braces (its
    own name then reads in the new key), else the slot's short tag."""
    if "{" in key or "}" in key:
        return slot_tags()[slot(key)]
    return key


def beside(prefix: str, family: str, key: str) -> str:
    """A key of ``family`` that belongs to the record ``key``, in the record's slot."""
    tag = tag_for(key)
    return f"{prefix}{family}:{{{tag}}}" if tag == key else f"{prefix}{family}:{{{tag}}}:{key}"


def events_key(prefix: str, key: str) -> str:
    """The history list of the record ``key`` in the cluster layout: in the record's slot."""
    return beside(prefix, "events", key)


def pending_key(prefix: str, at: int) -> str:
    """The hash of the units whose second half is not yet done, on slot ``at``."""
    return f"{prefix}pending:{{{slot_tags()[at]}}}"


def partition(at: int) -> int:
    """The audit partition of slot ``at``."""
    return at // GROUP


@cache
def _partition_tags() -> tuple[str, ...]:
    tags = slot_tags()
    # the first slot of each group: its tag hashes inside the group
    return tuple(tags[g * GROUP] for g in range(PARTITIONS))


def audit_key(prefix: str, part: int) -> str:
    """The audit stream of partition ``part``."""
    return f"{prefix}audit:{{{_partition_tags()[part]}}}"


def audit_keys(prefix: str) -> list[str]:
    """Every partition's stream, in partition order."""
    return [audit_key(prefix, p) for p in range(PARTITIONS)]


def done_key(prefix: str, at: int) -> str:
    """The units whose piece on slot ``at`` is applied (kenning.store.cluster_unit)."""
    return f"{prefix}done:{{{slot_tags()[at]}}}"
