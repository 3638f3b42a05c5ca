"""uvloop and httptools (what uvicorn takes when they are importable) are installed, and a
missing one is named: without them an MCP call costs up to about 1 ms more
(bench/FINDINGS.md, issue 21)."""

from __future__ import annotations

from mcp_server.service import ACCELERATORS, missing_accelerators


def test_this_environment_has_every_accelerator() -> None:
    assert set(ACCELERATORS) == {"httptools", "uvloop"}  # Linux: both apply
    assert missing_accelerators() == []


def test_a_missing_accelerator_is_named() -> None:
    assert missing_accelerators(lambda _: object()) == []  # the control: all found, none named
    assert missing_accelerators(lambda name: None if name == "httptools" else object()) == [
        "httptools"
    ]
