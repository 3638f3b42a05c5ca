"""What a page needs at request time: the engine, the settings, the login books and a way off the loop.

The engine is synchronous (Valkey, the model): every engine call goes through ``Runtime.run``, which
runs it in a worker thread under a capacity limiter, as the MCP server's ``Call.run`` does.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

from kenning.engine import Engine
from kenning.settings import Settings
from web_ui.metrics import Metrics
from web_ui.sessions import SessionBook

P = ParamSpec("P")
T = TypeVar("T")
ENGINE_THREADS = 8  # below the Valkey pool size, shared with the other doors of `kenning up`


@dataclass(frozen=True)
class Runtime:
    """Built once by ``build_app`` and kept on ``app.state.runtime``."""

    engine: Engine
    settings: Settings
    metrics: Metrics
    logins: SessionBook
    started_at: float = field(default_factory=time.time)
    limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(ENGINE_THREADS))

    def uptime(self) -> float:
        return max(0.0, time.time() - self.started_at)

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker thread; engine errors propagate to ``web_ui.errors``."""
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=self.limiter)


def runtime(request: Request) -> Runtime:
    value = request.app.state.runtime
    if not isinstance(value, Runtime):  # an app built without build_app
        raise RuntimeError("the dashboard runtime is missing; build the app with web_ui.app.build_app")
    return value
