"""MCP tools, one module per concern; each tool is a module-level function marked with ``@tool``.

How to add a tool (e.g. in ``mcp_server/tools/lifecycle.py``)::

    from typing import Any

    from mcp_server.registry import tool
    from mcp_server.runtime import current


    @tool(scope="write")                                # "read" | "write" | "admin"
    async def deprioritise(key: str, reason: str) -> dict[str, Any]:
        \"\"\"Lower a memory's visibility (x0.2) with a reason.\"\"\"   # short: agents pay for it
        call = current()                                # engine + authenticated caller
        memory = await call.run(call.engine.lifecycle.deprioritise, key,
                                reason=reason, actor=call.actor)
        return memory.public()

Rules:
- Discovery: modules in this package are imported in name order and every ``@tool``-marked function
  defined in one is registered, in the order the module defines them (that is the ``tools/list``
  order); no list to edit. A tool is found by its name: ``grep "def
  recall_index" mcp_server/tools``.
- Scope: ``@tool(scope=...)``. ``read`` tools are read-only (annotation readOnlyHint=true);
  anything that changes state needs ``write`` or ``admin``. Pass ``destructive=True`` when the tool
  deletes or overwrites anything, even with the old value kept in the audit (forget, update_memory,
  retag's remove, merge, restore): MCP reads destructiveHint=false as "only additive updates".
  ``idempotent=True`` when repeating it is harmless.
  ``ScopeGuard`` refuses the call at dispatch; tests/mcp_server/test_scopes.py covers every
  non-read-only tool automatically.
- Engine and actor: ``call = current()`` inside the tool; ``call.engine`` is the shared engine built
  once per process; ``call.actor`` is the token name and must be passed as ``actor=`` to every
  mutating engine call (it is the audit actor).
- Off the loop: the engine is synchronous. Always ``await call.run(fn, *args, **kwargs)`` (it uses
  ``anyio.to_thread.run_sync``); never call the engine directly from the async tool body.
- Errors: raise (or let through) ``kenning.core.errors`` exceptions; ``mcp_server.errors``
translates
  them in one place. Never catch them to return an empty result.
- Adapters only: validate, make one engine call, shape the output (``.public()`` dicts). A domain
  decision belongs in ``kenning/``.
- Docs: every tool needs an entry ``### `name` `` in docs/mcp-tools.md (a test fails otherwise).
- Profile: a new tool is shown only under the ``all`` profile until ``mcp_server/profiles.py``
  puts it in ``agent`` or ``curator`` too; an ``agent`` tool's schema is paid for by every agent
  (tests/mcp_server/test_params.py keeps that profile at most 3,000 tokens).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from mcp_server.registry import Registry, is_tool


def register_all(tools: Registry) -> None:
    """Import every tool module of this package and register its ``@tool``
    functions in definition order."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if inspect.isfunction(value) and value.__module__ == module.__name__ and is_tool(value):
                tools.add(value)
