"""Memories decoded from their hashes' HMGET replies, kept per reply (``MemoryStore.nearest``).

A recall reads every declared field of its 25-60 candidates, and the same stored memories come
back recall after recall; decoding a reply (bytes to text, then ``schema.decode``) cost more CPU
than any other step of a recall's Python outside the search (docs/benchmarks.md, "Issue 38,
third session"). The reply itself is the key: a hash that changed (an edit, a transition, a
fold) is another reply and is decoded afresh, and a key forgotten and written again reads
another reply too, so nothing is ever invalidated. The live recall counter is part of the key
(applying it to a kept memory, a ``dataclasses.replace``, cost as much as the decode): the
memories a recall returns are decoded again the next time, the candidates it passed over are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.core import schema
from kenning.core.models import Memory
from kenning.store.client import text
from kenning.store.recalls import Counter

# replies kept; when full the store starts over (cheaper than an LRU's bookkeeping, and
# thread-safe under the GIL: plain dict reads and writes)
SIZE = 2048


def as_text(value: Any) -> str:
    """``client.text`` with the bytes case first (a recall decodes ~1,000 reply values)."""
    return value.decode("utf-8", "replace") if type(value) is bytes else text(value)


class Decoded:
    """The memories of HMGET replies of every declared field (``schema.FIELD_NAMES``)."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._memo: dict[tuple[Any, ...], Memory] = {}

    def memory(self, key: str, row: Sequence[Any], counter: Counter) -> Memory | None:
        """The memory of ``row`` with its live ``counter``; None for a hash that is gone."""
        memo = (key, counter.count, counter.last, *row)
        memory = self._memo.get(memo)
        if memory is None:
            fields = {
                name: as_text(v)
                for name, v in zip(schema.FIELD_NAMES, row, strict=True)
                if v is not None
            }
            if "created_at" not in fields:
                return None
            if len(self._memo) >= self.size:
                self._memo.clear()
            memory = self._memo[memo] = counter.decode(key, fields)
        return memory

    def __len__(self) -> int:
        return len(self._memo)
