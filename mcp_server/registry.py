"""Tool declarations: each tool states its scope once, and its annotations follow from that.

``tool`` marks a module-level function as a tool (FastMCP's standalone ``@tool``: the function is
returned unchanged, with its annotations and scope attached); ``Registry.add`` registers it with
FastMCP and records a ``ToolSpec``. ``ScopeGuard`` reads the specs at dispatch and refuses
(``PermissionDenied``, translated like every engine error) a call the caller's token does not allow,
before any argument is looked at; a token that could not be verified (Valkey down) runs nothing and
hears about the outage. A tool that changes anything needs ``write`` (or ``admin``); a ``read`` tool
is read-only by construction, so the scope test can derive every mutating tool from the annotations.

``Registry.input_schema`` answers the transport's per-call question "what is this tool's input
schema" (it checks ``Mcp-Param-*`` headers against it) from a table built at registration; without
it the MCP SDK runs a whole ``tools/list`` through every middleware before each ``tools/call``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.decorators import get_fastmcp_meta
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.tools.function_tool import FunctionTool, ToolMeta
from fastmcp.tools.function_tool import tool as fastmcp_tool
from fastmcp.utilities.json_schema import dereference_refs
from mcp import MCPError
from mcp_types import INVALID_PARAMS, CallToolRequestParams, ToolAnnotations

from kenning.access.tokens import grants
from kenning.core.errors import BackendUnavailable, InvalidInput, NotFound, PermissionDenied
from kenning.core.settings import Settings
from mcp_server import params, profiles
from mcp_server.errors import message
from mcp_server.runtime import caller

Scope = Literal["read", "write", "admin"]
F = TypeVar("F", bound=Callable[..., Any])
SCOPE_META = "kenning/scope"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    scope: Scope
    read_only: bool
    destructive: bool
    idempotent: bool


def tool(
    *,
    scope: Scope,
    destructive: bool = False,
    idempotent: bool = False,
    read_only: bool | None = None,
    title: str | None = None,
) -> Callable[[F], F]:
    """Mark a module-level function as a tool named after it (its docstring is the description); the
    server registers it with ``Registry.add`` (FastMCP's standalone ``@tool``
    convention, scope in its meta).

    ``read_only`` defaults to ``scope == "read"``. A read-scoped tool can never mutate.
    """
    ro = scope == "read" if read_only is None else read_only
    if scope == "read" and not ro:
        raise ValueError("a tool that changes anything needs scope 'write' or 'admin'")
    # Only the hints that differ from MCP's defaults (readOnly false, destructive true,
    # idempotent false; destructive and idempotent mean something only when the tool is not
    # read-only): every listed tool costs its hints on every connect. openWorld keeps its default
    # (true): what recall and briefing return may be feed articles fetched from the web.
    annotations = ToolAnnotations(
        title=title,
        read_only_hint=True if ro else None,
        destructive_hint=False if not (ro or destructive) else None,
        idempotent_hint=True if idempotent and not ro else None,
    )
    # No output schema: every tool returns a JSON object, and "an object of anything" tells an agent
    # nothing (the result still comes as structured content).
    return fastmcp_tool(annotations=annotations, meta={SCOPE_META: scope}, output_schema=None)


def spec_of(fn: Callable[..., Any]) -> ToolSpec:
    """The spec a ``@tool`` mark carries; a ValueError for an unmarked function."""
    meta = get_fastmcp_meta(fn)
    if (
        not isinstance(meta, ToolMeta)
        or meta.annotations is None
        or SCOPE_META not in (meta.meta or {})
    ):
        raise ValueError(
            f"{getattr(fn, '__name__', fn)!r} is not marked with mcp_server.registry.tool"
        )
    hints = meta.annotations
    read_only = hints.read_only_hint is True
    return ToolSpec(
        fn.__name__,
        (meta.meta or {})[SCOPE_META],
        read_only,
        not read_only and hints.destructive_hint is not False,
        read_only or hints.idempotent_hint is True,
    )


class Listed(FunctionTool):
    """A tool as ``tools/list`` sends it, without ``_meta``: the scope it carries is the
    registry's (tools/list already shows a token only what its scope may call) and FastMCP's
    empty tag list tells an agent nothing."""

    def to_mcp_tool(self, **overrides: Any) -> mt.Tool:
        return super().to_mcp_tool(**overrides).model_copy(update={"meta": None})


def is_tool(fn: Callable[..., Any]) -> bool:
    meta = get_fastmcp_meta(fn)
    return isinstance(meta, ToolMeta) and SCOPE_META in (meta.meta or {})


@functools.cache
def derived(fn: Callable[..., Any]) -> FunctionTool:
    """The tool FastMCP derives from ``fn`` (its mark, signature and docstring), with the aliases
    left out of the listing and the parameters described. A pure function of ``fn``, made once
    per process: deriving the schemas is most of building a server (53 tools, about 0.3 s), which
    the suite does once per test; each server gets a deep copy."""
    made = Listed.from_function(fn)  # reads the @tool mark
    properties = made.parameters.get("properties", {})
    for name in [n for n, schema in properties.items() if params.ALIAS in schema]:
        del properties[name]  # accepted, never listed (params.alias_of)
    params.describe(properties, made.description or "")
    return made


class Registry:
    """The server's tools and their specs; ``mcp_server.tools.register_all``
    adds every marked tool."""

    def __init__(self, mcp: FastMCP[Any]) -> None:
        self.mcp = mcp
        self.specs: dict[str, ToolSpec] = {}
        # name -> input schema as tools/list advertises it
        self.schemas: dict[str, dict[str, Any]] = {}

    def add(self, fn: F) -> F:
        """Register one ``@tool``-marked function with FastMCP and record
        its spec and listed schema."""
        spec = spec_of(fn)
        if spec.name in self.specs:
            raise ValueError(f"tool {spec.name!r} is registered twice")
        added = self.mcp.add_tool(derived(fn).model_copy(deep=True))
        self.specs[spec.name] = spec
        self.schemas[spec.name] = dereference_refs(added.parameters)  # as tools/list shows it
        return fn

    def tool(
        self,
        *,
        scope: Scope,
        destructive: bool = False,
        idempotent: bool = False,
        read_only: bool | None = None,
        title: str | None = None,
    ) -> Callable[[F], F]:
        """Mark and register in one step (a test's own tool); the
        product's tools are module-level."""
        mark = tool(
            scope=scope,
            destructive=destructive,
            idempotent=idempotent,
            read_only=read_only,
            title=title,
        )
        return lambda fn: self.add(mark(fn))

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of tool ``name`` (None when there is no such
        tool): no I/O, no middleware."""
        return self.schemas.get(name)


class ScopeGuard(Middleware):
    """Refuses, at dispatch, a call whose tool needs a scope the caller's token lacks, then one
    outside the connection's tool profile (``mcp_server.profiles``: a pointer to a profile that
    has it); ``tools/list`` shows only the profile's tools its scope may call (an agent reads,
    and pays for, no tool it cannot or need not use). Both are decided per request, so
    ``FixedToolsMCP``'s table of tools by name stays as it is.
    """

    def __init__(self, registry: Registry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        spec = self.registry.specs.get(name)
        if spec is None:
            raise NotFound(f"unknown tool {name!r}", hint="tools/list shows the tools")
        who = caller(self.settings)
        if not who.verified:
            raise BackendUnavailable(
                f"token {who.actor!r} could not be checked because the store did not answer; "
                f"{name!r} was not run",
                hint="retry when /healthz reports ok",
            )
        if spec.scope not in who.scopes:
            held = ", ".join(sorted(who.scopes)) or "none"
            raise PermissionDenied(
                f"tool {name!r} needs the {spec.scope!r} scope; token {who.actor!r} holds "
                f"{held}; nothing was changed",
                hint=(
                    "use a token created with `kenning token create --scope "
                    f"{spec.scope} --name NAME`"
                ),
            )
        profile = profiles.of_connection(self.settings)
        if not profiles.shows(profile, name):
            raise profiles.outside(profile, name)
        return await call_next(context)

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        scopes = self._listed_scopes()
        try:
            profile = profiles.of_connection(self.settings)
        except InvalidInput as exc:  # an unknown profile asked for: say which exist
            raise MCPError(INVALID_PARAMS, message(exc)) from exc
        return [
            t
            for t in await call_next(context)
            if (spec := self.registry.specs.get(t.name)) is not None
            and spec.scope in scopes
            and profiles.shows(profile, t.name)
        ]

    def _listed_scopes(self) -> frozenset[str]:
        """The scopes whose tools a caller sees. A token let through unverified during an outage
        sees its own scope's tools (every call is still refused until Valkey answers)."""
        who = caller(self.settings)
        if who.verified:
            return who.scopes
        token = get_access_token()
        return grants(str(token.claims.get("scope", ""))) if token is not None else frozenset()
