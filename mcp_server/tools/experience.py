"""Experience tools: record how work went, log abandoned approaches, check the graveyard, summaries."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kenning.experience import Approach, Report
from mcp_server.registry import Registry
from mcp_server.runtime import current

ApproachType = Literal["library", "approach", "tool", "pattern", "service"]


class AbandonedApproach(BaseModel):
    """Something tried and given up."""

    name: str = Field(description="e.g. 'celery', 'polling', 'pandas'")
    type: ApproachType = "approach"
    reason: str = ""

    def approach(self) -> Approach:
        return Approach(name=self.name, type=self.type, reason=self.reason)


def register(tools: Registry) -> None:
    @tools.tool(scope="write", idempotent=True, destructive=True)
    async def record_experience(key: str, effort: int, outcome: Literal["succeeded", "pivoted", "abandoned"],
                                iterations: int = 1, breakthrough: str | None = None,
                                gotchas: list[str] | None = None,
                                abandoned_approaches: list[AbandonedApproach] | None = None) -> dict[str, Any]:
        """Attach how a piece of work went to its memory: effort 1-5 and outcome set its ranking weight;
        abandoned approaches go to the graveyard (effort >= 4 also suppresses their names)."""
        call = current()
        report = Report(effort=effort, outcome=outcome, iterations=iterations, breakthrough=breakthrough,
                        gotchas=tuple(gotchas or ()),
                        abandoned_approaches=tuple(a.approach() for a in abandoned_approaches or ()))
        return await call.run(call.engine.experience.record_experience, key, report, actor=call.actor)

    @tools.tool(scope="write")
    async def log_abandoned(name: str, reason: str, effort: int, type: ApproachType = "approach",
                            project: str | None = None, context: str | None = None) -> dict[str, Any]:
        """Record that an approach was tried and abandoned, and why; later recalls naming it warn first."""
        call = current()
        return await call.run(call.engine.experience.log_abandoned, Approach(name=name, type=type, reason=reason),
                              effort=effort, project=project, context=context, actor=call.actor)

    @tools.tool(scope="read")
    async def warn_if_abandoned(query: str) -> dict[str, Any]:
        """Abandoned approaches a plan or question names (whole words), with reason, effort and memory."""
        call = current()
        return {"warnings": await call.run(call.engine.experience.warn_if_abandoned, query)}

    @tools.tool(scope="read")
    async def get_experience(key: str) -> dict[str, Any]:
        """A memory's experience record (effort, outcome, gotchas, abandoned approaches) and weight."""
        call = current()
        return await call.run(call.engine.experience.get_experience, key)

    @tools.tool(scope="read")
    async def experience_summary(project: str | None = None) -> dict[str, Any]:
        """Average effort, outcomes, most effortful work, the graveyard and top breakthroughs (one project or all)."""
        call = current()
        return await call.run(call.engine.experience.experience_summary, project)
