"""`kenning mcp`: the MCP server alone, in the foreground, against a running Valkey."""

from __future__ import annotations

import argparse

from kenning.core.settings import Settings
from kenning_cli.registry import command


@command("mcp", "Run the MCP server alone in the foreground (Valkey must be running).")
def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import instrumented_embedder, open_engine, run_alone
    from mcp_server.auth import check_exposure
    from mcp_server.service import McpService

    check_exposure(settings)  # before the model loads: a refused exposure fails fast
    metrics, embedder = instrumented_embedder(settings)
    service = McpService(open_engine(settings, embedder), settings, metrics=metrics)
    return run_alone(service, f"MCP server on {service.url}")
