"""What a page needs at request time: the engine, the settings, the login
books and a way off the loop.

The engine is synchronous (Valkey, the model): every engine call goes through ``Runtime.run``, which
runs it in a worker thread under a capacity limiter (``kenning.engine.hosting.Host``,
shared with the MCP server).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from kenning.engine.hosting import Host
from web_ui.metrics import Metrics
from web_ui.sessions import SessionBook

ENGINE_THREADS = 8  # below the Valkey pool size, shared with the other doors of `kenning up`


@dataclass(frozen=True, kw_only=True)
class Runtime(Host):
    """Built once by ``build_app`` and kept on ``app.state.runtime``; ``run`` lets engine errors
    through to ``web_ui.errors``."""

    metrics: Metrics
    logins: SessionBook
    threads: int = ENGINE_THREADS


def runtime(request: Request) -> Runtime:
    value = request.app.state.runtime
    if not isinstance(value, Runtime):  # an app built without build_app
        raise RuntimeError(
            "the dashboard runtime is missing; build the app with web_ui.app.build_app"
        )
    return value
