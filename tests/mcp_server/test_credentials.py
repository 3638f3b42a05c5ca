"""An agent's `remember` of a credential through the real MCP server: refused with a hint that
says what to do, the key in neither the reply nor the server's log; a documented example key is
stored (the positive control)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastmcp import Client

from tests.mcp_server.conftest import ok, refused, remember

KEY = "AKIAZ3MSJV4WPLQ2ZQ7X"
# this process also runs the test's client, whose debug log shows what it sent
CLIENT_SIDE = ("mcp.client", "httpx", "httpcore", "fastmcp.client")


async def test_remember_of_an_aws_key_is_refused_with_a_hint(
    mcp_client: Client[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    text = await refused(
        mcp_client,
        "remember",
        {"content": f"CI pushes to the bucket with {KEY} (rotate in May)", "project": "alpha"},
    )
    assert "AWS Access Key" in text
    assert "Vault" in text  # the hint: say where the secret lives instead
    assert KEY not in text
    server = [r for r in caplog.records if not r.name.startswith(CLIENT_SIDE)]
    assert server  # positive control: the server's own records were captured
    assert [r.name for r in server if KEY in r.getMessage()] == []
    found = await ok(mcp_client, "recall", {"query": "how does CI push to the bucket?"})
    assert found["results"] == []
    await remember(mcp_client, "The AWS docs use AKIAIOSFODNN7EXAMPLE as their sample key id")
    found = await ok(mcp_client, "recall", {"query": "which sample key do the AWS docs use?"})
    assert "AKIAIOSFODNN7EXAMPLE" in found["results"][0]["content"]
