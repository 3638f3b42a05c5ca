"""The fixed tool table (mcp_server/fixed.py): one FastMCP look-up per name, emptied by anything
that could change the answer, never used for a tool with its own auth check;
and the telemetry switch."""

from __future__ import annotations

from typing import Any

import fastmcp
import pytest
from fastmcp.server.auth import require_scopes
from fastmcp.tools.base import Tool

from mcp_server.app import build_server
from mcp_server.fixed import TELEMETRY_ENV, FixedToolsMCP, set_telemetry
from tests.mcp_server.conftest import McpHarness, ok, refused


def _echo(text: str) -> dict[str, str]:
    """Echo the text."""
    return {"text": text}


def _other(n: int) -> dict[str, int]:
    """Twice n."""
    return {"n": 2 * n}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> tuple[FixedToolsMCP, list[str]]:
    """A FixedToolsMCP with one tool; the list records each look-up that went to FastMCP itself."""
    asked: list[str] = []
    original = fastmcp.FastMCP.get_tool

    async def counting(self: Any, name: str, version: Any = None) -> Tool | None:
        asked.append(name)
        return await original(self, name, version)

    monkeypatch.setattr(fastmcp.FastMCP, "get_tool", counting)
    server = FixedToolsMCP("fixed-probe")
    server.add_tool(Tool.from_function(_echo))
    return server, asked


async def test_a_name_is_resolved_by_fastmcp_once(counted: tuple[FixedToolsMCP, list[str]]) -> None:
    server, asked = counted
    first = await server.get_tool("_echo")
    second = await server.get_tool("_echo")
    assert first is not None
    assert first.name == "_echo"
    assert second is first
    assert asked == ["_echo"]  # the second answer came from the table


async def test_unknown_names_are_asked_every_time_and_stay_unknown(
    counted: tuple[FixedToolsMCP, list[str]],
) -> None:
    server, asked = counted
    assert await server.get_tool("_echo") is not None  # control: a known name resolves
    assert await server.get_tool("nope") is None
    assert await server.get_tool("nope") is None
    assert asked == ["_echo", "nope", "nope"]


async def test_adding_a_tool_empties_the_table(counted: tuple[FixedToolsMCP, list[str]]) -> None:
    server, asked = counted
    assert await server.get_tool("_echo") is not None
    server.add_tool(Tool.from_function(_other))
    assert await server.get_tool("_other") is not None
    assert await server.get_tool("_echo") is not None
    assert asked == ["_echo", "_other", "_echo"]  # asked again after the add


async def test_disabling_a_tool_is_seen_at_once(counted: tuple[FixedToolsMCP, list[str]]) -> None:
    server, _ = counted
    assert await server.get_tool("_echo") is not None  # cached
    server.disable(names={"_echo"})
    assert await server.get_tool("_echo") is None
    server.enable(names={"_echo"})
    assert await server.get_tool("_echo") is not None


async def test_a_tool_with_its_own_auth_is_never_kept(
    counted: tuple[FixedToolsMCP, list[str]],
) -> None:
    server, asked = counted
    server.add_tool(Tool.from_function(_other, auth=require_scopes("anything")))
    assert await server.get_tool("_echo") is not None
    assert await server.get_tool("_echo") is not None  # control: a tool without auth is kept
    await server.get_tool("_other")
    await server.get_tool("_other")
    assert asked == ["_echo", "_other", "_other"]


async def test_calls_through_the_real_server_use_the_table(mcp: McpHarness) -> None:
    """The product's server is a FixedToolsMCP; a call works, and an
    unknown tool is still refused."""
    server, _, _ = build_server(mcp.engine, mcp.settings)
    assert isinstance(server, FixedToolsMCP)
    async with mcp.client("write") as client:
        assert (await ok(client, "version"))["name"] == "kenning"
        assert (await ok(client, "version"))["name"] == "kenning"
        assert "unknown tool" in (await refused(client, "no_such_tool")).lower()


def test_telemetry_is_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TELEMETRY_ENV, raising=False)
    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", "native")
    set_telemetry(False)
    off = fastmcp.settings.telemetry_mode
    set_telemetry(True)
    assert (off, fastmcp.settings.telemetry_mode) == ("off", "native")


def test_the_operators_fastmcp_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TELEMETRY_ENV, "propagation_only")
    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", "propagation_only")
    set_telemetry(False)
    assert fastmcp.settings.telemetry_mode == "propagation_only"
