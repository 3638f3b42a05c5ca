"""`kenning skills export|import|list` against the test's store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning_cli.main import main
from tests.kenning.skill_history import DOMAIN, seed


def test_export_import_and_a_refused_bundle(
    engine: Engine,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.skills.write(proposal.id, actor="agent")
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    assert main(["skills", "export", str(tmp_path / "out")]) == 0
    exported = tmp_path / "out" / DOMAIN / "SKILL.md"
    assert exported.read_text(encoding="utf-8") == proposal.body
    assert main(["skills", "import", str(tmp_path / "out")]) == 0
    assert f"imported {DOMAIN} ({proposal.sha[:12]})" in capsys.readouterr().out
    exported.write_text(proposal.body.replace("name: postgres", "name: mysql"), encoding="utf-8")
    assert main(["skills", "import", str(tmp_path / "out")]) == 1
    assert "is not its folder's" in capsys.readouterr().err
    assert main(["skills", "list"]) == 0
    assert f"{DOMAIN}  {proposal.sha[:12]}  written by cli:skills-import" in capsys.readouterr().out
    assert engine.store.audit.recent(action="skill_import")[0].actor == "cli:skills-import"
