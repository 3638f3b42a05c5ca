"""The local feed server (tests/feeds_server.py), for the summary feed of test_failures."""

from tests.feeds_server import feed_server  # noqa: F401 (a fixture)
