"""The MCP bench's answer checks: only a recall result counts as a call, and hits
unlike the engine's are named."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bench import clients


def test_a_recall_result_gives_its_keys_in_order() -> None:
    assert clients.hit_keys({"results": [{"key": "m:2"}, {"key": "m:1"}]}, "t") == ["m:2", "m:1"]
    assert (
        clients.hit_keys({"results": [], "results_note": "no memory is relevant enough"}, "t") == []
    )


@pytest.mark.parametrize(
    "answer",
    [
        None,
        {"error": "invalid_token"},
        {"results": "x"},
        {"results": [{"id": 1}]},
        [{"key": "m:1"}],
    ],
)
def test_anything_else_is_refused(answer: Any) -> None:
    with pytest.raises(RuntimeError, match="not a recall result"):
        clients.hit_keys(answer, "the target")


def test_a_json_rpc_reply_is_read_from_a_json_body_and_from_an_sse_stream() -> None:
    message = '{"jsonrpc": "2.0", "id": 3, "result": {"structuredContent": {"results": []}}}'
    plain = httpx.Response(200, text=message, headers={"content-type": "application/json"})
    stream = httpx.Response(
        200,
        text=f"event: message\ndata: {message}\n\n",
        headers={"content-type": "text/event-stream"},
    )
    assert clients.json_rpc_reply(plain) == clients.json_rpc_reply(stream)
    assert clients.json_rpc_reply(plain)["id"] == 3
    with pytest.raises(RuntimeError, match="without a message"):
        clients.json_rpc_reply(
            httpx.Response(200, text=": ping\n\n", headers={"content-type": "text/event-stream"})
        )


async def test_call_all_times_every_target_and_names_those_whose_hits_differ() -> None:
    async def same(args: dict[str, Any], index: int) -> list[str]:
        return ["m:2", "m:1"]  # the engine's hits, in another order: the same hits

    async def other(args: dict[str, Any], index: int) -> list[str]:
        return ["m:1", "m:3"]

    timings, wrong = await clients.call_all({"a": same, "b": other}, {}, 1, ["m:1", "m:2"])
    assert set(timings) == {"a", "b"}
    assert all(seconds >= 0 for seconds in timings.values())
    assert wrong == ["b"]
    assert (await clients.call_all({"b": other}, {}, 0, None))[1] == []  # nothing to compare with
