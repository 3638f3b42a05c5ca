"""The harness against the real engine on a slice of the corpus: import, a
family, the timing split."""

from __future__ import annotations

import random

import valkey

from bench import families, metrics
from bench.corpus import Corpus, generate
from bench.instrument import Stopwatch, TimedEmbedder, TimedMemoryStore
from bench.run import Run, RunConfig
from bench.runner import import_corpus
from kenning.core.settings import Settings
from kenning.engine import Engine


def _run(settings: Settings, client: valkey.Valkey, engine: Engine) -> Run:
    full = generate("1k", seed=11)
    projects = set(full.projects()[:2])
    corpus = Corpus(seed=11, size="1k", items=[i for i in full.items if i.project in projects])
    watch = Stopwatch()
    timed_engine = Engine.open(
        settings, client, TimedEmbedder(engine.ctx.embedder, watch), clock=engine.ctx.clock
    )
    timed_engine.ctx.store.memories = TimedMemoryStore(timed_engine.ctx.store.memories, watch)
    return Run(timed_engine, watch, corpus, RunConfig(size="1k"))


def test_import_then_verbatim_family_finds_every_memory(
    settings: Settings, client: valkey.Valkey, engine: Engine
) -> None:
    run = _run(settings, client, engine)
    report = import_corpus(run, client)
    assert report["stored"] + report["duplicates_refused"] == len(run.corpus.items) == 100
    assert report["bytes_per_memory"] > 1536  # at least the float32 vector
    interleaved = report["interleaved"]  # the first round, embedded alone and imported: both rates
    assert interleaved["texts"] == 100
    assert interleaved["embedding"]["texts_per_second"] > 0
    assert interleaved["import"]["texts_per_second"] > 0
    assert len(interleaved["import"]["round_seconds"]) == 1
    queries = families.verbatim_queries(run.corpus, random.Random(1), 15)
    ranks = [metrics.first_rank(run.recall(q), q.targets) for q in queries]
    assert metrics.recall_at(ranks, 5) == 1.0
    assert len(run.recall_phases) == 15
    for phases in run.recall_phases:
        assert phases["embed"] > 0
        assert phases["search"] > 0
        assert phases["search_calls"] >= 1
        assert abs(phases["total"] - phases["embed"] - phases["search"] - phases["rest"]) < 1e-9


def test_a_remember_s_searches_sent_with_its_claim_are_timed_as_search(
    settings: Settings, client: valkey.Valkey, engine: Engine
) -> None:
    run = _run(settings, client, engine)
    item = run.corpus.items[0]
    result = run.remember(
        families.Write(
            f"{item.project} moved its nightly backups to the cold tier",
            item.project,
            item.namespace,
            None,
            item.uid,
        )
    )
    assert result.status == "stored"
    (phases,) = run.remember_phases
    assert phases["search"] > 0
    # the duplicate KNN and the contradiction check's, in one round trip
    assert phases["search_calls"] >= 2
    assert abs(phases["total"] - phases["embed"] - phases["search"] - phases["rest"]) < 1e-9
