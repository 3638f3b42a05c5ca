"""Front door 1: the Kenning MCP server (FastMCP over Streamable HTTP, docs/mcp-server.md).

The map: ``app`` builds the server and its ASGI app; ``registry`` declares tools with their scope
and annotations and enforces scopes at dispatch; ``runtime`` gives a tool its engine and caller;
``errors`` is the one translator from engine errors to tool errors; ``auth`` verifies bearer tokens
and decides what may be exposed; ``metrics`` and ``routes`` serve /metrics and /healthz; ``service``
runs it all in a thread for `kenning up`; ``tools/`` holds one module per concern.
"""
