"""Settings: every field is documented, validation refuses bad values with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from kenning.core.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_is_in_env_example_and_docs(name: str) -> None:
    variable = f"KENNING_{name.upper()}"
    assert f"{variable}=" in (ROOT / ".env.example").read_text(encoding="utf-8")
    assert f"`{variable}`" in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert Settings.model_fields[name].description


def test_environment_is_read_with_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_VALKEY_PORT", "7001")
    monkeypatch.setenv("KENNING_KEY_PREFIX", "other:")
    settings = Settings(_env_file=None)
    assert settings.valkey_port == 7001
    assert settings.key_prefix == "other:"


def test_settings_are_frozen() -> None:
    settings = Settings(_env_file=None)
    with pytest.raises(ValidationError):
        settings.valkey_port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("key_prefix", "bad prefix{}"),
        ("valkey_port", "0"),
        ("duplicate_threshold", "1.5"),
        ("log_level", "LOUD"),
    ],
)
def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch, field: str, value: str) -> None:
    monkeypatch.setenv(f"KENNING_{field.upper()}", value)
    with pytest.raises(ValidationError, match=field):
        Settings(_env_file=None)


def test_blank_optional_values_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_VALKEY_URL", "")
    monkeypatch.setenv("KENNING_SEARCH_MODULE", "")
    settings = Settings(_env_file=None)
    assert settings.valkey_url is None
    assert settings.search_module is None
