"""A reindex under a running server (kenning/store/rebuild.py): every recall answered while it
runs equals the answer before it, health says "rebuilding" instead of drift, and the server follows
the switch to the new index without a restart."""

from __future__ import annotations

import threading
import time

import valkey

from kenning.core import schema
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.context import POINTER_REFRESH
from kenning.runtime.embedding import Embedder

TOPICS = ("the billing service", "the search cluster", "the nightly backup", "the login page")
FACTS = (
    "runs on port {n}",
    "is owned by team {n}",
    "was last changed in sprint {n}",
    "pages the on-call after {n} failures",
    "keeps {n} days of logs",
)
QUERIES = (
    "which port does the billing service run on?",
    "who owns the search cluster?",
    "how long are the nightly backup logs kept?",
    "when does the login page page the on-call?",
)


def _answers(engine: Engine) -> dict[str, list[str]]:
    return {
        q: [h.memory.key for h in engine.recaller.recall(RecallRequest(q, projects=["p"])).hits]
        for q in QUERIES
    }


def test_a_reindex_under_a_running_server_changes_no_answer(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    server = Engine.open(settings, client, embedder, clock=clock)  # the MCP server's engine
    rebuilder = Engine.open(settings, client, embedder, clock=clock)  # `kenning reindex`
    try:
        drafts = [
            Draft(f"{topic.capitalize()} {fact.format(n=n)}", project="p")
            for topic in TOPICS
            for fact in FACTS
            for n in (3, 7, 12)
        ]
        for draft in drafts:
            server.memories.remember(draft, actor="t", allow_duplicate=True)
        old = server.ctx.index
        before = _answers(server)
        assert all(before.values())  # positive control: every question has answers
        assert _answers(server) == before  # and asking again does not change them by itself
        health: list[tuple[bool, str]] = []

        def waiting() -> None:  # the new index exists and backfills: what does the server say?
            check = {c.name: c for c in server.inspection.health().checks}["indexes"]
            health.append((check.ok, check.detail))

        during: list[dict[str, list[str]]] = []
        stop = threading.Event()

        def ask() -> None:
            while not stop.is_set():
                during.append(_answers(server))

        asking = threading.Thread(target=ask)
        asking.start()
        try:
            result = rebuilder.maintenance.reindex(actor="cli:reindex", waiting=waiting)
            time.sleep(POINTER_REFRESH * 1.5)  # the server re-reads the registry meanwhile
        finally:
            stop.set()
            asking.join()
        assert len(during) > 2
        assert [d for d in during if d != before] == []
        assert result.index != old
        assert schema.is_current(result.index, settings.key_prefix, embedder.dimension)
        assert server.ctx.index == result.index  # followed without a restart
        assert server.store.index_info(old) is None  # the old index is gone after the grace
        assert _answers(server) == before
        assert health
        assert health[0][0], health
        assert "rebuilding" in health[0][1]
        after = {c.name: c for c in server.inspection.health().checks}["indexes"]
        assert after.ok
        assert "current" in after.detail
    finally:
        server.close()
        rebuilder.close()


def test_a_service_started_after_a_reindex_keeps_the_rebuilt_index(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    first = Engine.open(settings, client, embedder, clock=clock)
    try:
        first.memories.remember(
            Draft("The audit log lives in a Redis stream", project="p"), actor="t"
        )
        rebuilt = first.maintenance.reindex(actor="admin").index
        assert rebuilt != schema.index_name(settings.key_prefix, embedder.dimension)
    finally:
        first.close()
    second = Engine.open(settings, client, embedder, clock=clock)  # ensure() at start-up
    try:
        assert second.ctx.index == rebuilt
        report = second.maintenance.index_report()
        assert report.drift == []
        hits = second.recaller.recall(RecallRequest("where is the audit log?", projects=["p"])).hits
        assert [h.memory.content for h in hits][:1] == ["The audit log lives in a Redis stream"]
    finally:
        second.close()
