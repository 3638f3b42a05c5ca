"""The LLM enrichment queue: waiting, in flight, delayed (the LLM was away) and parked jobs, each
parked one with the error that parked it; an editor requeues or drops a parked job (the same
engine calls as `kenning queue requeue|drop`, audited)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from web_ui.forms import attempt, confirmed, form_of, login
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

ACTIONS = ("requeue", "drop")


def gather(engine: Engine) -> dict[str, Any]:
    return {
        "status": engine.enrichment.status().public(),
        "parked": [asdict(job) for job in engine.enrichment.parked(limit=200)],
    }


async def _queue(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    return render(request, "queue.html", {**await rt.run(gather, rt.engine), **extra})


@guard("viewer")
async def queue(request: Request) -> Response:
    return await _queue(request, {})


@guard("editor")
async def act(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def done() -> Response:
        action, parked = fields.get("do", ""), fields.get("id", "")
        if action not in ACTIONS:
            raise InvalidInput(f"unknown action {action!r}", hint="requeue or drop")
        actor = login(request).actor
        if action == "requeue":
            new = await rt.run(rt.engine.enrichment.requeue, parked, actor=actor)
            changed: dict[str, Any] = {"parked": parked, "requeued_as": new}
        else:
            await rt.run(rt.engine.enrichment.drop, parked, actor=actor)
            changed = {"parked": parked, "dropped": True}
        return await confirmed(
            request,
            action=f"queue_{action}",
            title=f"{action}: {parked}",
            changed=changed,
            back="/queue",
        )

    return await attempt(request, done, _queue)


routes = [Route("/queue", queue, methods=["GET"]), Route("/queue", act, methods=["POST"])]
