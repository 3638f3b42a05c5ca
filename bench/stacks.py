"""CPU per call by layer, from py-spy's raw (collapsed) stacks of a server process. Pure.

Each sample is charged to one layer: the engine when any frame is in ``kenning/`` (the work every
door shares), else the innermost frame that belongs to a known layer, so a pydantic call made by
fastmcp counts as pydantic and fastmcp's own lines as fastmcp. Start-up (imports, the model load,
building the app) is left out, and so are threads parked waiting (the event loop's select, idle
worker threads), so what remains is the CPU the serving of the calls took.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

RATE = 250  # samples per second (`py-spy record --rate`)
STARTUP = ("_find_and_load", "open_engine (", "load_embedder (", "build_app (", "build_server (")
SDK = "MCP SDK (session manager, transport, JSON-RPC)"
LOOP = "anyio / asyncio (tasks, streams, threads)"
LAYERS: tuple[
    tuple[str, str], ...
] = (  # (file path prefix as py-spy prints it, layer), innermost frame first
    ("pydantic", "pydantic (validation, serialisation)"),
    ("logging/", "logging"),
    ("json/", "json"),
    ("prometheus_client/", "prometheus metrics"),
    ("mcp_server/", "Kenning's MCP door (mcp_server/)"),
    ("bench/", "the floor endpoint (bench/)"),
    ("fastmcp/", "fastmcp"),
    ("mcp/", SDK),
    ("mcp_types/", SDK),
    ("sse_starlette/", SDK),
    ("starlette/", "starlette"),
    ("httpx", "httpx / httpcore (HTTP client)"),
    ("httpcore/", "httpx / httpcore (HTTP client)"),
    ("uvicorn/", "uvicorn (HTTP parsing)"),
    ("httptools/", "uvicorn (HTTP parsing)"),
    ("h11/", "uvicorn (HTTP parsing)"),
    ("anyio/", LOOP),
    ("asyncio/", LOOP),
    ("threading.py", LOOP),
)
# a thread parked in one of these is waiting, not working (py-spy cannot always tell on a busy box)
IDLE = (
    "EpollSelector.select",
    "Condition.wait",
    "Event.wait",
    "Queue.get",
    "_worker",
    "Condition._acquire_restore",
)
ENGINE = "engine (kenning/: embedding, KNN, scoring)"
OTHER = "other"


def layer(frames: list[str]) -> str | None:
    """The layer of one sample (frames outermost first); None for start-up and idle waits."""
    if not frames or frames[-1].partition(" (")[0] in IDLE:
        return None
    if any(marker in frame for frame in frames for marker in STARTUP):
        return None
    files = [frame.rpartition(" (")[2] for frame in frames]
    if any(file.startswith("kenning/") for file in files):
        return ENGINE
    for file in reversed(files):
        for prefix, name in LAYERS:
            if file.startswith(prefix):
                return name
    return OTHER


def tally(lines: list[str]) -> dict[str, int]:
    """Samples per layer from raw py-spy lines (``frame;frame;... count``)."""
    out: dict[str, int] = {}
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        name = layer(stack.split(";"))
        if name is not None:
            out[name] = out.get(name, 0) + int(count)
    return out


def breakdown(path: Path, calls: int) -> dict[str, float]:
    """CPU milliseconds per call by layer, largest first, with the total."""
    if not path.exists():
        return {}
    samples = tally(path.read_text(encoding="utf-8", errors="replace").splitlines())
    per_call = {
        name: 1000.0 * n / RATE / calls
        for name, n in sorted(samples.items(), key=lambda kv: -kv[1])
    }
    per_call["total"] = sum(per_call.values())
    return per_call


def render(table: dict[str, Any]) -> str:
    rows = [f"| {name} | {ms:.2f} |" for name, ms in table.items()]
    return "\n".join(["| layer | CPU ms per call |", "| --- | --- |", *rows])
