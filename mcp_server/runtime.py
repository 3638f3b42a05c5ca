"""What a tool needs at call time: the shared engine (from the lifespan) and who is calling.

Tools are ``async``; the engine is synchronous, so every engine call goes through ``Call.run``,
which runs it in a worker thread and keeps the event loop free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from fastmcp.server.dependencies import get_access_token, get_context

from kenning.access.tokens import SCOPES
from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.engine.hosting import Host
from mcp_server.auth import ACTOR_CLAIM, UNVERIFIED
from mcp_server.errors import translate
from mcp_server.metrics import Metrics

P = ParamSpec("P")
T = TypeVar("T")
LIFESPAN_KEY = "kenning"
LOCAL_ACTOR = "local"
# below the Valkey pool size (32), so a burst of calls queues instead of failing
ENGINE_THREADS = 16


@dataclass(frozen=True, kw_only=True)
class Runtime(Host):
    """Built once per server and yielded by its lifespan; shared by every request."""

    metrics: Metrics
    threads: int = ENGINE_THREADS


@dataclass(frozen=True)
class Caller:
    """The authenticated identity: ``actor`` is the token name and goes on every audit event.

    ``verified`` is False for a token let through during a Valkey outage (``mcp_server.auth``): it
    holds no scopes and may run nothing.
    """

    actor: str
    scopes: frozenset[str]
    verified: bool = True


def caller(settings: Settings) -> Caller:
    """Who is calling. Without auth (loopback only) the caller is the
    local user with every scope."""
    token = get_access_token()
    if token is not None:
        verified = token.claims.get(UNVERIFIED) is not True
        actor = str(token.claims.get(ACTOR_CLAIM) or token.client_id)
        return Caller(
            actor=actor,
            # an OAuth grant's profile:NAME rides in its scopes; it grants nothing
            scopes=frozenset(s for s in token.scopes if s in SCOPES) if verified else frozenset(),
            verified=verified,
        )
    if not settings.mcp_auth:
        return Caller(actor=LOCAL_ACTOR, scopes=frozenset(SCOPES))
    return Caller(actor="anonymous", scopes=frozenset())


def runtime() -> Runtime:
    value = get_context().lifespan_context.get(LIFESPAN_KEY)
    if not isinstance(value, Runtime):  # a server built without build_server's lifespan
        raise RuntimeError("the Kenning runtime is missing from the server lifespan")
    return value


@dataclass(frozen=True)
class Call:
    """One tool call: the engine, the caller, and a way to run engine code off the event loop."""

    runtime: Runtime
    caller: Caller

    @property
    def engine(self) -> Engine:
        return self.runtime.engine

    @property
    def actor(self) -> str:
        return self.caller.actor

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker thread (the engine blocks on Valkey and the model).

        Engine errors come back already translated (``mcp_server.errors.translate``).
        """
        try:
            return await self.runtime.run(fn, *args, **kwargs)
        except KenningError as exc:
            raise translate(exc, fn.__name__) from exc


def current() -> Call:
    """The call in progress (only inside a tool)."""
    rt = runtime()
    return Call(runtime=rt, caller=caller(rt.settings))
