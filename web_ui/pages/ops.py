"""/healthz (200 only when Valkey, the search module and the model answer; one verdict per check
and no details, since it needs no login) and /metrics (Prometheus text)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from web_ui.metrics import CONTENT_TYPE
from web_ui.runtime import runtime


async def healthz(request: Request) -> Response:
    rt = runtime(request)
    health = await rt.run(rt.engine.inspection.health, uptime=rt.uptime())
    body = health.public()
    body["checks"] = {name: {"ok": check["ok"]} for name, check in body["checks"].items()}
    return JSONResponse(body, status_code=200 if health.ok else 503)


async def metrics(request: Request) -> Response:
    return Response(runtime(request).metrics.render(), media_type=CONTENT_TYPE)


routes = [Route("/healthz", healthz, methods=["GET"]), Route("/metrics", metrics, methods=["GET"])]
