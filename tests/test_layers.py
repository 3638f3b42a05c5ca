"""The house's import rules (docs/architecture.md): the engine imports no door, no composition
root, no bench and no web framework; its wings import only the wings below them; the front doors
never import each other nor the CLI; no import circles anywhere; only kenning/store/ talks to
Valkey."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOORS = ("mcp_server", "web_ui", "feed_worker")
ENGINE_MAY_NOT = (
    *DOORS,
    "kenning_cli",
    "bench",
    "fastmcp",
    "starlette",
    "jinja2",
    "uvicorn",
    "apscheduler",
)


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
    "kenning/ops/embedded.py": (
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
            names = [node.module] + (
                [f"{node.module}.{a.name}" for a in node.names]
                if node.module == "kenning.store"
                else []
            )
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


# The engine's wings (docs/architecture.md, "The house"), lowest first: a wing may import the wings
# listed for it and the package face (``kenning.__version__``), never one above it.
WINGS: dict[str, set[str]] = {
    "core": set(),
    "language": {"core"},
    "store": {"core", "language"},
    "runtime": {"core", "language", "store"},
    "llm": {"core", "runtime", "store"},
    "truth": {"core", "language", "store", "runtime"},
    "memory": {"core", "language", "store", "runtime", "llm", "truth"},
    "curation": {"core", "language", "store", "runtime", "llm", "truth", "memory"},
    "knowledge": {"core", "language", "store", "runtime", "llm", "truth", "memory", "curation"},
    "access": {"core", "store"},
}
WINGS["ops"] = set(WINGS) | {"access"}
WINGS["engine"] = set(WINGS)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph(*packages: str) -> dict[str, set[str]]:
    """Which of the packages' modules each module imports, lazy imports included. ``from p import
    m`` where ``p.m`` is a module depends on ``p.m``: the package's face is not the dependency."""
    paths = {module_name(p): p for pkg in packages for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [s for s in subs if s in paths] or [node.module]
            else:
                continue
            for wanted in targets:
                target = wanted
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root, first in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(first)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_check_sees_a_circle() -> None:
    # positive control for the three tests below
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(
    "packages",
    [("kenning",), ("kenning_cli", "serving", *DOORS), ("bench",)],
    ids=["engine", "doors", "bench"],
)
def test_no_import_circles(packages: tuple[str, ...]) -> None:
    graph = module_graph(*packages)
    assert len(graph) > 10  # positive control: modules and edges were read
    assert any(graph.values())
    assert circles(graph) == []


def test_every_engine_module_lives_in_a_wing_that_says_what_it_owns() -> None:
    loose = sorted(p.name for p in (ROOT / "kenning").glob("*.py") if p.name != "__init__.py")
    assert loose == []
    wings = sorted(p.name for p in (ROOT / "kenning").iterdir() if (p / "__init__.py").exists())
    assert wings == sorted(WINGS)
    for wing in wings:
        doc = ast.get_docstring(ast.parse((ROOT / "kenning" / wing / "__init__.py").read_text()))
        assert doc, f"kenning/{wing}/__init__.py says nothing"
        assert "import" in doc, f"kenning/{wing}/__init__.py must say what it may import"


def test_wings_import_only_the_wings_below_them() -> None:
    graph = module_graph("kenning")
    seen: set[tuple[str, str]] = set()
    for name, deps in graph.items():
        parts = name.split(".")
        if len(parts) < 2:
            continue
        for dep in deps:
            below = dep.split(".")
            if len(below) > 1 and below[1] != parts[1]:
                seen.add((parts[1], below[1]))
    assert ("memory", "truth") in seen  # positive control: cross-wing imports were read
    upward = sorted((w, d) for w, d in seen if d not in WINGS[w])
    assert upward == []


@pytest.mark.parametrize("door", [*DOORS, "serving"])
def test_no_door_reaches_back_into_the_composition_root(door: str) -> None:
    files = imports(door)
    assert any("kenning" in names for names in files.values())  # positive control
    assert {p: n & {"kenning_cli"} for p, n in files.items() if "kenning_cli" in n} == {}
    if door == "serving":
        assert {p: n & set(DOORS) for p, n in files.items() if n & set(DOORS)} == {}
