"""What a feed run stores for its new entries, by mode (docs/feeds.md): ``excerpt`` one memory per
entry holding its excerpt; ``summary`` one memory per entry holding an LLM summary; ``digest`` one
memory per run summarising the new entries and linking each.

The LLM calls run inside the feed run, not through the enrichment queue: the feed's own state
already makes a run that dies half-way redo what it did not store (the validators are saved only
after the store, each entry's uid is claimed as it is stored), and the fallback is immediate and
visible. Without a key, over budget or on any failure an entry is stored as its excerpt and
``summary_state`` says why (``no_key``, ``over_budget``, ``failed: <reason>``); past
KENNING_FEED_SUMMARIES_PER_RUN entries it is ``skipped``, so a run's LLM time stays bounded. Feed
text travels to the model as data (kenning.llm.client).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from kenning.core.models import DERIVED
from kenning.knowledge.feeds.config import Feed
from kenning.knowledge.feeds.parse import Entry
from kenning.llm.client import Llm, LlmUnavailable, Summary
from kenning.llm.directives import instruction_like
from kenning.memory.memories import Draft

SUMMARY = (
    "Summarise the feed entry for a software developer in at most 3 sentences (under 600 "
    "characters): what was announced or changed, versions, dates, who is "
    "affected. Plain text, no markdown."
)
DIGEST = (
    "Summarise the new entries of one feed for a software developer in at most 8 sentences (under "
    "1,000 characters): the themes and the notable items. Plain text, no markdown."
)
SUMMARY_SOURCE_CHARS = 6_000  # of one entry's text, sent to be summarised
DIGEST_SOURCE_CHARS = 600  # of each entry's text, sent to the digest
DIGEST_LINKS = 50  # entries a digest lists by title and link
DIGEST_LIST_CHARS = 40_000  # the list's length at most (a memory holds 50,000 characters)
SKIPPED = "skipped"
SUMMARISED = "summarised"
FLAGGED = "flagged"  # the model's summary read as instructions: the excerpt is stored instead
PROMPT_VERSION = "feed_summary/2"  # bump when SUMMARY or DIGEST change


@dataclass(frozen=True)
class Piece:
    """One memory to store and the entries it stands for (their uids are claimed for its key)."""

    entries: tuple[Entry, ...]
    draft: Draft
    state: str


@dataclass
class Pieces:
    items: list[Piece] = field(default_factory=list)

    def states(self) -> Counter[str]:
        """Pieces by summary state, the reason of a failure left out (a bounded label set)."""
        return Counter(
            piece.state.split(":")[0] for piece in self.items if piece.state != "unsummarised"
        )

    def notes(self, feed: Feed) -> tuple[str, ...]:
        fallen = Counter(p.state for p in self.items if p.state not in (SUMMARISED, "unsummarised"))
        return tuple(
            (
                f"mode {feed.mode!r}: {n} entr{'y' if n == 1 else 'ies'} "
                f"stored as the excerpt ({state})"
            )
            for state, n in sorted(fallen.items())
        )


class Summaries:
    def __init__(self, llm: Llm, per_run: int) -> None:
        self.llm = llm
        self.per_run = per_run

    def pieces(self, feed: Feed, entries: list[Entry], now: float) -> Pieces:
        """The memories a run stores for its new ``entries``, summarised as ``feed.mode`` says."""
        if feed.mode == "excerpt" or not entries:
            return Pieces(
                [
                    Piece((e,), excerpt(feed, e, now, "unsummarised"), "unsummarised")
                    for e in entries
                ]
            )
        if feed.mode == "digest":
            return self._digest(feed, entries, now)
        out = Pieces()
        for n, entry in enumerate(entries):
            state = self._summary(feed, entry) if n < self.per_run else LlmSkip(self.per_run)
            if isinstance(state, Said):
                out.items.append(Piece((entry,), summarised(feed, entry, now, state), SUMMARISED))
            else:
                out.items.append(
                    Piece((entry,), excerpt(feed, entry, now, state.state), state.state)
                )
        return out

    def _summary(self, feed: Feed, entry: Entry) -> Said | LlmUnavailable:
        data = {
            "title": entry.title or "",
            "link": entry.link or "",
            "text": entry.text[:SUMMARY_SOURCE_CHARS],
        }
        try:
            answer = self.llm.ask(
                "feed_summary",
                SUMMARY,
                {"entry": data},
                Summary,
                project=feed.project,
                max_tokens=300,
            )
            return _said(answer.value.summary, answer.model, "feed_summary")
        except LlmUnavailable as exc:
            return exc

    def _digest(self, feed: Feed, entries: list[Entry], now: float) -> Pieces:
        sent = entries[: self.per_run]
        data = [
            {"title": e.title or "", "link": e.link or "", "text": e.text[:DIGEST_SOURCE_CHARS]}
            for e in sent
        ]
        try:
            answer = self.llm.ask(
                "feed_digest",
                DIGEST,
                {"feed": feed.name, "entries": data},
                Summary,
                project=feed.project,
                max_tokens=500,
            )
            said = _said(answer.value.summary, answer.model, "feed_digest")
        except LlmUnavailable as exc:
            return Pieces(
                [Piece((e,), excerpt(feed, e, now, exc.state), exc.state) for e in entries]
            )
        rest = [Piece((e,), excerpt(feed, e, now, SKIPPED), SKIPPED) for e in entries[len(sent) :]]
        return Pieces(
            [
                Piece(tuple(sent), digest(feed, sent, now, said), SUMMARISED),
                *rest,
            ]
        )


@dataclass(frozen=True)
class Said:
    """What the model wrote, with its provenance (docs/llm.md)."""

    text: str
    provenance: dict[str, Any]


class Flagged(LlmUnavailable):
    """The model's summary read as instructions addressed to an agent (kenning.llm.directives):
    not stored; the entry is stored as its excerpt, marked ``flagged``."""

    why = FLAGGED


def _said(text: str, model: str, feature: str) -> Said:
    """The model's text with its provenance; Flagged when it reads as instructions."""
    if instruction_like(text):
        raise Flagged("the model's summary read as instructions")
    provenance = {"source": f"llm:{feature}", "model": model, "prompt_version": PROMPT_VERSION}
    return Said(text.strip(), provenance)


