"""Tools an agent can use without guessing: every parameter described, closed sets as enums
matching the engine's own sets, numbers with bounds; and the size of tools/list per scope as
docs/mcp-tools.md states it."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from kenning.core.models import STATES
from kenning.core.schema import NAMESPACES
from kenning.memory.experience import OUTCOMES
from kenning.runtime.embedding import default_model_path
from kenning.store.contradictions import STATUSES
from kenning.truth.contradictions import DECISIONS
from mcp_server import params
from tests.mcp_server.conftest import probe

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp-tools.md"
SERVER, REGISTRY = probe()
CLOSED = {
    "namespace",
    "namespaces",
    "states",
    "status",
    "decision",
    "outcome",
    "type",
    "strategy",
    "sort",
}
RANKS = {"read": 0, "write": 1, "admin": 2}


async def listed() -> dict[str, dict[str, Any]]:
    """Each tool as tools/list sends it (the MCP wire form)."""
    return {
        t.name: t.to_mcp_tool().model_dump(mode="json", by_alias=True, exclude_none=True)
        for t in await SERVER.list_tools()
    }


def properties(tool: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = tool["inputSchema"].get("properties", {})
    return found


def test_the_closed_sets_are_the_engines_own() -> None:
    assert typing.get_args(params.Namespace) == tuple(sorted(NAMESPACES)) == NAMESPACES
    assert typing.get_args(params.State) == STATES
    assert typing.get_args(params.Outcome) == OUTCOMES
    assert typing.get_args(params.Decision) == DECISIONS
    assert typing.get_args(params.ContradictionStatus) == (*STATUSES, "all")


async def test_every_parameter_has_a_one_line_description() -> None:
    tools = await listed()
    assert len(tools) == len(REGISTRY.specs) > 40  # positive control: every tool is looked at
    for name, tool in tools.items():
        for param, schema in properties(tool).items():
            description = schema.get("description", "")
            assert description, (
                f"{name}.{param} has no description (add it to mcp_server/params.py)"
            )
            assert "\n" not in description, f"{name}.{param}"
            assert len(description) <= 160, f"{name}.{param}"


async def test_closed_sets_are_enums_and_numbers_carry_bounds() -> None:
    checked = 0
    for name, tool in (await listed()).items():
        for param, schema in properties(tool).items():
            text = json.dumps(schema)
            if param in CLOSED:
                assert '"enum"' in text, f"{name}.{param} is a closed set without an enum"
                checked += 1
            if (
                schema.get("type") in ("integer", "number")
                or '"integer"' in text
                or '"number"' in text
            ):
                assert '"minimum"' in text, f"{name}.{param} has no lower bound"
                assert '"maximum"' in text, f"{name}.{param} has no upper bound"
                checked += 1
    assert checked > 20


async def test_effort_says_what_it_means_and_what_4_or_more_does() -> None:
    tools = await listed()
    for name in ("log_abandoned", "record_experience"):
        effort = properties(tools[name])["effort"]
        assert (effort["minimum"], effort["maximum"]) == (1, 5)
        assert "1 trivial" in effort["description"], name
        assert "4 or more" in effort["description"], name
        assert "suppress" in effort["description"]


async def test_the_tools_list_sizes_in_the_docs_are_the_measured_ones() -> None:
    tokenizer = Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tools = await listed()
    measured: dict[str, int] = {}
    for scope, rank in RANKS.items():
        seen = [t for n, t in tools.items() if RANKS[REGISTRY.specs[n].scope] <= rank]
        text = json.dumps({"tools": seen})
        measured[scope] = len(tokenizer.encode(text, add_special_tokens=False).ids)
    rows = dict(
        re.findall(
            r"^\| `(read|write|admin)` \| \d+ \| [\d,]+ \| ([\d,]+) \|",
            DOC.read_text("utf-8"),
            flags=re.MULTILINE,
        )
    )
    assert set(rows) == set(RANKS), "docs/mcp-tools.md lost its tools/list size table"
    for scope, tokens in measured.items():
        documented = int(rows[scope].replace(",", ""))
        assert abs(documented - tokens) <= 0.03 * tokens, (
            f"tools/list for {scope} is {tokens} tokens; docs/mcp-tools.md says "
            f"{documented}: update the table"
        )
