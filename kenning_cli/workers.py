"""Several processes serving one door (``KENNING_MCP_WORKERS``): a pre-fork on one listening socket.

The parent binds the socket and forks the workers before it loads anything (no model, no threads,
no Valkey connection crosses the fork); each worker loads the model and opens the engine once and
serves the shared socket, the kernel handing each connection to one of them. The parent waits: a
SIGINT/SIGTERM is passed to every worker; a worker that exits by itself stops the others and the
parent exits non-zero (no silent half-capacity server).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from types import FrameType

from kenning.core.settings import Settings
from kenning_cli.logs import announce

log = logging.getLogger(__name__)
STOP_TIMEOUT = 20.0


def listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve_forked(settings: Settings, serve: Callable[[socket.socket], int]) -> int:
    """``settings.mcp_workers`` processes running ``serve(sock)``; blocks until stopped."""
    sock = listening_socket(settings.mcp_host, settings.mcp_port)
    workers: list[int] = []
    for _ in range(settings.mcp_workers):
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                code = serve(sock)
            except BaseException:
                log.exception("an MCP worker process failed")
            finally:
                os._exit(code)
        workers.append(pid)
    sock.close()
    announce(
        f"MCP server on port {settings.mcp_port}: {len(workers)} worker processes "
        f"({', '.join(map(str, workers))}); Ctrl-C stops them"
    )
    return _supervise(workers)


def _supervise(workers: list[int]) -> int:
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handle)
    code = 0
    running = set(workers)
    while not stop.wait(0.5):
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid in running:
            running.discard(pid)
            log.error("MCP worker %s exited by itself; stopping the others", pid)
            code = 1
            break
    for pid in running:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while running and time.monotonic() < deadline:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        running.discard(pid)
        if not pid:
            time.sleep(0.1)
    for pid in running:
        _signal(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return code


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
