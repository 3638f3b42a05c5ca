"""The instruction block sent on connect: served verbatim, and every example
in it is a valid tool call."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_server.app import INSTRUCTIONS
from tests.mcp_server.calls import problems
from tests.mcp_server.conftest import McpHarness, probe

SERVER, REGISTRY = probe()


def example_calls(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"Example: (.+)$", text, flags=re.MULTILINE)]


async def test_every_example_validates_against_the_tool_schemas() -> None:
    text = Path(INSTRUCTIONS).read_text(encoding="utf-8")
    calls = example_calls(text)
    assert len(calls) >= 5
    schemas = {tool.name: tool.parameters for tool in await SERVER.list_tools()}
    for call in calls:
        assert problems(call, schemas) == [], call
    named = {call.split("(", 1)[0] for call in calls}
    assert {
        "briefing",
        "recall",
        "warn_if_abandoned",
        "remember",
        "record_experience",
        "find_skills",
    } <= named


def test_the_instructions_cover_the_required_behaviours() -> None:
    text = Path(INSTRUCTIONS).read_text(encoding="utf-8").lower()
    for phrase in (
        "briefing",
        "recall first",
        "abandoned",
        "remember proactively",
        "project and tags",
        "record what you did",
        "never store secrets",
    ):
        assert phrase in text, phrase
    assert len(text) < 1_600  # it costs the agent's context on every connect (docs/mcp-tools.md)


async def test_the_server_sends_the_instructions_on_connect(mcp: McpHarness) -> None:
    async with mcp.client("read") as client:
        instructions = client.instructions  # era-neutral: initialize or server/discover
    assert instructions == Path(INSTRUCTIONS).read_text(encoding="utf-8")
