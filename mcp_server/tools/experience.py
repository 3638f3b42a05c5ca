"""Experience tools: record how work went, log abandoned approaches, check
the graveyard, summaries."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from kenning.memory.experience import Approach, Report
from mcp_server.params import ApproachType, Effort, Outcome, Project, Query
from mcp_server.registry import tool
from mcp_server.runtime import current


class AbandonedApproach(BaseModel):
    # no docstring: it would be the schema's description of every item

    name: str = Field(description="e.g. celery")
    type: ApproachType = "approach"
    reason: str = ""

    def approach(self) -> Approach:
        return Approach(name=self.name, type=self.type, reason=self.reason)


@tool(scope="write", idempotent=True, destructive=True)
async def record_experience(
    key: str,
    effort: Effort,
    outcome: Outcome,
    iterations: Annotated[int, Field(ge=1, le=10_000)] = 1,
    breakthrough: str | None = None,
    gotchas: list[str] | None = None,
    abandoned_approaches: list[AbandonedApproach] | None = None,
) -> dict[str, Any]:
    """How the work a memory records went: effort and outcome weight its ranking."""
    call = current()
    report = Report(
        effort=effort,
        outcome=outcome,
        iterations=iterations,
        breakthrough=breakthrough,
        gotchas=tuple(gotchas or ()),
        abandoned_approaches=tuple(a.approach() for a in abandoned_approaches or ()),
    )
    return (
        await call.run(call.engine.experience.record_experience, key, report, actor=call.actor)
    ).public()


@tool(scope="write")
async def log_abandoned(
    name: Annotated[str, Field(description="the approach, e.g. celery")],
    reason: str,
    effort: Effort,
    type: ApproachType = "approach",
    project: Project | None = None,
    context: str | None = None,
) -> dict[str, Any]:
    """Record an approach tried and given up, and why; recalls naming it warn first."""
    call = current()
    return (
        await call.run(
            call.engine.experience.log_abandoned,
            Approach(name=name, type=type, reason=reason),
            effort=effort,
            project=project,
            context=context,
            actor=call.actor,
        )
    ).public()


@tool(scope="read")
async def warn_if_abandoned(query: Query) -> dict[str, Any]:
    """Abandoned approaches a plan names, with why."""
    call = current()
    return {
        "warnings": [
            a.public() for a in await call.run(call.engine.experience.warn_if_abandoned, query)
        ]
    }


@tool(scope="read")
async def get_experience(key: str) -> dict[str, Any]:
    """A memory's experience record (effort, outcome, gotchas, abandoned approaches) and weight."""
    call = current()
    return (await call.run(call.engine.experience.get_experience, key)).public()


@tool(scope="read")
async def experience_summary(project: Project | None = None) -> dict[str, Any]:
    """Average effort, outcomes, most effortful work, the graveyard and top
    breakthroughs (one project or all)."""
    call = current()
    return (await call.run(call.engine.experience.experience_summary, project)).public()
