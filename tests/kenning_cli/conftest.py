"""The local feed server (tests/feeds_server.py) for `kenning feeds`."""

from tests.feeds_server import feed_server  # noqa: F401 (a fixture)
from tests.mcp_server.conftest import mcp  # noqa: F401 (the real MCP server, for kenning connect)
