"""The house's size ceilings (STYLE.md, rule 7): no module of the engine, the doors, the CLI or the
serving piece over 600 lines, no function over 50. Aim lower (about 400 and 30); these are the
lines a change may not cross. bench/ is measured, not gated: its runners are long scripts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GATED = ("kenning", "kenning_cli", "serving", "mcp_server", "web_ui", "feed_worker")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 50


def sources() -> list[Path]:
    return [path for package in GATED for path in sorted((ROOT / package).rglob("*.py"))]


def long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in ``source`` longer than ``limit``."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_gated_tree_is_found() -> None:
    assert len(sources()) > 200  # the whole house, not an empty glob


@pytest.mark.parametrize("package", GATED)
def test_no_module_over_the_ceiling(package: str) -> None:
    over = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / package).rglob("*.py"))
        if (lines := path.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES
    }
    assert over == {}, f"split these modules (ceiling {MAX_MODULE_LINES} lines): {over}"


@pytest.mark.parametrize("package", GATED)
def test_no_function_over_the_ceiling(package: str) -> None:
    over = {
        f"{path.relative_to(ROOT)}:{name}": lines
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, lines in long_functions(path.read_text(encoding="utf-8"), MAX_FUNCTION_LINES)
    }
    assert over == {}, f"split these functions (ceiling {MAX_FUNCTION_LINES} lines): {over}"


def test_the_function_check_sees_a_long_one() -> None:
    """Positive control: a 51-line function and a 51-line method are found, a 50-line one not."""
    body = "".join(f"    x{i} = {i}\n" for i in range(49))
    source = (
        f"def long():\n{body}    return 0\n\n"
        f"def fits():\n{body}\n"
        f"class C:\n    async def method(self):\n"
        + body.replace("    ", "        ")
        + "        return 0\n"
    )
    assert sorted(long_functions(source, MAX_FUNCTION_LINES)) == [("long", 51), ("method", 51)]
