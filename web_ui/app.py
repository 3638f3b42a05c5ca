"""Building the dashboard: ``build_app(engine, settings, logins)`` is the one factory (config as
an argument, resources passed in); the process opens the engine once and
shares it with every request."""

from __future__ import annotations

import time
from pathlib import Path

from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning.engine import Engine
from web_ui import errors
from web_ui.metrics import Metrics
from web_ui.pages import (
    accounts,
    audit,
    backups,
    connections,
    experience,
    feeds,
    login,
    memories,
    ops,
    overview,
    projects,
    queue,
    search,
    settings_page,
    skills,
    telemetry,
    truth,
)
from web_ui.runtime import Runtime
from web_ui.security import SecurityHeaders
from web_ui.sessions import SessionBook
from web_ui.views import environment

STATIC = Path(__file__).with_name("static")


def routes() -> list[BaseRoute]:
    found: list[BaseRoute] = []
    for module in (
        ops,
        login,
        overview,
        memories,
        search,
        truth,
        experience,
        projects,
        audit,
        backups,
        settings_page,
        skills,
        feeds,
        queue,
        accounts,
        connections,
        telemetry,
    ):
        found += module.routes
    found.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    return found


def build_app(
    engine: Engine, settings: Settings, logins: SessionBook, *, metrics: Metrics | None = None
) -> Starlette:
    """The ASGI app. ``metrics`` defaults to a fresh registry of the dashboard's own."""
    app = Starlette(
        routes=routes(),
        exception_handlers={
            KenningError: errors.engine_error,
            errors.LoginRequired: errors.login_required,
            HTTPException: errors.http_error,
            Exception: errors.crash,
        },
    )
    rt = Runtime(
        engine=engine,
        settings=settings,
        metrics=metrics or Metrics(CollectorRegistry()),
        logins=logins,
    )
    app.state.runtime = rt
    app.state.templates = environment()
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestMetrics, metrics=rt.metrics)
    return app


class RequestMetrics:
    """Outermost: counts every request by the endpoint that served it (never by
    raw path) and its status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            endpoint = scope.get("endpoint")
            label = (
                getattr(endpoint, "__name__", "unmatched") if endpoint is not None else "unmatched"
            )
            self.metrics.requests.labels(label, str(status)).inc()
            self.metrics.latency.labels(label).observe(time.perf_counter() - started)
