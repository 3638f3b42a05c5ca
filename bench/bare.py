"""The MCP comparison point: a bare Starlette JSON endpoint doing the engine call the MCP ``recall`` tool does.

``python -m bench.bare PORT`` serves ``POST /recall`` (``{"query", "projects", "top_k"}`` -> the recall's
public JSON, as the tool returns it) with uvicorn, in a process of its own started by the harness like
``kenning mcp`` (``bench.mcp``): the same engine, model and Valkey, the recall run in a worker thread as the
MCP tools run it, and nothing else -- no MCP session, JSON-RPC, auth or middleware. What MCP adds beyond
this endpoint is what the MCP SDK, fastmcp and the project's tool layer cost (issue 21).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kenning.engine import Engine
from kenning.recall import RecallRequest
from kenning.settings import load_settings
from kenning_cli.services import open_engine

PATH = "/recall"


def app(engine: Engine) -> Starlette:
    async def recall(request: Request) -> JSONResponse:
        body: dict[str, Any] = await request.json()
        wanted = RecallRequest(query=body["query"], projects=body.get("projects"), top_k=int(body.get("top_k", 5)),
                               actor="bench-bare")
        result = await anyio.to_thread.run_sync(engine.recaller.recall, wanted)
        return JSONResponse(result.public(full=True))

    return Starlette(routes=[Route(PATH, recall, methods=["POST"])])


def main(port: int) -> int:
    engine = open_engine(load_settings())
    uvicorn.run(app(engine), host="127.0.0.1", port=port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
