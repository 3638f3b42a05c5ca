"""The house's import rules (docs/architecture.md): the engine imports no door, no composition
root, no bench and no web framework; the front doors never import each other; only
kenning/store/ talks to Valkey."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOORS = ("mcp_server", "web_ui", "feed_worker")
ENGINE_MAY_NOT = (*DOORS, "kenning_cli", "bench", "fastmcp", "starlette", "jinja2", "uvicorn",
                  "apscheduler")


def imports(package: str) -> dict[str, set[str]]:
    """Top-level modules each file of ``package`` imports (lazy imports
    inside functions included)."""
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
        assert not names & set(ENGINE_MAY_NOT), (
            f"{path} imports {sorted(names & set(ENGINE_MAY_NOT))}"
        )


@pytest.mark.parametrize("door", DOORS)
def test_a_door_never_imports_another(door: str) -> None:
    files = imports(door)
    assert files
    # positive control: doors call the engine
    assert any("kenning" in names for names in files.values())
    others = set(DOORS) - {door}
    for path, names in files.items():
        assert not names & others, f"{path} imports {sorted(names & others)}"


# Only kenning/store/ talks to Valkey. Outside it, no module imports valkey, a store submodule
# (``from kenning.store import Store`` and the public types it exports are the seam), reads
# ``store.client`` attribute, builds a pipeline or sends a raw command.
STORE = ROOT / "kenning" / "store"
VALKEY_EDGE = {  # files that may import valkey, and why
    "kenning/embedded.py": (
        "starts the valkey-server child process and waits until it answers (a process edge)"
    ),
}
RAW_CALLS = (r"\bpipeline\(", r"\bexecute_command\b", r"\bstore\.client\b")


def store_violations(path: Path) -> list[str]:
    """What in one file reaches Valkey around the Store seam."""
    rel = str(path.relative_to(ROOT))
    source = path.read_text(encoding="utf-8")
    found = [f"calls {raw!r}" for raw in RAW_CALLS if re.search(raw, source)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + ([f"{node.module}.{a.name}" for a in node.names]
                                     if node.module == "kenning.store" else [])
        else:
            continue
        for name in names:
            if name.startswith("kenning.store.") and (STORE / f"{name.split('.')[2]}.py").exists():
                found.append(f"imports the store submodule {name}")
            elif name.split(".")[0] == "valkey" and rel not in VALKEY_EDGE:
                found.append(f"imports {name}")
    return found


@pytest.mark.parametrize("package", ["kenning", *DOORS, "kenning_cli"])
def test_only_the_store_talks_to_valkey(package: str) -> None:
    files = [p for p in sorted((ROOT / package).rglob("*.py")) if STORE not in p.parents]
    assert files  # positive control: the package's files were read
    seen = store_violations(STORE / "memories.py")  # and the check sees a real pipeline and import
    assert f"calls {RAW_CALLS[0]!r}" in seen
    assert "imports valkey" in seen
    problems = {str(p.relative_to(ROOT)): v for p in files if (v := store_violations(p))}
    assert problems == {}
