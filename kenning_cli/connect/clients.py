"""Each client's configuration for this server, and merging it into the client's own file.

A merge changes only the ``kenning`` entry of the file: every other server, setting and comment-free
key stays as it was; the file is backed up (``<file>.kenning-backup-<time>``) before it changes, and
a merge that changes nothing writes nothing, so running `kenning connect --write` twice is the same
as once. A secret is written only when the caller just created it (``token``), and the file is then
made readable by its owner only.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.core.errors import InvalidInput

MCP_REMOTE = "mcp-remote@0.15.1"
CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex")
NAME = "kenning"


@dataclass(frozen=True)
class Target:
    client: str
    url: str  # the MCP endpoint
    token: str | None = None  # a secret created for this connection, or None: env var / OAuth
    oauth: bool = False


def default_path(client: str, home: Path | None = None) -> Path:
    """Where the client keeps its MCP servers (user scope)."""
    home = home or Path.home()
    if client == "claude-code":
        return home / ".claude.json"
    if client == "claude-desktop":
        if platform.system() == "Darwin":
            return (
                home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
            )
        if platform.system() == "Windows":
            return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
        return home / ".config" / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    if client == "codex":
        return home / ".codex" / "config.toml"
    raise InvalidInput(f"unknown client {client!r}", hint=f"one of: {', '.join(CLIENTS)}")


def _bearer(target: Target) -> str:
    return f"Bearer {target.token}" if target.token else "Bearer ${KENNING_TOKEN}"


def entry(target: Target) -> dict[str, Any]:
    """The client's JSON entry for this server."""
    headers = {} if target.oauth else {"Authorization": _bearer(target)}
    if target.client == "claude-desktop":  # speaks stdio only: mcp-remote bridges to HTTP
        args = ["-y", MCP_REMOTE, target.url]
        if target.oauth:
            return {"command": "npx", "args": args}
        return {
            "command": "npx",
            "args": [*args, "--header", "Authorization:${KENNING_AUTH}"],
            "env": {"KENNING_AUTH": _bearer(target)},
        }
    if target.client == "cursor":
        return {"url": target.url, **({"headers": headers} if headers else {})}
    return {"type": "http", "url": target.url, **({"headers": headers} if headers else {})}


def snippet(target: Target) -> str:
    """What to paste (or what --write merges), as the client's own format."""
    if target.client == "codex":
        return _codex_block(target)
    key = "servers" if target.client == "vscode" else "mcpServers"
    return json.dumps({key: {NAME: entry(target)}}, indent=2)


def command_line(target: Target) -> str | None:
    """The client's own command for the same, where it has one."""
    if target.client != "claude-code":
        return None
    header = "" if target.oauth else f' --header "Authorization: {_bearer(target)}"'
    return f"claude mcp add --transport http {NAME} {target.url}{header}"


def merge(target: Target, path: Path) -> Path | None:
    """Merge this server into ``path``; the backup written, or None when nothing changed."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    after = (
        _merged_toml(before or "", target)
        if target.client == "codex"
        else _merged_json(before, target, path)
    )
    if after == before:
        return None
    backup = None
    if before is not None:
        backup = path.with_name(f"{path.name}.kenning-backup-{time.strftime('%Y%m%dT%H%M%S')}")
        backup.write_text(before, encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(after, encoding="utf-8")
    if target.token:
        path.chmod(0o600)
    return backup or path


def _merged_json(before: str | None, target: Target, path: Path) -> str:
    try:
        data = json.loads(before) if before and before.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{path} is not JSON ({exc.msg} at line {exc.lineno})",
            hint="fix or move the file, then run kenning connect again; nothing was changed",
        ) from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed")
    key = "servers" if target.client == "vscode" else "mcpServers"
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{path}: {key} is not an object; nothing was changed")
    servers[NAME] = entry(target)
    return json.dumps(data, indent=2) + "\n"


def _codex_block(target: Target) -> str:
    lines = [f"[mcp_servers.{NAME}]", f'url = "{target.url}"']
    if target.token:
        lines.append(f'http_headers = {{ Authorization = "{_bearer(target)}" }}')
    elif not target.oauth:
        lines.append('bearer_token_env_var = "KENNING_TOKEN"')
    return "\n".join(lines) + "\n"


BLOCK = re.compile(rf"^\[mcp_servers\.{NAME}\]\n(?:(?!\[).*\n?)*", re.M)


def _merged_toml(before: str, target: Target) -> str:
    try:
        tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"the Codex config is not TOML ({exc}); nothing was changed") from exc
    block = _codex_block(target)
    if BLOCK.search(before):
        return BLOCK.sub(lambda _: block + "\n", before, count=1).rstrip("\n") + "\n"
    return (before.rstrip("\n") + "\n\n" if before.strip() else "") + block
