"""The local feed server (tests/feeds_server.py), for the feed articles of test_provenance."""

from tests.feeds_server import feed_server  # noqa: F401 (a fixture)