class LlmSkip(LlmUnavailable):
    """An entry past the run's summary limit: stored as its excerpt, marked ``skipped``."""

    why = SKIPPED

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} new entries in one run")


def excerpt(feed: Feed, entry: Entry, now: float, state: str) -> Draft:
    return _draft(
        feed, entry, now, entry.excerpt(), {"summary_state": state, "stored_as": "excerpt"}
    )


def summarised(feed: Feed, entry: Entry, now: float, said: Said) -> Draft:
    content = "\n\n".join(part for part in (entry.title, said.text) if part)
    state = {"summary_state": SUMMARISED, "stored_as": "summary"}
    draft = _draft(feed, entry, now, content, state)
    return replace(draft, trust=DERIVED, metadata={**draft.metadata, "derived": said.provenance})


def digest(feed: Feed, entries: list[Entry], now: float, said: Said | str) -> Draft:
    """One memory for a run: the summary, then each entry's title and link
    (listed by us, not the model)."""
    lines = [
        f"- {(e.title or 'untitled')[:200]}" + (f" <{link}>" if (link := _link(e)) else "")
        for e in entries[:DIGEST_LINKS]
    ]
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) > DIGEST_LIST_CHARS:
        lines.pop()  # absurdly long links: the list stays under the memory's content limit
    if len(lines) < len(entries):
        lines.append(f"- … and {len(entries) - len(lines)} more")
    text = said.text if isinstance(said, Said) else said
    provenance = {"derived": said.provenance} if isinstance(said, Said) else {}
    dates = [e.published for e in entries if e.published is not None]
    listed = [
        {"title": e.title, "link": _link(e), "uid": e.uid, "published": e.published}
        for e in entries[:DIGEST_LINKS]
    ]
    return Draft(
        content=f"{text}\n\nEntries:\n" + "\n".join(lines),
        namespace="knowledge",
        project=feed.project,
        tags=feed.topics,
        kind="article",
        title=f"{feed.name}: digest of {len(entries)} new entries",
        event_date=max(dates) if dates else None,
        expires_at=_expires(feed, now),
        metadata={
            "feed": feed.name,
            "mode": feed.mode,
            "stored_as": "digest",
            "summary_state": SUMMARISED,
            "entries": listed,
            "source_url": None,
            **provenance,
        },
        trust=DERIVED if provenance else "stated",
    )


def _draft(feed: Feed, entry: Entry, now: float, content: str, state: dict[str, str]) -> Draft:
    link = _link(entry)
    return Draft(
        content=content,
        namespace="knowledge",
        project=feed.project,
        tags=feed.topics,
        kind="article",
        title=(entry.title or "")[:300] or None,
        source=link,
        event_date=entry.published,
        expires_at=_expires(feed, now),
        source_key=entry.uid,
        metadata={
            "feed": feed.name,
            "source_url": link,
            "mode": feed.mode,
            **state,
            "enclosures": list(entry.enclosures[:10]),
        },
    )


def _link(entry: Entry) -> str | None:
    return entry.link if entry.link and len(entry.link) <= 2000 else None


def _expires(feed: Feed, now: float) -> float | None:
    return now + feed.retention_days * 86_400 if feed.retention_days else None
