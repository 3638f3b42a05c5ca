"""Reusable MCP fixtures: the real server over HTTP on a free port, against the test's engine.

    async def test_something(mcp: McpHarness) -> None:
        async with mcp.client("read") as client:          # "read" | "write" | "admin" | None (no token)
            result = await client.call_tool("recall", {"query": "..."})

``mcp_client`` is a connected client holding a ``write`` token. Tokens are named ``test-<scope>``;
the harness's server shows every tool (``KENNING_MCP_PROFILE=all``) unless a test asks for the
product's default (``mcp_settings(..., mcp_profile="agent")``); ``mcp.client(scope,
profile="curator")`` sends the X-Kenning-Profile header (tests/mcp_server/test_profiles.py).
that name is the audit actor. ``mcp.metrics`` is the server's own Prometheus registry.
``doomed_valkey`` is a Valkey of the test's own, to stop mid-session; ``start_harness(...,
auth_clock= SteppedClock())`` lets a test step the token cache's clock instead of sleeping.
"""  # noqa: E501

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import valkey
from fastmcp import Client, FastMCP
from fastmcp.client.client import CallToolResult
from fastmcp.client.transports import StreamableHttpTransport
from prometheus_client import CollectorRegistry

from kenning.access.tokens import SCOPES
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from mcp_server.registry import Registry
from mcp_server.service import McpService
from mcp_server.tools import register_all
from tests.conftest import free_port, make_settings


@dataclass
class McpHarness:
    service: McpService
    engine: Engine
    settings: Settings
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.settings.mcp_port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def metrics(self) -> CollectorRegistry:
        return self.service.runtime.metrics.registry

    def client(
        self, scope: str | None = "write", *, profile: str | None = None, **kwargs: Any
    ) -> Client[Any]:
        """A new (not yet connected) client; ``scope=None`` sends no token, ``profile`` the
        X-Kenning-Profile header."""
        token = self.secrets[scope] if scope is not None else None
        headers = {"X-Kenning-Profile": profile} if profile is not None else None
        return Client(StreamableHttpTransport(self.url, headers=headers, auth=token), **kwargs)


def mcp_settings(settings: Settings, **overrides: Any) -> Settings:
    """The test's settings with a free MCP port, every tool shown (and any overrides)."""
    values: dict[str, Any] = {
        "key_prefix": settings.key_prefix,
        "mcp_port": free_port(),
        "mcp_profile": "all",
    }
    values.update(overrides)
    return make_settings(settings.data_dir, settings.valkey_port, **values)


class SteppedClock:
    """Monotonic seconds that move only when a test says so (for the token cache)."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def start_harness(
    engine: Engine, settings: Settings, *, auth_clock: Callable[[], float] = time.monotonic
) -> McpHarness:
    service = McpService(engine, settings, auth_clock=auth_clock)
    harness = McpHarness(service=service, engine=engine, settings=settings)
    if settings.mcp_auth:
        for scope in SCOPES:
            _, secret = engine.tokens.create(f"test-{scope}", scope, actor="pytest")
            harness.secrets[scope] = secret
    service.start()
    return harness


@pytest.fixture
def mcp(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    harness = start_harness(engine, mcp_settings(settings))
    yield harness
    harness.service.stop()


@pytest.fixture
def own_mcp(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    tmp_path: Path,
) -> Iterator[McpHarness]:
    """A server whose engine writes backups into this test's own directory
    (list_backups shows only its own)."""
    own = mcp_settings(settings, backup_dir=tmp_path / "backups")
    harness = start_harness(Engine.open(own, client, embedder, clock=clock), own)
    yield harness
    harness.service.stop()


@pytest.fixture
def doomed_valkey(tmp_path: Path) -> Iterator[EmbeddedValkey]:
    """A Valkey of this test's own, so the test can stop it mid-session."""
    with EmbeddedValkey(make_settings(tmp_path / "doomed", free_port())) as server:
        yield server


@pytest.fixture
async def mcp_client(mcp: McpHarness) -> AsyncIterator[Client[Any]]:
    async with mcp.client("write") as client:
        yield client


def probe() -> tuple[FastMCP[Any], Registry]:
    """Every tool module registered on a bare server (no engine): the
    registry, for parametrizing."""
    server: FastMCP[Any] = FastMCP("probe")
    registry = Registry(server)
    register_all(registry)
    return server, registry


async def ok(
    client: Client[Any], tool: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, arguments or {}, raise_on_error=False)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def remember(client: Client[Any], content: str, project: str = "alpha", **extra: Any) -> str:
    """Store one memory through the tool (it must be new); its key."""
    stored = await ok(client, "remember", {"content": content, "project": project, **extra})
    assert stored["status"] == "stored"
    return str(stored["key"])


async def refused(client: Client[Any], tool: str, arguments: dict[str, Any] | None = None) -> str:
    """Call a tool that must fail; the error text the agent reads."""
    result = await client.call_tool(tool, arguments or {}, raise_on_error=False)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)
