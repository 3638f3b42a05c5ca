"""A recall count of 0 is left out of a memory hash (issue 38): every filter and order that asks
for it finds it, in hashes of both layouts (those that leave it out and those an older Kenning
wrote the 0 into)."""

from __future__ import annotations

from typing import Any

import valkey

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft


def _remember(engine: Engine, text: str) -> str:
    return engine.memories.remember(Draft(text, project="lo"), actor="t").key


def _order(engine: Engine, **order: Any) -> list[str]:
    return [m.key for m in engine.memories.list(Listing(projects=["lo"], **order)).items]


def test_a_count_of_zero_is_left_out_and_still_found_and_ordered(
    engine: Engine, client: valkey.Valkey
) -> None:
    new = _remember(engine, "The nightly export writes parquet files to the cold bucket")
    old = _remember(engine, "Grafana alerts page the on-call engineer after five minutes")
    once = _remember(engine, "The staging database is restored from Sunday's snapshot")
    often = _remember(engine, "Release tags are signed with the team's hardware key")
    raw: Any = client.hgetall(new)
    assert b"recall_count" not in raw
    assert engine.memories.get(new).recall_count == 0
    client.hset(old, "recall_count", "0")  # as the previous layout wrote it
    client.hset(once, "recall_count", "1")  # as maintenance folds the counters
    client.hset(often, "recall_count", "3")

    never = {i.key for i in engine.telemetry.never_recalled(limit=50).items}
    assert {new, old} <= never
    assert {once, often} & never == set()
    most = {i.key for i in engine.telemetry.most_recalled(limit=50).items}
    assert {once, often} <= most
    assert {new, old} & most == set()

    fewest = _order(engine, sort="recall_count", descending=False, limit=4)
    assert set(fewest[:2]) == {new, old}
    assert fewest[2:] == [once, often]
    assert _order(engine, sort="recall_count", descending=False, offset=2, limit=1) == [once]
    assert _order(engine, sort="recall_count", descending=False, offset=3, limit=5) == [often]
    assert _order(engine, sort="recall_count", limit=2) == [often, once]
    page = engine.memories.list(
        Listing(projects=["lo"], sort="recall_count", descending=False, limit=1)
    )
    assert page.total == 4


def test_an_update_time_equal_to_creation_is_left_out_and_sorts_among_the_changed(
    engine: Engine, client: valkey.Valkey, clock: ManualClock
) -> None:
    keys = []
    for n in range(4):
        keys.append(_remember(engine, f"Cron job {n} rotates the logs of host h{n} at {n + 1} am"))
        clock.advance(60)
    raw: Any = client.hgetall(keys[0])
    assert b"updated_at" not in raw
    assert engine.memories.get(keys[0]).updated_at == engine.memories.get(keys[0]).created_at
    engine.memories.update(keys[1], "Cron job 1 rotates the logs of host h1 hourly", actor="t")
    raw = client.hgetall(keys[1])
    assert b"updated_at" in raw  # positive control: a change writes its time
    client.hset(keys[2], "updated_at", repr(engine.memories.get(keys[2]).created_at))  # old layout

    newest = _order(engine, sort="updated_at", limit=4)
    assert newest == [keys[1], keys[3], keys[2], keys[0]]
    assert _order(engine, sort="updated_at", descending=False, limit=4) == newest[::-1]
    assert _order(engine, sort="updated_at", offset=1, limit=2) == [keys[3], keys[2]]
    assert engine.ctx.store.times(keys, "updated_at") == [
        engine.memories.get(k).updated_at for k in keys
    ]
