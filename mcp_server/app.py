"""Building the server: one FastMCP instance per process, its tools, middleware, auth and routes.

``build_server`` takes an engine that is already open (the process opens it once, at start-up) and
shares it with every request through the lifespan. ``build_app`` wraps it in the Starlette app that
serves Streamable HTTP at /mcp (and, opt-in, SSE at /sse).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from kenning import __version__
from kenning.core.clock import Clock, SystemClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from mcp_server import auth, routes, tools
from mcp_server.errors import ErrorTranslator, quiet_fastmcp_echoes
from mcp_server.fixed import FixedToolsMCP, set_telemetry
from mcp_server.metrics import Metrics, MetricsMiddleware
from mcp_server.oauth import server as oauth_server
from mcp_server.registry import Registry, ScopeGuard
from mcp_server.rpc_errors import RpcWording
from mcp_server.runtime import LIFESPAN_KEY, Runtime
from mcp_server.sessions import SessionCap
from mcp_server.unauthorized import Unauthorized

INSTRUCTIONS = Path(__file__).with_name("instructions.md")
MCP_PATH = "/mcp"


def instructions() -> str:
    return INSTRUCTIONS.read_text(encoding="utf-8")


def build_server(
    engine: Engine,
    settings: Settings,
    *,
    metrics: Metrics | None = None,
    auth_clock: Callable[[], float] = time.monotonic,
    oauth_clock: Clock | None = None,
) -> tuple[FastMCP[Any], Registry, Runtime]:
    """The FastMCP server with every tool module registered; refuses an unsafe exposure.

    ``metrics`` defaults to a fresh registry of this server's own (never the process default);
    ``auth_clock`` times the token cache (monotonic seconds; tests step it); ``oauth_clock`` dates
    OAuth codes and tokens (wall-clock seconds; the system clock unless a
    test passes a ManualClock).
    """
    auth.check_exposure(settings)
    quiet_fastmcp_echoes()
    set_telemetry(settings.mcp_tracing)
    rt = Runtime(engine=engine, settings=settings, metrics=metrics or Metrics(CollectorRegistry()))

    @asynccontextmanager
    async def lifespan(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        yield {LIFESPAN_KEY: rt}

    verifier = _verifier(engine, settings, rt, auth_clock, oauth_clock)
    mcp: FastMCP[Any] = FixedToolsMCP(
        "kenning",
        instructions=instructions(),
        version=__version__,
        auth=verifier,
        lifespan=lifespan,
        mask_error_details=True,
        on_duplicate="error",
    )
    registry_ = Registry(mcp)
    mcp.add_middleware(MetricsMiddleware(rt.metrics, registry_.specs))
    mcp.add_middleware(ErrorTranslator(rt.metrics, registry_.specs))
    mcp.add_middleware(ScopeGuard(registry_, settings))
    tools.register_all(registry_)
    _fixed_schemas(mcp, registry_)
    mcp.custom_route("/healthz", methods=["GET"])(routes.healthz(rt))
    mcp.custom_route("/metrics", methods=["GET"])(routes.metrics(rt))
    return mcp, registry_, rt


def _verifier(
    engine: Engine,
    settings: Settings,
    rt: Runtime,
    auth_clock: Callable[[], float],
    oauth_clock: Clock | None,
) -> Any:
    """Who may call: `kenning token` bearer tokens, and OAuth tokens beside them when OAuth is on
    (docs/remote-access.md); None without auth."""
    verifier: Any = (
        auth.TokenAuth(
            engine.tokens, base_url=settings.mcp_public_url, limiter=rt.limiter, clock=auth_clock
        )
        if settings.mcp_auth
        else None
    )
    if settings.oauth:
        verifier = oauth_server.build(
            engine.ctx.store,
            settings,
            verifier,
            MCP_PATH,
            clock=oauth_clock or SystemClock(),
            limiter=rt.limiter,
        )
    return verifier


def _fixed_schemas(mcp: FastMCP[Any], registry_: Registry) -> None:
    """The SDK's own fast path for Mcp-Param-* header checks (FastMCP 4.1 leaves it unset, so each
    tools/call would first run a full tools/list through the middleware): the schemas are fixed
    once registered. A pinned SDK that changed says so; it never goes slow quietly."""
    if not hasattr(mcp._mcp_server, "get_tool_input_schema"):
        raise RuntimeError(
            "the MCP SDK has no get_tool_input_schema hook; see mcp_server/registry.py"
        )
    mcp._mcp_server.get_tool_input_schema = registry_.input_schema


def build_app(
    engine: Engine,
    settings: Settings,
    *,
    metrics: Metrics | None = None,
    auth_clock: Callable[[], float] = time.monotonic,
    oauth_clock: Clock | None = None,
) -> tuple[Starlette, Runtime]:
    """The ASGI app: Streamable HTTP at /mcp with Host/Origin checks; SSE at /sse when enabled."""
    mcp, _, rt = build_server(
        engine, settings, metrics=metrics, auth_clock=auth_clock, oauth_clock=oauth_clock
    )
    guard: dict[str, Any] = {
        "host_origin_protection": True,
        "allowed_hosts": auth.allowed_hosts(settings),
        "allowed_origins": auth.allowed_origins(settings),
    }
    cap = Middleware(
        SessionCap,
        path=MCP_PATH,
        per_token=settings.mcp_sessions_per_token,
        idle_seconds=settings.mcp_session_idle_seconds,
    )
    app = mcp.http_app(
        path=MCP_PATH,
        transport="http",
        stateless_http=settings.mcp_stateless,
        json_response=settings.mcp_json_response,
        session_idle_timeout=settings.mcp_session_idle_seconds,
        middleware=[] if settings.mcp_stateless else [cap],
        **guard,
    )
    if settings.mcp_sse:
        sse = mcp.http_app(path="/sse", transport="sse", **guard)
        app.router.routes.append(Mount("/", app=sse))
    app.add_middleware(Unauthorized)  # our wording of a 401 (mcp_server/unauthorized.py)
    app.add_middleware(RpcWording)  # and of a refused JSON-RPC message (mcp_server/rpc_errors.py)
    return app, rt
