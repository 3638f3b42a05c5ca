"""The MCP server as a service of `kenning up` (uvicorn in a thread) and as
`kenning mcp` (foreground)."""

from __future__ import annotations

import importlib.util
import logging
import socket
import sys
import time
from collections.abc import Callable

from kenning.core.clock import Clock
from kenning.core.settings import Settings
from kenning.engine import Engine
from mcp_server.app import build_app
from mcp_server.metrics import Metrics
from serving.threaded import Listing, ThreadedServer

log = logging.getLogger(__name__)
# uvicorn takes these when they are importable; without them it serves with asyncio's loop and h11's
# parser, which cost an MCP call up to about 1 ms more on a busy box (paired A/B runs: -0.3 to +1.1
# ms, bench/FINDINGS.md, issue 21). Both are dependencies; an environment installed before they were
# is the usual reason one is missing.
ACCELERATORS = ("httptools",) + (() if sys.platform == "win32" else ("uvloop",))


def missing_accelerators(
    find: Callable[[str], object | None] = importlib.util.find_spec,
) -> list[str]:
    """The accelerators uvicorn would use that this environment lacks."""
    return [name for name in ACCELERATORS if find(name) is None]


class McpService(ThreadedServer):
    """Runs the MCP server beside the engine: ``start()`` returns once it listens."""

    name = "mcp server"

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        *,
        metrics: Metrics | None = None,
        auth_clock: Callable[[], float] = time.monotonic,
        oauth_clock: Clock | None = None,
        sockets: list[socket.socket] | None = None,
    ) -> None:
        self.settings = settings
        self.app, self.runtime = build_app(
            engine, settings, metrics=metrics, auth_clock=auth_clock, oauth_clock=oauth_clock
        )
        engine.llm.observers.append(self.runtime.metrics.observe_llm)
        engine.recaller.expander.observers.append(self.runtime.metrics.observe_expansion)
        engine.store.recall_writes.observers.append(self.runtime.metrics.observe_write_failure)
        if missing := missing_accelerators():
            log.warning(
                "%s not installed: uvicorn falls back to asyncio's loop or h11's parser, up to "
                "about 1 ms more per MCP call; reinstall Kenning's "
                "dependencies (pip install -e .)",
                " and ".join(missing),
            )
        listing = Listing("the MCP server", "KENNING_MCP_PORT", "/mcp", "kenning-mcp", log)
        super().__init__(
            self.app,
            listing,
            host=settings.mcp_host,
            port=settings.mcp_port,
            log_level=settings.log_level,
            keep_alive=settings.http_keep_alive_seconds,
            header_timeout=settings.http_header_timeout_seconds,
            lifespan="on",
            log_config=None,
            sockets=sockets,
        )  # its records go to the process's one handler
