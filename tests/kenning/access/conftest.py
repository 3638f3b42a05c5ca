"""The access tests' shared fixture: the environment the `kenning` command reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import Settings
from tests.conftest import point_cli


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    """`kenning` run in the test's folder against the test's store and prefix (in the cluster
    pass, the test's cluster: KENNING_VALKEY_CLUSTER)."""
    monkeypatch.chdir(tmp_path)
    point_cli(monkeypatch, settings)
