"""One ingest of one feed: fetch (conditional) -> parse -> store each new article as a knowledge
memory.

Dedup, twice: an article whose uid (hash of its GUID or link) is already in the store is not read
again (across runs and feeds); an article that embeds as a near-duplicate of a stored memory (the
remember path's duplicate check) is linked to that memory (an audit event on it) instead of stored
twice. Failures back off exponentially (``backoff``); a 429/503 Retry-After is honoured when longer.
Every ingest appends an audit event with actor ``feed:<name>``. Feed text is stored as memory
content only: data, never instructions. The ``summary`` and ``digest`` modes
(kenning.knowledge.feeds.summary)
decide what is stored for the new entries.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from kenning.core.errors import Conflict, FeedError, InvalidInput, NotFound
from kenning.knowledge.feeds import config, guard, parse
from kenning.knowledge.feeds.config import Feed, FeedBook, Problem
from kenning.knowledge.feeds.fetch import Conditional, Fetcher
from kenning.knowledge.feeds.summary import Piece, Summaries
from kenning.llm.client import Llm
from kenning.memory.memories import Memories
from kenning.runtime.context import Context
from kenning.store import FeedState, FeedStateStore

Outcome = Literal["fetched", "not_modified", "failed", "waiting"]
MAX_BACKOFF_SECONDS = 7 * 86_400.0
COUNTS = ("new", "duplicates", "linked", "rejected")  # what a run's last_counts hold


@dataclass(frozen=True)
class FeedRun:
    """How one ingest of a feed ended; ``seconds``: the fetch latency (None: nothing fetched)."""

    feed: str
    outcome: Outcome
    new: tuple[str, ...] = ()
    duplicates: int = 0
    linked: tuple[str, ...] = ()
    rejected: int = 0
    error: str | None = None
    warning: str | None = None
    seconds: float | None = None
    next_attempt: float | None = None
    notes: tuple[str, ...] = field(default=())
    # memories by summary state (mode != excerpt)
    summaries: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        return {
            "feed": self.feed,
            "outcome": self.outcome,
            "new": len(self.new),
            "duplicates": self.duplicates,
            "linked": len(self.linked),
            "rejected": self.rejected,
            "error": self.error,
            "warning": self.warning,
            "notes": list(self.notes),
            **({"summaries": dict(self.summaries)} if self.summaries else {}),
        }


@dataclass(frozen=True)
class FeedStatus:
    """A feed as `kenning feeds list` shows it: its configuration (or its problem) and its state."""

    name: str
    feed: Feed | None
    problem: Problem | None
    state: FeedState

    @property
    def health(self) -> str:
        """invalid (feeds.yml entry refused), disabled, failing (failures in a
        row), never fetched, or ok."""
        if self.problem is not None:
            return "invalid"
        if self.feed is not None and not self.feed.enabled:
            return "disabled"
        if self.state.failures:
            return "failing"
        return "never fetched" if self.state.last_fetch is None else "ok"

    @property
    def job(self) -> str:
        """The worker's job name for this feed."""
        return job_name(self.name)


JOB_PREFIX = "feed:"  # the worker's job names: feed:<name> (a name no other job takes)


def job_name(feed: str) -> str:
    return JOB_PREFIX + feed


def statuses(book: FeedBook, states: FeedStateStore) -> list[FeedStatus]:
    """Every feed of feeds.yml, the bad entries included (their problem is their status). Needs only
    the store, so `kenning feeds list` runs without loading the model."""
    out = [FeedStatus(f.name, f, None, states.load(f.name)) for f in book.feeds]
    out += [
        FeedStatus(
            p.name or f"line {p.line}", None, p, states.load(p.name) if p.name else FeedState()
        )
        for p in book.problems
    ]
    return out


def backoff(interval_seconds: float, failures: int) -> float:
    """Seconds before the next attempt after ``failures`` consecutive failures: one interval, then
    doubling, capped at a week."""
    return min(MAX_BACKOFF_SECONDS, interval_seconds * 2.0 ** max(0, failures - 1))


