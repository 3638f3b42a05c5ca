"""`kenning reindex`, `kenning reindex --check`, `kenning restore --apply` and `kenning doctor`
state the search graph's self-check (kenning/curation/graph.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import valkey

from kenning.core.settings import Settings
from kenning.runtime.embedding import Embedder
from kenning_cli.main import main
from tests.kenning.curation.test_graph_check import FACTS, _filled
from tests.kenning_cli.test_cli import _env

N = len(FACTS)
LINE = rf"self-check: {N} of {N} reachable \(\d+\.\d s at EF_RUNTIME 256\)"


@pytest.fixture
def cli(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The test's store, as `kenning` finds it from the environment."""
    _env(monkeypatch, tmp_path, settings.data_dir, settings.valkey_port, settings.key_prefix)
    return settings


def test_reindex_and_its_check_alone_print_the_self_check(
    cli: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _filled(cli, client, embedder).close()
    assert main(["doctor", "--no-mcp", "--no-web"]) == 0
    assert "ok   search graph: no self-check yet: `kenning reindex --check` runs one" in (
        capsys.readouterr().out
    )
    assert main(["reindex", "--check"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(LINE + "\n", out), out
    assert main(["reindex"]) == 0
    rebuilt, checked = capsys.readouterr().out.splitlines()
    assert re.fullmatch(rf"rebuilt \S+:r\d+ \({N} documents, {N} before\)", rebuilt), rebuilt
    assert re.fullmatch(LINE, checked), checked
    assert main(["doctor", "--no-mcp", "--no-web"]) == 0
    doctor = capsys.readouterr().out
    assert re.search(
        rf"ok   search graph: self-check: {N} of {N} reachable \(\d{{4}}-\d\d-\d\dT", doctor
    ), doctor


def test_restore_apply_prints_the_self_check_and_a_dry_run_does_not(
    cli: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine = _filled(cli, client, embedder)
    written = engine.backups.backup(vectors=True, label="cli", actor="t")
    engine.close()
    assert main(["restore", written.path]) == 0
    dry = capsys.readouterr().out
    assert "self-check" not in dry
    assert dry.rstrip().endswith("dry run: nothing was written; run again with --apply to restore")
    assert main(["restore", written.path, "--apply"]) == 0
    *_, applied, checked = capsys.readouterr().out.splitlines()
    assert applied == "applied"
    assert re.fullmatch(LINE, checked), checked
