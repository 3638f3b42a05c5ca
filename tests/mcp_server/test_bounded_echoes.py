"""A rejected value is quoted, never echoed whole: a 4 MB bad argument from a read token is answered
with a short error and leaves short log lines (docs/reliability.md, "Bounded echoes"); content
made only of invisible characters is refused with a hint."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from kenning.core.errors import InvalidInput, bounded, quote
from kenning.core.validation import content
from tests.mcp_server.conftest import McpHarness, refused

# 4 MB, under the transport's 4 MiB body limit (a bigger body is refused with 413 before parsing)
BIG = "x" * 4_000_000
# the server's loggers (the test's own client logs what it sends, whole, at DEBUG)
SERVER = ("mcp_server", "kenning", "serving", "fastmcp", "uvicorn", "mcp.server", "starlette")
CALLS = [
    ("get_experience", {"key": BIG}),
    ("history", {"key": BIG}),
    ("list_contradictions", {"project": BIG}),
    ("get_skill", {"domain": BIG}),
    ("recall", {"query": "deploys", "projects": [BIG]}),
    ("explain_memory", {"key": BIG}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[c[0] for c in CALLS])
async def test_a_4mb_bad_argument_gets_a_short_error_and_a_short_log_line(
    mcp: McpHarness, caplog: pytest.LogCaptureFixture, tool: str, arguments: dict[str, object]
) -> None:
    caplog.set_level(logging.DEBUG)
    async with mcp.client("read") as client:
        text = await refused(client, tool, arguments)
    assert len(text) < 2_000, text[:300]
    assert "invalid" in text  # positive control: it was refused for its input, in our words
    logged = [r.getMessage() for r in caplog.records if r.name.startswith(SERVER)]
    assert logged  # positive control: the refusal was logged
    assert max(len(line) for line in logged) < 2_000
    assert sum(len(line) for line in logged) < 20_000


def test_quote_and_bounded_say_how_long_the_value_was() -> None:
    assert quote("short") == "'short'"
    cut = quote(BIG)
    assert len(cut) < 300
    assert cut.endswith(f"({len(BIG):,} characters)")
    with pytest.raises(InvalidInput) as raised:
        raise InvalidInput("a" * 5_000, hint="b" * 5_000)
    assert len(raised.value.message) < 900
    assert raised.value.hint is not None
    assert len(raised.value.hint) < 900
    assert "5,000 characters in all" in bounded("a" * 5_000)


@pytest.mark.parametrize(
    "invisible",
    ["\x00\x00\x00", "\u200b\u200b", "\u200d\ufeff\u2060", "\x1b\x07\x7f", "\x00 \u2028\u200b"],
)
def test_content_of_invisible_characters_only_is_refused_with_a_hint(invisible: str) -> None:
    with pytest.raises(InvalidInput, match="no visible character") as raised:
        content(invisible)
    assert raised.value.hint
    assert "Use pytest" in content(f"{invisible}Use pytest{invisible}")  # positive control


async def test_an_invisible_memory_is_refused_through_mcp(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        text = await refused(client, "remember", {"content": "\u200b\x00\u200b\x00"})
    assert "no visible character" in text


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [
        ("not json at all", -32700, "parse_error: the body is not valid JSON"),
        (json.dumps({"id": 1, "junk": "y" * 100_000}), -32602, "invalid_request: the body is not"),
        (json.dumps({"jsonrpc": "1.0", "id": 1}), -32602, "invalid_request: the body is not"),
    ],
)
async def test_a_malformed_json_rpc_message_is_refused_in_our_words(
    mcp: McpHarness, body: str, code: int, said: str
) -> None:
    headers = {
        "Authorization": f"Bearer {mcp.secrets['read']}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    async with httpx.AsyncClient() as client:
        answer = await client.post(mcp.url, content=body, headers=headers)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == code
    assert error["message"].startswith(said)
    assert "nothing was done" in error["message"]
    for internal in ("pydantic", "input_value", "JSONRPCRequest", "yyyy"):
        assert internal not in error["message"]
    assert len(answer.text) < 1_000
