"""Checking written tool calls (docs and instructions examples) against
the live tool schemas. Pure."""

from __future__ import annotations

import ast
from typing import Any

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _accepts(schema: dict[str, Any], value: Any) -> bool:
    if "anyOf" in schema:
        return any(_accepts(option, value) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if not isinstance(value, JSON_TYPES[kind]):
        return False
    if isinstance(value, list) and "items" in schema:
        return all(_accepts(schema["items"], item) for item in value)
    # a nested model, e.g. an abandoned approach
    if isinstance(value, dict) and "properties" in schema:
        fields: dict[str, Any] = schema["properties"]
        return (
            set(value) <= set(fields)
            and set(schema.get("required", [])) <= set(value)
            and all(_accepts(fields[name], item) for name, item in value.items())
        )
    return True


def problems(source: str, schemas: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with one written call ``tool(name=value, ...)``;
    empty when it would validate."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as exc:
        return [f"not a call: {exc.msg}"]
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return ["not a call of a tool by name"]
    name = node.func.id
    if name not in schemas:
        return [f"{name} is not a registered tool"]
    if node.args:
        return [f"{name}: use keyword arguments"]
    schema = schemas[name]
    properties: dict[str, Any] = schema.get("properties", {})
    given = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    out = [f"{name}: no parameter {arg!r}" for arg in given if arg not in properties]
    out += [
        f"{name}: missing required {arg!r}"
        for arg in schema.get("required", [])
        if arg not in given
    ]
    out += [
        f"{name}: {arg}={value!r} does not fit {properties[arg]}"
        for arg, value in given.items()
        if arg in properties and not _accepts(properties[arg], value)
    ]
    return out
