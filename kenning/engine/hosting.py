"""What every front door keeps while it serves: the shared engine, the settings, when it started,
and a bounded way to call the (synchronous) engine from async code.

The engine blocks on Valkey and the model, so a door never calls it on its event loop: ``Host.run``
runs the call in a worker thread, at most ``threads`` at once (below the Valkey pool size, so a
burst of calls queues instead of failing). Each door subclasses ``Host`` with what is its
own (metrics, login books).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread

from kenning.core.settings import Settings
from kenning.engine import Engine

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Host:
    engine: Engine
    settings: Settings
    threads: int = 8
    started_at: float = field(default_factory=time.time)
    limiter: anyio.CapacityLimiter = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "limiter", anyio.CapacityLimiter(self.threads))

    def uptime(self) -> float:
        return max(0.0, time.time() - self.started_at)

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker thread; its errors propagate unchanged."""
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), limiter=self.limiter
        )
