"""Regenerate .env.example and docs/configuration.md from the Settings declaration.

Run `python scripts/gen_config_docs.py` after adding a setting; tests/kenning/core/test_settings.py
fails
while either file misses a field.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_core import PydanticUndefined

from kenning.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def default_text(name: str) -> str:
    field = Settings.model_fields[name]
    if field.default_factory is not None:
        return (
            "(the user's data dir, e.g. ~/.local/share/kenning)"
            if name == "data_dir"
            else "(computed)"
        )
    if field.default is None or field.default is PydanticUndefined:
        return ""
    value = field.default
    return str(value).lower() if isinstance(value, bool) else str(value)


def env_example() -> str:
    lines = ["# Kenning settings. Every variable is optional; the value shown is the default.", ""]
    for name, field in Settings.model_fields.items():
        lines.append(f"# {field.description}")
        default = default_text(name)
        prefix = "# " if default.startswith("(") else ""
        lines.append(f"{prefix}KENNING_{name.upper()}={'' if prefix else default}")
        lines.append("")
    return "\n".join(lines)


def config_doc() -> str:
    rows = [
        "# Configuration",
        "",
        "Kenning reads one typed settings object once at start-up: environment variables with the "
        "prefix",
        "`KENNING_`, then one `.env` file: `$KENNING_HOME/.env` when `KENNING_HOME` is set, else",
        "`./.env` when it holds a `KENNING_` setting (a checkout's), else `~/.kenning/.env` "
        "(install.sh's",
        "default directory), so `kenning` finds its settings from any directory; `kenning doctor` "
        "prints",
        "which. `.env.example` lists the same fields.",
        "",
        "| variable | default | meaning |",
        "| --- | --- | --- |",
    ]
    for name, field in Settings.model_fields.items():
        rows.append(f"| `KENNING_{name.upper()}` | `{default_text(name)}` | {field.description} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    (ROOT / ".env.example").write_text(env_example(), encoding="utf-8")
    (ROOT / "docs" / "configuration.md").write_text(config_doc(), encoding="utf-8")
    print("wrote .env.example and docs/configuration.md")
