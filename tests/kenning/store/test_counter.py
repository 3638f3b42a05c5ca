"""A live recall counter decoded into the memory as the hash's own fields would be (pure)."""

from __future__ import annotations

from kenning.core import schema
from kenning.store.recalls import Counter

KEY = "t:mem:episodic:01JABCDEFGHJKMNPQRSTVWXYZ0"
FIELDS = {
    "content": "The nightly backup copies the AOF to object storage.",
    "namespace": "episodic",
    "created_at": "1700000000.0",
    "recall_count": "3",
    "last_recalled": "1700000500.25",
}


def test_no_counter_key_leaves_the_hash_values() -> None:
    memory = Counter(None, None).decode(KEY, FIELDS)
    assert (memory.recall_count, memory.last_recalled) == (3, 1700000500.25)
    assert memory == schema.decode(KEY, FIELDS)


def test_a_counter_key_wins_and_matches_applying_it_after_the_decode() -> None:
    counter = Counter(7, 1700000900.125)
    memory = counter.decode(KEY, FIELDS)
    assert (memory.recall_count, memory.last_recalled) == (7, 1700000900.125)
    assert memory == counter.applied(schema.decode(KEY, FIELDS))
    assert FIELDS["recall_count"] == "3"  # the caller's fields are not changed


def test_a_counter_without_a_time_clears_it_as_applied_does() -> None:
    bare = {k: v for k, v in FIELDS.items() if k not in ("recall_count", "last_recalled")}
    counter = Counter(1, None)
    memory = counter.decode(KEY, FIELDS)
    assert (memory.recall_count, memory.last_recalled) == (1, None)
    assert memory == counter.applied(schema.decode(KEY, FIELDS))
    assert counter.decode(KEY, bare) == counter.applied(schema.decode(KEY, bare))
