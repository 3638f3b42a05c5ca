"""The `kenning` command: help for every command, version, doctor against a
running and a stopped Valkey."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kenning import __version__
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning_cli.main import build_parser, load_commands, main
from kenning_cli.registry import COMMANDS
from tests.conftest import free_port

load_commands()


def _env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path, port: int, prefix: str
) -> None:
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    monkeypatch.setenv("KENNING_DATA_DIR", str(data_dir))
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(port))
    monkeypatch.setenv("KENNING_KEY_PREFIX", prefix)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"kenning {__version__}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([name, "--help"])
    assert info.value.code == 0
    assert COMMANDS[name][0].split()[0] in capsys.readouterr().out


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: kenning" in capsys.readouterr().out


def test_doctor_passes_against_a_running_valkey(
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings.data_dir, settings.valkey_port, settings.key_prefix)
    assert main(["doctor", "--no-mcp", "--no-web"]) == 0
    out = capsys.readouterr().out
    first, second, rest = out.split("\n", 2)
    assert first.startswith("settings file: ")
    assert second.startswith(
        f"settings: data dir {settings.data_dir}; valkey embedded 127.0.0.1:{settings.valkey_port};"
    )
    assert "mcp" not in rest  # --no-mcp: no MCP check
    assert "dashboard" not in rest  # --no-web: no dashboard check
    assert "ok   valkey" in out
    assert re.search(
        r"ok   search module: loaded \((valkey-search|redisearch) \d+\.\d+\.\d+\)", out
    )
    # the default for a new store
    assert "ok   embedding model: all-MiniLM-L6-v2+int8, 384 dims" in out
    assert re.search(r"ok   indexes: \S+idx:memories:\w+ current, \d+ memories indexed", out)


def test_doctor_fails_with_a_reason_per_check_when_valkey_is_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import make_settings

    data = tmp_path / "data"
    port = free_port()
    with EmbeddedValkey(make_settings(data, port)):
        pass  # leaves a password file behind, then stops
    _env(monkeypatch, tmp_path, data, port, "kenning:")
    monkeypatch.setenv("KENNING_MCP_PORT", str(free_port()))  # nothing listens there
    monkeypatch.setenv("KENNING_WEB_PORT", str(free_port()))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL mcp server: not reachable at http://127.0.0.1:" in out
    assert "FAIL dashboard: not reachable at http://127.0.0.1:" in out
    assert "FAIL valkey: Valkey is unreachable" in out
    assert "FAIL search module: not checked: Valkey is unreachable" in out
    assert "FAIL indexes: not checked" in out


def test_doctor_reports_missing_indexes(
    settings: Settings,
    client: object,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings.data_dir, settings.valkey_port, settings.key_prefix)
    assert main(["doctor", "--no-mcp", "--no-web"]) == 1
    assert "FAIL indexes: no memory index: start a Kenning service" in capsys.readouterr().out


def test_invalid_configuration_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KENNING_VALKEY_PORT", "not-a-port")
    assert main(["doctor"]) == 2
    assert "invalid configuration" in capsys.readouterr().err


def test_user_create_without_a_tty_is_a_clear_error_not_a_traceback(
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import io

    _env(monkeypatch, tmp_path, settings.data_dir, settings.valkey_port, settings.key_prefix)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a TTY (a pipe, docker exec -T, CI)
    assert main(["user", "create", "ada", "--role", "admin"]) == 1
    err = capsys.readouterr().err
    assert "no terminal to ask the password on" in err
    assert "--password-stdin" in err
    assert "Traceback" not in err
    # positive control: the same account from stdin, as the hint says
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery staple\n"))
    assert main(["user", "create", "ada", "--role", "admin", "--password-stdin"]) == 0
    assert "created account 'ada' with role admin" in capsys.readouterr().out
