"""Maintenance: the scheduled upkeep job, never piggybacked on a read (docs/truth-maintenance.md).

``Maintenance.run`` is the one entry point a scheduler calls (the worker, every
``KENNING_MAINTENANCE_INTERVAL_MINUTES``; ``kenning maintain`` runs it once from the command line):

1. recall counters: the live counters recalls wrote beside the memories since the last run are
   folded into the memory hashes (kenning/store/recalls.py), one HSET per touched memory, so FT
   SORTBY on ``recall_count`` / ``last_recalled`` sees them; what shows the counters reads the live
   values, only that sort lags by up to one interval;
2. expire: memories past ``expires_at`` are archived with the reason "expired on <date>";
3. duplicates: clusters are reported for review; they are merged automatically only when
   ``KENNING_AUTO_MERGE_THRESHOLD`` is set, the whole cluster is at or above it and no two members
   are opposite statements (off by default);
4. contradictions: open records are re-checked (a side gone, archived, or edited so it no longer
   conflicts closes the record);
5. indexes: drift (the registry or the index differs from this schema, still backfilling, document
   count different from what a search sees) and phantom entries (index rows whose hash is gone).

The report is returned and kept as the last maintenance report, which the briefing shows.
``reindex()`` rebuilds the memory index safely.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ulid import ULID

from kenning.core import query, schema
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import iso
from kenning.core.schema import NAMESPACES
from kenning.curation.duplicates import Archiver, Cluster, Duplicates, Merged
from kenning.curation.graph import GraphSelfCheck
from kenning.runtime.context import REBUILD_GRACE, Context
from kenning.runtime.sweep import Sweep
from kenning.store import Compacted, Repaired
from kenning.truth.contradiction_views import Recheck
from kenning.truth.contradictions import Contradictions

REPORT = "maintenance"
ACTOR = "maintenance"


@dataclass(frozen=True, slots=True)
class Expiry:
    archived: list[str]
    count: int
    skipped: list[dict[str, str]]  # {"key", "why"}: archived or forgotten by someone else meanwhile
    phantoms: int


@dataclass(frozen=True, slots=True)
class DuplicateReview:
    auto_merge_threshold: float | None
    examined: int = 0
    clusters: int = 0
    merged: list[Merged] = field(default_factory=list)  # Duplicates.merge results
    # {"namespace", "keep", "keys", "highest_similarity"}
    review: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class IndexReport:
    drift: list[dict[str, Any]]  # {"index", "problems"}: the one index over every namespace
    phantoms: int
    index: dict[str, Any]
    namespaces: dict[str, dict[str, Any]]  # per namespace: {"searchable", "phantoms"}


@dataclass(frozen=True, slots=True)
class Reindexed:
    """The memory index rebuilt (``Maintenance.reindex``); ``public()`` is
    its audit event's details."""

    index: str
    num_docs: int
    num_docs_before: int | None
    # the new graph's self-check (kenning.store.GraphCheck.public())
    self_check: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Findings:
    """The last maintenance run's findings, as counts, read back from the kept report."""

    at: str | None
    expired: int
    duplicate_clusters_to_review: int
    contradictions_closed: int
    index_drift: list[Any]
    phantoms: int

    @classmethod
    def of(cls, kept: dict[str, Any]) -> Findings:
        """From a kept ``MaintenanceReport.public()`` (an older run's may lack a part)."""
        indexes = kept.get("indexes", {})
        return cls(
            at=kept.get("started_at"),
            expired=kept.get("expired", {}).get("count", 0),
            duplicate_clusters_to_review=len(kept.get("duplicates", {}).get("review", [])),
            contradictions_closed=len(kept.get("contradictions", {}).get("closed", [])),
            index_drift=indexes.get("drift", []),
            phantoms=indexes.get("phantoms", 0),
        )


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """One maintenance pass; ``public()`` is the JSON kept as the last
    report (the briefing shows it)."""

    started_at: str | None
    recall_counters: dict[str, int]
    expired: Expiry
    duplicates: DuplicateReview
    contradictions: Recheck
    indexes: IndexReport
    # on Valkey Cluster: the sweep that completes split units of work (kenning.store.cluster_unit);
    # None on one server, where a unit is never split (and the report reads as before)
    units: Repaired | None = None
    # the append-only file rewritten with writes paused, when it had doubled
    # (kenning.store.persistence); None when it had not (and the report reads as before)
    aof: Compacted | None = None

    def public(self) -> dict[str, Any]:
        shown = asdict(self)
        for part in ("units", "aof"):
            if getattr(self, part) is None:
                del shown[part]
        if self.aof is not None:
            shown["aof"] = self.aof.public()
        return shown


