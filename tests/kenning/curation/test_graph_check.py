"""The search graph's self-check and repair (kenning/curation/graph.py, store/graph_check.py): a
memory the index cannot reach by its own vector is found and re-inserted, a reachable one is not
touched, no field of any memory changes, and restore, reindex and a migration end with the check.

A store this small never leaves a memory unreachable in its HNSW graph, so the miss is made on
purpose: on a private RediSearch server the memory's hash is kept while the index loses it (a
SWAPDB the module does not follow: the hash is in db 0, the index never saw it), which is what
the check meets for a node with no links in: a KNN by its vector never returns it. valkey-search
follows SWAPDB and ignores a rewrite of an identical vector, so there the test shows that the
repair's two writes leave the hash as it was and that the plain rewrite would not do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core import schema
from kenning.core.clock import ManualClock
from kenning.core.errors import BackendUnavailable
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey, default_module
from kenning.runtime.embedding import Embedder
from kenning.store import connect, graph_check, search_module, vectors
from tests.conftest import _wipe, free_port, make_settings
from tests.kenning_cli.test_import import Cutter

FACTS = [
    ("billing", "The billing service retries a failed charge three times before paging."),
    ("billing", "Invoices are rendered by the pdf worker on queue invoices-high."),
    ("billing", "Refunds above 500 euros need a second approver in the admin console."),
    ("billing", "The billing database is Postgres 15 with a read replica in eu-west-2."),
    ("billing", "Tax rates are loaded from the vendor feed every night at 02:00 UTC."),
    ("billing", "Card numbers never reach our servers: the payment form posts to the vault."),
    ("search", "The search cluster has three shards and rebalances on Sunday mornings."),
    ("search", "Synonyms for the product catalogue live in synonyms.txt in the infra repo."),
    ("search", "A reindex of the catalogue takes about forty minutes on the big nodes."),
    ("search", "Query logs are kept for fourteen days, then dropped by the janitor job."),
    ("search", "The autocomplete endpoint answers from a prefix trie rebuilt hourly."),
    ("search", "Search relevance is tuned by the ranking team, not by the platform team."),
]


@pytest.fixture(scope="module")
def redisearch_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedValkey]:
    """A RediSearch server of this module's own: the damage below swaps its whole db 0."""
    settings = make_settings(
        tmp_path_factory.mktemp("graph-redisearch"), free_port(), search_module=default_module()
    )
    with EmbeddedValkey(settings) as server:
        yield server


def _on(server: EmbeddedValkey, prefix: str) -> Settings:
    return make_settings(server.settings.data_dir, server.settings.valkey_port, key_prefix=prefix)


def _filled(settings: Settings, client: valkey.Valkey, embedder: Embedder) -> Engine:
    engine = Engine.open(settings, client, embedder, clock=ManualClock(1_800_000_000.0))
    for project, text in FACTS:
        engine.memories.remember(Draft(text, project=project), actor="t", allow_duplicate=True)
    return engine


def _hashes(client: valkey.Valkey, prefix: str) -> dict[bytes, dict[bytes, bytes]]:
    keys = list(client.scan_iter(match=f"{prefix}mem:*", count=1000))
    return {key: dict(client.hgetall(key)) for key in keys}  # type: ignore[arg-type]


def _unindex(client: valkey.Valkey, key: str) -> None:
    """Keep ``key``'s hash, take it out of the index: db 1 gets a copy of every key, db 0 loses
    ``key`` (the index drops it), then the two swap (RediSearch keeps its index as it was)."""
    for name in client.scan_iter(count=1000):
        client.copy(name, name, destination_db=1)
    client.delete(key)
    client.swapdb(0, 1)  # db 1 keeps its copies: a FLUSHDB would drop RediSearch's indexes


def _max_doc_id(client: valkey.Valkey, index: str) -> int:
    """RediSearch's last document id: every (re-)indexing of a hash takes a new one."""
    reply: Any = client.execute_command("FT.INFO", index)  # type: ignore[no-untyped-call]
    names = [k.decode() if isinstance(k, bytes) else k for k in reply[::2]]
    info = dict(zip(names, reply[1::2], strict=True))
    return int(info["max_doc_id"])


def _recalled(engine: Engine, text: str) -> list[str]:
    return [h.memory.key for h in engine.recaller.recall(RecallRequest(text, top_k=5)).hits]


