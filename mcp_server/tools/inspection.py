"""Looking inside: explain_memory, memory_audit, health, version."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from kenning import __version__
from kenning.memory.inspection import AuditRequest
from mcp_server.params import Namespace, Project, State, plain
from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="read")
async def explain_memory(key: str) -> dict[str, Any]:
    """Every field of one memory and its audit history, newest 200 events (who
    changed what, when, why)."""
    call = current()
    return (await call.run(call.engine.inspection.explain, key)).public()


@tool(scope="read")
async def memory_audit(
    namespaces: list[Namespace] | None = None,
    projects: list[Project] | None = None,
    states: list[State] | None = None,
    sort: Literal["created_at", "updated_at", "recall_count", "last_recalled"] = "created_at",
    descending: bool = True,
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """Counts by namespace and state, plus one page of matching memories (snippets). Memories a
    suppression hides are counted, not listed (page.withheld)."""
    call = current()
    request = AuditRequest(
        namespaces=plain(namespaces),
        projects=projects,
        states=plain(states),
        sort=sort,
        descending=descending,
        offset=offset,
        limit=limit,
    )
    return (await call.run(call.engine.inspection.audit, request)).public()


@tool(scope="read")
async def health() -> dict[str, Any]:
    """Valkey, search module, index drift, embedding model, uptime and version."""
    call = current()
    report = await call.run(call.engine.inspection.health, uptime=call.runtime.uptime())
    return report.public()


@tool(scope="read")
async def queue_status() -> dict[str, Any]:
    """The LLM enrichment queue: jobs waiting, in flight and parked (with
    errors), today's token spend."""
    call = current()
    return (await call.run(call.engine.enrichment.status)).public()


@tool(scope="read")
async def version() -> dict[str, Any]:
    """The Kenning server version."""
    return {"name": "kenning", "version": __version__}
