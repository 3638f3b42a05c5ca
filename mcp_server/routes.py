"""Plain HTTP routes beside /mcp: /healthz (200 only when Valkey, the search module and the model
answer) and /metrics (Prometheus text). Neither needs a token, so neither reveals memory content
or internals: /healthz gives one verdict per check, without the details (addresses, paths, driver
errors) that the authenticated `health` tool and `kenning doctor` show."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_server.metrics import CONTENT_TYPE
from mcp_server.runtime import Runtime

Endpoint = Callable[[Request], Awaitable[Response]]
HEALTH_THREADS = 2  # polls while a hung check still runs wait for a slot, within their own deadline


def healthz(rt: Runtime) -> Endpoint:
    """The checks run in threads of their own (a hung Valkey must not hold the tools' threads)
    and the answer comes within ``KENNING_HEALTH_TIMEOUT_SECONDS``: 503 with the reason when they
    have not finished (a check left running ends at the client's socket timeout)."""
    # made on the first request: it belongs to the event loop
    limiter: list[anyio.CapacityLimiter] = []

    async def endpoint(request: Request) -> Response:
        if not limiter:
            limiter.append(anyio.CapacityLimiter(HEALTH_THREADS))
        deadline = rt.settings.health_timeout_seconds
        with anyio.move_on_after(deadline):
            health = await anyio.to_thread.run_sync(
                lambda: rt.engine.inspection.health(uptime=rt.uptime()),
                limiter=limiter[0],
                abandon_on_cancel=True,
            )
            body = health.public()
            body["checks"] = {name: {"ok": check["ok"]} for name, check in body["checks"].items()}
            return JSONResponse(body, status_code=200 if health.ok else 503)
        return JSONResponse(
            {
                "ok": False,
                "reason": (
                    f"the health checks did not finish within {deadline:g}s (is Valkey hung?)"
                ),
            },
            status_code=503,
        )

    return endpoint


def metrics(rt: Runtime) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        return Response(rt.metrics.render(), media_type=CONTENT_TYPE)

    return endpoint
