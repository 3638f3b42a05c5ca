"""Project context tools: set, get, list, update the current state."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mcp_server.params import Offset, Project
from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="write", destructive=True, idempotent=True)  # overwrites fields (old text in the audit)
async def set_project_context(
    name: Annotated[Project, Field(description="project name")],
    description: str | None = None,
    stack: list[str] | None = None,
    conventions: str | None = None,
    state: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Create or change a project's context; omitted fields keep their value."""
    call = current()
    context, status = await call.run(
        call.engine.projects.set,
        name,
        description=description,
        stack=stack,
        conventions=conventions,
        state=state,
        actor=call.actor,
        idempotency_key=idempotency_key,
    )
    return {"status": status, "project": context.public()}


@tool(scope="read")
async def get_project_context(
    name: Annotated[Project, Field(description="project name")],
) -> dict[str, Any]:
    """A project's description, stack, conventions, state and memory counts."""
    call = current()
    return (await call.run(call.engine.projects.describe, name)).public()


@tool(scope="read")
async def list_projects(
    offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=200)] = 50
) -> dict[str, Any]:
    """Projects that have a context, most recently updated first."""
    call = current()
    contexts, total = await call.run(call.engine.projects.all, offset=offset, limit=limit)
    items = [
        {
            "name": c.name,
            "description": c.description[:200],
            "state": c.state[:200],
            "updated_at": c.public()["updated_at"],
        }
        for c in contexts
    ]
    return {"total": total, "offset": offset, "projects": items}


@tool(scope="write", destructive=True, idempotent=True)  # overwrites fields (old text in the audit)
async def update_project_state(
    name: Annotated[Project, Field(description="project name")], state: str
) -> dict[str, Any]:
    """Record where an existing project stands now (replaces its current state)."""
    call = current()
    context, status = await call.run(
        call.engine.projects.update_state, name, state, actor=call.actor
    )
    return {"status": status, "project": context.public()}
