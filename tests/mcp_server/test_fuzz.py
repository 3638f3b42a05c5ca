"""A bounded fuzz of every tool's arguments through a real client: hostile and malformed values
(poisoned dates, wildcards, query syntax, huge numbers, wrong types) get a clear error or a result,
never an internal error (docs/reliability.md). Seeded, a few calls per tool: a few seconds."""

from __future__ import annotations

import random
from typing import Any

from fastmcp import Client

from tests.mcp_server.conftest import McpHarness, remember, text_of

CALLS_PER_TOOL = 3
STRINGS = [
    "",
    " ",
    "x" * 60_000,
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59-23:59",
    "1e400",
    "nan",
    "*",
    "a\\-b*",
    "@content:(a|b)",
    "kenning:mem:knowledge:01ZZZ",
    "../../etc/passwd",
    "\x00\x01",
    "' OR 1=1 --",
    "ünïcödé ☃",
    "-1",
    "kenning-backup-20260101T000000Z.json",
    "global",
]
INTEGERS = [-1, 0, 1, 10**12, 2**63]
NUMBERS = [-1.0, 0.5, 1e308]
ARRAYS: list[list[Any]] = [[], ["*"], ["x"] * 100, [""], [1, None], ["0001-01-01"]]
OBJECTS: list[dict[str, Any]] = [{}, {"a": 1}, {"approach": "*", "reason": ""}]
BY_TYPE: dict[str, list[Any]] = {
    "string": STRINGS,
    "integer": INTEGERS,
    "number": NUMBERS,
    "boolean": [True, False],
    "array": ARRAYS,
    "object": OBJECTS,
    "null": [None],
}
EVERYTHING = [v for values in BY_TYPE.values() for v in values]


def _value(rnd: random.Random, schema: dict[str, Any], key: str) -> Any:
    if rnd.random() < 0.15:
        return rnd.choice(EVERYTHING)  # the wrong type: argument validation must say so
    options = schema.get("anyOf", [schema])
    option = rnd.choice(options)
    if "enum" in option and rnd.random() < 0.5:
        return rnd.choice(option["enum"])
    pool = BY_TYPE.get(option.get("type", "string"), STRINGS)
    if option.get("type") == "string" and rnd.random() < 0.3:
        return key  # a real memory key, so the write paths run too
    return rnd.choice(pool)


def _arguments(rnd: random.Random, schema: dict[str, Any], key: str) -> dict[str, Any]:
    required = set(schema.get("required", []))
    return {
        name: _value(rnd, spec, key)
        for name, spec in schema.get("properties", {}).items()
        if name in required or rnd.random() < 0.6
    }


async def _fuzz(client: Client[Any], rnd: random.Random, key: str) -> tuple[int, list[str]]:
    calls, internal = 0, []
    for tool in sorted(await client.list_tools(), key=lambda t: t.name):
        for _ in range(CALLS_PER_TOOL):
            arguments = _arguments(rnd, tool.input_schema, key)
            result = await client.call_tool(tool.name, arguments, raise_on_error=False)
            calls += 1
            if result.is_error and "internal_error" in text_of(result):
                internal.append(f"{tool.name}({arguments!r:.300}): {text_of(result)}")
    return calls, internal


async def test_fuzzed_tool_arguments_never_cause_an_internal_error(mcp: McpHarness) -> None:
    rnd = random.Random(13)
    async with mcp.client("admin") as client:
        key = await remember(client, "the fuzzing target memory", tags=["fuzz"])
        calls, internal = await _fuzz(client, rnd, key)
    # every tool was called (the positive control: the tools are listed)
    assert calls >= CALLS_PER_TOOL * 30
    assert internal == []
