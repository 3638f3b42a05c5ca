"""What every engine component shares: the store, the embedder, the settings and the clock."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kenning.core import schema
from kenning.core.clock import Clock
from kenning.core.schema import INDEX
from kenning.core.settings import Settings
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, Store, digest

# How often a process re-reads which index is live; a rebuild waits REBUILD_GRACE before it drops
# the index it replaced, so no process searches an index that is gone.
POINTER_REFRESH = 1.0
REBUILD_GRACE = 3 * POINTER_REFRESH


@dataclass(frozen=True)
class Context:
    store: Store
    embedder: Embedder
    settings: Settings
    clock: Clock
    # the index registry: schema.INDEX -> the live index (a reindex switches it)
    indexes: dict[str, str]
    # when this process last re-read the registry (monotonic seconds), in a cell: the context is
    # frozen, the registry it follows is not
    read_at: list[float] = field(default_factory=lambda: [time.monotonic()], compare=False)

    @property
    def index(self) -> str:
        """The one index over every namespace's memories: a search names its namespaces
        (``Search(index=ctx.index, namespaces=(...))``). Re-read from the registry at most every
        ``POINTER_REFRESH`` seconds, so a reindex run by another process is followed by this one
        (kenning.store.rebuild keeps the old index until every process has re-read)."""
        now = time.monotonic()
        if now - self.read_at[0] >= POINTER_REFRESH:
            self.read_at[0] = now
            self.follow(self.store.live_indexes().get(INDEX))
        return self.indexes[INDEX]

    def follow(self, live: str | None) -> None:
        """Search ``live`` from now on when it indexes this process's schema."""
        if live and schema.is_current(live, self.store.prefix, self.embedder.dimension):
            self.indexes[INDEX] = live

    def event(
        self,
        actor: str,
        action: str,
        key: str,
        *,
        reason: str = "",
        before: str | None = None,
        after: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> AuditEvent:
        """The audit event of a change, for the store write that carries it (kenning.store.unit).

        ``before``/``after`` are contents; only their digests are stored in the event.
        """
        return AuditEvent(
            actor=actor or "unknown",
            action=action,
            key=key,
            reason=reason,
            at=self.clock.now(),
            before=digest(before),
            after=digest(after),
            details=details or {},
        )

    def audit(
        self,
        actor: str,
        action: str,
        key: str,
        *,
        reason: str = "",
        before: str | None = None,
        after: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """Record an event that stands on its own (a summary of audited writes, a backup file, a
        reindex, a change to a record the store does not yet write in a unit): one round trip. A
        write of a memory or of a record the store writes in a unit takes its
        event instead (``event``)."""
        self.store.record(
            [
                self.event(
                    actor, action, key, reason=reason, before=before, after=after, details=details
                )
            ]
        )
