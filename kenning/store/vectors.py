"""Reading one field of many memories at once (vectors for duplicates and backup, change times for a
restore plan): one pipelined round trip per batch."""

from __future__ import annotations

from typing import Any

import numpy as np
import valkey

from kenning.core import schema
from kenning.store.client import call

BATCH = 500


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