class Maintenance:
    def __init__(
        self,
        ctx: Context,
        contradictions: Contradictions,
        duplicates: Duplicates,
        archive: Archiver,
        graph: GraphSelfCheck | None = None,
    ) -> None:
        self.ctx = ctx
        self.graph = graph or GraphSelfCheck(ctx)
        self.contradictions = contradictions
        self.duplicates = duplicates
        self.archive = archive
        self.reports = ctx.store.reports

    def run(self, *, actor: str = ACTOR) -> MaintenanceReport:
        """One full maintenance pass; returns (and keeps) the report."""
        started = self.ctx.clock.now()
        report = MaintenanceReport(
            started_at=iso(started),
            recall_counters=self.ctx.store.memories.recalls.fold(),
            expired=self.expire(actor=actor),
            duplicates=self.duplicate_review(actor=actor),
            contradictions=self.contradictions.recheck(actor=actor),
            indexes=self.index_report(),
            units=self.ctx.store.repair() if self.ctx.store.cluster else None,
            aof=self.ctx.store.compact_aof(),
        )
        self.reports.save(REPORT, report.public())
        return report

    def last_findings(self) -> Findings | None:
        """What the last run found, as counts (the briefing shows them); None before a first run."""
        kept = self.reports.load(REPORT)
        return None if kept is None else Findings.of(kept)

    def expire(self, *, actor: str) -> Expiry:
        """Archive every non-archived memory whose ``expires_at`` has passed, with that reason."""
        now = self.ctx.clock.now()
        clauses = (query.numeric("expires_at", None, now), query.not_tag("state", ["archived"]))
        sweep = Sweep(self.ctx)
        # collect first: archiving changes the filter
        due = list(sweep.memories(NAMESPACES, clauses))
        archived: list[str] = []
        skipped: list[dict[str, str]] = []
        for memory in due:
            try:
                self.archive(memory.key, reason=f"expired on {iso(memory.expires_at)}", actor=actor)
            # archived or forgotten by someone else meanwhile: say so
            except (Conflict, NotFound) as exc:
                skipped.append({"key": memory.key, "why": exc.message})
                continue
            archived.append(memory.key)
        return Expiry(
            archived=archived, count=len(archived), skipped=skipped, phantoms=sweep.phantoms
        )

    def duplicate_review(self, *, actor: str) -> DuplicateReview:
        """Duplicate clusters per namespace; auto-merge only above the
        (optional) stricter threshold."""
        auto = self.ctx.settings.auto_merge_threshold
        out = DuplicateReview(auto_merge_threshold=auto)
        examined = clusters = 0
        for namespace in NAMESPACES:
            found = self.duplicates.find(namespace)
            examined += found.examined
            clusters += found.cluster_count
            for cluster in found.clusters:
                merged = self._auto_merge(cluster, auto, actor=actor)
                if merged is not None:
                    out.merged.append(merged)
                else:
                    out.review.append(
                        {
                            "namespace": namespace,
                            "keep": cluster.keep,
                            "keys": [m["key"] for m in cluster.members],
                            "highest_similarity": cluster.highest_similarity,
                        }
                    )
        return replace(out, examined=examined, clusters=clusters)

    def _auto_merge(self, cluster: Cluster, auto: float | None, *, actor: str) -> Merged | None:
        """Merge a cluster when auto-merge is on and allows it; None leaves it for review."""
        if auto is None or cluster.lowest_similarity < auto or cluster.contains_opposites:
            return None
        others = [m["key"] for m in cluster.members if m["key"] != cluster.keep]
        try:
            return self.duplicates.merge(
                cluster.keep, others, f"auto-merged at similarity >= {auto}", actor=actor
            )
        # changed meanwhile (archived, forgotten): a person decides
        except (InvalidInput, Conflict, NotFound):
            return None

    def index_report(self) -> IndexReport:
        """The one index: live vs expected name, backfill state, documents, phantom
        entries (and per namespace)."""
        live = self.ctx.store.live_indexes().get(schema.INDEX)
        expected = schema.index_name(self.ctx.store.prefix, self.ctx.embedder.dimension)
        if schema.is_current(live, self.ctx.store.prefix, self.ctx.embedder.dimension):
            expected = str(live)  # a rebuilt generation of the current schema
        details = self.ctx.store.index_info(expected)
        sweep = Sweep(self.ctx)
        seen = sum(1 for _ in sweep.memories(NAMESPACES, fields=("created_at",)))
        entry = {
            "index": expected,
            "live": live,
            "exists": details is not None,
            "num_docs": None if details is None else details.num_docs,
            "searchable": seen,
            "phantoms": sweep.phantoms,
            "backfilling": None if details is None else details.indexing,
        }
        problems = _drift(entry)
        return IndexReport(
            drift=[{"index": expected, "problems": problems}] if problems else [],
            phantoms=sweep.phantoms,
            index=entry,
            namespaces={
                ns: {
                    "searchable": sweep.per_namespace.get(ns, 0),
                    "phantoms": sweep.phantoms_per_namespace.get(ns, 0),
                }
                for ns in NAMESPACES
            },
        )

    def reindex(self, *, actor: str, waiting: Callable[[], None] | None = None) -> Reindexed:
        """Rebuild the memory index (a new generation beside the live one, backfill, switch every
        process, drop the old one); hashes are untouched. Searches keep reading the complete old
        index until the new one holds every memory. ``waiting`` runs while the new one backfills.
        Then every memory is searched by its own vector in the new graph and the missed ones are
        re-inserted (``GraphSelfCheck``)."""

        def switch(name: str) -> None:
            self.ctx.follow(name)

        timeout = self.ctx.settings.index_backfill_timeout_seconds
        lease = self.ctx.store.lease(
            self.ctx.store.key("lock", "reindex", schema.INDEX),
            str(ULID()),
            ttl_seconds=2 * timeout + 60,
        )
        if not lease.hold():  # two rebuilds of one index would drop each other's indexes
            raise Conflict(
                "the memory index is being rebuilt already", hint="wait for it to finish"
            )
        try:
            before = self.ctx.store.index_info(self.ctx.index)
            done = self.ctx.store.rebuild_index(
                self.ctx.embedder.dimension,
                timeout=timeout,
                grace=REBUILD_GRACE,
                switch=switch,
                waiting=waiting,
            )
        finally:
            lease.release()
        checked = self.graph.run(actor=actor, index=done.name)  # every memory by its own vector
        result = Reindexed(
            done.name,
            done.num_docs,
            None if before is None else before.num_docs,
            checked.public(),
        )
        self.ctx.audit(actor, "reindex", "", details=result.public())
        return result


def _drift(entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if not entry["exists"]:
        problems.append("the expected index does not exist")
    if entry["live"] != entry["index"]:
        problems.append(f"the registry points at {entry['live']}, not {entry['index']}")
    if entry["backfilling"]:
        problems.append("the index is still backfilling")
    if entry["phantoms"]:
        problems.append(f"{entry['phantoms']} phantom entries (hash gone, index row left)")
    if (
        entry["num_docs"] is not None
        and entry["num_docs"] != entry["searchable"] + entry["phantoms"]
    ):
        problems.append(
            f"FT.INFO counts {entry['num_docs']} documents, a full search sees "
            f"{entry['searchable']}"
        )
    return problems
