"""Every listener closes a connection that sends no complete request header in time: half-open,
silent or trickling clients do not hold a connection forever (serving/timeouts.py,
docs/reliability.md "Connections"). Run on the MCP server and the dashboard, both served by
serving/threaded.py."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.conftest import McpHarness, mcp_settings, start_harness

SAFETY = 60.0  # a bound on the test, not a timing assertion: the close is what is asserted


@pytest.fixture
def quick(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    harness = start_harness(engine, mcp_settings(settings, http_header_timeout_seconds=1.0))
    yield harness
    harness.service.stop()


def _connect(harness: McpHarness) -> socket.socket:
    return socket.create_connection(("127.0.0.1", harness.settings.mcp_port), timeout=SAFETY)


def _closed_by_server(conn: socket.socket) -> bool:
    """Read until the server closes (b'') -- or the safety bound, which fails the test."""
    try:
        while chunk := conn.recv(4096):
            del chunk
        return True
    except TimeoutError:
        return False
    finally:
        conn.close()


def test_a_connection_with_half_a_header_is_closed(quick: McpHarness) -> None:
    conn = _connect(quick)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
    assert _closed_by_server(conn)


def test_a_silent_connection_is_closed(quick: McpHarness) -> None:
    assert _closed_by_server(_connect(quick))


def test_a_trickling_header_is_closed(quick: McpHarness) -> None:
    conn = _connect(quick)
    try:
        for byte in b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" * 4:
            conn.sendall(bytes([byte]))
            time.sleep(0.1)  # pacing the client only; nothing is asserted about time
    except (BrokenPipeError, ConnectionResetError):  # closed by the server while it trickled
        conn.close()
        return
    pytest.fail("the server kept a trickling header open for the whole header")


def test_a_complete_request_is_answered_and_kept_alive_then_closed_when_idle(
    quick: McpHarness,
) -> None:
    conn = _connect(quick)  # positive control: a whole request is served as before
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    first = conn.recv(4096)
    assert first.startswith(b"HTTP/1.1 ")
    assert _closed_by_server(conn)  # then idle: the keep-alive timeout ends it
