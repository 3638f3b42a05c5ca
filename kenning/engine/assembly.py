"""The engine facade: built once per process, shared by every front door.

``Engine.open`` checks the store (search module, model pin, index migration, and after a
migration the new graph's self-check: kenning.curation.graph) before anything is served.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.access.tokens import Tokens
from kenning.core import schema
from kenning.core.clock import Clock, SystemClock
from kenning.core.errors import BackendUnavailable
from kenning.core.settings import Settings
from kenning.curation.briefing import Briefing
from kenning.curation.duplicates import Duplicates
from kenning.curation.graph import GraphSelfCheck
from kenning.curation.maintenance import Maintenance
from kenning.curation.projects import Projects
from kenning.knowledge.documents import Documents
from kenning.knowledge.enrichment import ACTOR, Enrichment
from kenning.knowledge.feeds.ingest import FeedIngest
from kenning.knowledge.skills import Skills
from kenning.language import words
from kenning.llm.client import Llm
from kenning.llm.expansion import Expander
from kenning.memory.activity import Activity
from kenning.memory.bulk import Bulk
from kenning.memory.experience import Experience
from kenning.memory.graveyard import Graveyard
from kenning.memory.imports import Imports
from kenning.memory.inspection import Inspection
from kenning.memory.lifecycle import Lifecycle
from kenning.memory.memories import Memories
from kenning.memory.recall import Recaller
from kenning.memory.recall_log import RecallLog
from kenning.memory.suppression import Suppressions
from kenning.memory.telemetry import Telemetry
from kenning.ops.backup import Backups
from kenning.ops.jobs import Jobs
from kenning.runtime.context import Context
from kenning.runtime.embedding import Embedder
from kenning.store import Client, Store
from kenning.truth.belief import Belief
from kenning.truth.contradictions import Contradictions
from kenning.truth.history import History


@dataclass
class Engine:
    ctx: Context
    memories: Memories
    recaller: Recaller
    tokens: Tokens
    inspection: Inspection
    documents: Documents
    projects: Projects
    belief: Belief
    lifecycle: Lifecycle
    experience: Experience
    suppressions: Suppressions
    recall_log: RecallLog
    duplicates: Duplicates
    history: History
    maintenance: Maintenance
    briefing: Briefing
    backups: Backups
    jobs: Jobs
    llm: Llm
    enrichment: Enrichment
    skills: Skills
    feeds: FeedIngest
    telemetry: Telemetry
    activity: Activity
    imports: Imports

    @classmethod
    def open(
        cls,
        settings: Settings,
        client: Client | Store,
        embedder: Embedder,
        clock: Clock | None = None,
    ) -> Engine:
        """The engine on ``client`` (the composition root's connection; kenning.store wraps it in
        a Store under ``settings.key_prefix``) or on a ready ``Store``."""
        store = Store.on(client, settings.key_prefix)
        if "search" not in store.modules():
            raise BackendUnavailable(
                "Valkey has no search module loaded",
                hint="use `kenning valkey`, or load valkey-search into your server",
            )
        store.pin_model(embedder.model_name, embedder.dimension)
        before = store.live_indexes()
        names = store.ensure_indexes(
            embedder.dimension, timeout=settings.index_backfill_timeout_seconds
        )
        ctx = Context(
            store=store,
            embedder=embedder,
            settings=settings,
            clock=clock or SystemClock(),
            indexes=names,
        )
        engine = cls.build(ctx)
        if before and names.get(schema.INDEX) != before.get(schema.INDEX):
            # an index migration built a new graph from the hashes: self-check it (as a reindex)
            engine.maintenance.graph.run(actor="migration")
        return engine

    @classmethod
    def build(cls, ctx: Context) -> Engine:
        """Each service once, handed to every service that uses it (no service builds another)."""
        words.warm()  # the lemma dictionary loads here, not in the first write that meets a rival
        suppressions, graveyard, projects = Suppressions(ctx), Graveyard(ctx), Projects(ctx)
        belief = Belief(ctx)
        memories = Memories(ctx, Contradictions(ctx, belief), suppressions)
        # merging and expiry archive through its rules
        lifecycle = Lifecycle(ctx, memories, suppressions)
        experience = Experience(ctx, memories, graveyard, suppressions)
        skills = Skills(ctx)
        # Restores write hashes directly; these rebuild what other components derive from a memory.
        derived = (lifecycle.reindex_hints, experience.reindex, skills.reindex)
        duplicates = Duplicates(ctx, memories, lifecycle.archive)
        graph = GraphSelfCheck(ctx)
        maintenance = Maintenance(
            ctx, memories.contradictions, duplicates, lifecycle.archive, graph
        )
        recall_log = RecallLog(ctx, suppressions)
        llm, enrichment = _extras(ctx, memories, lifecycle)
        return cls(
            ctx=ctx,
            memories=memories,
            recaller=Recaller(ctx, graveyard, suppressions, recall_log, Expander(ctx, llm)),
            tokens=Tokens(ctx.store, ctx.clock),
            inspection=Inspection(ctx, memories, suppressions),
            documents=Documents(ctx, memories),
            projects=projects,
            belief=belief,
            lifecycle=lifecycle,
            experience=experience,
            suppressions=suppressions,
            recall_log=recall_log,
            duplicates=duplicates,
            history=History(ctx, memories.contradictions, derived),
            maintenance=maintenance,
            briefing=Briefing(
                ctx, projects, memories.contradictions, graveyard, suppressions, maintenance
            ),
            backups=Backups(ctx, derived, graph),
            jobs=Jobs(ctx.store, ctx.settings),
            llm=llm,
            enrichment=enrichment,
            skills=skills,
            feeds=FeedIngest(ctx, memories, llm),
            telemetry=Telemetry(ctx),
            activity=Activity(ctx),
            imports=Imports(ctx, Bulk(ctx, memories)),
        )

    def close(self) -> None:
        """Write what still waits behind the replies (the recall log and counters:
        ``Store.close``). The connection stays open: it is the caller's."""
        self.ctx.store.close()

    @property
    def contradictions(self) -> Contradictions:
        """The detector the write path uses (one instance, so a second-tier
        checker applies to both)."""
        return self.memories.contradictions

    @property
    def store(self) -> Store:
        return self.ctx.store


def _extras(ctx: Context, memories: Memories, lifecycle: Lifecycle) -> tuple[Llm, Enrichment]:
    """The optional LLM extras (docs/llm.md): without a key they stay off
    and every path is heuristic."""
    llm = Llm(ctx.settings, ctx.store.llm_usage, ctx.clock)
    enrichment = Enrichment(
        ctx,
        memories,
        llm,
        lambda key, reason: lifecycle.deprioritise(key, reason=reason, actor=ACTOR),
    )
    if llm.available:
        memories.after_store.append(enrichment.on_stored)
        if ctx.settings.llm_contradiction_verdicts:  # asked by the queue, after remember returns
            memories.contradictions.defer = enrichment.queue_verdict
    return llm, enrichment
