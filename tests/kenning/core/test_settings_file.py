"""Where `kenning` reads its .env from, wherever it runs: KENNING_HOME, ./.env, ~/.kenning/.env."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import current_settings_file, load_settings, settings_file


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    cwd, home, named = tmp_path / "cwd", tmp_path / "home", tmp_path / "named"
    for path in (cwd, home / ".kenning", named):
        path.mkdir(parents=True)
    return cwd, home, named


def test_the_order_is_kenning_home_then_the_working_directory_then_the_install(
    places: tuple[Path, Path, Path],
) -> None:
    cwd, home, named = places
    assert settings_file({}, cwd, home)[0] is None  # nothing anywhere: defaults only
    (home / ".kenning" / ".env").write_text("KENNING_MCP_PORT=1\n", encoding="utf-8")
    assert settings_file({}, cwd, home) == (
        home / ".kenning" / ".env",
        "install.sh's (~/.kenning/.env)",
    )
    (cwd / ".env").write_text("DATABASE_URL=postgres://x\n", encoding="utf-8")
    assert settings_file({}, cwd, home)[0] == home / ".kenning" / ".env"  # another project's .env
    (cwd / ".env").write_text("# mine\nKENNING_MCP_PORT=2\n", encoding="utf-8")
    assert settings_file({}, cwd, home)[0] == cwd / ".env"  # a checkout's .env wins
    found, why = settings_file({"KENNING_HOME": str(named)}, cwd, home)
    assert found == named / ".env"  # named, it wins, even while missing (a typo is not replaced)
    assert "KENNING_HOME=" in why
    assert settings_file({"KENNING_HOME": ""}, cwd, home)[0] == cwd / ".env"


def test_load_settings_reads_the_installed_env_from_any_directory(
    places: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, home, named = places
    (home / ".kenning" / ".env").write_text("KENNING_MCP_PORT=18765\n", encoding="utf-8")
    monkeypatch.delenv("KENNING_HOME")
    monkeypatch.delenv("KENNING_MCP_PORT", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    assert current_settings_file()[0] == home / ".kenning" / ".env"
    assert load_settings().mcp_port == 18765
    (named / ".env").write_text("KENNING_MCP_PORT=28765\n", encoding="utf-8")
    monkeypatch.setenv("KENNING_HOME", str(named))
    assert load_settings().mcp_port == 28765
    monkeypatch.setenv("KENNING_MCP_PORT", "38765")  # the environment still wins over any file
    assert load_settings().mcp_port == 38765
