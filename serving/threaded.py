"""A front door's ASGI app served by uvicorn in a daemon thread beside the engine (``kenning up``
runs several in one process; ``kenning mcp`` / ``kenning web`` run one in the foreground).

The doors' services (``mcp_server.service.McpService``, ``web_ui.service.WebService``) build their
app and hand it here; this is the one copy of the start / wait-until-listening / stop logic.
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn

from kenning.core.errors import BackendUnavailable
from serving import timeouts

START_TIMEOUT = 30.0


@dataclass(frozen=True)
class Listing:
    """How a served door names itself in messages: ``title`` ("the MCP server"), the port's
    setting, the path its URL ends in, the thread's name and the logger
    that says where it listens."""

    title: str
    port_setting: str
    path: str
    thread: str
    log: logging.Logger


class ThreadedServer:
    """Runs ``app`` on ``host:port`` in a thread: ``start()`` returns once it listens."""

    def __init__(
        self,
        app: Any,
        listing: Listing,
        *,
        host: str,
        port: int,
        log_level: str,
        keep_alive: float,
        header_timeout: float,
        sockets: list[socket.socket] | None = None,
        **config: Any,
    ) -> None:
        """``keep_alive``: seconds an idle connection is kept between requests;
        ``header_timeout``: seconds a connection may take to send a request header
        (serving/timeouts.py)."""
        self.listing = listing
        self.host, self.port = host, port
        self.server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level=log_level.lower(),
                access_log=False,
                timeout_keep_alive=max(1, round(keep_alive)),
                http=timeouts.protocol(header_timeout),
                **config,
            )
        )
        # ``sockets``: an already listening socket shared by worker processes (kenning_cli.workers)
        self.thread = threading.Thread(
            target=functools.partial(self.server.run, sockets=sockets),
            name=listing.thread,
            daemon=True,
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6 in brackets
        return f"http://{host}:{self.port}{self.listing.path}"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started:
            if not self.thread.is_alive():
                raise BackendUnavailable(
                    f"{self.listing.title} could not start on {self.host}:{self.port}",
                    hint=f"is the port in use? set {self.listing.port_setting}",
                )
            if time.monotonic() > deadline:
                raise BackendUnavailable(f"{self.listing.title} did not start in time")
            time.sleep(0.05)
        self.listing.log.info(
            "%s listening on %s", self.listing.title.removeprefix("the "), self.url
        )

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.server.should_exit
