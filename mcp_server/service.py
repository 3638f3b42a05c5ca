"""The MCP server as a service of `kenning up` (uvicorn in a thread) and as `kenning mcp` (foreground)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from kenning.clock import Clock
from kenning.engine import Engine
from kenning.settings import Settings
from kenning_cli.threaded import Listing, ThreadedServer
from mcp_server.app import build_app
from mcp_server.metrics import Metrics

log = logging.getLogger(__name__)


class McpService(ThreadedServer):
    """Runs the MCP server beside the engine: ``start()`` returns once it listens."""

    name = "mcp server"

    def __init__(self, engine: Engine, settings: Settings, *, metrics: Metrics | None = None,
                 auth_clock: Callable[[], float] = time.monotonic, oauth_clock: Clock | None = None) -> None:
        self.settings = settings
        self.app, self.runtime = build_app(engine, settings, metrics=metrics, auth_clock=auth_clock,
                                           oauth_clock=oauth_clock)
        engine.llm.observers.append(self.runtime.metrics.observe_llm)
        engine.recaller.expander.observers.append(self.runtime.metrics.observe_expansion)
        engine.store.recall_writes.observers.append(self.runtime.metrics.observe_write_failure)
        listing = Listing("the MCP server", "KENNING_MCP_PORT", "/mcp", "kenning-mcp", log)
        super().__init__(self.app, listing, host=settings.mcp_host, port=settings.mcp_port,
                         log_level=settings.log_level, lifespan="on",
                         log_config=None)  # its records go to the process's one handler
