"""Bulk remember: deduplicated against the store and within the batch,
audited, searchable at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kenning.core.errors import InvalidInput
from kenning.core.models import RememberResult
from kenning.engine import Engine
from kenning.memory.bulk import FAILED, NEW, Bulk, ImportInterrupted
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder, Vector
from kenning.store import connect
from tests.conftest import free_port, make_settings


def test_remember_many_stores_dedups_and_audits(engine: Engine) -> None:
    existing = engine.memories.remember(
        Draft("Run the tests with `pytest -x -q` in atlas-api.", project="atlas-api"),
        actor="tester",
    )
    assert existing.status == "stored"
    drafts = [
        Draft(
            "Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green.",
            project="atlas-api",
        ),
        Draft(
            "Run the tests with `pytest -x -q` in atlas-api.", project="atlas-api"
        ),  # repeats the store
        Draft("Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="atlas-api"),
        Draft(
            "Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="atlas-api"
        ),  # repeats the batch
        Draft(
            "Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="borealis-web"
        ),  # other project
    ]
    results = Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="importer", batch=3)
    assert [r.status for r in results] == ["stored", "duplicate", "stored", "duplicate", "stored"]
    assert results[1].key == existing.key
    assert results[3].key == results[2].key
    stored = [r.key for r in results if r.status == "stored"]
    for key in stored:
        events = engine.store.audit.history(key)
        assert [e.action for e in events] == ["remember"]
        assert events[0].actor == "importer"
    found = engine.recaller.recall(
        RecallRequest("how do we ship atlas-api to production?", projects=["atlas-api"])
    )
    assert found.hits[0].memory.key == stored[0]
    assert engine.memories.get(stored[2]).project == "borealis-web"


# Batches of 3: (0 1 2) (3 4 5) (6 7 8). 2 repeats 1 in its batch; 4 repeats 0 and 6 repeats 3 from
# the batch just before (written while the next one embeds); 7 repeats 0 two batches back;
# 8 says the opposite of 1.
OVERLAPPED = (
    "Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green.",
    "Run the tests with `pytest -x -q` before every push to atlas-api.",
    "Run the tests with `pytest -x -q` before every push to atlas-api.",
    "Pin numpy==1.26.4: the 2.x ABI breaks our extension.",
    "Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green.",
    "The staging database of atlas-api is reset every Monday at 06:00 UTC.",
    "Pin numpy==1.26.4: the 2.x ABI breaks our extension.",
    "Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green!",
    "Do not run the tests with `pytest -x -q` before every push to atlas-api.",
)


def _outcome(results: list[RememberResult]) -> list[tuple[str, int]]:
    """Each result as (status, index of the draft whose memory it names):
    comparable across two imports."""
    index = {r.key: i for i, r in enumerate(results) if r.status == "stored"}
    return [(r.status, index[r.key]) for r in results]


def test_the_overlapped_import_gives_what_one_batch_at_a_time_gives(engine: Engine) -> None:
    bulk = Bulk(engine.ctx, engine.memories)
    overlapped = bulk.remember_many(
        [Draft(t, project="overlapped") for t in OVERLAPPED], actor="importer", batch=3
    )
    one_by_one = [
        r
        for start in range(0, len(OVERLAPPED), 3)
        for r in bulk.remember_many(
            [Draft(t, project="one-by-one") for t in OVERLAPPED[start : start + 3]],
            actor="importer",
            batch=3,
        )
    ]
    expected = [
        ("stored", 0),
        ("stored", 1),
        ("duplicate", 1),
        ("stored", 3),
        ("duplicate", 0),
        ("stored", 5),
        ("duplicate", 3),
        ("duplicate", 0),
        ("stored", 8),
    ]
    assert _outcome(overlapped) == _outcome(one_by_one) == expected
    for result, (_, named) in zip(overlapped, expected, strict=True):
        assert engine.memories.get(result.key).content == OVERLAPPED[named]
    listed = engine.memories.list(Listing(projects=["overlapped"], limit=50))
    assert sorted(m.key for m in listed.items) == sorted(
        r.key for r in overlapped if r.status == "stored"
    )


def test_an_invalid_draft_is_named_and_nothing_is_written(engine: Engine) -> None:
    drafts = [Draft(t, project="checked") for t in OVERLAPPED[:5]]
    with pytest.raises(InvalidInput, match="draft 4: "):
        Bulk(engine.ctx, engine.memories).remember_many(
            [*drafts[:4], Draft("   ", project="checked")], actor="importer", batch=2
        )
    assert engine.memories.list(Listing(projects=["checked"])).total == 0
    # the control
    stored = Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="importer", batch=2)
    assert (
        engine.memories.list(Listing(projects=["checked"])).total
        == sum(r.status == "stored" for r in stored)
        == 3
    )


class StopsTheServer:
    """The real embedder, which stops the Valkey server (an outage) once it has
    embedded ``calls`` batches."""

    def __init__(self, inner: Embedder, server: EmbeddedValkey, calls: int) -> None:
        self.inner, self.server, self.left = inner, server, calls
        self.model_name, self.dimension = inner.model_name, inner.dimension

    def embed(self, text: str) -> Vector:
        return self.inner.embed(text)

    def embed_many(self, texts: list[str]) -> list[Vector]:
        vectors = self.inner.embed_many(texts)
        self.left -= 1
        if self.left == 0:
            self.server.stop()
        return vectors


def test_an_outage_mid_import_reports_what_is_stored_and_fails_the_rest(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = make_settings(tmp_path, free_port())
    drafts = [
        Draft(f"Service number {i} of the fleet listens on port {8000 + i}.", project="fleet")
        for i in range(50)
    ]
    server = EmbeddedValkey(settings)
    server.start()
    try:
        engine = Engine.open(settings, connect(settings), StopsTheServer(embedder, server, calls=3))
        with pytest.raises(ImportInterrupted, match="the import stopped after") as stopped:
            Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="importer", batch=10)
    finally:
        server.stop()
    results = stopped.value.results
    assert stopped.value.code == "backend_unavailable"
    statuses = [r.status for r in results]
    stored = statuses.count("stored")
    assert len(results) == 50
    # the first batch was written before the third was embedded; the second may be
    assert stored in (10, 20)
    assert statuses == ["stored"] * stored + [FAILED] * (50 - stored)
    # the same data dir, back up: what was reported stored is there, audited
    with EmbeddedValkey(settings):
        again = Engine.open(settings, connect(settings), embedder)
        for result in results[:stored]:
            assert again.memories.get(result.key).project == "fleet"
            assert [e.action for e in again.store.audit.history(result.key)] == ["remember"]
        # batch 2 may have landed
        assert stored <= again.memories.list(Listing(projects=["fleet"])).total <= 20
        retried = Bulk(again.ctx, again.memories).remember_many(
            drafts[stored:], actor="importer", batch=10
        )
        assert {r.status for r in retried} <= {"stored", "duplicate"}
        assert again.memories.list(Listing(projects=["fleet"], limit=1)).total == 50


def test_the_dry_run_gives_what_the_import_gives_and_writes_nothing(engine: Engine) -> None:
    existing = engine.memories.remember(Draft(OVERLAPPED[5], project="planned"), actor="tester")
    drafts = [Draft(t, project="planned") for t in OVERLAPPED]
    bulk = Bulk(engine.ctx, engine.memories)
    steps: list[tuple[int, int]] = []
    planned = bulk.plan_many(
        drafts, actor="importer", batch=3, progress=lambda *step: steps.append(step)
    )
    assert steps == [(3, 9), (6, 9), (9, 9)]
    # only the one stored before
    assert engine.memories.list(Listing(projects=["planned"])).total == 1
    assert not any(engine.store.memories.exists(r.key) for r in planned if r.status == NEW)
    # 4 repeats 0 and 6 repeats 3 from the batch before, 7 repeats 0 two batches back: no store
    # finds them in a dry run, ``Kept`` does; 5 repeats the memory stored before
    expected = [
        ("new", 0),
        ("new", 1),
        ("duplicate", 1),
        ("new", 3),
        ("duplicate", 0),
        ("duplicate", -1),
        ("duplicate", 3),
        ("duplicate", 0),
        ("new", 8),
    ]
    index = {r.key: i for i, r in enumerate(planned) if r.status == NEW} | {existing.key: -1}
    assert [(r.status, index[r.key]) for r in planned] == expected
    imported = bulk.remember_many(
        drafts, actor="importer", batch=3, progress=lambda *step: steps.append(step)
    )
    assert steps == [(3, 9), (6, 9), (9, 9)] * 2
    assert [r.status for r in imported] == [s.replace("new", "stored") for s, _ in expected]
    assert engine.memories.list(Listing(projects=["planned"])).total == 1 + 4


def test_a_repeat_on_another_day_is_a_new_event_as_in_remember(engine: Engine) -> None:
    said = "Deployed atlas-api v1.2 to production."
    existing = engine.memories.remember(
        Draft(said, project="events", event_date="2026-03-01"), actor="tester"
    )
    drafts = [
        Draft(said, project="events", event_date=day)  # no date: the same as any event
        for day in ("2026-03-01", "2026-03-08", "2026-03-08T17:00:00Z", "2026-03-15", None)
    ]
    bulk = Bulk(engine.ctx, engine.memories)
    for run, new in ((bulk.plan_many, NEW), (bulk.remember_many, "stored")):
        results = run(drafts, actor="importer", batch=4)
        assert [r.status for r in results] == ["duplicate", new, "duplicate", new, "duplicate"]
        assert (results[0].key, results[2].key) == (existing.key, results[1].key)
    assert engine.memories.list(Listing(projects=["events"])).total == 3


def test_parallel_imports_of_the_same_drafts_store_each_once(engine: Engine) -> None:
    """Each import takes the claim remember takes on each content (in one global order), so two
    imports of the same file at once store every draft once, and a remember of one of the texts
    meanwhile is a duplicate too."""
    drafts = [
        Draft(f"Import race note {n}: shard {n} lives on host db-{n}.internal", project="imp")
        for n in range(30)
    ]
    start = threading.Barrier(3)

    def importing(_: int) -> list[RememberResult]:
        start.wait()
        return Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="i", batch=10)

    def remembering(_: int) -> list[RememberResult]:
        start.wait()
        return [engine.memories.remember(drafts[7], actor="r")]

    with ThreadPoolExecutor(3) as pool:
        runs = [pool.submit(importing, 0), pool.submit(importing, 1), pool.submit(remembering, 2)]
        results = [r for run in runs for r in run.result()]
    stored = [r.key for r in results if r.status == "stored"]
    assert len(stored) == len(drafts)  # each text once, whoever wrote it
    assert len(set(stored)) == len(stored)
    assert sum(r.status == "duplicate" for r in results) == len(drafts) + 1
    listed = engine.memories.list(Listing(projects=["imp"], limit=100))
    assert sorted(m.content for m in listed.items) == sorted(d.content for d in drafts)


# A dated history: three subjects whose values change, told in order (valid_from a day apart).
HISTORY = (
    "The billing API listens on port 8080",
    "Nightly backups run at 02:00",
    "The billing API moved to port 8443",
    "We send transactional email with Mailgun",
    "Nightly backups now run at 03:30",
    "We no longer use Mailgun; transactional email goes through Postmark",
    "The billing API is back on port 8081",
    "The search worker has 4 threads",
)


def _opened(engine: Engine, project: str) -> set[tuple[str, str, str]]:
    records, _ = engine.contradictions.listing(status="open", project=project, limit=200)
    content = {k: engine.memories.get(k).content for r in records for k in (r.a, r.b)}
    return {(content[r.a], content[r.b], r.detector) for r in records}


def test_bulk_import_opens_the_contradictions_remember_opens(engine: Engine) -> None:
    def drafts(project: str) -> list[Draft]:
        return [
            Draft(text, project=project, valid_from=f"2026-03-{i + 1:02d}")
            for i, text in enumerate(HISTORY)
        ]

    for draft in drafts("one-by-one"):
        assert engine.memories.remember(draft, actor="agent").status == "stored"
    results = Bulk(engine.ctx, engine.memories).remember_many(
        drafts("in-bulk"), actor="importer", batch=3
    )
    assert [r.status for r in results] == ["stored"] * len(HISTORY)
    one_by_one, in_bulk = _opened(engine, "one-by-one"), _opened(engine, "in-bulk")
    assert in_bulk == one_by_one
    # positive control: the history's changes were found, the older statement on side a
    assert (HISTORY[0], HISTORY[2], "value") in in_bulk
    assert (HISTORY[1], HISTORY[4], "value") in in_bulk
    assert len(in_bulk) >= 3
    # the results name what each stored draft contradicts, as remember's do
    assert any(n.kind == "contradiction" for n in results[4].notes)
    assert not any(n.kind == "contradiction" for n in results[7].notes)