class FeedIngest:
    def __init__(
        self, ctx: Context, memories: Memories, llm: Llm, fetcher: Fetcher | None = None
    ) -> None:
        self.ctx = ctx
        self.memories = memories
        self.fetcher = fetcher or Fetcher(ctx.settings)
        self.states = ctx.store.feeds
        self.summaries = Summaries(llm, ctx.settings.feed_summaries_per_run)

    def book(self) -> FeedBook:
        return config.load(self.ctx.settings.resolved_feeds_file)

    def statuses(self) -> list[FeedStatus]:
        return statuses(self.book(), self.states)

    def feed(self, name: str) -> Feed:
        book = self.book()
        found = book.get(name)
        if found is not None:
            return found
        problem = book.problem_of(name)
        if problem is not None:
            raise InvalidInput(f"feed {name!r} is disabled by an error in feeds.yml: {problem}")
        raise NotFound(f"no feed named {name!r}", hint="`kenning feeds list` shows the feeds")

    def moved(self, feed: Feed) -> bool:
        """Whether ``feed`` was fetched before from another URL (feeds.yml changed it): its next
        run is its first at the new URL and should not wait out the old one's interval."""
        known = self.states.load(feed.name).url
        return known is not None and known != feed.url

    def run(self, feed: Feed, *, force: bool = False) -> FeedRun:
        """Ingest ``feed`` once; ``force`` ignores the backoff (a run on demand)."""
        state = self.states.load(feed.name)
        if state.url != feed.url:  # a new URL (or the first fetch): no validators, no backoff
            state = replace(
                state, url=feed.url, etag=None, last_modified=None, failures=0, next_attempt=None
            )
        now = self.ctx.clock.now()
        if not force and state.next_attempt is not None and now < state.next_attempt:
            return FeedRun(
                feed.name, "waiting", next_attempt=state.next_attempt, error=state.last_error
            )
        lease = self.states.lease(feed.name, uuid.uuid4().hex, self._lease_seconds(feed))
        if not lease.hold():
            raise Conflict(
                f"feed {feed.name!r} is being fetched by another process",
                hint="try again in a minute",
            )
        try:
            return self._run(feed, state)
        finally:
            lease.release()

    def _lease_seconds(self, feed: Feed) -> float:
        """The fetch's worst case, the LLM calls' worst case (summary modes),
        and ten minutes to store."""
        s = self.ctx.settings
        calls = s.feed_summaries_per_run * s.llm_timeout_seconds * (s.llm_max_retries + 1)
        calls = calls if feed.mode != "excerpt" and self.summaries.llm.available else 0.0
        return s.feed_timeout_seconds * (s.feed_max_redirects + 1) + calls + 600.0

    def _run(self, feed: Feed, state: FeedState) -> FeedRun:
        started = time.monotonic()
        try:
            fetched = self.fetcher.fetch(feed.url, Conditional(state.etag, state.last_modified))
            parsed = parse.parse(fetched.body, fetched.headers) if fetched.modified else None
        except FeedError as exc:
            return self._failed(feed, state, exc, time.monotonic() - started)
        seconds = time.monotonic() - started
        now = self.ctx.clock.now()
        validators = (
            fetched.validators if fetched.modified else Conditional(state.etag, state.last_modified)
        )
        base = replace(
            state,
            etag=validators.etag,
            last_modified=validators.last_modified,
            last_fetch=now,
            last_success=now,
            last_error=None,
            failures=0,
            next_attempt=None,
        )
        if parsed is None:  # nothing new: recorded by nothing; the last run's counts are zero now
            unchanged = replace(base, last_warning=None, last_counts=dict.fromkeys(COUNTS, 0))
            self.states.save(feed.name, unchanged, ())
            return FeedRun(feed.name, "not_modified", seconds=seconds)
        run = self._store(feed, parsed, seconds)
        counts = {
            "new": len(run.new),
            "duplicates": run.duplicates,
            "linked": len(run.linked),
            "rejected": run.rejected,
        }
        event = self.ctx.event(
            actor(feed),
            "feed_ingest",
            "",
            details={**run.summary(), "url": guard.redacted(fetched.url)},
        )
        self.states.save(
            feed.name, replace(base, last_warning=parsed.error, last_counts=counts), [event]
        )
        return run

    def _failed(self, feed: Feed, state: FeedState, exc: FeedError, seconds: float) -> FeedRun:
        now = self.ctx.clock.now()
        failures = state.failures + 1
        wait = max(backoff(feed.interval_minutes * 60, failures), exc.retry_after or 0.0)
        self.states.save(
            feed.name,
            replace(
                state,
                last_fetch=now,
                last_error=str(exc),
                failures=failures,
                next_attempt=now + wait,
            ),
            [
                self.ctx.event(
                    actor(feed),
                    "feed_failed",
                    "",
                    reason=str(exc),
                    details={"feed": feed.name, "failures": failures, "next_attempt": now + wait},
                )
            ],
        )
        return FeedRun(
            feed.name, "failed", error=str(exc), seconds=seconds, next_attempt=now + wait
        )

    def _store(self, feed: Feed, parsed: parse.ParsedFeed, seconds: float) -> FeedRun:
        seen = self.states.seen([e.uid for e in parsed.entries])
        fresh = list({e.uid: e for e in parsed.entries if e.uid not in seen}.values())
        pieces = self.summaries.pieces(feed, fresh, self.ctx.clock.now())
        new: list[str] = []
        linked: list[str] = []
        rejected: list[str] = []
        for piece in pieces.items:
            try:
                status, key = self._remember(feed, piece)
            except InvalidInput as exc:
                rejected += [f"{e.link or e.title}: {exc}" for e in piece.entries]
                continue
            (new if status == "stored" else linked).append(key)
        duplicates = len(parsed.entries) - len(fresh)
        notes = tuple(rejected[:5]) + pieces.notes(feed)
        return FeedRun(
            feed.name,
            "fetched",
            new=tuple(new),
            duplicates=duplicates,
            linked=tuple(linked),
            rejected=len(rejected),
            warning=parsed.error,
            seconds=seconds,
            notes=notes,
            summaries=dict(pieces.states()),
        )

    def _remember(self, feed: Feed, piece: Piece) -> tuple[str, str]:
        """Store one piece (or find its near-duplicate and link to it); claim its entries' uids."""
        result = self.memories.remember(piece.draft, actor=actor(feed), check_contradictions=False)
        uids = [entry.uid for entry in piece.entries]
        if result.status == "duplicate":  # the link and its event, one unit
            first = piece.entries[0]
            self.states.link(
                uids,
                result.key,
                [
                    self.ctx.event(
                        actor(feed),
                        "feed_link",
                        result.key,
                        reason="near-duplicate article",
                        details={
                            "feed": feed.name,
                            "source_url": first.link,
                            "uid": first.uid,
                            "similarity": result.similarity,
                        },
                    )
                ],
            )
        else:  # recorded by the remember event
            for uid in uids:
                self.states.claim(uid, result.key)
        return result.status, result.key


def actor(feed: Feed) -> str:
    return f"feed:{feed.name}"
