"""The one error translator: engine errors keep their message and hint; outages say memory could
NOT be checked; anything unexpected is masked for the client and logged with a request id."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from kenning.core.errors import BackendUnavailable, InvalidInput, NotFound, StoreError
from kenning.core.settings import Settings
from kenning.engine import Engine
from mcp_server.app import build_server
from mcp_server.errors import EngineToolError, translate
from tests.mcp_server.conftest import mcp_settings, ok, refused

ERRORS_DOC = Path(__file__).parents[2] / "docs" / "mcp-tools.md"


def test_invalid_input_says_what_was_wrong_and_what_is_allowed() -> None:
    error = translate(InvalidInput("top_k must be 1 to 50; got 90", hint="ask for fewer"), "recall")
    assert isinstance(error, EngineToolError)
    assert error.code == "invalid_input"
    assert str(error) == "invalid_input: top_k must be 1 to 50; got 90 (hint: ask for fewer)"


def test_an_outage_is_never_phrased_as_an_empty_result() -> None:
    error = translate(BackendUnavailable("Valkey is unreachable", hint="is it running?"), "recall")
    assert str(error).startswith(
        "backend_unavailable: memory could NOT be checked -- Valkey is unreachable"
    )
    assert "Do not treat this as 'nothing stored'" in str(error)
    assert str(translate(NotFound("no memory k"), "x")) == "not_found: no memory k"


def test_a_refused_command_says_what_the_server_answered_and_is_not_an_outage() -> None:
    answer = "Valkey answered with an error: Index field `distance` does not exist"
    error = translate(
        StoreError(answer, hint="the store is up; this command was refused"), "recall"
    )
    assert isinstance(error, EngineToolError)
    assert (error.code, error.outage) == ("store_error", False)
    assert str(error) == f"store_error: {answer} (hint: the store is up; this command was refused)"


def test_an_outage_shows_its_summary_and_logs_the_details_under_a_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_server.errors"):
        error = translate(
            BackendUnavailable(
                "Valkey is unreachable: Error 111 connecting to 10.1.2.3:6379.",
                hint="is Valkey running?",
            ),
            "recall",
        )
    text = str(error)
    match = re.search(r"\(request id ([0-9a-f]{12})\)", text)
    assert match is not None, text
    assert text.startswith(
        "backend_unavailable: memory could NOT be checked -- Valkey is unreachable. "
    )
    assert "10.1.2.3" not in text
    assert "(hint: is Valkey running?)" in text
    logged = [r.getMessage() for r in caplog.records if match.group(1) in r.getMessage()]
    assert len(logged) == 1
    assert "Error 111 connecting to 10.1.2.3:6379" in logged[0]


def test_unexpected_errors_are_masked_and_logged_with_a_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_server.errors"):
        error = translate(RuntimeError("secret internals at /srv/db"), "recall")
    match = re.search(r"request id ([0-9a-f]{12})", str(error))
    assert match is not None
    assert "secret internals" not in str(error)
    assert str(error).startswith("internal_error:")
    assert any(
        match.group(1) in record.getMessage() and record.exc_info for record in caplog.records
    )


async def test_a_tool_that_crashes_reaches_the_client_masked(
    engine: Engine, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    server, registry, _ = build_server(engine, mcp_settings(settings, mcp_auth=False))

    @registry.tool(scope="read")
    async def explode() -> dict[str, str]:
        """Fails on purpose."""
        raise RuntimeError("database password is hunter2")

    with caplog.at_level(logging.ERROR, logger="mcp_server.errors"):
        async with Client(server) as client:
            # positive control: the server works
            assert (await ok(client, "version"))["name"] == "kenning"
            message = await refused(client, "explode")
    assert message.startswith("internal_error: the server failed unexpectedly (request id ")
    assert "hunter2" not in message
    request_id = message.split("request id ")[1][:12]
    assert any(request_id in record.getMessage() for record in caplog.records)


async def test_arguments_the_schema_refuses_read_like_engine_errors(
    mcp_client: Client[Any], caplog: pytest.LogCaptureFixture
) -> None:
    # control
    assert (await ok(mcp_client, "recall", {"query": "anything", "top_k": 3}))["results"] == []
    with caplog.at_level(logging.DEBUG):
        text = await refused(mcp_client, "recall", {"query": "anything", "top_k": "many"})
    assert text.startswith("invalid_arguments: top_k: ")
    assert "(hint: tools/list gives each parameter's type" in text
    assert "invalid_arguments" in (ERRORS_DOC.read_text(encoding="utf-8"))
    lines = [r for r in caplog.records if "recall" in r.getMessage() and r.levelno >= logging.INFO]
    assert [(r.levelname, r.getMessage()) for r in lines] == [
        ("INFO", "tool recall: invalid_arguments: top_k (int_parsing)")
    ]


async def test_an_expected_engine_error_is_one_info_line(
    mcp_client: Client[Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        text = await refused(mcp_client, "recall_detail", {"keys": ["kenning:mem:knowledge:NOPE"]})
    assert text.startswith(("not_found:", "invalid_input:"))
    lines = [
        r for r in caplog.records if "recall_detail" in r.getMessage() and r.levelno >= logging.INFO
    ]
    assert len(lines) == 1
    assert (lines[0].levelname, lines[0].exc_info) == ("INFO", None)
    assert lines[0].getMessage() == f"tool recall_detail: {text}"
