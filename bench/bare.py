"""The MCP comparison point on a port of the harness's choosing: ``python -m bench.bare PORT``.

It serves ``bench.floor_server``'s app (``POST /recall``: the engine call the MCP ``recall`` tool
makes, in a worker thread, nothing else -- no MCP session, JSON-RPC, auth or middleware), started by
``bench.mcp`` in a process of its own beside ``kenning mcp``. What MCP adds beyond this endpoint is
what the MCP SDK, fastmcp and the project's tool layer cost (issue 21). ``bench.transport`` starts
the same app as ``bench.floor_server``.
"""

from __future__ import annotations

import sys

import uvicorn

from bench.floor_server import build as app
from kenning.core.settings import load_settings
from kenning_cli.services import open_engine

PATH = "/recall"
__all__ = ["PATH", "app", "main"]


def main(port: int) -> int:
    engine = open_engine(load_settings())
    uvicorn.run(app(engine), host="127.0.0.1", port=port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
