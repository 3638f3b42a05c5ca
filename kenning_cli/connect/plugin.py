"""The Claude Code plugin for one Kenning server (`kenning connect claude-code --plugin DIR`), in
Claude Code's plugin layout: ``.claude-plugin/plugin.json``, ``.mcp.json`` (the HTTP server),
``hooks/hooks.json`` with the hook script and its ``kenning.json``, and ``skills/<name>/SKILL.md``
(`kenning skills sync`). Writing the same plugin twice writes the same bytes.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning import __version__
from kenning.knowledge.skill_records import Skill
from kenning.knowledge.skills import Skills

HOOK = Path(__file__).with_name("kenning_hook.py")
COMMAND = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/kenning_hook.py"'
MARKER = "kenning-skill"  # the front-matter line a synced skill carries: which skill and sha


@dataclass(frozen=True)
class Plugin:
    """What the plugin connects to and what its hooks do."""

    url: str  # the MCP endpoint, e.g. http://127.0.0.1:8765/mcp
    oauth: bool = False  # True: Claude Code logs in; False: a bearer from $KENNING_TOKEN
    capture: bool = False  # PreCompact and SessionEnd store the session's lessons (opt-in)
    budget_tokens: int = 1500  # the SessionStart context's budget
    project: str | None = None  # else derived from the working directory


def files(plugin: Plugin) -> dict[str, str]:
    """Every file of the plugin but the hook script and the skills: relative path -> text."""
    server: dict[str, Any] = {"type": "http", "url": plugin.url}
    if not plugin.oauth:
        server["headers"] = {"Authorization": "Bearer ${KENNING_TOKEN}"}
    hooks: dict[str, Any] = {
        "SessionStart": [
            {
                "matcher": "startup|resume|clear|compact",
                "hooks": [
                    {"type": "command", "command": f"{COMMAND} session-start", "timeout": 10}
                ],
            }
        ]
    }
    if plugin.capture:
        capture = [{"type": "command", "command": f"{COMMAND} capture", "timeout": 20}]
        hooks["PreCompact"] = [{"matcher": "manual|auto", "hooks": capture}]
        hooks["SessionEnd"] = [{"hooks": capture}]
    config = {
        "url": plugin.url,
        "token_env": "KENNING_TOKEN",
        "budget_tokens": plugin.budget_tokens,
        "project": plugin.project,
        "timeout_seconds": 5,
    }
    manifest = {
        "name": "kenning",
        "version": __version__,
        "description": "Kenning memory: the project's briefing at session start, recall and "
        "remember as MCP tools, approved skills.",
        "author": {"name": "Kenning"},
        "license": "Apache-2.0",
    }
    return {
        ".claude-plugin/plugin.json": _json(manifest),
        ".mcp.json": _json({"mcpServers": {"kenning": server}}),
        "hooks/hooks.json": _json({"hooks": hooks}),
        "hooks/kenning.json": _json(config),
    }


def write(plugin: Plugin, directory: Path) -> list[Path]:
    """Write the plugin into ``directory`` (created if absent); the files written."""
    written = []
    for relative, text in files(plugin).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    script = directory / "hooks" / HOOK.name
    shutil.copyfile(HOOK, script)
    script.chmod(0o755)
    (directory / "skills").mkdir(exist_ok=True)
    return [*written, script]


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Synced:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


def sync_skills(skills: Skills, directory: Path) -> Synced:
    """Every written (reviewed and approved) skill into ``directory/<name>/SKILL.md`` with a last
    line naming the Kenning skill and the sha it came from; a folder synced earlier whose skill is
    gone is removed; a folder without the marker (the user's own skill) is never touched."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = {skill.domain: _marked(skill) for skill in skills.all()}
    written, unchanged = [], []
    for name, text in sorted(wanted.items()):
        path = directory / name / "SKILL.md"
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            unchanged.append(name)
            continue
        if path.is_file() and MARKER not in path.read_text(encoding="utf-8"):
            continue  # a skill of the user's own under the same name: left alone
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(name)
    removed = []
    for folder in sorted(p for p in directory.iterdir() if p.is_dir() and p.name not in wanted):
        skill_file = folder / "SKILL.md"
        if skill_file.is_file() and MARKER in skill_file.read_text(encoding="utf-8"):
            shutil.rmtree(folder)
            removed.append(folder.name)
    return Synced(tuple(written), tuple(unchanged), tuple(removed))


def _marked(skill: Skill) -> str:
    body = skill.body if skill.body.endswith("\n") else skill.body + "\n"
    return f"{body}\n<!-- {MARKER}: {skill.domain} sha256:{skill.sha} (kenning skills sync) -->\n"
