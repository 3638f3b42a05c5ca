"""The ways a bench calls one recall over HTTP, each returning the keys of
the hits it got (issue 21).

- ``raw_call``: ``tools/call`` as one bare JSON-RPC POST through an ``httpx.AsyncClient``: the MCP
  server's cost with no client library;
- ``through(sdk_session(...))``: the official ``mcp`` SDK's ``ClientSession`` over Streamable HTTP;
- ``through(fastmcp.Client(...))``: fastmcp's client;
- ``floor_call``: the bare Starlette JSON endpoint (``bench.floor_server``), no MCP.

Every answer is checked to be a recall result, so a fast error can never pass as a fast call;
``call_all`` also compares the hits with the engine call's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import httpx
import httpx2
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

MODERN = "2026-07-28"  # the per-request protocol fastmcp's Client speaks
HANDSHAKE = "2025-11-25"  # the initialize-handshake protocol of the official SDK's ClientSession


# a recall; the keys of its hits, in order
Target = Callable[[dict[str, Any], int], Awaitable[list[str]]]


async def call_all(
    targets: dict[str, Target], args: dict[str, Any], index: int, expected: list[str] | None
) -> tuple[dict[str, float], list[str]]:
    """Each target once, the order rotated by ``index`` so none always runs right after the
    engine call: seconds per target, and the targets whose hits were not ``expected`` (the engine
    call's keys, compared as a set: recency moves by the milliseconds between the
    calls; None: not compared)."""
    timings: dict[str, float] = {}
    wrong: list[str] = []
    order = list(targets.items())
    for name, call in order[index % len(order) :] + order[: index % len(order)]:
        start = time.perf_counter()
        keys = await call(args, index)
        timings[name] = time.perf_counter() - start
        if expected is not None and set(keys) != set(expected):
            wrong.append(name)
    return timings, wrong


async def sdk_session(stack: AsyncExitStack, url: str, secret: str) -> Any:
    """The official SDK's ``ClientSession`` over Streamable HTTP,
    initialised, kept open on ``stack``."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    sdk_http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    )
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=sdk_http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def hit_keys(result: Any, target: str) -> list[str]:
    """The keys of a recall's hits, from the tool's structured result or the floor's body; a
    RuntimeError when it is not a recall result (a fast error must never pass as a fast call)."""
    hits = result.get("results") if isinstance(result, dict) else None
    if not isinstance(hits, list) or not all(
        isinstance(h, dict) and isinstance(h.get("key"), str) for h in hits
    ):
        raise RuntimeError(
            f"{target} answered something that is not a recall result: {str(result)[:300]}"
        )
    return [h["key"] for h in hits]


def through(client: Any) -> Target:
    """A recall through an MCP client library (fastmcp's ``Client`` or the
    SDK's ``ClientSession``)."""

    async def call(args: dict[str, Any], index: int) -> list[str]:
        result = await client.call_tool("recall", args)
        if result.is_error:
            raise RuntimeError(
                f"a recall through {type(client).__name__} failed: {str(result.content)[:300]}"
            )
        return hit_keys(result.structured_content, type(client).__name__)

    return call


async def floor_call(http: httpx.AsyncClient, url: str, args: dict[str, Any]) -> list[str]:
    """The same recall from the bare Starlette endpoint (``bench.floor_server``)."""
    response = await http.post(url, json=args)
    response.raise_for_status()
    return hit_keys(response.json(), "the bare endpoint")


async def raw_call(
    http: httpx.AsyncClient, url: str, args: dict[str, Any], index: int, version: str
) -> list[str]:
    """tools/call as one bare JSON-RPC POST: no client library, no handshake, no
    session (a stateless server)."""
    params: dict[str, Any] = {"name": "recall", "arguments": args}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    if version == MODERN:
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: version, CLIENT_CAPABILITIES_META_KEY: {}}
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "recall"}
    body = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}
    response = await http.post(url, json=body, headers=headers)
    response.raise_for_status()
    reply = json_rpc_reply(response)
    result = reply.get("result")
    if not isinstance(result, dict) or result.get("isError") or reply.get("id") != index:
        raise RuntimeError(f"the bare tools/call failed: {response.text[:300]}")
    return hit_keys(result.get("structuredContent"), "the bare tools/call")


def json_rpc_reply(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a Streamable HTTP answer: the JSON body, or the
    last ``data:`` of an SSE one."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        if not data:
            raise RuntimeError(f"an SSE answer without a message: {response.text[:300]}")
        reply: Any = json.loads(data[-1])
    else:
        reply = response.json()
    if not isinstance(reply, dict):
        raise RuntimeError(f"not a JSON-RPC message: {response.text[:300]}")
    return reply
