"""Contradictions: detect, record once, resolve as a first-class decision
(docs/truth-maintenance.md).

Detection is two-stage: a similarity gate (KNN from the memory's stored vector, same project or
global, ``KENNING_CONTRADICTION_THRESHOLD``) and two pure checks: a value change
(``kenning.language.values``: same subject, another value; detector ``value``) or opposite
polarity (``kenning.language.polarity``; detector ``reversal`` when the newer statement says so
explicitly -- "no longer", "dropped", "moved from" -- else ``polarity``). A hit is stored once as
its own record (status ``open``) and both memories become ``disputed``. Remember never refuses
because of a contradiction; it reports it.

Resolution decisions: ``keep_a`` / ``keep_b`` (the other side is superseded and its validity ends),
``both_valid`` (a note saying why is required), ``not_a_contradiction`` (the pair is never flagged
again), ``merge`` (a new memory with the given content supersedes both). Resolving clears
``disputed`` on both sides. Resolving a resolved record again changes the decision: the previous
effects are undone first, and both steps are audited. Archiving or forgetting a side closes the
record with that reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ulid import ULID

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import GLOBAL_PROJECT, Memory, iso
from kenning.core.schema import FIELD_NAMES, NAMESPACES, vector_bytes
from kenning.language import polarity, values
from kenning.runtime.context import Context
from kenning.store import STATUSES, Contradiction, Near, SearchResult
from kenning.truth.belief import Belief, belief_fields

DECISIONS: tuple[str, ...] = ("keep_a", "keep_b", "both_valid", "not_a_contradiction", "merge")
VERDICTS: tuple[str, ...] = ("contradiction", "compatible", "unknown")
CANDIDATES_PER_NAMESPACE = 10
# One KNN over every namespace (one index) asks for as many rows as the five per-namespace KNNs did.
CANDIDATES = CANDIDATES_PER_NAMESPACE * len(NAMESPACES)
# An optional second-tier checker (the LLM extras, kenning/llm/client.py): (a, b) -> one of
# VERDICTS, or
# (verdict, reason) so the reason is stored on the contradiction.
SecondTier = Callable[[Memory, Memory], str | tuple[str, str]]


Found = polarity.Conflict | values.ValueChange
# what ``conflict`` and the choice of side a read of a candidate
EARLY_FIELDS = ("content", "created_at", "valid_from")


def _early(search: query.Search) -> query.Search:
    """``search`` returning only ``EARLY_FIELDS``, and one row fewer: written, the memory would
    take the nearest row of the one index's search (see ``Contradictions.before_write``)."""
    if search.knn is None:
        return replace(search, return_fields=EARLY_FIELDS)
    return replace(search, return_fields=EARLY_FIELDS, knn=search.knn - 1, limit=search.limit - 1)


def conflict(older: str, newer: str) -> Found | None:
    """A value change (same subject, another value) first, else
    a polarity conflict. Pure."""
    return values.change(older, newer) or polarity.conflict(older, newer)


def age(memory: Memory) -> tuple[float, float, str]:
    """What orders two statements: when each began to hold (``valid_from``, by default when it
    was written), then when it was written. Side ``a`` of a record is the older."""
    began = memory.valid_from if memory.valid_from is not None else memory.created_at
    return (began, memory.created_at, memory.key)


def detector(found: Found) -> str:
    """The record's ``detector``: ``value``, ``reversal`` (an explicit cue in the newer
    statement) or ``polarity``."""
    if isinstance(found, values.ValueChange):
        return "value"
    return "reversal" if found.reversal else "polarity"


@dataclass(frozen=True, slots=True)
class Recheck:
    """Maintenance's re-check of the open records: how many were looked at, which closed and why."""

    examined: int
    closed: list[dict[str, str]]  # {"id", "reason"}
    still_open: int


@dataclass(frozen=True)
class CheckReport:
    """What an on-demand check looked at and found."""

    examined: int
    opened: tuple[Contradiction, ...]
    open: tuple[Contradiction, ...]  # already-open records touching what was examined
    # examined but not checkable (no stored vector): named, not hidden
    without_vector: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        return {
            "examined": self.examined,
            "opened": [c.public() for c in self.opened],
            "already_open": [c.public() for c in self.open],
            "without_vector": list(self.without_vector),
        }


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a contradiction as it stands now (``memory`` None when it is gone)."""

    key: str
    memory: Memory | None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "exists": self.memory is not None}
        if self.memory is not None:
            m = self.memory
            out.update(
                content=m.content[:1_000],
                project=m.project,
                state=m.state,
                trust=m.trust,
                created_at=iso(m.created_at),
            )
        return out


@dataclass(frozen=True, slots=True)
class SideBySide:
    """A record with both sides' current content, state and trust, for reading side by side."""

    record: Contradiction
    a: Side
    b: Side

    def public(self) -> dict[str, Any]:
        return {**self.record.public(), "a": self.a.public(), "b": self.b.public()}


