"""Skills: the proposals the skill compiler stored, each with its diff and its rule changes by
risk; approving exactly the sha the person reviewed (then writing it), rejecting with a reason;
the written skills. Approve and reject need the admin role, as the MCP ``approve_skill`` tool's
admin scope does; writing a proposal approved elsewhere needs the editor role, as
``write_skill``'s write scope does."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from web_ui.forms import Done, Submitted, submit
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

STATUSES = ("pending", "approved", "rejected", "written", "stale", "all")
LIST_LIMIT = 50


def gather(engine: Engine, status: str) -> dict[str, Any]:
    # changes come riskiest first
    proposals = [p.public() for p in engine.skills.proposals(limit=LIST_LIMIT)]
    shown = [p for p in proposals if status == "all" or p["status"] == status]
    pending = sum(1 for p in proposals if p["status"] == "pending")
    return {
        "proposals": shown,
        "pending": pending,
        "status": status,
        "statuses": STATUSES,
        "skills": [s.public() for s in engine.skills.all()],
    }


async def _skills(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    status = request.query_params.get("status", "pending")
    if status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}", hint=f"use one of {', '.join(STATUSES)}")
    return render(request, "skills.html", {**await rt.run(gather, rt.engine, status), **extra})


@guard("viewer")
async def skills(request: Request) -> Response:
    return await _skills(request, {})


def approve_and_write(engine: Engine, form: Submitted, actor: str) -> Done:
    """The person approved the sha they read (the form carries it); the skill is written at once
    (refused, and left approved, if the skill moved since the proposal was compiled)."""
    if not form.get("sha"):
        raise InvalidInput(
            "the approval must name the reviewed sha",
            hint="use the Approve button of the proposal you read",
        )
    approved = engine.skills.approve(form.get("id"), form.get("sha"), actor)
    written = engine.skills.write(approved.id, actor=actor)
    changed = {
        "proposal": approved.id,
        "domain": written.domain,
        "sha": written.sha,
        "key": written.key,
        "status": "written",
        "approved_by": actor,
    }
    return Done(
        "skill_write",
        f"skill {written.domain} approved and written",
        changed,
        "/skills?status=written",
    )


def reject_with_reason(engine: Engine, form: Submitted, actor: str) -> Done:
    if not form.get("reason"):
        raise InvalidInput(
            "say why the proposal is rejected", hint="the reason is kept in the audit log"
        )
    rejected = engine.skills.reject(form.get("id"), actor, form.get("reason"))
    changed = {
        "id": rejected.id,
        "domain": rejected.domain,
        "status": rejected.status,
        "reason": form.get("reason"),
    }
    return Done("skill_reject", f"proposal {rejected.id} rejected", changed, "/skills")


def write_approved(engine: Engine, form: Submitted, actor: str) -> Done:
    """Write a proposal already approved elsewhere (an admin's ``approve_skill`` over MCP)."""
    written = engine.skills.write(form.get("id"), actor=actor)
    changed = {
        "proposal": form.get("id"),
        "domain": written.domain,
        "sha": written.sha,
        "key": written.key,
        "status": "written",
    }
    return Done("skill_write", f"skill {written.domain} written", changed, "/skills?status=written")


@guard("admin")
async def approve(request: Request) -> Response:
    return await submit(request, _skills, partial(approve_and_write, runtime(request).engine))


@guard("admin")
async def reject(request: Request) -> Response:
    return await submit(request, _skills, partial(reject_with_reason, runtime(request).engine))


@guard("editor")
async def write(request: Request) -> Response:
    """Writing an approved proposal needs the write scope over MCP
    (``write_skill``): an editor here."""
    return await submit(request, _skills, partial(write_approved, runtime(request).engine))


routes = [
    Route("/skills", skills, methods=["GET"]),
    Route("/skills/approve", approve, methods=["POST"]),
    Route("/skills/reject", reject, methods=["POST"]),
    Route("/skills/write", write, methods=["POST"]),
]
