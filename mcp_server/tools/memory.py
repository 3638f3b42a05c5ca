"""Core memory tools: remember, recall (full, index, detail), retag, update_memory, forget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult
from mcp_server import shape
from mcp_server.params import Namespace, TopK, plain
from mcp_server.registry import tool
from mcp_server.runtime import current
from mcp_server.tools.lifecycle import candidates

SNIPPET_CHARS = 160


def tokens_estimate(text: str) -> int:
    """Rough token count (about four characters per token) so an agent can budget its context."""
    return max(1, (len(text) + 3) // 4)


def index_entry(hit: dict[str, Any], content: str) -> dict[str, Any]:
    snippet = content if len(content) <= SNIPPET_CHARS else content[: SNIPPET_CHARS - 3] + "..."
    return {**hit, "snippet": snippet, "tokens": tokens_estimate(content)}


def scope(project: str | list[str] | None, projects: list[str] | None) -> list[str]:
    """``project`` (one name or a list) and its list-only alias ``projects``, as
    one list (validated later)."""
    named = [project] if isinstance(project, str) else list(project or [])
    return named + list(projects or [])


@tool(scope="write")
async def remember(
    content: str,
    namespace: Namespace = "knowledge",
    project: str | None = None,
    tags: list[str] | None = None,
    title: str | None = None,
    source: str | None = None,
    event_date: str | None = None,
    valid_from: str | None = None,
    expires_at: str | None = None,
    allow_duplicate: bool = False,
    refresh: bool = False,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Store one memory. Returns status "stored" or "duplicate" (with the existing key)."""
    call = current()
    draft = Draft(
        content=content,
        namespace=namespace,
        project=project,
        tags=tuple(tags or ()),
        title=title,
        source=source,
        event_date=event_date,
        valid_from=valid_from,
        expires_at=expires_at,
    )
    result = await call.run(
        call.engine.memories.remember,
        draft,
        actor=call.actor,
        allow_duplicate=allow_duplicate,
        refresh=refresh,
        idempotency_key=idempotency_key,
    )
    return shape.remembered(result)


async def _recall(
    query: str,
    namespaces: Sequence[str] | None,
    projects: list[str] | None,
    top_k: int,
    include_deprioritised: bool,
    as_of: str | None,
    include_superseded: bool = False,
    include_feeds: bool | None = None,
) -> RecallResult:
    call = current()
    request = RecallRequest(
        query=query,
        namespaces=plain(namespaces),
        projects=projects or None,
        top_k=top_k,
        include_deprioritised=include_deprioritised,
        as_of=as_of,
        actor=call.actor,
        include_superseded=include_superseded,
        include_feeds=include_feeds,
    )
    return await call.run(call.engine.recaller.recall, request)


@tool(scope="read")
async def recall(
    query: str,
    namespaces: list[Namespace] | None = None,
    project: str | list[str] | None = None,
    top_k: TopK = 5,
    include_deprioritised: bool = False,
    as_of: str | None = None,
    include_superseded: bool = False,
    projects: list[str] | None = None,
    include_feeds: bool | None = None,
) -> dict[str, Any]:
    """Find memories relevant to a question, best first, with full content. Warnings come first.
    project: one name or a list; "global" memories are always included."""
    result = await _recall(
        query,
        namespaces,
        scope(project, projects),
        top_k,
        include_deprioritised,
        as_of,
        include_superseded,
        include_feeds,
    )
    return shape.recall(result, full=True)


@tool(scope="read")
async def recall_index(
    query: str,
    namespaces: list[Namespace] | None = None,
    project: str | list[str] | None = None,
    top_k: TopK = 10,
    include_deprioritised: bool = False,
    projects: list[str] | None = None,
) -> dict[str, Any]:
    """Like recall but returns snippets and a token estimate per hit; fetch
    chosen keys with recall_detail."""
    result = await _recall(
        query, namespaces, scope(project, projects), top_k, include_deprioritised, None
    )
    out = shape.recall(result, full=False)
    pairs = zip(out["results"], result.hits, strict=True)
    out["results"] = [index_entry(entry, hit.memory.content) for entry, hit in pairs]
    out["tokens_total"] = sum(entry["tokens"] for entry in out["results"])
    return out


@tool(scope="read")
async def recall_detail(keys: Annotated[list[str], Field(max_length=20)]) -> dict[str, Any]:
    """Full records (every field) of up to 20 memories by key, in the order given."""
    call = current()
    return {"memories": [m.public() for m in await call.run(call.engine.inspection.records, keys)]}


@tool(scope="write", destructive=True, idempotent=True)  # removing tags is not additive
async def retag(
    key: str,
    add: list[str] | None = None,
    remove: list[str] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Add and/or remove tags on one memory; returns its tags afterwards."""
    call = current()
    memory = await call.run(
        call.engine.memories.retag, key, add=add, remove=remove, actor=call.actor, reason=reason
    )
    return {"key": memory.key, "tags": list(memory.tags)}


@tool(scope="write", destructive=True)
async def update_memory(key: str, content: str, reason: str | None = None) -> dict[str, Any]:
    """Replace a memory's content (re-embedded); the old text stays in its audit history."""
    call = current()
    memory = await call.run(
        call.engine.memories.update, key, content, actor=call.actor, reason=reason
    )
    return {"key": memory.key, "status": "updated", "updated_at": memory.public()["updated_at"]}


@tool(scope="write", destructive=True)
async def forget(
    key: str | None = None,
    confirm: bool = False,
    reason: str | None = None,
    query: str | None = None,
    projects: list[str] | None = None,
) -> dict[str, Any]:
    """Delete a memory. Without confirm=true it only previews what would be deleted; a query
    instead of a key only returns candidates to confirm by key."""
    if (target := shape.key_or_query(key, query)) is None:
        return await candidates("forget", query, projects)
    call = current()
    done = await call.run(
        call.engine.lifecycle.forget, target, confirm=confirm, actor=call.actor, reason=reason
    )
    return shape.forget(done)
