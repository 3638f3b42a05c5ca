"""Truth-maintenance tools: belief, contradictions, duplicates, history and undo, the briefing
(docs/truth-maintenance.md)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kenning.curation.briefing import MAX_TOKENS, MIN_TOKENS
from mcp_server.params import ContradictionStatus, Decision, Namespace, Project, Query
from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="write")
async def check_contradictions(
    key: str | None = None, project: Project | None = None, query: Query | None = None
) -> dict[str, Any]:
    """Look for contradictions now, for one memory, one project, or what a query finds (give one).
    New ones are recorded (both sides become disputed)."""
    call = current()
    report = await call.run(
        call.engine.contradictions.check,
        key=key,
        project=project,
        query_text=query,
        actor=call.actor,
    )
    return report.public()


@tool(scope="read")
async def list_contradictions(
    status: ContradictionStatus = "open",
    project: Project | None = None,
    key: str | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """Contradiction records, newest first, both sides side by side."""
    call = current()
    return (
        await call.run(
            call.engine.contradictions.board, status=status, project=project, key=key, limit=limit
        )
    ).public()


@tool(scope="write", destructive=True)
async def resolve_contradiction(
    id: str, decision: Decision, note: str | None = None, content: str | None = None
) -> dict[str, Any]:
    """Settle a contradiction. decision: keep_a | keep_b (the other is superseded) | both_valid
    (note required) | not_a_contradiction (never flagged again) | merge (content = the merged
    statement). Resolving it again changes the decision (the previous one is undone)."""
    call = current()
    record = await call.run(
        call.engine.contradictions.resolve, id, decision, note, actor=call.actor, content=content
    )
    return record.public()


@tool(scope="read")
async def find_duplicates(
    namespace: Namespace = "knowledge",
    project: Project | None = None,
    threshold: Annotated[float, Field(ge=0.5, le=1.0)] | None = None,
) -> dict[str, Any]:
    """Clusters of near-duplicate memories (stored vectors, whole namespace),
    with a suggested one to keep."""
    call = current()
    return (
        await call.run(call.engine.duplicates.find, namespace, project=project, threshold=threshold)
    ).public()


@tool(scope="write", destructive=True)
async def merge_duplicates(
    keep: str, others: list[str], reason: str | None = None
) -> dict[str, Any]:
    """Archive `others` as "duplicate of <keep>" and add their tags to `keep`
    (reversible with reinstate)."""
    call = current()
    return (
        await call.run(call.engine.duplicates.merge, keep, others, reason, actor=call.actor)
    ).public()


@tool(scope="read")
async def history(key: str, limit: Annotated[int, Field(ge=1, le=500)] = 100) -> dict[str, Any]:
    """One memory's audit events (the newest `limit`), oldest first: who, what, why, when. Works for
    forgotten keys."""
    call = current()
    return (await call.run(call.engine.history.history, key, limit=limit)).public()


@tool(scope="read")
async def audit_log(
    actor: str | None = None,
    action: str | None = None,
    since: str | None = None,
    before: str | None = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """Recent mutations, newest first, filtered by actor, action and time (ISO).
    before: `next` of a page."""
    call = current()
    return (
        await call.run(
            call.engine.history.audit_log,
            actor=actor,
            action=action,
            since=since,
            before=before,
            limit=limit,
        )
    ).public()


@tool(scope="write")
async def restore_forgotten(key: str, reason: str | None = None) -> dict[str, Any]:
    """Bring back a forgotten memory (same key, re-embedded) within the retention window."""
    call = current()
    memory = await call.run(
        call.engine.history.restore_forgotten, key, actor=call.actor, reason=reason
    )
    return {"status": "restored", "memory": memory.public()}


@tool(scope="write", idempotent=True)
async def verify_memory(key: str, note: str | None = None) -> dict[str, Any]:
    """Mark a memory verified (checked to be true), with a note; audited.
    Refused while it is disputed."""
    call = current()
    memory = await call.run(call.engine.belief.verify, key, note, actor=call.actor)
    return {"key": memory.key, "trust": memory.trust}


@tool(scope="read")
async def briefing(
    project: Project,
    include_feeds: bool | None = None,
    budget_tokens: Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS)] | None = None,
) -> dict[str, Any]:
    """Session-start digest of a project: context, open contradictions (ask the person),
    graveyard, recent knowledge, stale and hidden memories."""
    call = current()
    brief = await call.run(
        call.engine.briefing.briefing,
        project,
        include_feeds=include_feeds,
        budget_tokens=budget_tokens,
    )
    return brief.public()
