"""The local feed server (tests/feeds_server.py) for the engine's feed tests."""

from tests.feeds_server import feed_server  # noqa: F401 (a fixture)
