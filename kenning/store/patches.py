"""Field-level updates of memory hashes that never resurrect a deleted memory. One key per script.

``patch`` sets and removes fields in one atomic step on one key (cluster-safe), optionally guarded
by the values the caller read: a read-modify-write whose guard fails writes nothing and is retried
(compare-and-set, docs/reliability.md). A change of a memory goes with its audit events as one unit
of work (``MemoryStore.patch``, kenning.store.unit, which runs the same gate); this script folds the
recall counters, which live beside the hash (``kenning.store.recalls``): every write to an indexed
hash re-indexes the whole document.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kenning.store.unit import Op

# ARGV: the number of guards, then (field, expected value) pairs ('' = absent), the number of fields
# to set, their (field, value) pairs, then the fields to remove. 1 = applied, 0 = the key is gone,
# -1 = a guarded field differs (someone changed it since the caller read it): nothing was written.
PATCH_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local g = tonumber(ARGV[1])
for i = 2, 1 + 2 * g, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if (v or '') ~= ARGV[i + 1] then return -1 end
end
local at = 2 + 2 * g
local n = tonumber(ARGV[at])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, at + 1, at + 2 * n)) end
for i = at + 1 + 2 * n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
"""
APPLIED, GONE, CHANGED = 1, 0, -1
# A writer loses a round only to one that won it, so N colliding writers need at most N rounds.
SWAP_ATTEMPTS = 32


def pause(attempt: int) -> None:
    """Wait a little before retrying a compare-and-set that collided,
    spreading the colliding writers."""
    time.sleep(random.uniform(0, 0.002 * (attempt + 1)))


@dataclass(frozen=True)
class Patch:
    """Fields to set (already encoded) and fields to remove on one existing memory hash, applied
    only while every ``expect`` field still holds its expected encoded value ('' = absent)."""

    key: str
    set: Mapping[str, str | bytes] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    expect: dict[str, str] = field(default_factory=dict)
    also: tuple[Op, ...] = ()  # writes derived from this one (index entries), in the same unit

    def args(self) -> list[Any]:
        flat: list[Any] = [str(len(self.expect))]
        for name, expected in self.expect.items():
            flat += [name, expected]
        flat.append(str(len(self.set)))
        for name, value in self.set.items():
            flat += [name, value]
        return flat + list(self.remove)
