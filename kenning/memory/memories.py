"""remember, get, list, update, retag and forget: the write path and plain
reads (docs/memory-model.md)."""

from __future__ import annotations

import builtins
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ulid import ULID

from kenning.core import credentials, query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import (
    Memory,
    Note,
    Page,
    RememberResult,
    iso,
)
from kenning.core.schema import vector_bytes
from kenning.language import phrases
from kenning.memory import fields
from kenning.memory import listing as listings
from kenning.memory.idempotency import Once
from kenning.memory.listing import Listing
from kenning.memory.retention import keep_snapshots
from kenning.memory.sameness import same_event, same_statement, window
from kenning.memory.suppression import Suppression, Suppressions, hidden_by
from kenning.runtime.context import Context
from kenning.store import APPLIED, GONE, SWAP_ATTEMPTS, AuditEvent, Lease, SearchResult, pause
from kenning.truth.contradictions import Contradictions

CLAIM_SECONDS = 10.0  # far longer than one duplicate check and write


@dataclass(frozen=True)
class Draft:
    """A memory to be written, as the caller gives it (validated by ``remember``)."""

    content: str
    namespace: str = "knowledge"
    project: str | None = None
    tags: tuple[str, ...] | list[str] = ()
    kind: str = "memory"
    title: str | None = None
    source: str | None = None
    event_date: str | float | None = None
    valid_from: str | float | None = None
    expires_at: str | float | None = None
    weight: float = 1.0
    source_key: str | None = None
    doc_id: str | None = None
    chunk_index: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    trust: str = "stated"  # "derived" for what the LLM extras wrote


@dataclass(frozen=True)
class Change:
    """One read-modify-write of a memory: the fields it read (``expect``), the fields it sets."""

    expect: dict[str, Any]
    changes: dict[str, Any]
    vector: Any = None


# rows the duplicate check's KNN asks for; it keeps the nearest (``duplicate_search``)
DUPLICATE_KNN = 8


@dataclass(frozen=True)
class WriteRules:
    """How one remember treats duplicates and contradictions (see ``Memories.remember``)."""

    allow_duplicate: bool = False
    check_contradictions: bool = True
    refresh: bool = False


@dataclass(frozen=True, slots=True)
class ForgetPreview:
    """What a forget without confirm would delete; nothing was."""

    key: str
    namespace: str
    project: str
    content: str  # the first 500 characters
    state: str


@dataclass(frozen=True, slots=True)
class Forgotten:
    key: str


