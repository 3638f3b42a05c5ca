"""Lifecycle tools: deprioritise, archive, reinstate (by key, or by query -> candidates),
project-wide actions, suppression, and "why did you mention X"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from kenning.memory.lifecycle import Lifecycle, ProjectDone, ProjectPreview
from mcp_server import shape
from mcp_server.params import Project, Query
from mcp_server.registry import tool
from mcp_server.runtime import current


async def candidates(action: str, query: str | None, projects: list[str] | None) -> dict[str, Any]:
    """What a query names for ``action`` (a query only ever returns candidates)."""
    assert query is not None  # for the type checker: shape.key_or_query returned no key
    call = current()
    return shape.candidates(
        await call.run(call.engine.lifecycle.candidates, action, query, projects=projects)
    )


@tool(scope="write", destructive=True)
async def deprioritise(
    key: str | None = None,
    query: Query | None = None,
    reason: str | None = None,
    reinstate_hints: list[str] | None = None,
    projects: list[Project] | None = None,
) -> dict[str, Any]:
    """Lower a memory's weight to 0.2 (hidden unless include_deprioritised) with a reason.
    reinstate_hints: phrases that flag it as a reinstate candidate when a recall names them. A
    query only returns candidates."""
    if (target := shape.key_or_query(key, query)) is None:
        return await candidates("deprioritise", query, projects)
    call = current()
    return shape.transition(
        await call.run(
            call.engine.lifecycle.deprioritise,
            target,
            reason=reason,
            actor=call.actor,
            reinstate_hints=reinstate_hints,
        )
    )


@tool(scope="write", destructive=True)
async def archive(
    key: str | None = None,
    query: Query | None = None,
    reason: str | None = None,
    projects: list[Project] | None = None,
) -> dict[str, Any]:
    """Exclude a memory from recall (reversible with reinstate), with a reason. A query only returns
    candidates to confirm by key."""
    if (target := shape.key_or_query(key, query)) is None:
        return await candidates("archive", query, projects)
    call = current()
    return shape.transition(
        await call.run(call.engine.lifecycle.archive, target, reason=reason, actor=call.actor)
    )


@tool(scope="write")
async def reinstate(
    key: str | None = None,
    query: Query | None = None,
    reason: str | None = None,
    projects: list[Project] | None = None,
) -> dict[str, Any]:
    """Make a deprioritised or archived memory active again, with a reason. A
    query only returns candidates."""
    if (target := shape.key_or_query(key, query)) is None:
        return await candidates("reinstate", query, projects)
    call = current()
    return shape.transition(
        await call.run(call.engine.lifecycle.reinstate, target, reason=reason, actor=call.actor)
    )


async def _project_wide(
    action: Callable[[Lifecycle], Callable[..., ProjectPreview | ProjectDone]],
    project: str,
    reason: str | None,
    confirm: bool,
) -> dict[str, Any]:
    """One of the lifecycle's project-wide actions, run for the calling token
    and shaped for the agent."""
    call = current()
    done = await call.run(
        action(call.engine.lifecycle), project, confirm=confirm, reason=reason, actor=call.actor
    )
    return shape.project(done)


@tool(scope="write", destructive=True)
async def deprioritise_project(
    project: Project, reason: str | None = None, confirm: bool = False
) -> dict[str, Any]:
    """Deprioritise every active memory of a project. Without confirm=true:
    a count and a sample only."""
    return await _project_wide(
        lambda lifecycle: lifecycle.deprioritise_project, project, reason, confirm
    )


@tool(scope="write")
async def reinstate_project(
    project: Project, reason: str | None = None, confirm: bool = False
) -> dict[str, Any]:
    """Reactivate every deprioritised memory of a project. Without confirm=true:
    a count and a sample only."""
    return await _project_wide(
        lambda lifecycle: lifecycle.reinstate_project, project, reason, confirm
    )


@tool(scope="admin", destructive=True)
async def delete_project(
    project: Project, reason: str | None = None, confirm: bool = False
) -> dict[str, Any]:
    """Forget every memory of a project (snapshots kept in the audit log).
    Without confirm=true: a preview."""
    return await _project_wide(lambda lifecycle: lifecycle.delete_project, project, reason, confirm)


@tool(scope="write", destructive=True)
async def suppress_topic(term: str, reason: str, preview: bool = False) -> dict[str, Any]:
    """Hide every memory containing a word or phrase (whole words) from recall. preview=true: only
    count what it would hide, with a sample."""
    call = current()
    return shape.suppression(
        await call.run(
            call.engine.suppressions.suppress, term, reason, preview=preview, actor=call.actor
        )
    )


@tool(scope="write")
async def unsuppress_topic(term: str, reason: str | None = None) -> dict[str, Any]:
    """Lift a suppression."""
    call = current()
    return (
        await call.run(call.engine.suppressions.unsuppress, term, reason=reason, actor=call.actor)
    ).public()


@tool(scope="read")
async def list_suppressions() -> dict[str, Any]:
    """Suppressed terms with reason, who, when, and how many memories each hides now."""
    call = current()
    return {
        "suppressions": [
            s.public() for s in await call.run(call.engine.suppressions.list_suppressions)
        ]
    }


@tool(scope="read")
async def why_did_you_mention(
    topic: str, limit: Annotated[int, Field(ge=1, le=200)] = 10
) -> dict[str, Any]:
    """Which past recalls surfaced the memory a topic (words, a key, or a
    description) names, and when."""
    call = current()
    return (await call.run(call.engine.recall_log.why_did_you_mention, topic, limit=limit)).public()
