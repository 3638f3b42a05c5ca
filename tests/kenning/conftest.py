"""Fixtures the engine's tests share: the local stand-in for the Anthropic API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.anthropic_fake import FakeAnthropic, serve


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """The fake Anthropic API on a local port; ``with_key`` points settings at it."""
    yield from serve()