def test_the_check_reinserts_a_memory_the_index_cannot_reach_and_touches_no_other(
    redisearch_alone: EmbeddedValkey, prefix: str, embedder: Embedder
) -> None:
    settings = _on(redisearch_alone, prefix)
    client = connect(settings)
    try:
        engine = _filled(settings, client, embedder)
        index = engine.ctx.index
        before = _hashes(client, prefix)
        assert len(before) == len(FACTS)
        key = next(k.decode() for k, v in before.items() if v[b"content"] == FACTS[2][1].encode())
        control = next(
            k.decode() for k, v in before.items() if v[b"content"] == FACTS[8][1].encode()
        )
        healthy = engine.maintenance.graph.run(actor="t")  # the positive control first
        assert (healthy.checked, healthy.missed, healthy.reinserted) == (len(FACTS), 0, 0)
        _unindex(client, key)
        untouched = _max_doc_id(client, index)  # (the copies into db 1 were indexed too)
        assert _hashes(client, prefix) == before  # the hash is all there, the index lost it
        raw = before[key.encode()][b"vector"]
        assert graph_check.missed(client, index, [(key, raw)], 256) == [(key, raw)]
        assert key not in _recalled(engine, FACTS[2][1])
        assert control in _recalled(engine, FACTS[8][1])  # the others are still found

        done = engine.maintenance.graph.run(actor="t")

        assert (done.checked, done.missed, done.reinserted, done.still_missed) == (
            len(FACTS),
            1,
            1,
            0,
        )
        assert (
            done.describe() == f"self-check: {len(FACTS)} of {len(FACTS)} reachable; 1 re-inserted"
        )
        assert _max_doc_id(client, index) == untouched + 2  # the two writes of one memory only
        assert _hashes(client, prefix) == before  # no field changed: updated_at, vector, all
        assert key in _recalled(engine, FACTS[2][1])
        repairs = engine.store.audit.recent(limit=50, action="repair_graph")
        assert [(e.actor, e.details["reinserted"]) for e in repairs] == [("t", 1)]
        assert engine.maintenance.graph.last() == done.public()
        again = engine.maintenance.graph.run(actor="t")
        assert (again.missed, again.reinserted) == (0, 0)
        assert _max_doc_id(client, index) == untouched + 2  # a reachable memory is not rewritten
        assert len(engine.store.audit.recent(limit=50, action="repair_graph")) == 1
        engine.close()
    finally:
        _wipe(client, prefix)
        client.close()  # type: ignore[no-untyped-call]


def test_a_missed_identical_copy_is_written_spread_once_and_every_other_field_stays(
    redisearch_alone: EmbeddedValkey, prefix: str, embedder: Embedder
) -> None:
    """A store written before every vector was spread (kenning.store.vectors) holds one text kept
    in two projects as two identical vectors. When the check misses such a copy, re-inserting the
    same bytes would prune the other copy in turn: the copy is written once spread for its key
    instead (the one field the check changes), and is reachable and recalled in its project."""
    settings = _on(redisearch_alone, prefix)
    client = connect(settings)
    store: Any = client  # raw bytes in and out
    try:
        engine = _filled(settings, client, embedder)
        index = engine.ctx.index
        text = FACTS[2][1]
        original = next(
            k.decode() for k, v in _hashes(client, prefix).items() if v[b"content"] == text.encode()
        )
        copy = engine.memories.remember(
            Draft(text, project="search"), actor="t", allow_duplicate=True
        ).key
        raw = store.hget(original, "vector")
        assert store.hget(copy, "vector") != raw  # written now: spread, not identical
        healthy = engine.maintenance.graph.run(actor="t")  # the positive control: all reachable
        assert (healthy.missed, healthy.reinserted, healthy.spread) == (0, 0, 0)
        # a reachable identical copy is spread too: no two memories keep one vector
        store.hset(copy, "vector", raw)  # as a store before the spread wrote it
        reachable = engine.maintenance.graph.run(actor="t")
        assert (reachable.missed, reachable.reinserted, reachable.spread) == (0, 1, 1)
        assert store.hget(copy, "vector") == schema.vector_bytes(
            vectors.spread(copy, schema.bytes_vector(raw))
        )
        assert store.hget(original, "vector") == raw
        store.hset(copy, "vector", raw)  # identical again, and now out of the graph's reach
        before = _hashes(client, prefix)
        assert before[copy.encode()][b"vector"] == before[original.encode()][b"vector"]
        _unindex(client, copy)
        assert graph_check.missed(client, index, [(copy, raw)], 256) == [(copy, raw)]
        asked = RecallRequest(text, projects=["search"], top_k=5)
        assert copy not in [h.memory.key for h in engine.recaller.recall(asked).hits]

        done = engine.maintenance.graph.run(actor="t")

        assert (done.missed, done.reinserted, done.spread, done.still_missed) == (1, 1, 1, 0)
        assert "1 re-inserted (1 identical copy spread)" in done.describe()
        after = _hashes(client, prefix)
        written = vectors.spread(copy, schema.bytes_vector(raw))
        assert after[copy.encode()][b"vector"] == schema.vector_bytes(written)
        assert after[original.encode()] == before[original.encode()]  # the other copy untouched
        others = {k: v for k, v in before.items() if k != copy.encode()}
        assert {k: v for k, v in after.items() if k != copy.encode()} == others
        assert {f: v for f, v in after[copy.encode()].items() if f != b"vector"} == {
            f: v for f, v in before[copy.encode()].items() if f != b"vector"
        }
        assert copy in [h.memory.key for h in engine.recaller.recall(asked).hits]
        events = engine.store.audit.recent(limit=50, action="repair_graph")
        assert [(e.details["reinserted"], e.details["spread"]) for e in events] == [(1, 1)] * 2
        again = engine.maintenance.graph.run(actor="t")
        assert (again.missed, again.reinserted, again.spread) == (0, 0, 0)
        assert _hashes(client, prefix) == after  # spread once: no longer identical to anything
        engine.close()
    finally:
        _wipe(client, prefix)
        client.close()  # type: ignore[no-untyped-call]


