"""Enrichment: facts extracted by the LLM extras become memories of their own (docs/llm.md).

A new memory queues one ``extract_facts`` job (when a key is set and the setting is on). The worker
drains the queue: each fact is remembered through the normal write path as a ``knowledge`` memory of
kind ``fact``, linked to its source (``source_key`` and ``metadata.enriched_from``), inheriting the
source's project and event date. The duplicate check keeps a retried job from storing a fact twice,
so a job that runs again after a worker died mid-job completes once.

A job the LLM could not take (an outage after the client's retries, an exhausted budget, no key)
is delayed, not counted as a failed attempt: it waits KENNING_ENRICHMENT_RETRY_SECONDS, doubling
per retry up to KENNING_ENRICHMENT_RETRY_MAX_SECONDS (an exhausted budget at most until the next
UTC day). A job whose answer was wrong (not JSON, the wrong shape, a refusal) or that failed
otherwise counts an attempt and is parked after KENNING_ENRICHMENT_MAX_ATTEMPTS; a person requeues
or drops it (`kenning queue requeue|drop`, the dashboard's queue page).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kenning.core.errors import InvalidInput, KenningError, NotFound
from kenning.core.models import DERIVED, FEED_DERIVED_ACTOR, FEED_KIND, Memory, iso
from kenning.llm.client import Facts, Llm, LlmOff, LlmUnavailable, Outage, OverBudget
from kenning.llm.directives import instruction_like
from kenning.memory.memories import Draft, Memories
from kenning.runtime.context import Context
from kenning.store import Contradiction, ParkedJob, QueuedJob
from kenning.truth.contradictions import PENDING

log = logging.getLogger(__name__)
AWAY = (Outage, OverBudget, LlmOff)  # the LLM could not take the job: it waits, uncounted
PROMPT_VERSION = "extract_facts/2"  # bump when INSTRUCTIONS change: each fact says which it met
FLAGGED = "instruction-like model output: kept out of briefings until a person reinstates it"
Flag = Callable[[str, str], object]  # (key, reason): the lifecycle's deprioritise
_STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
EXTRACT = "extract_facts"
VERDICT = "contradiction_verdict"  # a second-tier verdict, asked after remember returned
ACTOR = "llm:enrichment"
SOURCE_NAMESPACES = ("episodic", "knowledge")
MIN_CHARS = 40  # shorter texts hold at most one fact: the memory itself
INSTRUCTIONS = (
    "Extract the standalone facts from the memory below: short declarative sentences a developer "
    "would want to recall later (names, versions, decisions, values), each understandable "
    "without the others. At most 5. An empty list when there is nothing beyond the text itself."
)


@dataclass
class DrainReport:
    claimed: int = 0
    done: int = 0
    facts_stored: int = 0
    facts_duplicate: int = 0
    retried: int = 0
    delayed: int = 0
    parked: int = 0
    errors: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "claimed": self.claimed,
            "done": self.done,
            "facts_stored": self.facts_stored,
            "facts_duplicate": self.facts_duplicate,
            "retried": self.retried,
            "delayed": self.delayed,
            "parked": self.parked,
            "errors": self.errors[:10],
        }


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """The enrichment queue (jobs waiting, in flight, parked after failing) and
    the LLM's state and spend."""

    waiting: int
    in_flight: int
    parked: int
    recent_parked: tuple[dict[str, str], ...]
    llm: str
    spent_today: dict[str, int]
    delayed: int = 0
    next_due: float | None = None

    def public(self) -> dict[str, Any]:
        return {
            "waiting": self.waiting,
            "in_flight": self.in_flight,
            "delayed": self.delayed,
            "next_due": iso(self.next_due),
            "parked": self.parked,
            "recent_parked": list(self.recent_parked),
            "llm": self.llm,
            "spent_today": self.spent_today,
        }


