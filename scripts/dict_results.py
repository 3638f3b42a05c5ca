"""Count the engine's functions that still return plain dicts (docs/architecture.md "Results").

Counts every function and method in kenning/ outside kenning/store/ whose return annotation names
``dict[str, Any]``, leaving out private ones (``_name``) and a result's own plain forms (``public``,
``record``, ``fields``, ``to_dict``, ``audit_details``). ``--list`` prints each one.

    python scripts/dict_results.py [--list] [ROOT]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# a result's plain forms: its JSON, its stored record, its hash fields, what its audit event carries
PLAIN_FORMS = {"public", "record", "fields", "to_dict", "audit_details"}


def dict_results(root: Path) -> list[str]:
    found = []
    for path in sorted((root / "kenning").rglob("*.py")):
        if (root / "kenning" / "store") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.returns is None:
                continue
            if node.name.startswith("_") or node.name in PLAIN_FORMS:
                continue
            if "dict[str, Any]" in ast.unparse(node.returns):
                found.append(f"{path.relative_to(root)} {node.name} -> {ast.unparse(node.returns)}")
    return found


def main(argv: list[str]) -> int:
    paths = [a for a in argv if not a.startswith("--")]
    found = dict_results(Path(paths[0]) if paths else Path(__file__).resolve().parents[1])
    if "--list" in argv:
        print("\n".join(found))
    print(f"{len(found)} engine functions return dict[str, Any]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
