"""Scopes are enforced at dispatch for EVERY mutating tool, derived from the
registry (not a hand list)."""

from __future__ import annotations

import httpx
import pytest
from mcp import MCPError

from mcp_server.registry import ToolSpec
from tests.mcp_server.conftest import McpHarness, ok, probe, refused

_, REGISTRY = probe()
MUTATING = sorted(name for name, spec in REGISTRY.specs.items() if not spec.read_only)
ADMIN_ONLY = sorted(name for name, spec in REGISTRY.specs.items() if spec.scope == "admin")
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


def test_the_registry_has_mutating_tools_and_read_tools_cannot_mutate() -> None:
    assert {
        "remember",
        "forget",
        "update_memory",
        "retag",
        "remember_document",
        "set_project_context",
        "update_project_state",
    } <= set(MUTATING)
    for spec in REGISTRY.specs.values():
        assert isinstance(spec, ToolSpec)
        assert not (spec.scope == "read" and not spec.read_only), spec


def test_declaring_a_mutating_tool_with_read_scope_is_refused_at_registration() -> None:
    _, registry = probe()

    async def sneaky() -> None:
        """Pretends to read."""

    with pytest.raises(ValueError, match="needs scope 'write' or 'admin'"):
        registry.tool(scope="read", read_only=False)(sneaky)


async def test_a_read_token_is_refused_every_mutating_tool_before_anything_changes(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as writer:
        # positive control
        key = (await ok(writer, "remember", {"content": "Scope test target memory"}))["key"]
    async with mcp.client("read") as reader:
        assert (await ok(reader, "recall_detail", {"keys": [key]}))["memories"][0]["key"] == key
        for name in MUTATING:
            message = await refused(
                reader, name, {"key": key, "content": "changed", "confirm": True}
            )
            assert message.startswith("permission_denied:"), f"{name}: {message}"
            assert f"needs the '{REGISTRY.specs[name].scope}' scope" in message, name
            assert "test-read" in message, name
    assert mcp.engine.memories.get(key).content == "Scope test target memory"
    assert [e.action for e in mcp.engine.store.audit.history(key)] == ["remember"]


async def test_tools_list_shows_a_token_only_the_tools_its_scope_may_call(mcp: McpHarness) -> None:
    listed: dict[str, set[str]] = {}
    for scope in ("read", "write", "admin"):
        async with mcp.client(scope) as client:
            listed[scope] = {t.name for t in await client.list_tools()}
    # positive control: every tool exists and is listed
    assert listed["admin"] == set(REGISTRY.specs)
    assert set(MUTATING) <= listed["admin"]
    assert listed["read"] == {n for n, s in REGISTRY.specs.items() if s.scope == "read"}
    assert not set(MUTATING) & listed["read"]
    assert "recall" in listed["read"]
    assert listed["write"] == set(REGISTRY.specs) - set(ADMIN_ONLY)


async def test_a_write_token_is_refused_admin_tools_and_admin_holds_everything(
    mcp: McpHarness,
) -> None:
    assert {"delete_project", "restore"} <= set(ADMIN_ONLY)
    async with mcp.client("write") as writer:
        for name in ADMIN_ONLY:
            assert "permission_denied" in await refused(writer, name, {}), name
    async with mcp.client("admin") as admin:
        stored = await ok(admin, "remember", {"content": "Admins may write too"})
        assert stored["status"] == "stored"
    assert mcp.engine.memories.get(stored["key"]).actor == "test-admin"


async def test_no_token_or_a_wrong_token_is_refused_over_http(mcp: McpHarness) -> None:
    async with httpx.AsyncClient(base_url=mcp.base) as http:
        anonymous = await http.post("/mcp", json=INITIALIZE, headers=HEADERS)
        wrong = await http.post(
            "/mcp", json=INITIALIZE, headers={**HEADERS, "Authorization": "Bearer kn_nope"}
        )
        right = await http.post(
            "/mcp",
            json=INITIALIZE,
            headers={**HEADERS, "Authorization": f"Bearer {mcp.secrets['read']}"},
        )
    assert anonymous.status_code == 401
    assert wrong.status_code == 401
    assert right.status_code == 200  # positive control: the same request with a valid token
    with pytest.raises(MCPError, match="error response"):  # the MCP client cannot even initialize
        async with mcp.client(None) as client:
            await client.list_tools()


async def test_a_revoked_token_is_refused(mcp: McpHarness) -> None:
    _, secret = mcp.engine.tokens.create("short-lived", "write", actor="pytest")
    _, control = mcp.engine.tokens.create("still-valid", "write", actor="pytest")
    mcp.engine.tokens.revoke("short-lived", actor="pytest")
    async with httpx.AsyncClient(base_url=mcp.base) as http:
        response = await http.post(
            "/mcp", json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {secret}"}
        )
        valid = await http.post(
            "/mcp", json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {control}"}
        )
    assert response.status_code == 401
    assert valid.status_code == 200  # positive control: a token created the same way, not revoked
    assert [t.name for t in mcp.engine.tokens.all()] == [
        "still-valid",
        "test-admin",
        "test-read",
        "test-write",
    ]
