"""Per-feed state and the articles already seen.

``{prefix}feed:state:{name}``: one JSON value per feed (ETag, Last-Modified, last fetch, last error,
consecutive failures, next attempt, counts of the last run). ``{prefix}lock:feed:{name}``: the lease
of a fetch in progress, so the worker and `kenning feeds fetch` never ingest one feed at once.
``{prefix}feed:seen``: one hash, article uid -> the memory key that holds it, so an article is
recognised across runs and across feeds without a search. Each command touches one key
(cluster-safe).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import valkey

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.locks import Lease
from kenning.store.unit import Unit, Units


@dataclass(frozen=True)
class FeedState:
    """What the store remembers about one feed. Times are epoch seconds; None = never."""

    url: str | None = None  # the URL the validators and the backoff belong to
    etag: str | None = None
    last_modified: str | None = None
    last_fetch: float | None = None
    last_success: float | None = None
    last_error: str | None = None
    last_warning: str | None = None
    failures: int = 0
    next_attempt: float | None = None
    last_counts: dict[str, int] = field(default_factory=dict)


class FeedStateStore:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.seen_key = f"{prefix}feed:seen"
        self.units = units or Units(client, prefix)

    def state_key(self, name: str) -> str:
        return f"{self.prefix}feed:state:{name}"

    def lease(self, name: str, owner: str, ttl_seconds: float) -> Lease:
        return Lease(self.client, f"{self.prefix}lock:feed:{name}", owner, ttl_seconds)

    def load(self, name: str) -> FeedState:
        raw = call(self.client.get, self.state_key(name))
        if raw is None:
            return FeedState()
        data: dict[str, Any] = json.loads(text(raw))
        return FeedState(**{k: v for k, v in data.items() if k in FeedState.__dataclass_fields__})

    def save(self, name: str, state: FeedState, events: Sequence[AuditEvent]) -> None:
        """Write a feed's state; with ``events`` (a fetch that stored articles, or failed) as one
        unit of work, without them only for a poll that found nothing new (recorded by nothing,
        as the feed is unchanged)."""
        encoded = json.dumps(asdict(state), sort_keys=True)
        if events:
            self.units.commit(Unit(events).set(self.state_key(name), encoded))
        else:
            call(self.client.set, self.state_key(name), encoded)

    def seen(self, uids: list[str]) -> dict[str, str]:
        """uid -> memory key, for the uids already stored."""
        if not uids:
            return {}
        keys = call(self.client.hmget, self.seen_key, uids)
        return {uid: text(key) for uid, key in zip(uids, keys, strict=True) if key is not None}

    def link(self, uids: Sequence[str], key: str, events: Sequence[AuditEvent]) -> None:
        """Claim ``uids`` for ``key`` (an article found to repeat the memory ``key``) with the
        events that record the link: one unit of work. A uid another key already holds keeps it."""
        unit = Unit(events)
        for uid in uids:
            unit.hsetnx(self.seen_key, uid, key)
        self.units.commit(unit)

    def claim(self, uid: str, key: str) -> bool:
        """Record that ``key`` holds article ``uid``; False when another key already holds it."""
        return bool(call(self.client.hsetnx, self.seen_key, uid, key))
