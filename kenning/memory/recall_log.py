"""The recall log and "why did you mention X" (docs/recall.md#the-recall-log).

Every recall appends one entry -- query, actor, projects, time, and each result's key, score and the
first words of its content -- to a stream trimmed to ``recall_log_max_entries`` (oldest first).

``why_did_you_mention(topic)`` finds the memories the topic means -- by words first (a memory key,
or memories containing the topic as whole words), then by meaning (KNN above the relevance floor) --
and then reads the log newest first for the recalls that returned them, answering with query,
actor, time, rank and score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kenning.core import query, validation
from kenning.core.models import Memory, RecallHit, iso
from kenning.core.schema import NAMESPACES, namespace_of, vector_bytes
from kenning.language import phrases
from kenning.memory.suppression import Suppression, Suppressions, hidden_by
from kenning.runtime.context import Context

PREVIEW = 120
TOPIC_MEMORIES = 5
PAGE = 500


@dataclass(frozen=True, slots=True)
class Mentioned:
    """Which logged recalls surfaced the memories a topic names (newest
    first); ``note`` when none did."""

    topic: str
    matched_by: str | None  # "words", "meaning", or None when no memory matched
    memories: list[dict[str, Any]]  # {"key", "content"}
    mentions: list[dict[str, Any]]
    note: str | None = None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "matched_by": self.matched_by,
            "memories": self.memories,
            "mentions": self.mentions,
        }
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclass(frozen=True, slots=True)
class Logged:
    """One recall as the log keeps it; ``results`` are the stored rows (key, score,
    similarity, factors, preview)."""

    id: str
    query: str
    actor: str
    at: str | None
    projects: list[str]
    results: list[dict[str, Any]]

    def public(self) -> dict[str, Any]:
        return asdict(self)


class RecallLog:
    def __init__(self, ctx: Context, suppressions: Suppressions) -> None:
        self.ctx = ctx
        self.store = ctx.store.recall_log
        self.suppressions = suppressions

    def record(
        self, text: str, hits: Sequence[RecallHit], *, actor: str, projects: tuple[str, ...] = ()
    ) -> str:
        """Append one recall to the log; returns the entry id."""
        return self.store.append(
            self.entry(text, hits, actor=actor, projects=projects),
            self.ctx.settings.recall_log_max_entries,
        )

    def entry(
        self,
        text: str,
        hits: Sequence[RecallHit],
        *,
        actor: str,
        projects: tuple[str, ...],
        at: float | None = None,
    ) -> dict[str, Any]:
        """The log entry of one recall (a recall sends it with its counters:
        ``Store.log_recall``); ``at`` the recall's time (default: now)."""
        at = self.ctx.clock.now() if at is None else at
        return {
            "query": text,
            "actor": actor or "unknown",
            "at": at,
            "projects": list(projects),
            "results": [
                {
                    "key": h.memory.key,
                    "score": round(h.score, 4),
                    "similarity": round(h.similarity, 4),
                    "factors": {name: round(v, 4) for name, v in h.factors.items()},
                    "preview": h.memory.content[:PREVIEW],
                }
                for h in hits
            ],
        }

    def recent(self, limit: int = 50) -> list[Logged]:
        validation.bounded_int("limit", limit, 1, 1_000)
        return [_public(entry_id, entry) for entry_id, entry in self.store.newest(limit)]

    def why_did_you_mention(self, topic: str, *, limit: int = 20) -> Mentioned:
        """Which recalls surfaced the memories ``topic`` names, newest first (at most ``limit``)."""
        text = phrases.query_text(topic, what="topic", limit=500)
        validation.bounded_int("limit", limit, 1, 200)
        # an agent asks this: suppressed memories never surface
        suppressed = self.suppressions.active()
        memories, matched_by = self._by_words(text, suppressed), "words"
        if not memories:
            memories, matched_by = self._by_meaning(text, suppressed), "meaning"
        keys = {m["key"] for m in memories}
        mentions = self._mentions(keys, text, limit, suppressed)
        note = (
            None
            if mentions
            else (
                "no logged recall returned a memory matching this topic"
                f" (the log keeps the last {self.ctx.settings.recall_log_max_entries} recalls)"
            )
        )
        return Mentioned(text, matched_by if memories else None, memories, mentions, note)

    def _by_words(self, text: str, suppressed: list[Suppression]) -> list[dict[str, Any]]:
        if namespace_of(text.strip(), self.ctx.store.prefix):
            memory = self.ctx.store.memories.read(text.strip())
            if memory is None or hidden_by(memory, suppressed):
                return []
            return [{"key": memory.key, "content": memory.content[:200]}]
        words = phrases.search_words(text)
        if not words:
            return []
        search = query.Search(
            index=self.ctx.index,
            clauses=tuple(query.text_any("content", [w]) for w in words),
            limit=50 * len(NAMESPACES),
            return_fields=("content", "title", "created_at"),
        )
        found = [
            {"key": h.memory.key, "content": h.memory.content[:200]}
            for h in self.ctx.store.memories.search(search).hits
            if phrases.contains(h.memory.content, text) and not hidden_by(h.memory, suppressed)
        ]
        return found[: TOPIC_MEMORIES * 4]

    def _by_meaning(self, text: str, suppressed: list[Suppression]) -> list[dict[str, Any]]:
        vector = vector_bytes(self.ctx.embedder.embed(text))
        wanted = TOPIC_MEMORIES * len(NAMESPACES)  # as many rows as one KNN per namespace read
        search = query.Search(
            index=self.ctx.index,
            knn=wanted,
            vector=vector,
            ef_runtime=max(self.ctx.settings.ef_runtime, wanted),
            limit=wanted,
            return_fields=("content", "title", "created_at", "distance"),
        )
        hits = [
            h
            for h in self.ctx.store.memories.search(search).hits
            if h.similarity >= self.ctx.settings.relevance_floor
            and not hidden_by(h.memory, suppressed)
        ]
        hits.sort(key=lambda h: h.similarity, reverse=True)
        return [
            {
                "key": h.memory.key,
                "content": h.memory.content[:200],
                "similarity": round(h.similarity, 4),
            }
            for h in hits[:TOPIC_MEMORIES]
        ]

    def _mentions(
        self, keys: set[str], text: str, limit: int, suppressed: list[Suppression]
    ) -> list[dict[str, Any]]:
        """Log entries (newest first) whose results include one of ``keys`` or, when no live
        memory matched, whose previews name the topic (a memory forgotten since) -- unless a
        suppression hides the preview."""
        out: list[dict[str, Any]] = []
        cursor = "+"
        for _ in range(self.ctx.settings.recall_log_max_entries // PAGE + 2):
            page = self.store.newest(PAGE, before=cursor)
            for _entry_id, entry in page:
                for rank, result in enumerate(entry["results"], start=1):
                    if result["key"] in keys or (
                        not keys
                        and phrases.contains(result["preview"], text)
                        and not _preview_hidden(result, suppressed)
                    ):
                        out.append(
                            {
                                "query": entry["query"],
                                "actor": entry["actor"],
                                "at": iso(entry["at"]),
                                "key": result["key"],
                                "rank": rank,
                                "score": result["score"],
                            }
                        )
                        break
                if len(out) >= limit:
                    return out
            if len(page) < PAGE:
                break
            cursor = "(" + page[-1][0]
        return out


def _preview_hidden(result: dict[str, Any], suppressed: list[Suppression]) -> bool:
    """Whether a suppression hides the logged preview (the same rule as for a stored memory)."""
    return bool(hidden_by(Memory(key=result["key"], content=result["preview"]), suppressed))


def _public(entry_id: str, entry: dict[str, Any]) -> Logged:
    return Logged(
        id=entry_id,
        query=entry["query"],
        actor=entry["actor"],
        at=iso(entry["at"]),
        projects=entry.get("projects", []),
        results=entry["results"],
    )
