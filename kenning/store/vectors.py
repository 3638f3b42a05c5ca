"""A memory's vector as the store writes it (``spread``), and reading one field of many memories at
once (vectors for duplicates and backup, change times for a restore plan): one pipelined round trip
per batch.

**Spread.** Two memories with the same text (one fact kept in two projects) embed to the same
vector, and an HNSW graph does not hold identical points well: the neighbour heuristic of both
engines (hnswlib's, in valkey-search and RediSearch's VecSim) keeps one of a set of identical
points in a neighbour's list and prunes the rest, ties broken by insertion order, so after a
restore or a reindex many copies are left with no links in, and their clusters hurt the walk to
other points too (measured at 50k, inserted in a random order like a restore's or a reindex's:
1,148-1,679 memories of 50,000 missed by their own vector at EF_RUNTIME 256 with identical copies,
6-7 with every copy spread; bench/FINDINGS.md, issue 41's third session). So the store never
writes two memories the same vector: every vector it is handed for a key is moved by ``SPREAD``
(1e-3 of its length) along a direction derived from the key alone, and renormalised. Two copies
then differ by ~1e-6 in cosine distance -- far above float32's rounding, so no engine sees a tie --
while the cosine to any query moves by ~5e-5 (a query would have to lie along the key's direction
to move it by 1e-3): far below every threshold Kenning decides on and below the difference
between CPUs' int8 kernels. A vector already written (a backup's, restored) is handed back as
``Stored`` and written as it is, so a restore reproduces the stored bytes and never spreads twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import valkey

from kenning.core import schema
from kenning.store.client import call

BATCH = 500
SPREAD = 1e-3  # how far a written vector moves along its key's direction (of its length)

Vector = np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class Stored:
    """A vector's bytes as a store wrote them (a backup's): written back as they are."""

    raw: bytes


def direction(key: str, dim: int) -> Vector:
    """A unit vector derived from ``key`` alone (SHAKE-256 of the key as ``dim`` signed 16-bit
    numbers, centred): the same on every machine and numpy, another for every key."""
    digest = hashlib.shake_256(key.encode()).digest(2 * dim)
    out = np.frombuffer(digest, dtype="<i2").astype(np.float64) + 0.5
    return (out / np.linalg.norm(out)).astype(np.float32)


def spread(key: str, vector: Any, size: float = SPREAD) -> Vector:
    """``vector`` (a model's embedding) as the store writes it for ``key``: moved by ``size``
    (``SPREAD``) of its length along ``direction(key)``, at unit length. A zero vector is left as
    it is."""
    v = np.asarray(vector, dtype=np.float64)
    length = float(np.linalg.norm(v))
    if length == 0.0 or not np.isfinite(length):
        return np.asarray(vector, dtype=np.float32)
    moved = v / length + size * direction(key, v.shape[-1]).astype(np.float64)
    return (moved / np.linalg.norm(moved)).astype(np.float32)


def field_bytes(key: str, vector: Any) -> bytes:
    """The bytes of ``key``'s vector field: a ``Stored`` vector as it is, any other spread."""
    if isinstance(vector, Stored):
        return vector.raw
    return schema.vector_bytes(spread(key, vector))


def read_many(
    client: valkey.Valkey, keys: list[str]
) -> list[np.ndarray[Any, np.dtype[np.float32]] | None]:
    """The stored vector of each key, in order; None where the hash or its vector is gone."""
    out: list[np.ndarray[Any, np.dtype[np.float32]] | None] = []
    for start in range(0, len(keys), BATCH):
        pipe = client.pipeline(transaction=False)
        for key in keys[start : start + BATCH]:
            pipe.hget(key, schema.VECTOR_FIELD)
        out += [None if raw is None else schema.bytes_vector(raw) for raw in call(pipe.execute)]
    return out


def times_many(client: valkey.Valkey, keys: list[str], name: str) -> list[float | None]:
    """A NUMERIC field (e.g. ``updated_at``) of each key, in order; None where the hash or field is
    gone. A time a hash leaves out while it equals ``created_at`` (schema) reads as that."""
    wanted = [name, "created_at"] if name in schema.IMPLIED_TIMES else [name]
    out: list[float | None] = []
    for start in range(0, len(keys), BATCH):
        pipe = client.pipeline(transaction=False)
        for key in keys[start : start + BATCH]:
            pipe.hmget(key, wanted)
        for raw in call(pipe.execute):
            found = next((value for value in raw if value is not None), None)
            out.append(None if found is None else float(found))
    return out