def test_on_valkey_search_the_repair_rewrites_the_vector_and_leaves_the_hash_as_it_was(
    engines: Any, prefix: str, embedder: Embedder
) -> None:
    """valkey-search ignores a write of an identical vector; the repair's two writes (a changed
    vector, then the stored one) are each a change to it, and the hash ends byte for byte as it
    was. A write whose guard fails (the vector changed meanwhile) is skipped."""
    settings = _on(engines[search_module.VALKEY_SEARCH], prefix)
    client = connect(settings)
    try:
        engine = _filled(settings, client, embedder)
        index = engine.ctx.index
        before = _hashes(client, prefix)
        key, fields = next(iter(before.items()))
        raw = fields[b"vector"]
        row = (key.decode(), raw)
        assert graph_check.reinsert(client, prefix, index, [row]) == {key.decode()}
        assert _hashes(client, prefix) == before
        assert graph_check.missed(client, index, [row], 256) == []
        stale = (key.decode(), graph_check.nudged(raw))  # what a re-embedding left behind
        assert graph_check.reinsert(client, prefix, index, [stale]) == set()
        assert _hashes(client, prefix) == before
        done = engine.maintenance.graph.run(actor="t")
        assert (done.checked, done.missed, done.reinserted) == (len(FACTS), 0, 0)
        assert engine.store.audit.recent(limit=50, action="repair_graph") == []
        engine.close()
    finally:
        _wipe(client, prefix)
        client.close()  # type: ignore[no-untyped-call]


