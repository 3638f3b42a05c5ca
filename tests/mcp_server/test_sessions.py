"""With sessions on (KENNING_MCP_STATELESS=false), abandoned MCP sessions end after the idle
timeout and one token holds at most the cap (docs/reliability.md). Raw HTTP, as a client that
never closes what it opens."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.conftest import McpHarness, mcp_settings, start_harness

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "abandoner", "version": "1"},
    },
}
IDLE = 1.5


@pytest.fixture
def capped(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    harness = start_harness(
        engine,
        mcp_settings(
            settings, mcp_stateless=False, mcp_sessions_per_token=3, mcp_session_idle_seconds=IDLE
        ),
    )
    yield harness
    harness.service.stop()


def _headers(harness: McpHarness, scope: str, session: str | None = None) -> dict[str, str]:
    out = {
        "authorization": f"Bearer {harness.secrets[scope]}",
        "accept": "application/json, text/event-stream",
    }
    if session is not None:
        out["mcp-session-id"] = session
    return out


def _open(http: httpx.Client, harness: McpHarness, scope: str = "write") -> httpx.Response:
    return http.post(harness.url, json=INITIALIZE, headers=_headers(harness, scope))


def test_one_token_holds_at_most_the_cap_and_a_closed_session_frees_a_place(
    capped: McpHarness,
) -> None:
    with httpx.Client(timeout=30) as http:
        opened = [_open(http, capped) for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 200]
        sessions = [r.headers["mcp-session-id"] for r in opened]
        over = _open(http, capped)
        assert over.status_code == 429
        assert "3 open MCP sessions" in over.json()["error"]["message"]
        assert _open(http, capped, "read").status_code == 200  # another token has its own places
        closed = http.delete(capped.url, headers=_headers(capped, "write", sessions[0]))
        assert closed.status_code == 200
        assert _open(http, capped).status_code == 200


def test_an_idle_session_ends_and_its_place_is_free_again(capped: McpHarness) -> None:
    with httpx.Client(timeout=30) as http:
        sessions = [_open(http, capped).headers["mcp-session-id"] for _ in range(3)]
        assert _open(http, capped).status_code == 429
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        alive = http.post(capped.url, json=ping, headers=_headers(capped, "write", sessions[0]))
        assert alive.status_code == 200  # the positive control: the session answers before it idles
        time.sleep(IDLE * 2)  # abandoned: no request for longer than the idle timeout
        gone = http.post(capped.url, json=ping, headers=_headers(capped, "write", sessions[0]))
        assert gone.status_code == 404  # the SDK ended it
        assert _open(http, capped).status_code == 200


@pytest.fixture
def cap5(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    harness = start_harness(
        engine,
        mcp_settings(settings, mcp_stateless=False, mcp_sessions_per_token=5),
    )
    yield harness
    harness.service.stop()


def test_parallel_opens_admit_exactly_the_cap(cap5: McpHarness) -> None:
    """20 initializes at once from one token against a cap of 5: the count and the admission are
    one step, so exactly 5 sessions open (an earlier check-then-count admitted 563 of 5,000)."""
    start = threading.Barrier(20)

    def open_one(_: int) -> int:
        with httpx.Client(timeout=60) as http:
            start.wait()
            return _open(http, cap5).status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(open_one, range(20)))
    assert sorted(codes) == [200] * 5 + [429] * 15
    with httpx.Client(timeout=30) as http:  # and the cap still holds afterwards
        assert _open(http, cap5).status_code == 429
        assert _open(http, cap5, "read").status_code == 200  # positive control: another token
