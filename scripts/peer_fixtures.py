"""Regenerate tests/kenning/memory/peers/mcp-server-memory.jsonl with the peer's own package: the
official MCP knowledge-graph server (npm @modelcontextprotocol/server-memory, pinned below), driven
over stdio by the official Python MCP SDK. Run it when that package's format changes:

    npm install --prefix /tmp/peers @modelcontextprotocol/server-memory@2026.8.31
    .venv/bin/python scripts/peer_fixtures.py /tmp/peers

The other peers' fixtures are written from their documented schemas by hand (their packages need a
model download or a cloud API to store anything offline): tests/kenning/memory/peers/README.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

OUT = Path(__file__).resolve().parents[1] / "tests" / "kenning" / "memory" / "peers"
ENTITIES = [
    {
        "name": "shop-api",
        "entityType": "service",
        "observations": [
            "shop-api is written in Go 1.23 and deploys with Helm to the eu-west cluster",
            "shop-api's integration tests need a Postgres 16 container on port 5433",
        ],
    },
    {
        "name": "Dana",
        "entityType": "person",
        "observations": ["Dana prefers small pull requests with a test per change"],
    },
    {
        "name": "billing-worker",
        "entityType": "service",
        "observations": ["billing-worker retries failed invoices three times, then pages on-call"],
    },
]
RELATIONS = [
    {"from": "Dana", "to": "shop-api", "relationType": "owns"},
    {"from": "shop-api", "to": "billing-worker", "relationType": "calls"},
]


async def make(peers: Path) -> None:
    target = OUT / "mcp-server-memory.jsonl"
    target.unlink(missing_ok=True)
    package = peers / "node_modules" / "@modelcontextprotocol" / "server-memory"
    server = package / "dist" / "index.js"
    params = StdioServerParameters(
        command="node", args=[str(server)], env={**os.environ, "MEMORY_FILE_PATH": str(target)}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("create_entities", {"entities": ENTITIES})
        await session.call_tool("create_relations", {"relations": RELATIONS})
    print(f"wrote {target}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: peer_fixtures.py NPM_PREFIX (where the peer package is installed)")
    asyncio.run(make(Path(sys.argv[1])))
