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

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ulid import ULID

from kenning.core import credentials, query, validation
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.models import GLOBAL_PROJECT, Memory
from kenning.core.schema import FIELD_NAMES, NAMESPACES, vector_bytes
from kenning.runtime.context import Context
from kenning.store import STATUSES, Contradiction, Near, SearchResult
from kenning.truth import resolution
from kenning.truth.belief import Belief, belief_fields
from kenning.truth.contradiction_views import Board, CheckReport, Recheck, Side, SideBySide
from kenning.truth.detection import Found, age, conflict, detector

DECISIONS = resolution.DECISIONS
VERDICTS: tuple[str, ...] = ("contradiction", "compatible", "unknown")
PENDING = "pending"  # a deferred second-tier verdict not in yet (Contradictions.defer)
PENDING_NOTE = "the second tier's verdict is queued (the enrichment queue asks the LLM)"
CANDIDATES_PER_NAMESPACE = 10
# One KNN over every namespace (one index) asks for as many rows as the five per-namespace KNNs did.
CANDIDATES = CANDIDATES_PER_NAMESPACE * len(NAMESPACES)
# An optional second-tier checker (the LLM extras, kenning/llm/client.py): (a, b) -> one of
# VERDICTS, or
# (verdict, reason) so the reason is stored on the contradiction.
SecondTier = Callable[[Memory, Memory], str | tuple[str, str]]


# what ``conflict`` and the choice of side a read of a candidate
EARLY_FIELDS = ("content", "created_at", "valid_from")


def _early(search: query.Search) -> query.Search:
    """``search`` returning only ``EARLY_FIELDS``, and one row fewer: written, the memory would
    take the nearest row of the one index's search (see ``Contradictions.before_write``)."""
    if search.knn is None:
        return replace(search, return_fields=EARLY_FIELDS)
    return replace(search, return_fields=EARLY_FIELDS, knn=search.knn - 1, limit=search.limit - 1)


class Contradictions:
    def __init__(self, ctx: Context, belief: Belief, second_tier: SecondTier | None = None) -> None:
        self.ctx = ctx
        self.records = ctx.store.contradictions
        self.belief = belief
        self.second_tier = second_tier
        # asks for the second tier's verdict later (the LLM extras queue it): the record says
        # "pending" and remember does not wait for a model (settle() writes the verdict)
        self.defer: Callable[[Contradiction], None] | None = None

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
        memory = self.read(key)
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
        if self.defer is not None:
            self.defer(record)
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
        leaves the verdict ``unknown``; a deferred one leaves it ``pending``."""
        if self.defer is not None:
            return replace(record, second_tier=PENDING, second_tier_note=PENDING_NOTE)
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

    def settle(self, record_id: str, verdict: str, note: str) -> bool:
        """Write a deferred verdict on its record; False when the record is gone or no longer
        waits for one (resolved and closed records keep theirs)."""
        record = self.records.get(record_id)
        if record is None or record.second_tier != PENDING:
            return False
        verdict = verdict if verdict in VERDICTS else "unknown"
        self.records.save(replace(record, second_tier=verdict, second_tier_note=note[:300]), ())
        return True

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
            targets = [self.read(key)]
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
        """Apply a decision (see the module docstring) as one unit of work gated on the record
        and both sides as read (kenning.truth.resolution); returns the updated record."""
        ask = resolution.asked(decision, note, content)  # before anything is read or changed
        if ask.content:  # a merged statement is stored content: no credential in it
            ask = replace(
                ask, content=credentials.guard(ask.content, self.ctx.settings.credentials)
            )
        return resolution.Resolution(self).resolve(record_id, ask, actor=actor)

    def _clear(self, key: str, record: Contradiction, *, actor: str) -> bool:
        """Lift ``disputed`` unless another open contradiction still touches the memory.

        Returns whether the memory exists (so a caller need not read it again)."""
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            return False
        if memory.trust != "disputed" or self.others_open(key, record):
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

    def others_open(self, key: str, record: Contradiction) -> bool:
        """Whether an open record other than ``record`` touches the memory."""
        return any(
            c.id != record.id and c.status == "open"
            for c in self.records.many(self.records.for_key(key))
        )

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

    def read(self, key: str) -> Memory:
        return self.belief.read(key)
