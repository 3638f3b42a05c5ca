"""Enrichment: facts extracted by the LLM extras become memories of their own (docs/llm.md).

A new memory queues one ``extract_facts`` job (when a key is set and the setting is on). The worker
drains the queue: each fact is remembered through the normal write path as a ``knowledge`` memory of
kind ``fact``, linked to its source (``source_key`` and ``metadata.enriched_from``), inheriting the
source's project and event date. The duplicate check keeps a retried job from storing a fact twice,
so a job that runs again after a worker died mid-job completes once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from kenning.core.errors import KenningError, NotFound
from kenning.core.models import Memory
from kenning.llm.client import Facts, Llm, LlmUnavailable
from kenning.memory.memories import Draft, Memories
from kenning.runtime.context import Context
from kenning.store import QueuedJob

log = logging.getLogger(__name__)
EXTRACT = "extract_facts"
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
    parked: int = 0
    errors: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "claimed": self.claimed,
            "done": self.done,
            "facts_stored": self.facts_stored,
            "facts_duplicate": self.facts_duplicate,
            "retried": self.retried,
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

    def public(self) -> dict[str, Any]:
        return {
            "waiting": self.waiting,
            "in_flight": self.in_flight,
            "parked": self.parked,
            "recent_parked": list(self.recent_parked),
            "llm": self.llm,
            "spent_today": self.spent_today,
        }


class Enrichment:
    def __init__(self, ctx: Context, memories: Memories, llm: Llm) -> None:
        self.ctx = ctx
        self.memories = memories
        self.llm = llm
        self.queue = ctx.store.llm_jobs

    def wanted(self, memory: Memory) -> bool:
        return (
            self.llm.available
            and self.ctx.settings.llm_extract_facts
            and memory.kind != "fact"
            and memory.namespace in SOURCE_NAMESPACES
            and len(memory.content) >= MIN_CHARS
        )

    def on_stored(self, memory: Memory) -> None:
        """The write path's hook: queue fact extraction for a memory worth it."""
        if self.wanted(memory):
            self.queue.push(EXTRACT, {"key": memory.key})

    def status(self) -> QueueStatus:
        state = self.queue.status()
        return QueueStatus(
            state["waiting"],
            state["in_flight"],
            state["parked"],
            tuple(state["recent_parked"]),
            "on" if self.llm.available else "off (no KENNING_ANTHROPIC_API_KEY)",
            self.llm.ledger.day(self.llm.day()),
        )

    def drain(self, consumer: str, *, limit: int = 50) -> DrainReport:
        """Run up to ``limit`` jobs: reclaimed ones (their consumer died) first, then new ones."""
        report = DrainReport()
        visibility_ms = int(self.ctx.settings.enrichment_visibility_seconds * 1000)
        for job in self.queue.claim(consumer, count=limit, visibility_ms=visibility_ms):
            report.claimed += 1
            self._run(job, report)
        return report

    def _run(self, job: QueuedJob, report: DrainReport) -> None:
        try:
            stored, duplicate = self._extract(job.payload["key"])
        except (LlmUnavailable, KenningError, KeyError) as exc:
            error = f"{job.kind} {job.payload}: {exc}"
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
            result = self.memories.remember(
                Draft(
                    content=fact,
                    namespace="knowledge",
                    project=source.project,
                    kind="fact",
                    event_date=source.event_date,
                    source_key=source.key,
                    tags=tuple(source.tags),
                    metadata={"enriched_from": source.key},
                ),
                actor=ACTOR,
            )
            stored += result.status == "stored"
            duplicate += result.status == "duplicate"
        return stored, duplicate
