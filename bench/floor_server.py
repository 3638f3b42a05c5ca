"""The floor under MCP recall: a bare Starlette JSON endpoint (uvicorn, no MCP)
making the same engine call.

``python -m bench.floor_server`` serves ``POST /recall`` on ``KENNING_MCP_HOST:KENNING_MCP_PORT``
against the store the environment names, exactly as ``kenning mcp`` would open it (one model load,
the engine call in a worker thread under the same limiter size). What MCP recall costs beyond this
endpoint is the protocol's own work: JSON-RPC framing, the session manager, fastmcp's dispatch,
validation and serialisation.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.recall import RecallRequest

ACTOR = "bench-floor"
THREADS = 16  # mcp_server.runtime.ENGINE_THREADS: the same bound on engine threads


def build(engine: Engine) -> Starlette:
    # made on the first request: it belongs to the event loop
    limiter: list[anyio.CapacityLimiter] = []

    async def recall(request: Request) -> JSONResponse:
        if not limiter:
            limiter.append(anyio.CapacityLimiter(THREADS))
        body: dict[str, Any] = await request.json()
        ask = RecallRequest(
            str(body["query"]),
            projects=body.get("projects"),
            top_k=int(body.get("top_k", 10)),
            actor=ACTOR,
        )
        result = await anyio.to_thread.run_sync(engine.recaller.recall, ask, limiter=limiter[0])
        return JSONResponse(result.public(full=True))  # the body the recall tool returns

    return Starlette(routes=[Route("/recall", recall, methods=["POST"])])


def main() -> None:
    from kenning_cli.services import open_engine

    settings = Settings()
    app = build(open_engine(settings))
    uvicorn.run(
        app, host=settings.mcp_host, port=settings.mcp_port, log_level="warning", access_log=False
    )


if __name__ == "__main__":
    main()
