"""`kenning mcp`: the MCP server alone, in the foreground, against a running Valkey."""

from __future__ import annotations

import argparse

from kenning.cli import command, wait_for_signal
from kenning.settings import Settings


@command("mcp", "Run the MCP server alone in the foreground (Valkey must be running).")
def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    from prometheus_client import CollectorRegistry

    from kenning.embedding import load_embedder
    from kenning.services import open_engine
    from mcp_server.auth import check_exposure
    from mcp_server.metrics import Metrics, TimedEmbedder
    from mcp_server.service import McpService

    check_exposure(settings)  # before the model loads: a refused exposure fails fast
    metrics = Metrics(CollectorRegistry())
    engine = open_engine(settings, TimedEmbedder(load_embedder(settings), metrics))
    service = McpService(engine, settings, metrics=metrics)
    service.start()
    print(f"MCP server on {service.url}; Ctrl-C stops it", flush=True)
    try:
        wait_for_signal(service.alive)
    finally:
        service.stop()
    return 0
