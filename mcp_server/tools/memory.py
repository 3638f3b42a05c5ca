"""Core memory tools: remember, recall (full, index, detail), retag, update_memory, forget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult
from mcp_server import shape
from mcp_server.params import (
    Content,
    Namespace,
    Project,
    Query,
    Source,
    Tags,
    Title,
    TopK,
    alias_of,
    plain,
)
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


def scope(project: Project | list[Project] | None, projects: list[str] | None) -> list[str]:
    """``project`` (one name or a list) and the unlisted alias ``projects`` older callers send,
    as one list (validated later)."""
    named = [project] if isinstance(project, str) else list(project or [])
    return named + list(projects or [])


# recall's and recall_index's list-only form of `project`, accepted and no longer listed
OldProjects = Annotated[list[str] | None, alias_of("project")]


@tool(scope="write")
async def remember(
    content: Content,
    namespace: Namespace = "knowledge",
    project: Project | None = None,
    tags: Tags | None = None,
    title: Title | None = None,
    source: Source | None = None,
    event_date: str | None = None,
    valid_from: str | None = None,
    expires_at: str | None = None,
    allow_duplicate: bool = False,
    refresh: bool = False,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Store one self-contained fact with its why; a near-duplicate is refused with its key."""
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
    query: Query,
    namespaces: list[Namespace] | None = None,
    project: Project | list[Project] | None = None,
    top_k: TopK = 5,
    include_deprioritised: bool = False,
    as_of: str | None = None,
    include_superseded: bool = False,
    include_feeds: bool | None = None,
    projects: OldProjects = None,
) -> dict[str, Any]:
    """Memories relevant to a question, best first, full content; graveyard warnings first."""
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
    query: Query,
    namespaces: list[Namespace] | None = None,
    project: Project | list[Project] | None = None,
    top_k: TopK = 10,
    include_deprioritised: bool = False,
    projects: OldProjects = None,
) -> dict[str, Any]:
    """Like recall, but a snippet and a token estimate per hit; read chosen keys with
    recall_detail."""
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
    """Full records of up to 20 memories, in the order given."""
    call = current()
    return {"memories": [m.public() for m in await call.run(call.engine.inspection.records, keys)]}


@tool(scope="write", destructive=True, idempotent=True)  # removing tags is not additive
async def retag(
    key: str,
    add: list[str] | None = None,
    remove: list[str] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Add and/or remove a memory's tags; returns its tags."""
    call = current()
    memory = await call.run(
        call.engine.memories.retag, key, add=add, remove=remove, actor=call.actor, reason=reason
    )
    return {"key": memory.key, "tags": list(memory.tags)}


@tool(scope="write", destructive=True)
async def update_memory(key: str, content: Content, reason: str | None = None) -> dict[str, Any]:
    """Replace a memory's content; the old text stays in its history."""
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
    query: Query | None = None,
    projects: list[Project] | None = None,
) -> dict[str, Any]:
    """Delete a memory: confirm=true deletes, otherwise it previews; a query instead of a key
    returns candidates."""
    if (target := shape.key_or_query(key, query)) is None:
        return await candidates("forget", query, projects)
    call = current()
    done = await call.run(
        call.engine.lifecycle.forget, target, confirm=confirm, actor=call.actor, reason=reason
    )
    return shape.forget(done)
