"""Plain HTTP routes beside /mcp: /healthz (200 only when Valkey, the search module and the model
answer) and /metrics (Prometheus text). Neither needs a token, so neither reveals memory content or
internals: /healthz gives one verdict per check, without the details (addresses, paths, driver errors)
that the authenticated `health` tool and `kenning doctor` show."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_server.metrics import CONTENT_TYPE
from mcp_server.runtime import Runtime

Endpoint = Callable[[Request], Awaitable[Response]]


def healthz(rt: Runtime) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        health = await anyio.to_thread.run_sync(lambda: rt.engine.inspection.health(uptime=rt.uptime()),
                                                limiter=rt.limiter)
        body = health.public()
        body["checks"] = {name: {"ok": check["ok"]} for name, check in body["checks"].items()}
        return JSONResponse(body, status_code=200 if health.ok else 503)
    return endpoint


def metrics(rt: Runtime) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        return Response(rt.metrics.render(), media_type=CONTENT_TYPE)
    return endpoint
