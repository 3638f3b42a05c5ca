"""The house's import rules (docs/architecture.md): the engine imports no door, no composition root, no bench
and no web framework; the front doors never import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOORS = ("mcp_server", "web_ui", "feed_worker")
ENGINE_MAY_NOT = (*DOORS, "kenning_cli", "bench", "fastmcp", "starlette", "jinja2", "uvicorn", "apscheduler")


def imports(package: str) -> dict[str, set[str]]:
    """Top-level modules each file of ``package`` imports (lazy imports inside functions included)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


def test_the_engine_imports_no_door_no_composition_root_and_no_web_framework() -> None:
    files = imports("kenning")
    assert len(files) > 50  # positive control: the engine's modules were read
    assert any("valkey" in names for names in files.values())  # and their imports seen
    for path, names in files.items():
        assert not names & set(ENGINE_MAY_NOT), f"{path} imports {sorted(names & set(ENGINE_MAY_NOT))}"


@pytest.mark.parametrize("door", DOORS)
def test_a_door_never_imports_another(door: str) -> None:
    files = imports(door)
    assert files
    assert any("kenning" in names for names in files.values())  # positive control: doors call the engine
    others = set(DOORS) - {door}
    for path, names in files.items():
        assert not names & others, f"{path} imports {sorted(names & others)}"
