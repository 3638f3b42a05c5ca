"""Exposure: Host/Origin allowlists, no public bind without auth, loopback
without auth, SSE, stateless."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import SSETransport

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning_cli.main import main
from mcp_server import auth
from mcp_server.app import build_server
from mcp_server.service import McpService
from tests.conftest import make_settings
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, start_harness

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PUBLIC = "https://kenning.example.com"


@pytest.fixture
def public_mcp(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    harness = start_harness(engine, mcp_settings(settings, mcp_public_url=PUBLIC))
    yield harness
    harness.service.stop()


async def _initialize(harness: McpHarness, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=harness.base) as http:
        return await http.post(
            "/mcp",
            json=INITIALIZE,
            headers={**HEADERS, "Authorization": f"Bearer {harness.secrets['read']}", **headers},
        )


async def test_foreign_host_and_origin_are_rejected_public_ones_accepted(
    public_mcp: McpHarness,
) -> None:
    assert (await _initialize(public_mcp)).status_code == 200  # positive control: loopback Host
    assert (await _initialize(public_mcp, host="kenning.example.com")).status_code == 200
    assert (await _initialize(public_mcp, origin=PUBLIC)).status_code == 200
    assert (await _initialize(public_mcp, host="evil.example")).status_code == 421
    assert (await _initialize(public_mcp, origin="https://evil.example")).status_code == 403
    assert (
        await _initialize(public_mcp, host="kenning.example.com", origin="http://evil.example")
    ).status_code == 403


async def test_host_and_origin_spellings_cannot_slip_past_the_allowlist(
    public_mcp: McpHarness,
) -> None:
    port = public_mcp.settings.mcp_port
    accepted_hosts = [
        "KENNING.EXAMPLE.COM",
        "kenning.example.com:443",
        f"LocalHost:{port}",
        f"[::1]:{port}",
        "[::1]",
        f"127.0.0.1:{port}",
    ]
    rejected_hosts = [
        "kenning.example.com.evil.example",
        "evil.example:443",
        "kenning.example.com@evil.example",
        "evil.example#kenning.example.com",
        "kenning.example.com:443:evil",
        "[::2]:443",
        "127.0.0.1.evil.example",
        "0.0.0.0",
        "",
        "*",
    ]
    accepted_origins = [
        "HTTPS://KENNING.EXAMPLE.COM",
        "https://kenning.example.com:443",
        "https://kenning.example.com/",
        f"http://localhost:{port}",
        f"http://[::1]:{port}",
    ]
    rejected_origins = [
        "https://kenning.example.com.evil.example",
        "https://kenning.example.com:8443",
        "http://kenning.example.com",
        "null",
        "https://evil.example/kenning.example.com",
        "https://kenning.example.com@evil.example",
    ]
    for host in accepted_hosts:
        assert (await _initialize(public_mcp, host=host)).status_code == 200, host
    for host in rejected_hosts:
        assert (await _initialize(public_mcp, host=host)).status_code in (400, 421), host
    for origin in accepted_origins:
        assert (await _initialize(public_mcp, origin=origin)).status_code == 200, origin
    for origin in rejected_origins:
        assert (await _initialize(public_mcp, origin=origin)).status_code == 403, origin


async def test_without_a_public_url_only_loopback_hosts_pass(mcp: McpHarness) -> None:
    assert (await _initialize(mcp, host=f"localhost:{mcp.settings.mcp_port}")).status_code == 200
    assert (await _initialize(mcp, host="kenning.example.com")).status_code == 421


def test_allowlists_derive_from_the_public_url(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, 6390, mcp_public_url="https://mem.corp.example:8443/base")
    assert auth.allowed_hosts(settings) == ["127.0.0.1", "localhost", "::1", "mem.corp.example"]
    assert auth.allowed_origins(settings) == ["https://mem.corp.example:8443"]
    wildcard = make_settings(tmp_path, 6390, mcp_host="0.0.0.0")
    assert "0.0.0.0" not in auth.allowed_hosts(wildcard)
    # control
    assert "192.0.2.10" in auth.allowed_hosts(make_settings(tmp_path, 6390, mcp_host="192.0.2.10"))
    assert auth.allowed_origins(wildcard) == []


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_a_public_bind_without_auth_is_refused(
    engine: Engine, settings: Settings, host: str
) -> None:
    unsafe = mcp_settings(settings, mcp_host=host, mcp_auth=False)
    with pytest.raises(InvalidInput, match="without authentication"):
        build_server(engine, unsafe)
    with pytest.raises(InvalidInput, match="without authentication"):
        McpService(engine, unsafe)
    # positive control: with auth
    build_server(engine, mcp_settings(settings, mcp_host=host, mcp_auth=True))


def test_kenning_mcp_refuses_a_public_bind_without_auth_before_loading_anything(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KENNING_MCP_HOST", "0.0.0.0")
    monkeypatch.setenv("KENNING_MCP_AUTH", "false")
    assert main(["mcp"]) == 1
    assert "refusing to listen on 0.0.0.0 without authentication" in capsys.readouterr().err


async def test_loopback_without_auth_serves_the_local_user(
    engine: Engine, settings: Settings
) -> None:
    harness = start_harness(engine, mcp_settings(settings, mcp_auth=False))
    try:
        async with harness.client(None) as client:
            stored = await ok(
                client, "remember", {"content": "Local mode needs no token on loopback"}
            )
    finally:
        harness.service.stop()
    assert engine.memories.get(stored["key"]).actor == "local"


async def test_stateless_http_and_the_opt_in_sse_transport(
    engine: Engine, settings: Settings
) -> None:
    harness = start_harness(engine, mcp_settings(settings, mcp_stateless=True, mcp_sse=True))
    try:
        async with harness.client("write") as client:
            key = (
                await ok(client, "remember", {"content": "Stateless mode works behind a balancer"})
            )["key"]
        sse = Client(SSETransport(f"{harness.base}/sse", auth=harness.secrets["read"]))
        async with sse:
            found = await ok(sse, "recall_detail", {"keys": [key]})
        async with (
            httpx.AsyncClient(base_url=harness.base) as http,
            http.stream("GET", "/sse") as anonymous,
        ):
            assert anonymous.status_code == 401
    finally:
        harness.service.stop()
    assert found["memories"][0]["key"] == key


def test_the_printed_url_brackets_an_ipv6_address(engine: Engine, settings: Settings) -> None:
    v6 = mcp_settings(settings, mcp_host="::1")
    assert McpService(engine, v6).url == f"http://[::1]:{v6.mcp_port}/mcp"
    v4 = mcp_settings(settings)
    assert McpService(engine, v4).url == f"http://127.0.0.1:{v4.mcp_port}/mcp"
