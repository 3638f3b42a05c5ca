"""The py-spy stack breakdown: each sample charged to one layer,
start-up and idle waits left out."""

from __future__ import annotations

from pathlib import Path

from bench import stacks

LOOP_TOP = (
    "BaseEventLoop._run_once (asyncio/base_events.py:1936);Handle._run (asyncio/events.py:84)"
)
SDK = "handle_modern_request (mcp/server/_streamable_http_modern.py:470)"
FASTMCP = "FastMCP._call_tool_mcp (fastmcp/server/server.py:900)"
VALIDATE = "BaseModel.model_validate (pydantic/main.py:705)"
ENGINE = (
    "Recaller.recall (kenning/memory/recall.py:195);"
    "Embedder.embed (onnxruntime/capi/session.py:220)"
)
WORKER = "Thread._bootstrap (threading.py:1002);WorkerThread.run (anyio/_backends/_asyncio.py:1124)"


def test_each_sample_goes_to_its_innermost_layer() -> None:
    assert stacks.layer(f"{LOOP_TOP};{SDK};{FASTMCP};{VALIDATE}".split(";")) == stacks.LAYERS[0][1]
    assert stacks.layer(f"{LOOP_TOP};{SDK};{FASTMCP}".split(";")) == "fastmcp"
    assert stacks.layer(f"{LOOP_TOP};{SDK}".split(";")) == stacks.SDK
    assert stacks.layer(LOOP_TOP.split(";")) == stacks.LOOP


def test_anything_under_the_engine_is_the_engine() -> None:
    assert stacks.layer(f"{WORKER};{ENGINE}".split(";")) == stacks.ENGINE


def test_start_up_and_idle_waits_are_left_out() -> None:
    startup = (
        "_run_module_as_main (<frozen runpy>:198);open_engine (kenning_cli/services.py:36);"
        + ENGINE
    )
    idle = (
        "BaseEventLoop._run_once "
        "(asyncio/base_events.py:1898);EpollSelector.select (selectors.py:468)"
    )
    assert stacks.layer(startup.split(";")) is None
    assert stacks.layer(idle.split(";")) is None
    # the positive control: the loop's own work counts
    assert stacks.layer(idle.split(";")[:1]) == stacks.LOOP


def test_breakdown_is_milliseconds_per_call(tmp_path: Path) -> None:
    raw = tmp_path / "server.txt"
    raw.write_text(
        f"{WORKER};{ENGINE} 500\n{LOOP_TOP};{SDK};{FASTMCP} 50\n"
        "BaseEventLoop._run_once (asyncio/base_events.py:1898);EpollSelector.select "
        "(selectors.py:468) 9000\n",
        encoding="utf-8",
    )
    table = stacks.breakdown(raw, calls=100)
    per_sample = 1000.0 / stacks.RATE / 100
    assert table == {
        stacks.ENGINE: 500 * per_sample,
        "fastmcp": 50 * per_sample,
        "total": 550 * per_sample,
    }
