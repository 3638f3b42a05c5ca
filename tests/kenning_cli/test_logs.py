"""One log format per process: Kenning's, uvicorn's and FastMCP's records all go through one
handler, as text or as one JSON object per line."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning_cli import logs
from tests.conftest import make_settings


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Put the process's logging back as it was (configure changes process-wide state)."""
    monkeypatch.delenv("FASTMCP_LOG_ENABLED", raising=False)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    foreign = {
        name: (
            logging.getLogger(name).handlers[:],
            logging.getLogger(name).propagate,
            logging.getLogger(name).level,
        )
        for name in logs.FOREIGN
    }
    # as in a fresh process: an earlier test's uvicorn.Config may have set a level
    for name in logs.FOREIGN:
        logging.getLogger(name).setLevel(logging.NOTSET)
    yield
    root.handlers[:], root.level = saved[0], saved[1]
    for name, (handlers, propagate, level) in foreign.items():
        logging.getLogger(name).handlers[:] = handlers
        logging.getLogger(name).propagate = propagate
        logging.getLogger(name).setLevel(level)


@pytest.mark.usefixtures("restored")
def test_json_format_puts_every_library_on_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("fastmcp").addHandler(logging.NullHandler())  # as if it had installed its own
    # a fresh process (pytest's own handlers come back afterwards)
    logging.getLogger().handlers[:] = []
    logs.configure(make_settings(tmp_path, 6379, log_format="json"))
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger("fastmcp.server.server").warning("from fastmcp")
    logging.getLogger("mcp_server.errors").info("tool recall: not_found: no memory")
    lines = capsys.readouterr().err.strip().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [(e["logger"], e["level"], e["message"]) for e in entries] == [
        ("uvicorn.error", "INFO", "Started server process"),
        ("fastmcp.server.server", "WARNING", "from fastmcp"),
        ("mcp_server.errors", "INFO", "tool recall: not_found: no memory"),
    ]
    assert all(e["time"].endswith("Z") for e in entries)
    assert logging.getLogger("fastmcp").handlers == []


@pytest.mark.usefixtures("restored")
def test_text_format_is_one_shape_for_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger().handlers[:] = []
    logs.configure(make_settings(tmp_path, 6379))
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger("kenning.runtime.embedding").debug("hidden at INFO")
    logging.getLogger("feed_worker.worker").info("worker started")
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "INFO uvicorn.error: Started server process",
        "INFO feed_worker.worker: worker started",
    ]


@pytest.mark.usefixtures("restored")
def test_a_host_that_set_up_logging_keeps_its_handlers(tmp_path: Path) -> None:
    host = logging.NullHandler()
    logging.getLogger().handlers[:] = [host]
    logging.getLogger("uvicorn").addHandler(logging.NullHandler())
    logs.configure(make_settings(tmp_path, 6379, log_format="json"))
    assert logging.getLogger().handlers == [host]
    assert logging.getLogger("uvicorn").handlers == []  # still routed to the host's handlers
