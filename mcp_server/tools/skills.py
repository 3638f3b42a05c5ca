"""Skill tools: compile a domain's lessons into a SKILL.md proposal, approve (admin), write,
find, read, bless (admin) and promote knowledge. Only an approved proposal is ever
written (docs/skills.md)."""

from __future__ import annotations

from typing import Any, Literal

from mcp_server.params import Query, TopK
from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="write")
async def compile_skill(
    domain: str,
    mode: Literal["propose", "preview"] = "propose",
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Compile a domain's (a tag's) reviewed lessons into a SKILL.md proposal: body, diff, rule
    changes by risk, sha. Nothing is written until a person approves it; preview stores nothing."""
    call = current()
    proposal = await call.run(
        call.engine.skills.compile_skill,
        domain,
        mode=mode,
        actor=call.actor,
        idempotency_key=idempotency_key,
    )
    return proposal.public()


@tool(scope="admin", idempotent=True)
async def approve_skill(proposal_id: str, sha: str) -> dict[str, Any]:
    """Approve a reviewed skill proposal, naming the sha you reviewed (admin only)."""
    call = current()
    proposal = await call.run(call.engine.skills.approve, proposal_id, sha, call.actor)
    return {
        "id": proposal.id,
        "domain": proposal.domain,
        "status": proposal.status,
        "sha": proposal.sha,
    }


@tool(scope="write", destructive=True)
async def write_skill(proposal_id: str) -> dict[str, Any]:
    """Write an approved skill proposal as the domain's SKILL.md; refused if it is unapproved or
    the skill moved since."""
    call = current()
    skill = await call.run(call.engine.skills.write, proposal_id, actor=call.actor)
    return {"domain": skill.domain, "key": skill.key, "sha": skill.sha, "status": "written"}


@tool(scope="read")
async def find_skills(query: Query, limit: TopK = 5) -> dict[str, Any]:
    """Written skills relevant to a task; read one by its key with recall_detail."""
    call = current()
    found = await call.run(call.engine.skills.find, query, limit=limit)
    return {"skills": [f.public() for f in found]}


@tool(scope="read")
async def get_skill(domain: str) -> dict[str, Any]:
    """A domain's SKILL.md."""
    call = current()
    return (await call.run(call.engine.skills.get, domain)).public()


@tool(scope="admin", idempotent=True)
async def bless(key: str, reason: str | None = None) -> dict[str, Any]:
    """Vouch for a memory as a person (admin only): its lessons become skill rules without
    more sources."""
    call = current()
    return (await call.run(call.engine.skills.bless, key, actor=call.actor, reason=reason)).public()


@tool(scope="write", idempotent=True)
async def promote_knowledge(key: str, domain: str, reason: str | None = None) -> dict[str, Any]:
    """Make a knowledge memory a Reference rule of the domain's next skill proposal."""
    call = current()
    return (
        await call.run(call.engine.skills.promote, key, domain, actor=call.actor, reason=reason)
    ).public()
