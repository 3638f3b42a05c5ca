"""Docs cannot drift: every CLI command is in docs/cli.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning_cli.main import COMMANDS, load_commands

ROOT = Path(__file__).resolve().parents[2]
load_commands()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_documented(name: str) -> None:
    assert f"`kenning {name}" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
