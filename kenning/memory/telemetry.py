"""Telemetry: which memories recall reaches and which it never does, and the recall log searched
(docs/dashboard.md#telemetry).

The listings are FT.SEARCH filters on the NUMERIC counters ``recall_count`` and ``last_recalled``
(never SCAN), one query over every namespace (one index). Those hash fields are what the last
maintenance fold copied from the live counter keys (kenning/store/recalls.py); each page then reads
its memories' live counters, so a memory recalled since the fold shows its live count, and leaves
"never recalled" / "gone cold" at once (``recalled_since_fold`` says how many a page dropped). The
lists are for a person: a memory a suppression hides is listed, marked with ``suppressed_by``.

The log search walks the recall log stream newest first (it is a stream, not the keyspace) for the
recalls that returned one memory or whose query holds some words, with a cursor to page on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from kenning.core import query, validation
from kenning.core.errors import InvalidInput
from kenning.core.models import Memory, iso
from kenning.language import phrases
from kenning.memory.suppression import Suppressions, hidden_by
from kenning.runtime.context import Context

DAY = 86_400
MAX_OFFSET = 1_000  # a page further than this is a search, not a listing
MAX_LIMIT = 100
LOG_PAGE = 500
FIELDS = (
    "content",
    "title",
    "namespace",
    "project",
    "state",
    "created_at",
    "recall_count",
    "last_recalled",
)
_CURSOR = re.compile(r"^\d{1,20}-\d{1,20}$")
Match = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class Used:
    """One memory of a usage listing (a person's view: ``suppressed_by`` names
    what hides it from agents)."""

    key: str
    namespace: str
    project: str
    state: str
    title: str | None
    snippet: str
    recall_count: int
    last_recalled: str | None
    created_at: str | None
    age_days: int
    suppressed_by: list[str]


@dataclass(frozen=True, slots=True)
class UsagePage:
    """A page of a usage listing; ``days``/``cutoff`` only for "gone cold".
    ``public()`` is its JSON form."""

    items: list[Used]
    total: int
    offset: int
    limit: int
    recalled_since_fold: int
    more: bool
    days: int | None = None
    cutoff: str | None = None

    def public(self) -> dict[str, Any]:
        out = asdict(self)
        return {
            k: v for k, v in out.items() if k not in ("days", "cutoff") or self.days is not None
        }


@dataclass(frozen=True, slots=True)
class Logged:
    """One logged recall; ``results`` are the log's stored rows (plain data)
    ranked, with their factors."""

    id: str
    at: str | None
    actor: str
    query: str
    projects: list[str]
    results: list[dict[str, Any]]
    matched_rank: int | None


@dataclass(frozen=True, slots=True)
class LogPage:
    """Logged recalls newest first; ``next`` is the cursor of the
    following page (None at the end)."""

    entries: list[Logged]
    next: str | None
    key: str | None
    text: str | None

    def public(self) -> dict[str, Any]:
        return asdict(self)


class Telemetry:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.log = ctx.store.recall_log
        self.suppressions = Suppressions(ctx)

    # --- usage listings ----------------------------------------------------------------------
    def most_recalled(self, *, offset: int = 0, limit: int = 20) -> UsagePage:
        """Memories recalled at least once, the most recalled first."""
        found = self._listing(
            (query.numeric("recall_count", 1),), "recall_count", True, offset, limit
        )
        return self._page(found, offset, limit, keep=lambda _: True)

    def gone_cold(self, *, days: int = 30, offset: int = 0, limit: int = 20) -> UsagePage:
        """Memories recalled before but not in the last ``days`` days, the longest cold first."""
        validation.bounded_int("days", days, 1, 3_650)
        cutoff = self.ctx.clock.now() - days * DAY
        clauses = (
            query.numeric("recall_count", 1),
            query.numeric("last_recalled", None, cutoff, exclusive_high=True),
        )
        found = self._listing(clauses, "last_recalled", False, offset, limit)
        page = self._page(found, offset, limit, keep=lambda m: (m.last_recalled or 0.0) < cutoff)
        return replace(page, days=days, cutoff=iso(cutoff))

    def never_recalled(self, *, offset: int = 0, limit: int = 20) -> UsagePage:
        """Memories no recall has returned, the oldest first (with their age in days)."""
        found = self._listing(
            # a count of 0 is left out of the hash: "not recalled once" (also a stored 0)
            ("-" + query.numeric("recall_count", 1),),
            "created_at",
            False,
            offset,
            limit,
        )
        return self._page(found, offset, limit, keep=lambda m: m.recall_count == 0)

    def _listing(
        self, clauses: tuple[str, ...], sort_by: str, descending: bool, offset: int, limit: int
    ) -> tuple[int, list[Memory]]:
        """(total as of the last fold, the memories of rows
        offset..offset+limit over every namespace)."""
        validation.bounded_int("offset", offset, 0, MAX_OFFSET)
        validation.bounded_int("limit", limit, 1, MAX_LIMIT)
        result = self.ctx.store.memories.search(
            query.Search(
                index=self.ctx.index,
                clauses=clauses,
                return_fields=FIELDS,
                sort_by=sort_by,
                descending=descending,
                limit=offset + limit,
            )
        )
        merged = sorted(
            (h.memory for h in result.hits),
            key=lambda m: _sort_value(m, sort_by),
            reverse=descending,
        )
        return result.total, merged[offset : offset + limit]

    def _page(
        self,
        found: tuple[int, list[Memory]],
        offset: int,
        limit: int,
        keep: Callable[[Memory], bool],
    ) -> UsagePage:
        total, memories = found
        live = self.ctx.store.memories.recalls.live(memories)
        kept = [m for m in live if keep(m)]
        now, suppressed = self.ctx.clock.now(), self.suppressions.active()
        items = [_item(m, now, hidden_by(m, suppressed)) for m in kept]
        return UsagePage(
            items=items,
            total=total,
            offset=offset,
            limit=limit,
            recalled_since_fold=len(live) - len(kept),
            more=offset + limit < total,
        )

    # --- the recall log searched -------------------------------------------------------------
    def search_log(
        self,
        *,
        key: str | None = None,
        text: str | None = None,
        before: str | None = None,
        limit: int = 20,
    ) -> LogPage:
        """Logged recalls (newest first) that returned the memory ``key`` or whose query holds
        ``text`` as whole words; each with its query, who asked, when, and every result's score
        and factors. ``next`` is the cursor of the following page (None at the end of the log)."""
        needles, match = self._matcher(key, text)
        validation.bounded_int("limit", limit, 1, MAX_LIMIT)
        if before is not None and not _CURSOR.match(before):
            raise InvalidInput(
                f"{before!r} is not a recall log cursor",
                hint="pass the `next` value of the last page",
            )
        cursor, found = ("(" + before) if before else "+", list[Logged]()
        for _ in range(self.ctx.settings.recall_log_max_entries // LOG_PAGE + 2):
            page, last, read = self.log.newest_containing(LOG_PAGE, cursor, needles)
            for entry_id, entry in page:
                if match(entry):
                    found.append(_logged(entry_id, entry, key))
                    if len(found) == limit:
                        return LogPage(found, entry_id, key, text)
            if read < LOG_PAGE or last is None:
                break
            cursor = "(" + last
        return LogPage(found, None, key, text)

    def _matcher(self, key: str | None, text: str | None) -> tuple[tuple[bytes, ...], Match]:
        """What an entry must hold: bytes its stored JSON must contain (a cheap filter before
        decoding it; words outside ASCII are JSON-escaped there, so only ASCII words
        filter), and the exact rule."""
        if key and text:
            raise InvalidInput(
                "search the recall log by a memory key or by query words, not both",
                hint="clear one of the two fields",
            )
        if key:
            wanted = validation.key(key.strip(), self.ctx.store.prefix)
            return (wanted.encode(),), lambda entry: any(
                r.get("key") == wanted for r in entry.get("results", [])
            )
        if text:
            words = phrases.query_text(text, what="query words", limit=500)
            needles = tuple(t.encode() for t in phrases.tokens(words) if t.isascii())
            return needles, lambda entry: phrases.contains(str(entry.get("query", "")), words)
        raise InvalidInput(
            "give a memory key or some words of a query",
            hint="e.g. key=kenning:mem:knowledge:01J...",
        )


def _sort_value(memory: Memory, field: str) -> float:
    value = getattr(memory, field)
    return float(value) if value is not None else 0.0


def _item(memory: Memory, now: float, suppressed_by: list[str]) -> Used:
    content = memory.content
    return Used(
        key=memory.key,
        namespace=memory.namespace,
        project=memory.project,
        state=memory.state,
        title=memory.title,
        snippet=content if len(content) <= 160 else content[:157] + "...",
        recall_count=memory.recall_count,
        last_recalled=iso(memory.last_recalled),
        created_at=iso(memory.created_at),
        age_days=max(0, int((now - memory.created_at) // DAY)),
        suppressed_by=suppressed_by,
    )


def _logged(entry_id: str, entry: dict[str, Any], key: str | None) -> Logged:
    results: Sequence[dict[str, Any]] = entry.get("results", [])
    ranked = [
        {"rank": rank, **result, "factors": result.get("factors", {})}
        for rank, result in enumerate(results, start=1)
    ]
    matched = next((r["rank"] for r in ranked if key and r["key"] == key.strip()), None)
    return Logged(
        id=entry_id,
        at=iso(entry["at"]),
        actor=entry.get("actor", "unknown"),
        query=entry.get("query", ""),
        projects=entry.get("projects", []),
        results=ranked,
        matched_rank=matched,
    )
