"""`kenning doctor`'s look at the MCP server from outside, as a client sees it: /healthz, then
one call to /mcp (with the token given by --token: it must be accepted; without one: the server
must ask for a token). HTTP lives here, in the composition root, not in the engine."""

from __future__ import annotations

import httpx

from kenning.core.settings import Settings
from kenning.memory.inspection import Check

TIMEOUT = 60.0  # /healthz embeds once: a cold model on a busy box takes seconds
WEB_HEALTH = "/healthz"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "kenning-doctor", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def base_url(settings: Settings) -> str:
    """Where a local client reaches the server (a wildcard bind is reached on loopback)."""
    host = "127.0.0.1" if settings.mcp_host in ("0.0.0.0", "::", "") else settings.mcp_host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.mcp_port}"


def web_url(settings: Settings) -> str:
    """Where a local browser reaches the dashboard (a wildcard bind is reached on loopback)."""
    host = "127.0.0.1" if settings.web_host in ("0.0.0.0", "::", "") else settings.web_host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.web_port}"


def web_check(settings: Settings) -> Check:
    """The dashboard answers its health endpoint."""
    base = web_url(settings)
    try:
        answer = httpx.get(f"{base}{WEB_HEALTH}", timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        return Check(
            "dashboard",
            False,
            f"not reachable at {base}: {exc.__class__.__name__} (start it with `kenning up` "
            "or `kenning web`, or pass --no-web)",
        )
    return Check(
        "dashboard", answer.status_code == 200, f"{base}{WEB_HEALTH} answered {answer.status_code}"
    )


def mcp_checks(settings: Settings, token: str | None) -> list[Check]:
    base = base_url(settings)
    try:
        with httpx.Client(base_url=base, timeout=TIMEOUT) as http:
            health = http.get("/healthz")
            headers = {**HEADERS, "Authorization": f"Bearer {token}"} if token else HEADERS
            answer = http.post("/mcp", json=INITIALIZE, headers=headers)
    except httpx.HTTPError as exc:
        reason = f"not reachable at {base}: {exc.__class__.__name__}"
        hint = "start it with `kenning up` or `kenning mcp`, or pass --no-mcp"
        return [
            Check("mcp server", False, f"{reason} ({hint})"),
            Check("mcp auth", False, "not checked"),
        ]
    verdict = Check(
        "mcp server", health.status_code == 200, f"{base}/healthz answered {health.status_code}"
    )
    return [verdict, _auth(settings, answer, token)]


def _auth(settings: Settings, answer: httpx.Response, token: str | None) -> Check:
    if not settings.mcp_auth:
        return Check(
            "mcp auth",
            answer.status_code == 200,
            f"off (loopback only); /mcp answered {answer.status_code}",
        )
    if token:
        if answer.status_code == 200:
            return Check(
                "mcp auth", True, "the token was accepted (an authenticated initialize call)"
            )
        return Check("mcp auth", False, f"/mcp answered {answer.status_code}: {_described(answer)}")
    if answer.status_code == 401:
        return Check(
            "mcp auth",
            True,
            "tokens required; pass --token SECRET to make an authenticated call too",
        )
    return Check(
        "mcp auth", False, f"/mcp without a token answered {answer.status_code}, expected 401"
    )


def _described(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("error_description", answer.text[:200]))
    except ValueError:
        return answer.text[:200]
