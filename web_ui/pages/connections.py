"""Connections (admin only): who is connected over OAuth -- the clients that registered and the
grants people gave them, with when each was last used -- and revoking a client or one grant, with
a reason; every token it holds stops at once (kenning.access.connections, the engine half that
`kenning oauth` shares)."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.access.connections import Connections
from kenning.core.errors import InvalidInput
from web_ui.forms import Done, Submitted, submit
from web_ui.guard import guard
from web_ui.runtime import Runtime, runtime
from web_ui.views import render

ACTIONS = {"revoke-client": "oauth_client_revoke", "revoke-grant": "oauth_grant_revoke"}


def connections_of(rt: Runtime) -> Connections:
    return Connections.build(rt.engine.store, rt.engine.ctx.clock, rt.logins.accounts, rt.settings)


async def _connections(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    listed = await rt.run(connections_of(rt).listing)
    return render(
        request,
        "connections.html",
        {**listed.public(), "oauth_enabled": rt.settings.oauth, **extra},
    )


@guard("admin")
async def connections(request: Request) -> Response:
    return await _connections(request, {})


def revoke(book: Connections, form: Submitted, actor: str) -> Done:
    """Revoke what ``do`` names; the engine checks the reason and that it exists before writing."""
    do, client_id, reason = form.get("do"), form.get("client_id"), form.get("reason")
    if do == "revoke-client":
        client = book.revoke_client(client_id, actor=actor, reason=reason)
        changed = {"client_id": client.client_id, "name": client.name}
        return Done(ACTIONS[do], f"revoked the client {client.name}", changed, "/connections")
    if do == "revoke-grant":
        grant = book.revoke_grant(client_id, form.get("username"), actor=actor, reason=reason)
        changed = {"client_id": grant.client_id, "username": grant.username}
        title = f"revoked {grant.username}'s grant to {grant.client_name}"
        return Done(ACTIONS[do], title, changed, "/connections")
    raise InvalidInput(f"unknown action {do!r}", hint=f"use one of {', '.join(ACTIONS)}")


@guard("admin")
async def connection_action(request: Request) -> Response:
    return await submit(request, _connections, partial(revoke, connections_of(runtime(request))))


routes = [
    Route("/connections", connections, methods=["GET"]),
    Route("/connections", connection_action, methods=["POST"]),
]
