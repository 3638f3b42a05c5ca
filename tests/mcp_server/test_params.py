"""Tools an agent can use without guessing, in few words: every parameter described once,
closed sets as enums matching the engine's own sets, numbers with bounds, the engine's limits in
the schema; and the size of tools/list per profile and scope (and of the instructions) as
docs/mcp-tools.md states it."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from kenning.access.tokens import PROFILES
from kenning.core import validation
from kenning.core.models import STATES
from kenning.core.schema import NAMESPACES
from kenning.memory.experience import OUTCOMES
from kenning.runtime.embedding import default_model_path
from kenning.store.contradictions import STATUSES
from kenning.truth.contradictions import DECISIONS
from mcp_server import params, profiles
from mcp_server.app import INSTRUCTIONS
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


async def test_every_parameter_is_described_once() -> None:
    """A parameter carries a one-line description unless the server instructions state its
    meaning for every tool (``params.CONVENTIONS``) or its tool's description names it."""
    tools = await listed()
    assert len(tools) == len(REGISTRY.specs) > 40  # positive control: every tool is looked at
    described = 0
    for name, tool in tools.items():
        for param, schema in properties(tool).items():
            description = schema.get("description", "")
            if param in params.CONVENTIONS or params.said(param, tool["description"]):
                continue  # said once elsewhere (a type's own description, e.g. effort's, stays)
            assert description, (
                f"{name}.{param} has no description (add it to mcp_server/params.py)"
            )
            assert "\n" not in description, f"{name}.{param}"
            assert len(description) <= 100, f"{name}.{param}"
            described += 1
    assert described > 40
    instructions = INSTRUCTIONS.read_text("utf-8")
    for param in params.CONVENTIONS:
        assert f"`{param}`" in instructions, f"the instructions do not say what {param!r} is"


async def test_the_schema_states_the_engines_limits() -> None:
    tools = await listed()
    remember = properties(tools["remember"])
    assert remember["content"]["maxLength"] == validation.MAX_CONTENT
    assert remember["title"]["maxLength"] == validation.MAX_TITLE
    assert remember["tags"]["maxItems"] == validation.MAX_TAGS
    assert properties(tools["recall"])["query"]["maxLength"] == validation.MAX_QUERY
    project = re.compile(remember["project"]["pattern"])
    tag = re.compile(remember["tags"]["items"]["pattern"])
    # the schema admits what the engine's check admits after lower-casing, nothing else
    for name in ("kenning-api", "Kenning-API", "a" * 64, "a" * 65, "-x", "my proj", "x.y_z"):
        assert bool(project.match(name)) == bool(validation.PROJECT_RE.match(name.lower())), name
    for value in ("ci/cd", "C++", "c#", "a" * 100, "a" * 101, "#x", "a b", "k:v"):
        assert bool(tag.match(value)) == bool(validation.TAG_RE.match(value.lower())), value
    patterned = [
        f"{n}.{p}"
        for n, t in tools.items()
        for p, schema in properties(t).items()
        if p in ("project", "projects") and '"pattern"' in json.dumps(schema)
    ]
    every = [
        f"{n}.{p}" for n, t in tools.items() for p in properties(t) if p in ("project", "projects")
    ]
    assert patterned == every
    assert len(every) > 10
    assert "projects" not in properties(tools["recall"])  # one form: project, a name or a list


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


def sizes(text: str) -> tuple[int, int]:
    """(UTF-8 bytes, WordPiece tokens of the bundled model's tokenizer) of ``text``."""
    tokenizer = Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return len(text.encode("utf-8")), len(tokenizer.encode(text, add_special_tokens=False).ids)


async def measured() -> dict[tuple[str, str], tuple[int, int, int]]:
    """(profile, scope) -> (tools, bytes, tokens) of the tools/list answer as sent (compact JSON),
    and ("instructions", "") for the instruction block every connection receives."""
    tools = await listed()
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for profile in PROFILES:
        for scope, rank in RANKS.items():
            seen = [
                t
                for n, t in tools.items()
                if RANKS[REGISTRY.specs[n].scope] <= rank and profiles.shows(profile, n)
            ]
            wire = json.dumps({"tools": seen}, separators=(",", ":"), ensure_ascii=False)
            out[profile, scope] = (len(seen), *sizes(wire))
    out["instructions", ""] = (0, *sizes(INSTRUCTIONS.read_text("utf-8")))
    return out


ROW = re.compile(
    r"^\| `(\w+)` \| `?([\w-]+)`? \| (\d+|-) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|$", re.MULTILINE
)


async def test_the_tools_list_sizes_in_the_docs_are_the_measured_ones() -> None:
    found = await measured()
    rows = {(m[0], m[1].strip("-")): m for m in ROW.findall(DOC.read_text("utf-8"))}
    assert set(rows) == set(found), "docs/mcp-tools.md lost rows of its size table"
    for where, (count, size, tokens) in found.items():
        _, _, tools, doc_bytes, quarter, doc_tokens = rows[where]
        if where[0] != "instructions":
            assert int(tools) == count, f"{where}: {count} tools"
        for label, documented, value in (
            ("bytes", doc_bytes, size),
            ("bytes/4", quarter, size // 4),
            ("tokens", doc_tokens, tokens),
        ):
            number = int(documented.replace(",", ""))
            assert abs(number - value) <= 0.03 * value, (
                f"{where} {label} is {value}; docs/mcp-tools.md says {number}: update the table"
            )


async def test_the_default_agent_profile_costs_at_most_3000_tokens_with_a_write_token() -> None:
    found = await measured()
    count, _, tokens = found["agent", "write"]
    assert tokens <= 3_000, f"the agent profile's tools/list is {tokens} tokens"
    assert count >= 8  # positive control: the workflow's tools are in it
    assert found["all", "admin"][2] > 3 * tokens  # and the others cost what they cost
