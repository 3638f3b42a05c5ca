"""The access tests' shared fixture: the environment the `kenning` command reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import Settings


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    """`kenning` run in the test's folder against the test's store and prefix (in the cluster
    pass, the test's cluster: KENNING_VALKEY_CLUSTER)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KENNING_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(settings.valkey_port))
    monkeypatch.setenv("KENNING_KEY_PREFIX", settings.key_prefix)
    if settings.valkey_cluster is not None:
        monkeypatch.setenv("KENNING_VALKEY_CLUSTER", settings.valkey_cluster.get_secret_value())
    else:
        monkeypatch.delenv("KENNING_VALKEY_CLUSTER", raising=False)
