"""Looking inside the store: one memory explained, counts and listings for an audit, and health.

Counts use FT.SEARCH with ``LIMIT 0 0`` per namespace and state (never SCAN). Health reports every
check with its own verdict, so a degraded dependency is named rather than hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kenning import __version__
from kenning.core import credentials, query, schema, validation
from kenning.core.errors import InvalidInput, KenningError
from kenning.core.models import STATES, Memory
from kenning.memory import listing as listings
from kenning.memory.listing import Listing
from kenning.memory.memories import Memories
from kenning.memory.suppression import Suppressions, hidden_by
from kenning.runtime.context import Context
from kenning.runtime.sweep import Sweep
from kenning.store import AuditEvent

HISTORY_LIMIT = 200
MAX_RECORDS = 20


@dataclass(frozen=True, slots=True)
class ListedPage:
    """One page of an inventory: memory summaries (plain data), and how
    many a suppression withheld."""

    offset: int
    limit: int
    total: int
    items: tuple[dict[str, Any], ...]
    withheld: int


@dataclass(frozen=True, slots=True)
class Inventory:
    """Counts by namespace and state for a filter, their total, and one
    page of matching memories."""

    counts: dict[str, dict[str, int]]
    total: int
    page: ListedPage

    def public(self) -> dict[str, Any]:
        page = self.page
        return {
            "counts": self.counts,
            "total": self.total,
            "page": {
                "offset": page.offset,
                "limit": page.limit,
                "total": page.total,
                "items": list(page.items),
                "withheld": page.withheld,
            },
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """One memory, whether its vector is stored, the suppressions hiding it from
    recall, its newest audit events."""

    memory: Memory
    has_vector: bool
    suppressed_by: list[str]
    history: tuple[AuditEvent, ...]  # oldest first

    def public(self) -> dict[str, Any]:
        return {
            "memory": self.memory.public(),
            "has_vector": self.has_vector,
            "suppressed_by": self.suppressed_by,
            "history": [e.public() for e in self.history],
        }


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Health:
    checks: tuple[Check, ...]
    version: str
    uptime_seconds: float
    model: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def public(self) -> dict[str, Any]:
        return {
            "status": "ok" if self.ok else "degraded",
            "version": self.version,
            "uptime_seconds": round(self.uptime_seconds, 1),
            "model": self.model,
            "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in self.checks},
        }


# what a credential scan reads of each memory (created_at: the sweep's sort, and how it tells a
# phantom index row from a memory)
SCANNED = ("content", "project", "namespace", "created_at")


@dataclass(frozen=True)
class Stored:
    """A stored memory that holds a credential: which one and what kinds, never the value."""

    key: str
    namespace: str
    project: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class AuditRequest:
    namespaces: tuple[str, ...] | list[str] | None = None
    projects: tuple[str, ...] | list[str] | None = None
    states: tuple[str, ...] | list[str] | None = None
    tags: tuple[str, ...] | list[str] | None = None
    trusts: tuple[str, ...] | list[str] | None = None
    # the source: an agent's memory, a document chunk, a feed...
    kinds: tuple[str, ...] | list[str] | None = None
    sort: str = "created_at"
    descending: bool = True
    offset: int = 0
    limit: int = 20


class Inspection:
    def __init__(self, ctx: Context, memories: Memories, suppressions: Suppressions) -> None:
        self.ctx = ctx
        self.memories = memories
        self.suppressions = suppressions

    def records(self, keys: list[str] | tuple[str, ...]) -> list[Memory]:
        """Up to ``MAX_RECORDS`` memories by key, in the order given (NotFound
        names the first missing)."""
        if not keys or len(keys) > MAX_RECORDS:
            raise InvalidInput(
                f"give 1 to {MAX_RECORDS} keys; got {len(keys)}", hint="copy keys from recall_index"
            )
        return [self.memories.get(key) for key in keys]

    def explain(self, key: str) -> Explanation:
        """Every stored field of one memory and its audit history (the newest ``HISTORY_LIMIT``
        events, oldest first); ``suppressed_by`` names the suppressions hiding it from recall ([]
        when none) -- the caller named the key."""
        memory = self.memories.get(key)
        # the newest, if there are more
        history = self.ctx.store.audit.latest(key, limit=HISTORY_LIMIT)
        has_vector = self.ctx.store.memories.read_vector(key) is not None
        return Explanation(
            memory, has_vector, hidden_by(memory, self.suppressions.active()), tuple(history)
        )

    def audit(self, request: AuditRequest, *, for_person: bool = False) -> Inventory:
        """Counts by namespace and state for the filter, plus one page of the matching memories.

        Counts include suppressed memories. In the page, a memory a suppression hides is shown to a
        person (``for_person``, the dashboard) marked with ``suppressed_by``; for an agent it is
        left out and only counted in ``page.withheld`` (DESIGN: never in lists meant for the agent).
        """
        listing = Listing(
            namespaces=request.namespaces,
            projects=request.projects,
            states=request.states,
            tags=request.tags,
            trusts=request.trusts,
            kinds=request.kinds,
            sort=request.sort,
            descending=request.descending,
            offset=request.offset,
            limit=request.limit,
        )
        page = self.memories.list(listing)
        counts = self.counts(listing)
        suppressed = self.suppressions.active()
        marked = [(_summary(m.public()), hidden_by(m, suppressed)) for m in page.items]
        items = (
            [{**item, "suppressed_by": terms} for item, terms in marked]
            if for_person
            else [item for item, terms in marked if not terms]
        )
        return Inventory(
            counts,
            sum(sum(by_state.values()) for by_state in counts.values()),
            ListedPage(page.offset, page.limit, page.total, tuple(items), len(marked) - len(items)),
        )

    def counts(self, listing: Listing) -> dict[str, dict[str, int]]:
        base = list(
            listings.filter_clauses(
                Listing(
                    projects=listing.projects,
                    tags=listing.tags,
                    trusts=listing.trusts,
                    kinds=listing.kinds,
                )
            )
        )
        states = [s for s in STATES if not listing.states or s in listing.states]
        out: dict[str, dict[str, int]] = {}
        for namespace in validation.namespaces(listing.namespaces):
            out[namespace] = {}
            for state in states:
                search = query.Search(
                    index=self.ctx.index,
                    namespaces=(namespace,),
                    clauses=(*base, query.tag("state", [state])),
                    limit=0,
                )
                out[namespace][state] = self.ctx.store.memories.count(search)
        return out

    def credentials(self) -> list[Stored]:
        """Every stored memory whose content holds a credential (``kenning scan``): where and
        what kind, never the value. Walks every namespace through the index."""
        sweep = Sweep(self.ctx)
        found: list[Stored] = []
        for memory in sweep.memories(schema.NAMESPACES, fields=SCANNED):
            hits = credentials.find(memory.content)
            if hits:
                kinds = tuple(sorted({h.kind for h in hits}))
                found.append(Stored(memory.key, memory.namespace, memory.project, kinds))
        return found

    def redact_credentials(self, keys: list[str], *, actor: str) -> int:
        """Replace the credentials in these memories' content by ``[REDACTED: kind]`` (an audited
        update each, the old text kept only as a digest); returns how many were changed."""
        changed = 0
        for memory in self.records(keys):
            redacted = credentials.redact(memory.content)
            if redacted != memory.content:
                self.memories.update(
                    memory.key, redacted, actor=actor, reason="a stored credential was redacted"
                )
                changed += 1
        return changed

    def health(self, *, uptime: float = 0.0) -> Health:
        """Valkey, the search module, index drift and the model, each checked on its own."""
        valkey = self._valkey()
        if valkey.ok:
            checks = [valkey, self._module(), self._indexes(), self._model()]
        else:  # each would wait out its own timeout on the same dead or hung server
            skipped = "not checked: Valkey is not answering"
            checks = [
                valkey,
                Check("search_module", False, skipped),
                Check("indexes", False, skipped),
                self._model(),
            ]
        return Health(
            checks=tuple(checks),
            version=__version__,
            uptime_seconds=uptime,
            model=f"{self.ctx.embedder.model_name} ({self.ctx.embedder.dimension} dims)",
        )

    def _valkey(self) -> Check:
        try:
            self.ctx.store.ping()
        except KenningError as exc:
            return Check("valkey", False, str(exc))
        return Check("valkey", True, "answering")

    def _module(self) -> Check:
        try:
            modules = self.ctx.store.modules()
        except KenningError as exc:
            return Check("search_module", False, str(exc))
        ok = "search" in modules
        return Check(
            "search_module", ok, "loaded" if ok else f"not loaded (modules: {', '.join(modules)})"
        )

    def _indexes(self) -> Check:
        try:
            rebuilding = self.ctx.store.rebuilding()
            live = self.ctx.store.live_indexes().get(schema.INDEX)
            self.ctx.follow(live)
            drift = live != self.ctx.index or self.ctx.store.index_info(self.ctx.index) is None
        except KenningError as exc:
            return Check("indexes", False, str(exc))
        if rebuilding is not None and not drift:  # searches read the complete old index meanwhile
            return Check("indexes", True, f"{rebuilding.describe()}; searches use {live}")
        if drift:
            return Check(
                "indexes",
                False,
                f"drift: the live index ({live}) differs from this process's "
                f"({self.ctx.index}); restart the service to migrate",
            )
        fingerprint = schema.fingerprint(self.ctx.embedder.dimension)
        return Check("indexes", True, f"the memory index is current (schema {fingerprint})")

    def _model(self) -> Check:
        try:
            vector = self.ctx.embedder.embed("health check")
        except KenningError as exc:
            return Check("model", False, str(exc))
        return Check("model", True, f"{self.ctx.embedder.model_name}, {len(vector)} dims")


def _summary(memory: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "key",
        "namespace",
        "project",
        "tags",
        "kind",
        "state",
        "trust",
        "title",
        "created_at",
        "updated_at",
        "recall_count",
    )
    out = {k: memory[k] for k in keep}
    content = str(memory["content"])
    out["snippet"] = content if len(content) <= 200 else content[:197] + "..."
    return out
