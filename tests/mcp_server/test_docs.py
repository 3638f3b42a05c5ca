"""docs/mcp-tools.md cannot drift: every registered tool has an entry naming each parameter, with
an example that validates against the tool's schema; and the schema checker
itself catches bad examples."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_server.calls import problems
from tests.mcp_server.conftest import probe

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mcp-tools.md"
SERVER, REGISTRY = probe()


async def schemas() -> dict[str, dict[str, Any]]:
    return {tool.name: tool.parameters for tool in await SERVER.list_tools()}


def sections(text: str) -> dict[str, str]:
    """``### `name` `` heading -> the text up to the next heading."""
    parts = re.split(r"^(?=#{2,3} )", text, flags=re.MULTILINE)
    out: dict[str, str] = {}
    for part in parts:
        match = re.match(r"### `([a-z_]+)`", part)
        if match:
            out[match.group(1)] = part
    return out


def examples(section: str) -> list[str]:
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(REGISTRY.specs))
async def test_every_registered_tool_is_documented_with_its_parameters_and_an_example(
    name: str,
) -> None:
    entry = sections(DOC.read_text(encoding="utf-8")).get(name)
    assert entry is not None, f"docs/mcp-tools.md has no '### `{name}`' entry"
    schema = (await schemas())[name]
    for parameter in schema.get("properties", {}):
        assert f"`{parameter}`" in entry, f"{name}: parameter {parameter!r} is not documented"
    assert f"scope `{REGISTRY.specs[name].scope}`" in entry, (
        f"{name}: the entry does not state its scope"
    )
    calls = examples(entry)
    assert calls, f"{name}: no example"
    schemas_ = await schemas()
    for call in calls:
        assert problems(call, schemas_) == [], call


def test_the_doc_lists_no_tool_that_does_not_exist() -> None:
    documented = set(sections(DOC.read_text(encoding="utf-8")))
    assert documented, "no entries parsed"
    assert documented - set(REGISTRY.specs) == set()


async def test_the_checker_catches_wrong_names_parameters_and_types() -> None:
    known = await schemas()
    assert problems('recall(query="x", top_k=3)', known) == []  # positive control
    assert problems('recal(query="x")', known) == ["recal is not a registered tool"]
    assert problems('recall(question="x")', known) == [
        "recall: no parameter 'question'",
        "recall: missing required 'query'",
    ]
    assert problems('recall(query="x", top_k="3")', known)[0].startswith(
        "recall: top_k='3' does not fit"
    )
    assert problems('remember(content="x", tags="ci")', known)[0].startswith("remember: tags='ci'")
    assert problems('remember_document(text="x", strategy="chapters")', known) != []
    approach = 'record_experience(key="k", effort=3, outcome="pivoted", abandoned_approaches=[{}])'
    # positive control
    assert problems(approach.format('{"name": "celery", "type": "library"}'), known) == []
    for wrong in (
        '{"type": "library"}',
        '{"name": "celery", "kind": "library"}',
        '{"name": "celery", "type": "lib"}',
    ):
        assert problems(approach.format(wrong), known) != [], wrong
