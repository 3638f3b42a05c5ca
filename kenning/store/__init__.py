"""The store: the only package that talks to Valkey.

The engine reaches Valkey only through one ``Store`` (``ctx.store``): its sub-stores
(``store.memories``, ``store.audit``, ``store.contradictions`` ...) and methods. No engine module
imports a submodule of this package, holds the client, or builds a pipeline (tests/test_layers.py);
the types the engine needs are exported here. Every write of a memory goes with its audit events as
one unit of work (kenning.store.unit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
import valkey

from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.store import (
    graph_check,
    indexes,
    layout,
    persistence,
    rebuild,
    search_module,
    shards,
    vectors,
)
from kenning.store.accounts import AccountRecord, AccountStore, SessionRecord
from kenning.store.audit import AuditEvent, AuditLog, digest
from kenning.store.batch import Batch
from kenning.store.client import call, connect, password_file, text
from kenning.store.cluster_admin import ClusterAdmin, NodeState, SlotMover, topology
from kenning.store.cluster_audit import ClusterAuditLog
from kenning.store.cluster_unit import ClusterUnits, Repaired
from kenning.store.contradictions import STATUSES, Contradiction, ContradictionStore
from kenning.store.duplicates import DistinctPairs, pair_id
from kenning.store.feeds import FeedState, FeedStateStore
from kenning.store.graph_check import GraphCheck, self_check_line
from kenning.store.hits import Hit, Near, SearchResult
from kenning.store.idempotency import Replies
from kenning.store.indexes import IndexInfo
from kenning.store.job_runs import JobRunStore
from kenning.store.llm import ExpansionCache, JobQueue, ParkedJob, QueuedJob, UsageLedger
from kenning.store.locks import Lease
from kenning.store.memories import MemoryStore
from kenning.store.oauth import OAuthStore
from kenning.store.patches import SWAP_ATTEMPTS, Patch, pause
from kenning.store.persistence import AofState, Compacted
from kenning.store.phrase_index import Lookup, PhraseIndex
from kenning.store.rebuild import Rebuilding
from kenning.store.recalls import Recalls
from kenning.store.registries import ExperienceStore, RecallLogStore, SuppressionStore, parse_all
from kenning.store.reports import ReportStore
from kenning.store.search_module import REDISEARCH, VALKEY_SEARCH, SearchModule
from kenning.store.shards import coordinator_port
from kenning.store.skills import SkillStore
from kenning.store.snapshots import Snapshots
from kenning.store.throttle import Throttle
from kenning.store.tokens import TokenRecord, TokenStore
from kenning.store.unit import APPLIED, CHANGED, GONE, Committed, Op, Unit, Units
from kenning.store.vectors import Stored
from kenning.store.writer import Commands, Writer

__all__ = [
    "APPLIED",
    "CHANGED",
    "GONE",
    "REDISEARCH",
    "STATUSES",
    "SWAP_ATTEMPTS",
    "VALKEY_SEARCH",
    "AccountRecord",
    "AofState",
    "AuditEvent",
    "AuditLog",
    "Batch",
    "Claimed",
    "Client",
    "ClusterAdmin",
    "Committed",
    "Compacted",
    "Contradiction",
    "ContradictionStore",
    "DistinctPairs",
    "FeedState",
    "FeedStateStore",
    "GraphCheck",
    "Hit",
    "IndexInfo",
    "Lease",
    "Lookup",
    "MemoryStore",
    "Near",
    "NodeState",
    "Op",
    "ParkedJob",
    "Patch",
    "PhraseIndex",
    "QueuedJob",
    "Rebuilding",
    "Repaired",
    "SearchModule",
    "SearchResult",
    "SessionRecord",
    "SlotMover",
    "Store",
    "Stored",
    "TokenRecord",
    "Unit",
    "UsageLedger",
    "connect",
    "coordinator_port",
    "digest",
    "pair_id",
    "parse_all",
    "password_file",
    "pause",
    "self_check_line",
    "topology",
]


# recalls whose log entry and touches may wait behind their replies (kenning.store.writer)
RECALL_QUEUE = 1024


@dataclass(frozen=True)
class Claimed:
    """``Store.claim_and_search``'s answer: whether the claim was taken, the search's result,
    each nearby KNN's result (in the order given), the raw suppression list, and the remember
    write sequence as read before the searches (``remembered``)."""

    taken: bool
    found: SearchResult
    nearby: list[SearchResult]
    suppressed: Any
    sequence: int = 0


# the connection the composition root opens (``connect``); only this package uses it
Client = valkey.Valkey


class Store:
    """Everything the engine needs from Valkey, under one key prefix:
    every sub-store, built once."""

    @classmethod
    def on(cls, client: Client | Store, prefix: str) -> Store:
        """``client`` itself when it is a Store already (under ``prefix``), else a
        Store on it under ``prefix``."""
        if not isinstance(client, Store):
            return cls(client, prefix)
        if client.prefix != prefix:
            raise ValueError(
                f"the store's key prefix {client.prefix!r} is not the settings' {prefix!r}"
            )
        return client

    def __init__(
        self,
        client: valkey.Valkey,
        prefix: str,
        *,
        recall_queue: int = RECALL_QUEUE,
        cluster: bool | None = None,
    ) -> None:
        """``recall_queue``: how many recalls' log entries and touches may wait to be written
        behind their replies (``log_recall``); 0 writes each in its recall. ``cluster``: the
        cluster layout (units split by slot, the audit stream partitioned: docs/cluster.md);
        None = when ``client`` is a cluster client."""
        self.client = client
        self.prefix = prefix
        self.cluster = layout.clustered(client) if cluster is None else cluster
        self.recall_writes = Writer("kenning-recall-log", recall_queue)
        self.memories = MemoryStore(
            client,
            prefix,
            recalls=Recalls(client, prefix, self.recall_writes.flush),
            units=(ClusterUnits if self.cluster else Units)(client, prefix),
        )
        self.audit = (ClusterAuditLog if self.cluster else AuditLog)(client, prefix)
        self.snapshots = Snapshots(client, prefix)
        self.feeds = FeedStateStore(client, prefix, self.memories.units)
        self.contradictions = ContradictionStore(client, prefix, self.memories.units)
        self.suppressions = SuppressionStore(client, prefix, self.memories.units)
        self.distinct = DistinctPairs(client, prefix, self.memories.units)
        self.experience = ExperienceStore(client, prefix)
        self.recall_log = RecallLogStore(client, prefix, self.recall_writes.flush)
        self.skills = SkillStore(client, prefix, self.memories.units)
        self.reports = ReportStore(client, prefix)
        self.job_runs = JobRunStore(client, prefix)
        self.llm_usage = UsageLedger(client, prefix)
        self.llm_jobs = JobQueue(client, prefix)
        self.expansions = ExpansionCache(client, prefix)
        self.replies = Replies(client, prefix)
        # on a cluster each identity family lives in one slot (a hash tag in its keys' prefix),
        # so its units -- gated on another record of the family -- stay whole and atomic
        self.accounts = AccountStore(client, self.family("accounts"), self.memories.units)
        self.tokens = TokenStore(client, self.family("tokens"), self.memories.units)
        self.oauth = OAuthStore(client, self.family("oauth"), self.memories.units)
        self.throttle = Throttle(client, prefix)
        self.hints = PhraseIndex(client, prefix, "hints")
        self.graveyard = PhraseIndex(client, prefix, "graveyard")

    def family(self, name: str) -> str:
        """The key prefix of a record family: the store's on one server (keys as they always
        were), with the family's hash tag in the cluster layout (docs/cluster.md)."""
        return f"{self.prefix}{{{name}}}:" if self.cluster else self.prefix

    @property
    def units(self) -> Units:
        """Units of work (a write with its audit events, one round trip): the
        one way the engine writes."""
        return self.memories.units

    def record(self, events: list[AuditEvent]) -> Committed:
        """Events that record no write of their own, in one round trip."""
        return self.units.commit(Unit(events))

    def decide(
        self,
        events: Sequence[AuditEvent],
        *,
        patches: Sequence[Patch] = (),
        new: Sequence[tuple[Memory, np.ndarray[Any, Any] | None]] = (),
        also: Sequence[Op] = (),
    ) -> Committed:
        """A decision over several memories and records as ONE unit of work: every patch's
        ``expect`` and every gate in ``also`` (e.g. ``contradictions.saving``) is checked before
        anything is written, so the decision applies only while what it was made from still
        holds (else GONE or CHANGED, nothing written or recorded). ``new``: memories it
        creates."""
        unit = Unit(events)
        for p in patches:
            unit.patch(p.key, p.set, p.remove, expect=p.expect).extend(p.also)
        for memory, vector in new:
            unit.extend(self.memories.fields(memory, vector))
        return self.units.commit(unit.extend(also))

    def repair(self) -> Repaired:
        """The cluster layout's sweep: complete every unit whose second half was lost
        (kenning.store.cluster_unit); on one server a unit is whole, so there is nothing to do."""
        units = self.units
        return units.repair() if isinstance(units, ClusterUnits) else Repaired()

    def close(self) -> None:
        """Write what waits behind replies (the recall log and counters), then stop that writer. The
        connection is the caller's."""
        self.recall_writes.close()

    def shards_named(self) -> AbstractContextManager[None]:
        """Around a search: on a cluster with a shard down, its failure names the shard and its
        slots (kenning.store.shards); nothing changes on one server."""
        return shards.named(self.client)

    def compact_aof(self, *, force: bool = False) -> Compacted | None:
        """Rewrite the append-only file when it has doubled (``force``: now), writes paused
        meanwhile and, on valkey-search, every index's queue drained: Kenning's Valkey never
        forks on its own (kenning.store.persistence)."""
        module = self.search_module()
        drain = module is not None and module.name == VALKEY_SEARCH
        return persistence.compact(self.client, drain=drain, force=force)

    def aof_state(self) -> AofState:
        return persistence.state(self.client)

    def forks(self) -> list[str]:
        """The server's settings by which it forks on its own (kenning.store.persistence)."""
        return persistence.forks(self.client)

    def exposed_coordinators(self) -> list[str]:
        """On a cluster, the coordinator gRPC ports that answer on a non-loopback address
        (kenning.store.shards; docs/cluster.md): unauthenticated, so a finding for the doctor."""
        return shards.exposed_coordinators(self.client)

    def ping(self) -> bool:
        return bool(call(self.client.ping))

    def modules(self) -> list[str]:
        """Names of the loaded modules (e.g. 'search')."""
        reply = call(self.client.execute_command, "MODULE", "LIST")
        names: list[str] = []
        for entry in reply:
            pairs = {text(entry[i]): entry[i + 1] for i in range(0, len(entry) - 1, 2)}
            names.append(text(pairs.get("name", "")))
        return names

    def key(self, *parts: str) -> str:
        """A non-memory key under this prefix, e.g. key('meta', 'tokens')."""
        return self.prefix + ":".join(parts)

    def lease(self, key: str, owner: str, ttl_seconds: float) -> Lease:
        """A lock on ``key`` (a full key, e.g. ``key('lock', name)``) held by
        ``owner`` (kenning.store.locks)."""
        return Lease(self.client, key, owner, ttl_seconds)

    # --- a recall's own round trips -----------------------------------------------------------
    def look_up(self, phrases: Iterable[str]) -> tuple[Any, list[dict[str, dict[str, str]]]]:
        """The suppressions (the raw HGETALL reply) and the graveyard and reinstate-hint entries of
        ``phrases`` ([graveyard, hints]): one round trip, a second only when a phrase
        is present in either index.

        First waits for this process's recall writes still behind their replies (``log_recall``),
        so the counters the recall reads next count every recall that returned before it: a
        recall runs this while its query embeds."""
        self.recall_writes.flush()
        look = Lookup((self.graveyard, self.hints), phrases)
        pipe = self.client.pipeline(transaction=False)
        self.suppressions.queue_all(pipe)
        look.queue(pipe)
        suppressed, *present = call(pipe.execute)
        return suppressed, look.finish(self.client, present)

    # --- a remember's own round trip ---------------------------------------------------------
    @property
    def remembered(self) -> str:
        """The remember write sequence: every remember checked before its write counts its write
        here, in the write's unit (``kenning.memory.memories``: a write that another check may not
        have seen is checked again)."""
        return self.key("remember", "writes")

    def remembers_written(self) -> int:
        """The remember write sequence now (``remembered``)."""
        return int(call(self.client.get, self.remembered) or 0)

    def counted_remember(self) -> list[Op]:
        """The op that counts a remember's write in ``remembered`` (it
        rides in the write's unit)."""
        return [("INCRBY", self.remembered, ("1",))]

    def claim_and_search(
        self, claim: Lease, search: Search, nearby: Sequence[Near] = ()
    ) -> Claimed:
        """Take the free lease ``claim`` (SET NX PX), read the suppressions (the raw HGETALL
        reply), run ``search`` (a remember's duplicate KNN) and the KNNs ``nearby`` (its
        contradiction check's, rows returned with their fields: ``MemoryStore.batch``), in one
        round trip -- on valkey-search a second for the vectors of small filtered sets
        (kenning/store/prefilter.py). The searches count only when the claim was taken: otherwise
        another writer of the same content may be between its check and its write."""
        pipe = self.client.pipeline(transaction=False)
        claim.queue_take(pipe)
        self.suppressions.queue_all(pipe)
        # before the searches: a write after this read may be unseen by them
        pipe.get(self.remembered)
        batch = self.memories.batch([Near(search), *nearby])
        batch.queue(pipe)
        taken, suppressed, sequence, *replies = call(pipe.execute, raise_on_error=True)
        found, *near = batch.finish(replies)
        return Claimed(bool(taken), found, near, suppressed, int(sequence or 0))

    def log_recall(
        self,
        entry: Callable[[], dict[str, Any]],
        max_entries: int,
        memories: Sequence[Memory],
        now: float,
    ) -> list[Memory]:
        """The recalled memories with the counts this recall gives them (``Recalls.counted``: the
        live counts they were read with + 1), at once; the log entry (``entry()``, built by the
        writer) and the counter touches are written behind, in one round trip (``recall_writes``:
        in this call when its queue is full)."""
        self.recall_writes.submit(
            Commands(
                self.client,
                lambda: [
                    self.recall_log.appending(entry(), max_entries),
                    *self.memories.recalls.touches(memories, now),
                ],
            )
        )
        return Recalls.counted(memories, now)

    # --- vectors and fields of many memories ------------------------------------------------
    def vectors(self, keys: list[str]) -> list[np.ndarray[Any, np.dtype[np.float32]] | None]:
        return vectors.read_many(self.client, keys)

    def times(self, keys: list[str], name: str) -> list[float | None]:
        return vectors.times_many(self.client, keys, name)

    # --- indexes ---------------------------------------------------------------------------
    def search_module(self) -> SearchModule | None:
        return search_module.detect(self.client)

    def pin_model(self, model: str, dim: int) -> None:
        indexes.pin_model(self.client, self.prefix, model, dim)

    def pinned_model(self) -> str | None:
        return indexes.pinned_model(self.client, self.prefix)

    def ensure_indexes(self, dim: int, *, timeout: float) -> dict[str, str]:
        return indexes.ensure(self.client, self.prefix, dim, timeout=timeout)

    def live_indexes(self) -> dict[str, str]:
        return indexes.live_indexes(self.client, self.prefix)

    def index_info(self, name: str) -> IndexInfo | None:
        return indexes.info(self.client, name)

    def rebuild_index(
        self,
        dim: int,
        *,
        timeout: float,
        grace: float,
        switch: Callable[[str], None] | None = None,
        waiting: Callable[[], None] | None = None,
    ) -> IndexInfo:
        return rebuild.rebuild(
            self.client,
            self.prefix,
            dim,
            timeout=timeout,
            grace=grace,
            switch=switch,
            waiting=waiting,
        )

    def check_graph(self, index: str, *, ef: int, now: float, repair: bool = True) -> GraphCheck:
        """Every stored memory searched by its own vector; the missed ones re-inserted
        (kenning.store.graph_check); the ones no pass reaches are listed for every KNN to score
        exactly (kenning.store.unreachable), in this process at once."""
        done = graph_check.check(self.client, self.prefix, index, ef=ef, now=now, repair=repair)
        self.memories.unreachable.forget()
        return done

    def rebuilding(self) -> Rebuilding | None:
        """The index rebuild in progress (any process's), if one is."""
        return rebuild.status(self.client, self.prefix)
