"""FastMCP with a fixed tool table, and its telemetry mode (issue 21: no per-call
work that can be done once).

On every ``tools/call`` FastMCP resolves the tool by name through its provider chain, the session
transforms, visibility and the tool's component-level auth (~0.1 ms of the server's ~1 ms per call,
bench/FINDINGS.md "MCP over HTTP against its floor"). Kenning registers every tool at start-up and
never hides, renames or guards one per component or per session (a token's scope and the
connection's tool profile are ``ScopeGuard``'s, decided per request), so the answer for a name
never changes: ``FixedToolsMCP`` asks FastMCP once per
name and keeps the tool. Anything that could change the answer (a tool, provider or transform added,
components enabled or disabled) empties the table; a tool with its own ``auth`` check, a versioned
or hashed look-up always goes to FastMCP.
"""

from __future__ import annotations

import os
from typing import Any

import fastmcp
from fastmcp import FastMCP
from fastmcp.server.providers.base import hashed_lookup_target
from fastmcp.tools.base import Tool

TELEMETRY_ENV = "FASTMCP_TELEMETRY_MODE"


class FixedToolsMCP(FastMCP[Any]):
    """``FastMCP`` whose ``get_tool(name)`` answers from a table filled on
    first use (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._resolved: dict[str, Tool] = {}
        super().__init__(*args, **kwargs)

    async def get_tool(self, name: str, version: Any = None) -> Tool | None:
        if version is not None or hashed_lookup_target(self) is not None:
            return await super().get_tool(name, version)
        found = self._resolved.get(name)
        if found is None:
            found = await super().get_tool(name)
            if found is not None and found.auth is None:
                self._resolved[name] = found
        return found

    def add_tool(self, tool: Any) -> Tool:
        self._resolved.clear()
        return super().add_tool(tool)

    def add_provider(self, *args: Any, **kwargs: Any) -> None:
        self._resolved.clear()
        super().add_provider(*args, **kwargs)

    def add_transform(self, *args: Any, **kwargs: Any) -> None:
        self._resolved.clear()
        super().add_transform(*args, **kwargs)

    def enable(self, *args: Any, **kwargs: Any) -> Any:
        self._resolved.clear()
        return super().enable(*args, **kwargs)

    def disable(self, *args: Any, **kwargs: Any) -> Any:
        self._resolved.clear()
        return super().disable(*args, **kwargs)


def set_telemetry(tracing: bool) -> None:
    """FastMCP's OpenTelemetry spans: off unless ``tracing`` (KENNING_MCP_TRACING) or the
    operator set FASTMCP_TELEMETRY_MODE themselves. Kenning ships no OpenTelemetry SDK, so
    without one the spans are no-ops that still cost their attribute building on every call; with
    ``tracing`` FastMCP's default (``native``) applies and an SDK the
    operator installs receives them."""
    if TELEMETRY_ENV in os.environ:
        return  # the operator's explicit choice, read by fastmcp's own settings
    fastmcp.settings.telemetry_mode = "native" if tracing else "off"