class Memories:
    def __init__(
        self, ctx: Context, contradictions: Contradictions, suppressions: Suppressions
    ) -> None:
        self.ctx = ctx
        self.contradictions = contradictions
        self.suppressions = suppressions
        # Called with each newly stored memory (the LLM extras queue enrichment
        # here); never on a duplicate.
        self.after_store: list[Callable[[Memory], None]] = []

    # --- remember -------------------------------------------------------------------------
    def remember(
        self,
        draft: Draft,
        *,
        actor: str,
        allow_duplicate: bool = False,
        check_contradictions: bool = True,
        refresh: bool = False,
        idempotency_key: str | None = None,
    ) -> RememberResult:
        """Validate, embed, refuse near-duplicates (returning the existing key), write, audit.

        ``check_contradictions=False`` (feed articles) stores without opening contradictions: a
        news article must not make an agent's own memory disputed. A repeat with another event
        date is a new event and is stored, unless ``refresh``: then the existing memory takes the
        newer event date (audited) and nothing new is stored. With ``idempotency_key`` a retry
        returns the first call's result (kenning/memory/idempotency.py)."""
        memory = self._validated(draft, actor)
        rules = WriteRules(allow_duplicate, check_contradictions, refresh)
        if idempotency_key is None:
            return self._remember(memory, actor=actor, rules=rules)
        once = Once(
            self.ctx,
            actor,
            idempotency_key,
            request=f"{memory.namespace}:{memory.project}:{memory.content_sha}",
        )
        memory = replace(memory, key=self.ctx.store.memories.new_key(memory.namespace, once.ulid))
        return once.run(
            lambda: self._remember(memory, actor=actor, rules=rules),
            lambda: self._committed(memory.key),
        )

    def _committed(self, key: str) -> RememberResult | None:
        """The result of an earlier attempt that wrote ``key`` (its reply lost), or None."""
        if not self.ctx.store.memories.exists(key):
            return None
        return RememberResult("stored", key, notes=(Note("replayed"),))

    def _remember(self, memory: Memory, *, actor: str, rules: WriteRules) -> RememberResult:
        vector = self.ctx.embedder.embed(memory.content)
        if rules.allow_duplicate:
            return self._store(memory, vector, actor=actor, rules=rules)
        # The claim, the suppressions, the duplicate KNN and the contradiction check's KNNs (the
        # memory not written yet: Contradictions.before_write) in one round trip; the claim's
        # release goes with the write (or, on a duplicate or an error, on its own).
        claim = self.claim(memory)
        search = self.duplicate_search(memory.namespace, memory.project, vector)
        nearby = (
            self.contradictions.before_write(memory, vector) if rules.check_contradictions else []
        )
        claimed = self.ctx.store.claim_and_search(claim, search, nearby)
        found = claimed.found
        near: builtins.list[SearchResult] | None = claimed.nearby
        released = False
        try:
            # another remember of the same content holds it: wait, then check again
            if not claimed.taken:
                self.wait(claim)
                found, near = self.ctx.store.memories.search(search), None
            existing = self._duplicate(found)
            if (
                existing is not None
                and same_statement(existing[0].content, memory.content)
                and (
                    rules.refresh
                    or same_event(existing[0].event_date, memory.event_date, window(memory))
                )
            ):
                return self.refused(
                    existing[0], existing[1], memory, actor=actor, refresh=rules.refresh
                )
            released = True
            return self._store(
                memory,
                vector,
                actor=actor,
                rules=rules,
                claim=claim,
                nearby=near,
                suppressions=self.suppressions.parse_active(claimed.suppressed),
                sequence=claimed.sequence,
            )
        finally:
            if not released:
                claim.release()

    def _store(
        self,
        memory: Memory,
        vector: Any,
        *,
        actor: str,
        rules: WriteRules,
        claim: Lease | None = None,
        suppressions: builtins.list[Suppression] | None = None,
        nearby: builtins.list[SearchResult] | None = None,
        sequence: int = 0,
    ) -> RememberResult:
        """Write ``memory`` (``claim`` released in the same round trip), then check contradictions.
        ``suppressions``: the list read before the write (else read now) for the "hidden" notes;
        ``nearby``: the contradiction check's KNN results read before the write (else searched now).

        A check before the write cannot see a remember written after its searches: two
        contradicting remembers racing would both miss the other. So every remember's write
        counts itself in the remember write sequence (``Store.remembered``, in its unit) and
        reads it back in the same round trip: exactly one more than ``sequence`` (read before the
        searches) means no other remember was written in between; anything else and the check
        runs again after the write, as it did before the early check. Of two racing remembers the
        later writer always sees the other's count and checks again."""
        # every remember's write is counted (one checked after its write must be
        # seen by a racing early one)
        after = self.write_new(
            memory, vector, actor=actor, action="remember", then_release=claim, counted=True
        )
        if nearby is not None and (after is None or int(after) != sequence + 1):
            nearby = None  # another remember was written since the searches: check against it too
        opened = (
            self.contradictions.on_remember(memory, vector, actor=actor, nearby=nearby)
            if rules.check_contradictions
            else []
        )
        for hook in self.after_store:
            hook(memory)
        return RememberResult(
            "stored",
            memory.key,
            notes=tuple(
                Note("contradiction", other=c.other(memory.key), contradiction=c.id) for c in opened
            )
            + self.hidden_notes(memory, suppressions),
        )

    def hidden_notes(
        self, memory: Memory, suppressions: builtins.list[Suppression] | None = None
    ) -> tuple[Note, ...]:
        """What a memory just stored will not be shown through: each suppression that hides it."""
        current = self.suppressions.active() if suppressions is None else suppressions
        hiding = [s for s in current if hidden_by(memory, [s])]
        return tuple(Note("suppressed", term=s.term, reason=s.reason) for s in hiding)

    def refused(
        self, existing: Memory, similarity: float, new: Memory, *, actor: str, refresh: bool
    ) -> RememberResult:
        """The duplicate answer, naming the memory matched; with
        ``refresh`` its event date moves on."""
        notes = [
            Note(
                "duplicate", key=existing.key, state=existing.state, content=existing.content[:120]
            )
        ]
        newer = new.event_date is not None and (
            existing.event_date is None or new.event_date > existing.event_date
        )
        event = self.ctx.event(
            actor,
            "refresh",
            existing.key,
            reason="repeated with a newer event date",
            before=existing.content,
            after=existing.content,
            details={"event_date": [iso(existing.event_date), iso(new.event_date)]},
        )
        if (
            refresh
            and newer
            and self.ctx.store.memories.update(
                existing.key,
                {"event_date": new.event_date, "updated_at": self.ctx.clock.now()},
                [event],
            )
        ):
            notes.append(Note("refreshed", event_date=iso(new.event_date)))
        return RememberResult("duplicate", existing.key, similarity, notes=tuple(notes))

    def claim(self, memory: Memory) -> Lease:
        """The claim on this content in this namespace and project (SET NX PX on one key, so
        cluster-safe), held while it is checked and written: a concurrent remember of the same
        text waits, then its duplicate check sees this write. A claim whose holder died expires."""
        name = hashlib.sha256(
            f"{memory.namespace}\0{memory.project}\0{memory.content_sha}".encode()
        ).hexdigest()
        return self.ctx.store.lease(
            self.ctx.store.key("claim", "remember", name), memory.key, CLAIM_SECONDS
        )

    @staticmethod
    def wait(claim: Lease) -> None:
        """Take ``claim`` once its holder gives it up (or it expires);
        Conflict after CLAIM_SECONDS."""
        deadline = time.monotonic() + CLAIM_SECONDS
        while not claim.hold():
            if time.monotonic() > deadline:
                raise Conflict(
                    "another remember of the same content is still running", hint="retry the call"
                )
            time.sleep(0.005)

    def write_new(
        self,
        memory: Memory,
        vector: Any,
        *,
        actor: str,
        action: str,
        reason: str = "",
        then_release: Lease | None = None,
        counted: bool = False,
    ) -> str | None:
        """Write a new memory with its audit event (one unit); ``counted``: the write also counts
        itself in the remember write sequence and returns the sequence read
        right after it (``_store``)."""
        remembered = self.ctx.store.remembered
        return self.ctx.store.memories.write(
            memory,
            vector,
            [self.ctx.event(actor, action, memory.key, reason=reason, after=memory.content)],
            self.ctx.store.counted_remember() if counted else (),
            then_release=then_release,
            then_read=remembered if counted else None,
        )

    def guarded(self, text: str, *, what: str = "content") -> str:
        """``text`` without credentials: refused, or redacted when ``KENNING_CREDENTIALS=redact``
        (kenning.core.credentials). Every write of content passes here."""
        return credentials.guard(text, self.ctx.settings.credentials, what=what)

    def _validated(self, draft: Draft, actor: str) -> Memory:
        namespace = validation.namespace(draft.namespace)
        text = self.guarded(validation.content(draft.content))
        if not 0.0 <= draft.weight <= 1.0:
            raise InvalidInput("weight must be between 0 and 1")
        now = self.ctx.clock.now()
        key = self.ctx.store.memories.new_key(namespace, str(ULID()))
        return Memory(
            key=key,
            content=text,
            namespace=namespace,
            project=validation.project(draft.project),
            tags=validation.tags(list(draft.tags)),
            kind=fields.kind(draft.kind),
            trust=fields.trust(draft.trust),
            actor=actor or "unknown",
            created_at=now,
            updated_at=now,
            title=fields.short("title", draft.title, validation.MAX_TITLE),
            source=fields.short("source", draft.source, validation.MAX_SOURCE),
            weight=draft.weight,
            event_date=validation.timestamp("event_date", draft.event_date),
            valid_from=validation.timestamp("valid_from", draft.valid_from) or now,
            expires_at=validation.timestamp("expires_at", draft.expires_at),
            source_key=draft.source_key,
            doc_id=draft.doc_id,
            chunk_index=draft.chunk_index,
            metadata=dict(draft.metadata),
            content_sha=fields.content_sha(text),
        )

    def _duplicate(self, result: SearchResult) -> tuple[Memory, float] | None:
        """The duplicate search's hit when it is at or above the threshold."""
        if not result.hits or result.hits[0].similarity < self.ctx.settings.duplicate_threshold:
            return None
        hit = result.hits[0]
        return hit.memory, hit.similarity

    def duplicate_search(self, namespace: str, project: str, vector: Any) -> query.Search:
        """The one KNN that finds a possible duplicate: nearest non-archived memory,
        same namespace and project.

        It asks for ``DUPLICATE_KNN`` rows and keeps the nearest (``limit=1``): RediSearch 2.10
        answers a KNN 1 under a selective filter on a 1M-memory index in ~22 ms p50 and a KNN 8
        under the same filter in ~0.3 ms (its planner walks the graph in batches for k=1 instead
        of scoring the filtered set; bench/FINDINGS.md, the 1M scale point)."""
        return query.Search(
            index=self.ctx.index,
            namespaces=(namespace,),
            knn=DUPLICATE_KNN,
            vector=vector_bytes(vector),
            ef_runtime=self.ctx.settings.ef_runtime,
            clauses=(query.tag("project", [project]), query.not_tag("state", ["archived"])),
            return_fields=("created_at", "state", "content", "event_date", "distance"),
            limit=1,
        )

    # --- reads ----------------------------------------------------------------------------
    def get(self, key: str) -> Memory:
        validation.key(key, self.ctx.store.prefix)
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            raise NotFound(
                f"no memory {key}", hint="it may have been forgotten; check history(key)"
            )
        return memory

    def list(self, listing: Listing) -> Page:
        """One page of memories matching the filters (kenning.memory.listing)."""
        return listings.page(self.ctx, listing)

    # --- edits ----------------------------------------------------------------------------
    def update(self, key: str, content: str, *, actor: str, reason: str | None = None) -> Memory:
        """Replace the content, re-embed, keep the old text in the audit event."""
        validation.key(key, self.ctx.store.prefix)
        text = self.guarded(validation.content(content))
        # before the write: a refused reason must not leave it unaudited
        why = validation.reason(reason) or ""
        vector = self.ctx.embedder.embed(text)
        sha = fields.content_sha(text)

        def edit(current: Memory) -> Change:
            return Change(
                # the checksum is derived, not stored: compare the content itself
                {"content": current.content},
                {"content": text, "content_sha": sha, "updated_at": self.ctx.clock.now()},
                vector,
            )

        def record(current: Memory, _: Change) -> AuditEvent:
            return self.ctx.event(
                actor,
                "update",
                key,
                reason=why,
                before=current.content,
                after=text,
                details={"previous_content": current.content},
            )

        current, change = self.swap(key, edit, record)
        updated = replace(
            current, content=text, content_sha=sha, updated_at=change.changes["updated_at"]
        )
        if self.contradictions.after_edit(updated, vector, actor=actor):
            return self.get(key)  # its trust changed (a contradiction opened or closed)
        return updated

    def retag(
        self,
        key: str,
        *,
        add: builtins.list[str] | None = None,
        remove: builtins.list[str] | None = None,
        actor: str,
        reason: str | None = None,
    ) -> Memory:
        validation.key(key, self.ctx.store.prefix)
        why = validation.reason(reason) or ""  # before the write, as in update
        drop = set(validation.tags(remove or []))
        extra = validation.tags(add or [])

        def edit(current: Memory) -> Change:
            tags = tuple(dict.fromkeys(tuple(t for t in current.tags if t not in drop) + extra))
            if len(tags) > validation.MAX_TAGS:
                raise InvalidInput(
                    f"a memory carries at most {validation.MAX_TAGS} tags",
                    hint="remove some tags first",
                )
            return Change(
                {"tags": current.tags}, {"tags": tags, "updated_at": self.ctx.clock.now()}
            )

        def record(current: Memory, change: Change) -> AuditEvent:
            return self.ctx.event(
                actor,
                "retag",
                key,
                reason=why,
                before=current.content,
                after=current.content,
                details={"before": list(current.tags), "after": list(change.changes["tags"])},
            )

        current, change = self.swap(key, edit, record)
        tags = change.changes["tags"]
        return replace(current, tags=tags, updated_at=change.changes["updated_at"])

    def swap(
        self,
        key: str,
        edit: Callable[[Memory], Change],
        record: Callable[[Memory, Change], AuditEvent],
    ) -> tuple[Memory, Change]:
        """Read the memory, compute ``edit`` from it and write the change with its ``record``
        only while the fields it read are unchanged (compare-and-set on the one key, one unit of
        work); retried on a concurrent change, so no acknowledged change is lost and the audit
        shows the state it replaced."""
        for attempt in range(SWAP_ATTEMPTS):
            current = self.get(key)
            change = edit(current)
            outcome = self.ctx.store.memories.swap(
                key, change.expect, change.changes, change.vector, [record(current, change)]
            )
            if outcome == APPLIED:
                return current, change
            if outcome == GONE:
                raise NotFound(f"no memory {key}", hint="it was forgotten while being changed")
            pause(attempt)  # spread the writers that collided
        raise Conflict(
            f"{key} kept changing while this change was made; nothing was written",
            hint="retry the call",
        )

    def forget(
        self, key: str, *, confirm: bool = False, actor: str, reason: str | None = None
    ) -> ForgetPreview | Forgotten:
        """Preview by default; with confirm, hard-delete and keep a snapshot
        for the retention window."""
        return self.forget_memory(self.get(key), confirm=confirm, actor=actor, reason=reason)

    def forget_memory(
        self, memory: Memory, *, confirm: bool = False, actor: str, reason: str | None = None
    ) -> ForgetPreview | Forgotten:
        """``forget`` for a memory the caller has just read (not read again)."""
        key = memory.key
        # before the delete: a refused reason must not leave it unaudited
        why = validation.reason(reason) or ""
        if not confirm:
            return ForgetPreview(
                key, memory.namespace, memory.project, memory.content[:500], memory.state
            )
        marker = keep_snapshots(self.ctx, [memory])
        event = self.ctx.event(
            actor, "forget", key, reason=why, before=memory.content, details={"snapshot": marker}
        )
        hints = [
            op
            for hint in memory.reinstate_hints  # its reinstate hints leave the index with it
            for op in self.ctx.store.hints.removing(phrases.normalise(hint), key)
        ]
        # forgotten meanwhile: that one is audited
        if not self.ctx.store.memories.delete(key, [event], hints):
            raise NotFound(
                f"no memory {key}",
                hint="it was forgotten while this forget ran; check history(key)",
            )
        self.contradictions.close_for(key, "forgotten", actor=actor)
        return Forgotten(key)
