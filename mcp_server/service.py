"""The MCP server as a service of `kenning up` (uvicorn in a thread) and as `kenning mcp` (foreground)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import uvicorn

from kenning.clock import Clock
from kenning.engine import Engine
from kenning.errors import BackendUnavailable
from kenning.settings import Settings
from mcp_server.app import build_app
from mcp_server.metrics import Metrics

log = logging.getLogger(__name__)
START_TIMEOUT = 30.0


class McpService:
    """Runs the MCP server beside the engine: ``start()`` returns once it listens."""

    name = "mcp server"

    def __init__(self, engine: Engine, settings: Settings, *, metrics: Metrics | None = None,
                 auth_clock: Callable[[], float] = time.monotonic, oauth_clock: Clock | None = None) -> None:
        self.settings = settings
        self.app, self.runtime = build_app(engine, settings, metrics=metrics, auth_clock=auth_clock,
                                           oauth_clock=oauth_clock)
        engine.llm.observers.append(self.runtime.metrics.observe_llm)
        engine.recaller.expander.observers.append(self.runtime.metrics.observe_expansion)
        config = uvicorn.Config(self.app, host=settings.mcp_host, port=settings.mcp_port,
                                log_level=settings.log_level.lower(), lifespan="on", access_log=False,
                                log_config=None)  # its records go to the process's one handler
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="kenning-mcp", daemon=True)

    @property
    def url(self) -> str:
        host = self.settings.mcp_host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.settings.mcp_port}/mcp"  # IPv6 in brackets

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started:
            if not self.thread.is_alive():
                raise BackendUnavailable(f"the MCP server could not start on "
                                         f"{self.settings.mcp_host}:{self.settings.mcp_port}",
                                         hint="is the port in use? set KENNING_MCP_PORT")
            if time.monotonic() > deadline:
                raise BackendUnavailable("the MCP server did not start in time")
            time.sleep(0.05)
        log.info("MCP server listening on %s", self.url)

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.server.should_exit