@dataclass(frozen=True, slots=True)
class Board:
    """``Contradictions.board``: records with both sides described, and how many match in all."""

    contradictions: tuple[SideBySide, ...]
    open_total: int

    def public(self) -> dict[str, Any]:
        return {
            "contradictions": [c.public() for c in self.contradictions],
            "open_total": self.open_total,
        }


class Contradictions:
    def __init__(self, ctx: Context, belief: Belief, second_tier: SecondTier | None = None) -> None:
        self.ctx = ctx
        self.records = ctx.store.contradictions
        self.belief = belief
        self.second_tier = second_tier

    # --- detection ------------------------------------------------------------------------
    def on_remember(
        self, memory: Memory, vector: Any, *, actor: str, nearby: list[SearchResult] | None = None
    ) -> list[Contradiction]:
        """Open a record for every stored memory the new one contradicts (never refuses).

        Archived and superseded memories are not checked (nothing is believed to dispute), nor
        project contexts (rewritten in place by their owner, not statements). ``nearby``: the
        results of ``before_write``'s searches, sent before the memory was
        written (else searched now)."""
        if not self.checked(memory):
            return []
        opened: list[Contradiction] = []
        near = self.candidates(memory, vector) if nearby is None else self.hits(nearby)
        for other, similarity in near:
            # Side a is always the older statement, so keep_b reads "keep the newer one".
            a, b = sorted((other, memory), key=age)
            found = conflict(a.content, b.content)
            if found is None or self.records.pair(a.key, b.key) is not None:
                continue
            # rows were partial
            whole = other if nearby is None else self.ctx.store.memories.read(other.key)
            if whole is None:
                continue
            a, b = sorted((whole, memory), key=age)
            record = self.open(a, b, found, similarity, actor=actor)
            if record is not None:
                opened.append(record)
        return opened

    def on_reinstate(self, key: str, *, actor: str) -> list[Contradiction]:
        """Re-check a memory that is visible again (reinstated from archived, restored): an
        archive closed its records and released their pairs, so a conflict that
        still holds is flagged anew."""
        memory = self._read(key)
        vector = self.ctx.store.memories.read_vector(key)
        return [] if vector is None else self.on_remember(memory, vector, actor=actor)

    @staticmethod
    def checked(memory: Memory) -> bool:
        """Whether ``memory`` is checked for contradictions at all (see ``on_remember``)."""
        return not (
            memory.state == "archived" or memory.trust == "superseded" or memory.kind == "context"
        )

    def candidates(self, memory: Memory, vector: Any) -> list[tuple[Memory, float]]:
        """Believed, visible memories close enough to be about the same thing
        (one pipelined round trip)."""
        return self.hits(self.ctx.store.memories.nearest(self.nearby(memory, vector)))

    @staticmethod
    def hits(found: list[SearchResult]) -> list[tuple[Memory, float]]:
        return [(hit.memory, hit.similarity) for result in found for hit in result.hits]

    def before_write(self, memory: Memory, vector: Any) -> list[Near]:
        """The check's KNNs for a memory not yet written, sent with the remember's first round
        trip (their results go to ``on_remember`` as ``nearby``); [] when it is not checked.
        Their rows carry only what ``conflict`` reads (``EARLY_FIELDS``): every field of ten rows
        per search cost more than a round trip (bench/FINDINGS.md); a row found in conflict is
        read whole. Written, the memory would be the nearest row of the search (skipped): the
        search asks one row fewer, so the others it finds are the ones the
        check after the write finds."""
        if not self.checked(memory):
            return []
        return [replace(n, search=_early(n.search)) for n in self.nearby(memory, vector)]

    def nearby(self, memory: Memory, vector: Any) -> list[Near]:
        """The KNNs of ``candidates``: believed, visible memories within
        the contradiction threshold."""
        # Project contexts are rewritten in place by their owner; they are
        # not statements to dispute.
        clauses = [
            query.not_tag("state", ["archived"]),
            query.not_tag("trust", ["superseded"]),
            query.not_tag("kind", ["context"]),
        ]
        if memory.project != GLOBAL_PROJECT:
            clauses.append(query.tag("project", [memory.project, GLOBAL_PROJECT]))
        # Distances first; only the rows at or above the threshold are read
        # (usually one or two of 50).
        cut = 1.0 - self.ctx.settings.contradiction_threshold
        return [
            Near(
                query.Search(
                    index=self.ctx.index,
                    namespaces=NAMESPACES,
                    clauses=tuple(clauses),
                    knn=CANDIDATES,
                    vector=vector_bytes(vector),
                    ef_runtime=max(self.ctx.settings.ef_runtime, CANDIDATES),
                    limit=CANDIDATES,
                ),
                max_distance=cut,
                skip=frozenset((memory.key,)),
            )
        ]

    def open(
        self, a: Memory, b: Memory, found: Found, similarity: float, *, actor: str
    ) -> Contradiction | None:
        """Store the record once and mark both sides disputed; None when
        another writer claimed the pair."""
        record = Contradiction(
            id=str(ULID()),
            a=a.key,
            b=b.key,
            evidence=found.evidence(),
            similarity=round(similarity, 4),
            detector=detector(found),
            detected_at=self.ctx.clock.now(),
            detected_by=actor or "unknown",
            projects=tuple(sorted({a.project, b.project})),
            prior={a.key: belief_fields(a), b.key: belief_fields(b)},
        )
        # atomic: two writers never both open it
        if not self.records.claim_pair(a.key, b.key, record.id):
            return None
        record = self._second_opinion(record, a, b)
        self.records.save(record, ())  # recorded by both sides' dispute events, next
        for key in (a.key, b.key):
            self.belief.set_trust(
                key,
                "disputed",
                actor=actor,
                action="dispute",
                reason=f"contradiction {record.id} with {record.other(key)}",
                details={"contradiction": record.id},
            )
        return record

    def _second_opinion(self, record: Contradiction, a: Memory, b: Memory) -> Contradiction:
        """Ask the optional second tier; a missing or failing checker
        leaves the verdict ``unknown``."""
        if self.second_tier is None:
            return replace(
                record, second_tier="unknown", second_tier_note="no second-tier checker configured"
            )
        try:
            answer = self.second_tier(a, b)
        # the checker is an edge (LLM); its failure is "unknown", never "no"
        except Exception as exc:
            return replace(
                record, second_tier="unknown", second_tier_note=f"checker failed: {exc}"[:300]
            )
        verdict, note = answer if isinstance(answer, tuple) else (answer, "")
        return replace(
            record,
            second_tier=verdict if verdict in VERDICTS else "unknown",
            second_tier_note=note[:300],
        )

    def check(
        self,
        *,
        key: str | None = None,
        project: str | None = None,
        query_text: str | None = None,
        actor: str,
    ) -> CheckReport:
        """On-demand detection over one memory, one project, or what a query finds."""
        given = [x for x in (key, project, query_text) if x]
        if len(given) != 1:
            raise InvalidInput(
                "give exactly one of key, project or query",
                hint="e.g. check_contradictions(project='shop')",
            )
        if key:
            targets = [self._read(key)]
        elif project:
            targets = self._project_members(validation.project(project))
        else:
            targets = self._query_members(validation.content(query_text or "", limit=2_000))
        opened: list[Contradiction] = []
        unchecked: list[str] = []
        for memory in targets:
            vector = self.ctx.store.memories.read_vector(memory.key)
            if vector is None:
                unchecked.append(memory.key)
                continue
            opened += self.on_remember(memory, vector, actor=actor)
        new = {c.id for c in opened}
        already = {rid for m in targets for rid in self.records.for_key(m.key)} - new
        still_open = [c for c in self.records.many(sorted(already)) if c.status == "open"]
        return CheckReport(
            examined=len(targets),
            opened=tuple(opened),
            open=tuple(still_open),
            without_vector=tuple(unchecked),
        )

    def _project_members(self, project: str) -> list[Memory]:
        from kenning.runtime.sweep import Sweep

        clauses = (
            query.tag("project", [project]),
            query.not_tag("state", ["archived"]),
            query.not_tag("trust", ["superseded"]),
        )
        return list(Sweep(self.ctx).memories(NAMESPACES, clauses))

    def _query_members(self, text: str) -> list[Memory]:
        vector = vector_bytes(self.ctx.embedder.embed(text))
        search = query.Search(
            index=self.ctx.index,
            namespaces=NAMESPACES,
            knn=CANDIDATES,
            vector=vector,
            clauses=(query.not_tag("state", ["archived"]), query.not_tag("trust", ["superseded"])),
            ef_runtime=max(self.ctx.settings.ef_runtime, CANDIDATES),
            return_fields=(*FIELD_NAMES, "distance"),
            limit=CANDIDATES,
        )
        return [
            h.memory
            for h in self.ctx.store.memories.search(search).hits
            if h.similarity >= self.ctx.settings.relevance_floor
        ]

    # --- reading --------------------------------------------------------------------------
    def get(self, record_id: str) -> Contradiction:
        if not isinstance(record_id, str) or not record_id.isalnum() or len(record_id) > 40:
            raise InvalidInput(
                f"{record_id!r} is not a contradiction id", hint="copy it from list_contradictions"
            )
        record = self.records.get(record_id)
        if record is None:
            raise NotFound(
                f"no contradiction {record_id}", hint="list_contradictions shows the known ones"
            )
        return record

    def listing(
        self,
        *,
        status: str = "open",
        project: str | None = None,
        key: str | None = None,
        limit: int = 20,
    ) -> tuple[list[Contradiction], int]:
        """Records newest first, filtered; returns (page, how many records are open in all)."""
        if status not in (*STATUSES, "all"):
            raise InvalidInput(
                f"unknown status {status!r}", hint="use open, resolved, closed or all"
            )
        validation.bounded_int("limit", limit, 1, 200)
        wanted_project = validation.project(project) if project else None
        if key:
            records = self.records.many(
                self.records.for_key(validation.key(key, self.ctx.store.prefix))
            )
            records.sort(key=lambda c: c.detected_at, reverse=True)
        else:
            records = self._walk(
                open_only=status == "open",
                projects=None if wanted_project is None else {wanted_project},
                status=status,
                limit=limit,
            )
        records = [
            c
            for c in records
            if status in ("all", c.status)
            and (wanted_project is None or wanted_project in c.projects)
        ]
        return records[:limit], self.records.count(open_only=True)

    def board(
        self,
        *,
        status: str = "open",
        project: str | None = None,
        key: str | None = None,
        limit: int = 20,
    ) -> Board:
        """``listing`` with both sides of each record described (what list_contradictions shows)."""
        records, total = self.listing(status=status, project=project, key=key, limit=limit)
        return Board(tuple(self.described(r) for r in records), total)

    def described(self, record: Contradiction) -> SideBySide:
        """A record with both sides as they stand now."""
        read = self.ctx.store.memories.read
        return SideBySide(record, Side(record.a, read(record.a)), Side(record.b, read(record.b)))

    def open_touching(self, projects: set[str], *, limit: int) -> list[Contradiction]:
        """Open records touching any of ``projects``, newest first (walks
        all open records; no cap)."""
        return self._walk(open_only=True, projects=projects, status="open", limit=limit)

    def _walk(
        self, *, open_only: bool, projects: set[str] | None, status: str, limit: int
    ) -> list[Contradiction]:
        out: list[Contradiction] = []
        offset = 0
        while len(out) < limit:
            ids = self.records.ids(open_only=open_only, offset=offset, limit=200)
            if not ids:
                break
            out += [
                c
                for c in self.records.many(ids)
                if status in ("all", c.status) and (projects is None or projects & set(c.projects))
            ]
            offset += 200
        return out

    # --- resolution -----------------------------------------------------------------------
    def resolve(
        self,
        record_id: str,
        decision: str,
        note: str | None,
        *,
        actor: str,
        content: str | None = None,
    ) -> Contradiction:
        """Apply a decision (see the module docstring); returns the updated record."""
        record = self.get(record_id)
        if decision not in DECISIONS:
            raise InvalidInput(
                f"unknown decision {decision!r}", hint=f"use one of {', '.join(DECISIONS)}"
            )
        text = validation.reason(note) or ""
        if decision == "both_valid" and not text:
            raise InvalidInput(
                "both_valid needs a note saying how both hold",
                hint="e.g. note='pickle only for the internal cache; never for input'",
            )
        if decision == "merge" and not (content and content.strip()):
            raise InvalidInput(
                "merge needs the merged content", hint="pass content= with the one true statement"
            )
        # before anything changes
        merged_text = validation.content(content or "") if decision == "merge" else ""
        if record.status == "closed":
            raise Conflict(
                f"contradiction {record_id} is closed ({record.closed_reason})",
                hint="a side is gone or archived; reinstate it and check_contradictions again",
            )
        a, b = self._read(record.a), self._read(record.b)
        if record.status == "resolved":
            self._undo(record, actor=actor)
            a, b = self._read(record.a), self._read(record.b)
        merged = self._apply(record, decision, a, b, actor=actor, note=text, content=merged_text)
        resolved = replace(
            record,
            status="resolved",
            decision=decision,
            note=text,
            resolved_by=actor,
            resolved_at=self.ctx.clock.now(),
            merged_key=merged,
        )
        self.records.save(
            resolved,
            [
                self.ctx.event(
                    actor,
                    "resolve_contradiction",
                    key,
                    reason=text,
                    details={
                        "contradiction": record.id,
                        "decision": decision,
                        "previous_decision": record.decision,
                        "merged_key": merged,
                    },
                )
                for key in (record.a, record.b)
            ],
        )
        return resolved

    def _apply(
        self,
        record: Contradiction,
        decision: str,
        a: Memory,
        b: Memory,
        *,
        actor: str,
        note: str,
        content: str,
    ) -> str:
        details = {"contradiction": record.id, "decision": decision}
        reason = note or f"contradiction {record.id}: {decision}"
        if decision == "keep_a":
            self.belief.supersede(b, a, actor=actor, reason=reason, details=details)
            self._clear(a.key, record, actor=actor)
        elif decision == "keep_b":
            self.belief.supersede(a, b, actor=actor, reason=reason, details=details)
            self._clear(b.key, record, actor=actor)
        elif decision == "merge":
            merged, vector = self._write_merged(a, b, content, record, actor=actor)
            for side in (a, b):
                self.belief.supersede(side, merged, actor=actor, reason=reason, details=details)
            # a new statement: checked like any remember
            self.on_remember(merged, vector, actor=actor)
            return merged.key
        else:
            for key in (a.key, b.key):
                self._clear(key, record, actor=actor)
        return ""

    def _undo(self, record: Contradiction, *, actor: str) -> None:
        """Undo the effects of the previous decision before a new one (resolution change)."""
        losers = {"keep_a": [record.b], "keep_b": [record.a], "merge": [record.a, record.b]}
        reason = f"resolution of contradiction {record.id} changed (was {record.decision})"
        for key in losers.get(record.decision, []):
            self.belief.restore(
                key,
                record.prior.get(key, {}),
                actor=actor,
                reason=reason,
                details={"contradiction": record.id},
            )
            if self._others_open(key, record):  # still disputed by another record
                self.belief.set_trust(
                    key,
                    "disputed",
                    actor=actor,
                    action="dispute",
                    reason=reason,
                    details={"contradiction": record.id},
                )
        if record.merged_key:  # the merged statement no longer stands for both sides
            self._retire_merged(record.merged_key, reason, actor=actor)

    def _retire_merged(self, key: str, reason: str, *, actor: str) -> None:
        """Archive the memory an undone merge wrote (reversible with
        reinstate, like any archive)."""
        memory = self.ctx.store.memories.read(key)
        if memory is None or memory.state == "archived":
            return
        now = self.ctx.clock.now()
        self.ctx.store.memories.update(
            key,
            {
                "state": "archived",
                "state_reason": reason,
                "state_actor": actor,
                "state_changed_at": now,
                "updated_at": now,
                "reinstate_hints": None,
            },
            [
                self.ctx.event(
                    actor,
                    "archive",
                    key,
                    reason=reason,
                    before=memory.content,
                    after=memory.content,
                    details={"from": memory.state, "to": "archived", "reinstate_hints": []},
                )
            ],
        )
        self.close_for(key, "archived", actor=actor)  # like any archive: its own open records close

    def _clear(self, key: str, record: Contradiction, *, actor: str) -> bool:
        """Lift ``disputed`` unless another open contradiction still touches the memory.

        Returns whether the memory exists (so a caller need not read it again)."""
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            return False
        if memory.trust != "disputed" or self._others_open(key, record):
            return True
        prior = str(record.prior.get(key, {}).get("trust") or "stated")
        self.belief.set_trust(
            key,
            "stated" if prior in ("disputed", "superseded") else prior,
            actor=actor,
            action="undispute",
            reason=f"contradiction {record.id} settled",
            details={"contradiction": record.id},
        )
        return True

    def _others_open(self, key: str, record: Contradiction) -> bool:
        """Whether an open record other than ``record`` touches the memory."""
        return any(
            c.id != record.id and c.status == "open"
            for c in self.records.many(self.records.for_key(key))
        )

    def _write_merged(
        self, a: Memory, b: Memory, content: str, record: Contradiction, *, actor: str
    ) -> tuple[Memory, Any]:
        text = content  # validated by resolve before anything changed
        now = self.ctx.clock.now()
        tags = tuple(dict.fromkeys((*a.tags, *b.tags)))[: validation.MAX_TAGS]
        merged = Memory(
            key=self.ctx.store.memories.new_key(a.namespace, str(ULID())),
            content=text,
            namespace=a.namespace,
            project=a.project if a.project == b.project else GLOBAL_PROJECT,
            tags=tags,
            kind="merged",
            actor=actor,
            created_at=now,
            updated_at=now,
            valid_from=now,
            content_sha=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            metadata={"merged_from": [a.key, b.key], "contradiction": record.id},
        )
        vector = self.ctx.embedder.embed(text)
        self.ctx.store.memories.write(
            merged,
            vector,
            [
                self.ctx.event(
                    actor,
                    "merge",
                    merged.key,
                    after=text,
                    details={"merged_from": [a.key, b.key], "contradiction": record.id},
                )
            ],
        )
        return merged, vector

    # --- closing --------------------------------------------------------------------------
    def close_for(self, key: str, reason: str, *, actor: str) -> list[str]:
        """Close every open record touching ``key`` (a side was archived or forgotten)."""
        closed: list[str] = []
        for record in self.records.many(self.records.for_key(key)):
            if record.status != "open":
                continue
            self.close(record, f"{reason}: {key}", actor=actor)
            closed.append(record.id)
        return closed

    def close(self, record: Contradiction, reason: str, *, actor: str) -> Contradiction:
        done = replace(
            record,
            status="closed",
            closed_reason=reason,
            resolved_by=actor,
            resolved_at=self.ctx.clock.now(),
        )
        self.records.save(done, ())  # recorded below on each side still there
        # A pair closed because a side left was never decided: it may be
        # flagged again if it returns.
        self.records.release_pair(record.a, record.b)
        for side in (record.a, record.b):
            if self._clear(side, done, actor=actor):  # a side that is gone has no trail to add to
                self.ctx.audit(
                    actor,
                    "close_contradiction",
                    side,
                    reason=reason,
                    details={"contradiction": record.id},
                )
        return done

    def after_edit(self, memory: Memory, vector: Any, *, actor: str) -> bool:
        """After a content edit: close its records that no longer conflict, flag new conflicts.

        Returns whether anything changed.
        """
        closed = 0
        for record in self.records.many(self.records.for_key(memory.key)):
            why = self._stale(record) if record.status == "open" else ""
            if why:
                self.close(record, why, actor=actor)
                closed += 1
        return bool(self.on_remember(memory, vector, actor=actor)) or closed > 0

    def recheck(self, *, actor: str) -> Recheck:
        """Maintenance: close open records whose sides are gone, archived
        or no longer conflicting."""
        closed: list[dict[str, str]] = []
        examined = 0
        ids = self.records.ids(open_only=True, limit=self.records.count(open_only=True) or 1)
        # one round trip; a record gone meanwhile is simply absent
        for record in self.records.many(ids):
            if record.status != "open":
                continue
            examined += 1
            why = self._stale(record)
            if why:
                self.close(record, why, actor=actor)
                closed.append({"id": record.id, "reason": why})
        return Recheck(examined=examined, closed=closed, still_open=examined - len(closed))

    def _stale(self, record: Contradiction) -> str:
        a, b = self.ctx.store.memories.read(record.a), self.ctx.store.memories.read(record.b)
        if a is None or b is None:
            return "a side no longer exists"
        if "archived" in (a.state, b.state):
            return "a side is archived"
        older, newer = sorted((a, b), key=age)
        if conflict(older.content, newer.content) is None:
            return "the two memories no longer conflict (edited)"
        return ""

    def _read(self, key: str) -> Memory:
        return self.belief.read(key)
