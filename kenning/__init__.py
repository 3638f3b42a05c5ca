"""Kenning: the memory engine shared by the MCP server, the dashboard and the feed worker."""

from __future__ import annotations

__version__ = "0.1.0"
