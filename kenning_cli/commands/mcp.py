"""`kenning mcp`: the MCP server alone, in the foreground, against a running Valkey
(``KENNING_MCP_WORKERS`` > 1: that many processes on one socket, ``kenning_cli.workers``)."""

from __future__ import annotations

import argparse
import os
import socket
import sys

from kenning.core.settings import Settings
from kenning_cli.registry import command


@command("mcp", "Run the MCP server alone in the foreground (Valkey must be running).")
def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    from mcp_server.auth import check_exposure

    check_exposure(settings)  # before the model loads: a refused exposure fails fast
    if settings.mcp_workers > 1:
        if not settings.mcp_stateless:
            print(
                "KENNING_MCP_WORKERS > 1 needs KENNING_MCP_STATELESS=true: a stateful MCP "
                "session lives in one process",
                file=sys.stderr,
            )
            return 2
        from kenning_cli.workers import serve_forked

        return serve_forked(settings, lambda sock: _serve(settings, [sock]))
    return _serve(settings, None)


def _serve(settings: Settings, sockets: list[socket.socket] | None) -> int:
    from kenning_cli.services import instrumented_embedder, open_engine, run_alone
    from mcp_server.service import McpService

    metrics, embedder = instrumented_embedder(settings)
    service = McpService(
        open_engine(settings, embedder), settings, metrics=metrics, sockets=sockets
    )
    # a worker of several names itself: its lines, logs and `ps` agree on which one it is
    worker = "" if sockets is None else f" (worker {os.getpid()})"
    return run_alone(service, f"MCP server on {service.url}{worker}")