def test_a_repair_cut_between_its_two_writes_is_put_back_by_the_next_check(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    """What a repair cut after its first write leaves: the journal holding a memory's stored
    bytes and the hash holding the nudged copy. The next repairing check puts the bytes back;
    a journaled memory re-embedded since keeps its new vector (the guard), and the journal is
    emptied either way."""
    prefix = settings.key_prefix
    engine = _filled(settings, client, embedder)
    store: Any = client  # raw bytes in and out (the stubs type keys and values as str)
    before = _hashes(client, prefix)
    (cut, cut_fields), (moved, moved_fields) = list(before.items())[:2]
    journal = graph_check.journal_key(prefix)
    healthy = engine.maintenance.graph.run(actor="t")  # the positive control: nothing to undo
    assert (healthy.missed, healthy.reinserted) == (0, 0)
    assert _hashes(client, prefix) == before
    store.hset(journal, mapping={cut: cut_fields[b"vector"], moved: moved_fields[b"vector"]})
    store.hset(cut, "vector", graph_check.nudged(cut_fields[b"vector"]))
    third = schema.bytes_vector(list(before.values())[2][b"vector"])
    newer = schema.vector_bytes(vectors.spread(moved.decode(), third))  # re-embedded since
    store.hset(moved, "vector", newer)
    assert store.hget(cut, "vector") != cut_fields[b"vector"]  # the damage is there first

    engine.maintenance.graph.run(actor="t")

    assert store.hget(cut, "vector") == cut_fields[b"vector"]
    assert _hashes(client, prefix)[cut] == before[cut]
    assert store.hget(moved, "vector") == newer
    assert client.exists(journal) == 0
    engine.close()


def test_restore_and_reindex_end_with_the_check(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    engine = _filled(settings, client, embedder)
    assert engine.maintenance.graph.last() is None  # no check yet
    written = engine.backups.backup(vectors=True, label="graph", actor="t")
    dry = engine.backups.restore(Path(written.path), dry_run=True, actor="t")
    assert dry.self_check is None
    assert engine.maintenance.graph.last() is None
    restored = engine.backups.restore(Path(written.path), dry_run=False, actor="t")
    assert restored.self_check is not None
    assert (restored.self_check["checked"], restored.self_check["still_missed"]) == (
        len(FACTS),
        0,
    )
    assert restored.self_check["index"] == engine.ctx.index
    old = engine.ctx.index
    rebuilt = engine.maintenance.reindex(actor="t")
    assert rebuilt.self_check is not None
    assert rebuilt.self_check["index"] == rebuilt.index != old  # the new graph was checked
    assert (rebuilt.self_check["checked"], rebuilt.self_check["still_missed"]) == (len(FACTS), 0)
    assert engine.maintenance.graph.last() == rebuilt.self_check
    reindexed = engine.store.audit.recent(limit=5, action="reindex")
    assert reindexed[0].details["self_check"]["checked"] == len(FACTS)
    engine.close()


def test_a_migration_at_start_up_ends_with_the_check(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    from kenning.store import indexes as index_admin
    from tests.kenning.store.test_migration import _old_index

    first = _filled(settings, client, embedder)
    again = Engine.open(settings, client, embedder)  # no migration: no check
    assert again.maintenance.graph.last() is None
    index_admin.drop(client, settings.key_prefix)
    old = _old_index(client, settings.key_prefix, "knowledge")
    index_admin.wait_for_backfill(client, old, 60)

    upgraded = Engine.open(settings, client, embedder)

    kept = upgraded.maintenance.graph.last()
    assert kept is not None
    assert (kept["index"], kept["checked"], kept["still_missed"]) == (
        upgraded.ctx.index,
        len(FACTS),
        0,
    )
    for opened in (first, again, upgraded):
        opened.close()


def test_the_check_fails_cleanly_when_valkey_goes_away_mid_check(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    engine = _filled(settings, client, embedder)
    before = _hashes(client, settings.key_prefix)
    cutter = Cutter(settings.valkey_port, searches=3)  # cut in the check's first KNNs
    cut = settings.model_copy(update={"valkey_port": cutter.port})
    through = connect(cut)
    try:
        checking = Engine.open(cut, through, embedder)
        with pytest.raises(BackendUnavailable, match="Valkey is unreachable"):
            checking.maintenance.graph.run(actor="t")
    finally:
        cutter.close()
    assert cutter.cut
    assert _hashes(client, settings.key_prefix) == before  # nothing written, nothing lost
    assert engine.maintenance.graph.last() is None  # no result kept for a check that failed
    done = engine.maintenance.graph.run(actor="t")  # and with Valkey back it runs whole
    assert (done.checked, done.still_missed) == (len(FACTS), 0)
    engine.close()


def test_reindex_check_says_what_it_re_inserted(
    redisearch_alone: EmbeddedValkey,
    prefix: str,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kenning_cli.main import main
    from tests.kenning_cli.test_cli import _env

    settings = _on(redisearch_alone, prefix)
    client = connect(settings)
    try:
        _filled(settings, client, embedder).close()
        key = next(
            k.decode()
            for k, v in _hashes(client, prefix).items()
            if v[b"content"] == FACTS[5][1].encode()
        )
        _unindex(client, key)
        _env(monkeypatch, tmp_path, settings.data_dir, settings.valkey_port, prefix)
        assert main(["reindex", "--check"]) == 0
        out = capsys.readouterr().out
        n = len(FACTS)
        assert out.startswith(f"self-check: {n} of {n} reachable; 1 re-inserted ("), out
    finally:
        _wipe(client, prefix)
        client.close()  # type: ignore[no-untyped-call]


def test_a_result_without_a_self_check_says_none_ran_and_one_with_it_says_its_counts() -> None:
    done = graph_check.GraphCheck(
        index="k:idx", ef_runtime=256, checked=5, missed=1, reinserted=1, still_missed=0,
        without_vector=0, seconds=1.5,
    )  # fmt: skip
    assert graph_check.self_check_line(done.public()) == (
        "self-check: 5 of 5 reachable; 1 re-inserted (1.5 s at EF_RUNTIME 256)"
    )
    assert graph_check.self_check_line(None) == "self-check: not run"