class Enrichment:
    def __init__(
        self, ctx: Context, memories: Memories, llm: Llm, flag: Flag | None = None
    ) -> None:
        self.ctx = ctx
        self.memories = memories
        self.llm = llm
        self.queue = ctx.store.llm_jobs
        self.flag = flag

    def wanted(self, memory: Memory) -> bool:
        return (
            self.llm.available
            and self.ctx.settings.llm_extract_facts
            and memory.kind != "fact"
            and memory.namespace in SOURCE_NAMESPACES
            and len(memory.content) >= MIN_CHARS
        )

    def queue_verdict(self, record: Contradiction) -> None:
        """The detector's hook (``Contradictions.defer``): ask for the verdict later."""
        self.queue.push(VERDICT, {"id": record.id})

    def on_stored(self, memory: Memory) -> None:
        """The write path's hook: queue fact extraction for a memory worth it."""
        if self.wanted(memory):
            self.queue.push(EXTRACT, {"key": memory.key})

    def status(self) -> QueueStatus:
        state = self.queue.status()
        return QueueStatus(
            state.waiting,
            state.in_flight,
            state.parked,
            state.recent_parked,
            "on" if self.llm.available else "off (no KENNING_ANTHROPIC_API_KEY)",
            self.llm.ledger.day(self.llm.day()),
            state.delayed,
            state.next_due,
        )

    def parked(self, limit: int = 100) -> list[ParkedJob]:
        """The parked jobs, newest first, each with the error that parked it."""
        return self.queue.parked_jobs(limit)

    def requeue(self, parked_id: str, *, actor: str) -> str:
        """Put a parked job back in the queue (attempts reset); the new job's id. Audited."""
        job = self._parked(parked_id)
        new = self.queue.requeue(job)
        if new is None:
            raise NotFound(f"parked job {parked_id!r} was requeued or dropped meanwhile")
        self._audit(actor, "queue_requeue", job, {"requeued_as": new})
        return new

    def drop(self, parked_id: str, *, actor: str) -> None:
        """Delete a parked job for good. Audited."""
        job = self._parked(parked_id)
        if not self.queue.drop(job):
            raise NotFound(f"parked job {parked_id!r} was requeued or dropped meanwhile")
        self._audit(actor, "queue_drop", job, {})

    def _parked(self, parked_id: str) -> ParkedJob:
        if not _STREAM_ID.match(parked_id or ""):
            raise InvalidInput(
                f"{parked_id!r} is not a parked job's id",
                hint="`kenning queue parked` lists them (e.g. 1764751234567-0)",
            )
        job = self.queue.parked_job(parked_id)
        if job is None:
            raise NotFound(f"no parked job {parked_id!r}", hint="`kenning queue parked` lists them")
        return job

    def _audit(self, actor: str, action: str, job: ParkedJob, details: dict[str, Any]) -> None:
        event = self.ctx.event(
            actor,
            action,
            "",
            reason=job.error[:200],
            details={"parked": job.id, "kind": job.kind, "payload": job.payload, **details},
        )
        self.ctx.store.record([event])

    def drain(self, consumer: str, *, limit: int = 50) -> DrainReport:
        """Run up to ``limit`` jobs: reclaimed ones (their consumer died) first, then new ones."""
        report = DrainReport()
        visibility_ms = int(self.ctx.settings.enrichment_visibility_seconds * 1000)
        now = self.ctx.clock.now()
        jobs = self.queue.claim(consumer, count=limit, visibility_ms=visibility_ms, now=now)
        for job in jobs:
            report.claimed += 1
            self._run(job, report)
        return report

    def _run(self, job: QueuedJob, report: DrainReport) -> None:
        try:
            if job.kind == VERDICT:
                stored, duplicate = self._verdict(job.payload["id"]), 0
            else:
                stored, duplicate = self._extract(job.payload["key"])
        except AWAY as exc:  # the LLM is away: wait, it is not the job's fault
            report.errors.append(f"{job.kind} {job.payload}: {exc}")
            self.queue.delay(job, self._due(job, exc), str(exc))
            report.delayed += 1
            return
        except Exception as exc:  # the worker's per-job guard: every failure is accounted for
            error = f"{job.kind} {job.payload}: {_said(exc)}"
            report.errors.append(error)
            if job.attempts >= self.ctx.settings.enrichment_max_attempts:
                self.queue.park(job, error)
                report.parked += 1
            else:
                report.retried += 1  # left pending: claimed again after the visibility timeout
            return
        self.queue.done(job)
        report.done += 1
        report.facts_stored += stored
        report.facts_duplicate += duplicate

    def _due(self, job: QueuedJob, exc: Exception) -> float:
        """When a delayed job is tried again: the retry schedule, capped by its ceiling."""
        settings, now = self.ctx.settings, self.ctx.clock.now()
        wait = retry_wait(
            job.delays, settings.enrichment_retry_seconds, settings.enrichment_retry_max_seconds
        )
        if isinstance(exc, OverBudget):  # the budget comes back with the next UTC day
            wait = min(max(wait, 86_400.0 - now % 86_400.0), settings.enrichment_retry_max_seconds)
        return now + wait

    def _verdict(self, record_id: str) -> int:
        """Ask the second tier about an open record and write its answer on it. An answer that
        was wrong (not JSON, another shape, a refusal) is ``unknown`` with the reason, never
        "compatible"; the LLM away raises (the job waits). Nothing is stored: 0 facts."""
        contradictions = self.memories.contradictions
        record = contradictions.records.get(record_id)
        if record is None or record.second_tier != PENDING:
            return 0  # resolved, or answered, meanwhile
        try:
            a, b = self.memories.get(record.a), self.memories.get(record.b)
        except NotFound:  # a side was forgotten since: there is nothing left to judge
            contradictions.settle(record_id, "unknown", "a side was forgotten before the verdict")
            return 0
        deadline = self.ctx.settings.llm_verdict_deadline_seconds
        try:
            verdict, note = self.llm.judge(
                a.content, b.content, project=a.project, deadline=deadline
            )
        except AWAY:
            raise
        except LlmUnavailable as exc:
            verdict, note = "unknown", f"second tier unavailable: {exc}"
        contradictions.settle(record_id, verdict, note)
        return 0

    def _extract(self, key: str) -> tuple[int, int]:
        try:
            source = self.memories.get(key)
        except NotFound:
            return 0, 0  # forgotten since it was queued: nothing to enrich
        answer = self.llm.ask(
            "extract_facts", INSTRUCTIONS, {"memory": source.content}, Facts, project=source.project
        )
        stored = duplicate = 0
        for fact in dict.fromkeys(f.strip() for f in answer.value.facts if f.strip()):
            flagged = instruction_like(fact)
            result = self.memories.remember(
                derived_fact(source, fact, answer.model, flagged=flagged),
                actor=FEED_DERIVED_ACTOR if source.kind == FEED_KIND else ACTOR,
                # a fact's contradictions are its source's: checking it again would open one
                # against the source itself, and one per fact of each side of an open pair
                check_contradictions=False,
            )
            if result.status == "stored" and flagged and self.flag is not None:
                self.flag(result.key, FLAGGED)
            stored += result.status == "stored"
            duplicate += result.status == "duplicate"
        return stored, duplicate


def derived_fact(source: Memory, fact: str, model: str, *, flagged: bool) -> Draft:
    """A fact the model extracted from ``source``, with its provenance: ``source``
    ``llm:extract_facts``, trust ``derived``, the model and the prompt version, linked to its
    source (and to its feed, for an article's). Pure."""
    provenance = {
        "source": "llm:extract_facts",
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "from": source.key,
        "from_feed": source.metadata.get("feed") if source.kind == FEED_KIND else None,
        "instruction_like": flagged,
    }
    return Draft(
        content=fact,
        namespace="knowledge",
        project=source.project,
        kind="fact",
        source="llm:extract_facts",
        event_date=source.event_date,
        source_key=source.key,
        tags=tuple(source.tags),
        trust=DERIVED,
        metadata={"enriched_from": source.key, "derived": provenance},
    )


def _said(exc: Exception) -> str:
    """A failure as the parked record says it: the engine's own message, else its type."""
    if isinstance(exc, KenningError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"[:300]


def retry_wait(delays: int, base: float, ceiling: float) -> float:
    """Seconds a job that found the LLM away waits before its next try: ``base``, doubling with
    each delay it already waited, never above ``ceiling``. Pure."""
    return float(min(ceiling, base * 2.0 ** min(delays, 40)))
