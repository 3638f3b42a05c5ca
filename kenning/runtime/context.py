"""What every engine component shares: the store, the embedder, the settings and the clock."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.core.clock import Clock
from kenning.core.schema import INDEX
from kenning.core.settings import Settings
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, Store, digest


@dataclass(frozen=True)
class Context:
    store: Store
    embedder: Embedder
    settings: Settings
    clock: Clock
    # the index registry: schema.INDEX -> the live index (a reindex switches it)
    indexes: dict[str, str]

    @property
    def index(self) -> str:
        """The one index over every namespace's memories: a search names its namespaces
        (``Search(index=ctx.index, namespaces=(...))``)."""
        return self.indexes[INDEX]

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
