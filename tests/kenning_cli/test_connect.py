"""`kenning connect` and the Claude Code plugin (docs/clients.md), with the real pieces: the Claude
Code CLI validates the generated plugin and connects to the MCP server through it; the hook script
runs as Claude Code runs it (a subprocess, the documented hook JSON on stdin, nothing but the
standard library) against the real server; config merges run on copies of real config files that
already hold other servers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning_cli.connect import clients, plugin
from kenning_cli.main import load_commands, main
from tests.kenning.skill_history import DOMAIN, seed
from tests.mcp_server.conftest import McpHarness

load_commands()
ROOT = Path(__file__).resolve().parents[2]
CONFIGS = Path(__file__).with_name("configs")
LESSONS = [
    "Decision: the checkout service reads prices from the catalog cache, never from Postgres.",
    "Lesson: the flaky payment test needs the frozen clock fixture, not time.sleep.",
]


def claude() -> str:
    """The Claude Code CLI of tests/clients (npm ci --prefix tests/clients; .ci/run does it)."""
    found = os.environ.get("KENNING_TEST_CLAUDE") or str(
        ROOT / "tests" / "clients" / "node_modules" / ".bin" / "claude"
    )
    if not Path(found).exists():
        pytest.fail(f"the Claude Code CLI is missing at {found}: run npm ci --prefix tests/clients")
    return found


def run_hook(directory: Path, mode: str, event: dict[str, Any], env: dict[str, str]) -> str:
    script = directory / "hooks" / "kenning_hook.py"
    done = subprocess.run(
        [sys.executable, "-I", str(script), mode],  # -I: no site-packages, no PYTHONPATH
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.fixture
def plugin_dir(tmp_path: Path, mcp: McpHarness) -> Path:
    directory = tmp_path / "kenning-plugin"
    plugin.write(plugin.Plugin(mcp.url, capture=True, budget_tokens=400), directory)
    return directory


def hook_env(tmp_path: Path, mcp: McpHarness) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "KENNING_TOKEN": mcp.secrets["write"],
        "KENNING_HOOK_LOG": str(tmp_path / "hooks.log"),
    }


def test_the_plugin_is_valid_to_claude_code_and_its_server_connects(
    plugin_dir: Path, tmp_path: Path, mcp: McpHarness
) -> None:
    env = {**hook_env(tmp_path, mcp), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    checked = subprocess.run(
        [claude(), "plugin", "validate", str(plugin_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    listed = subprocess.run(
        [claude(), "--plugin-dir", str(plugin_dir), "mcp", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    out = listed.stdout + listed.stderr
    assert "kenning" in out, out
    assert "Connected" in out or "✓" in out, out


def test_session_start_injects_the_project_briefing(
    plugin_dir: Path, tmp_path: Path, mcp: McpHarness
) -> None:
    mcp.engine.memories.remember(
        Draft(
            "The shop-web frontend builds with Vite and deploys to Cloudflare Pages",
            project="shop-web",
        ),
        actor="t",
    )
    repo = tmp_path / "checkout" / "shop-web"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@github.com:acme/shop-web.git\n', encoding="utf-8"
    )
    event = {
        "session_id": "s1",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(repo / "src"),
        "transcript_path": str(tmp_path / "t.jsonl"),
    }
    (repo / "src").mkdir()
    out = json.loads(run_hook(plugin_dir, "session-start", event, hook_env(tmp_path, mcp)))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "project `shop-web`" in context
    assert "git remote origin" in context
    assert "Vite" in context
    assert len(context) <= 400 * 4 + 100  # within the stated budget


def test_capture_stores_lessons_once_and_never_a_credential(
    plugin_dir: Path, tmp_path: Path, mcp: McpHarness
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    entries = [
        {"type": "user", "message": {"role": "user", "content": "why is the payment test flaky?"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Found it.\n" + "\n".join(LESSONS)},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "pytest"}},
                ],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "Note to self: the staging key is AKIAZ3MSJV4WPLQ2ZQ7X.",
                    },
                ],
            },
        },
    ]
    transcript.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    folder = tmp_path / "shop-api"
    folder.mkdir()
    event = {
        "session_id": "s1",
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "cwd": str(folder),
        "transcript_path": str(transcript),
    }
    env = hook_env(tmp_path, mcp)
    assert run_hook(plugin_dir, "capture", event, env) == ""
    stored = mcp.engine.memories.list(Listing(projects=("shop-api",))).items
    assert sorted(m.content for m in stored) == sorted(LESSONS)
    assert {m.source for m in stored} == {"claude-code"}
    assert {m.actor for m in stored} == {"test-write"}  # the token's name
    run_hook(plugin_dir, "capture", {**event, "hook_event_name": "SessionEnd"}, env)
    assert len(mcp.engine.memories.list(Listing(projects=("shop-api",))).items) == 2
    log = (tmp_path / "hooks.log").read_text(encoding="utf-8").splitlines()
    assert "2 stored, 0 already known, 1 dropped as credentials" in log[0]
    assert "0 stored, 2 already known, 1 dropped as credentials" in log[1]
    assert "AKIA" not in "\n".join(log)


def test_a_hook_with_the_server_down_leaves_the_session_alone(
    plugin_dir: Path, tmp_path: Path, mcp: McpHarness
) -> None:
    config = json.loads((plugin_dir / "hooks" / "kenning.json").read_text(encoding="utf-8"))
    config["url"] = "http://127.0.0.1:9/mcp"  # nothing listens there
    (plugin_dir / "hooks" / "kenning.json").write_text(json.dumps(config), encoding="utf-8")
    env = hook_env(tmp_path, mcp)
    event = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path)}
    assert run_hook(plugin_dir, "session-start", event, env) == ""
    bad = {**env, "KENNING_TOKEN": "kn_wrong"}
    config["url"] = mcp.url
    (plugin_dir / "hooks" / "kenning.json").write_text(json.dumps(config), encoding="utf-8")
    assert run_hook(plugin_dir, "session-start", event, bad) == ""  # a 401: nothing printed
    lines = (tmp_path / "hooks.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert "session-start failed" in lines[0]
    assert "kn_wrong" not in lines[1]
    assert json.loads(run_hook(plugin_dir, "session-start", event, env))  # positive control


@pytest.mark.parametrize(
    ("client", "config"),
    [
        ("claude-desktop", "claude_desktop_config.json"),
        ("cursor", "cursor_mcp.json"),
        ("vscode", "vscode_mcp.json"),
        ("claude-code", "claude.json"),
    ],
)
def test_a_merge_changes_only_kenning_and_is_idempotent(
    client: str, config: str, tmp_path: Path
) -> None:
    path = tmp_path / config
    shutil.copyfile(CONFIGS / config, path)
    original = json.loads(path.read_text(encoding="utf-8"))
    target = clients.Target(client, "https://kenning.example/mcp")
    backup = clients.merge(target, path)
    assert backup is not None
    assert json.loads(backup.read_text(encoding="utf-8")) == original
    merged = json.loads(path.read_text(encoding="utf-8"))
    key = "servers" if client == "vscode" else "mcpServers"
    assert merged[key].pop("kenning") == clients.entry(target)
    assert merged == original  # nothing else changed
    assert clients.merge(target, path) is None  # again: nothing to do, no second backup
    assert len(list(tmp_path.glob("*.kenning-backup-*"))) == 1


def test_codex_toml_keeps_its_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    shutil.copyfile(CONFIGS / "codex_config.toml", path)
    target = clients.Target("codex", "https://kenning.example/mcp")
    assert clients.merge(target, path) is not None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["mcp_servers"]["kenning"] == {
        "url": "https://kenning.example/mcp",
        "bearer_token_env_var": "KENNING_TOKEN",
    }
    assert data["mcp_servers"]["docs"]["command"] == "npx"
    assert data["profiles"]["fast"]["model"] == "gpt-5-mini"
    assert clients.merge(target, path) is None


def test_a_broken_config_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"a": ', encoding="utf-8")
    with pytest.raises(Exception, match="not JSON"):
        clients.merge(clients.Target("cursor", "https://k/mcp"), path)
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {"a": '


def test_kenning_connect_writes_with_a_new_token_only_where_it_is_used(
    settings: Settings,
    mcp: McpHarness,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    path = tmp_path / "cursor.json"
    shutil.copyfile(CONFIGS / "cursor_mcp.json", path)
    argv = ["connect", "cursor", "--url", mcp.url, "--write", "--config", str(path)]
    assert main([*argv, "--token-scope", "read"]) == 0
    out = capsys.readouterr().out
    header = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["kenning"]["headers"]
    secret = header["Authorization"].removeprefix("Bearer ")
    assert secret.startswith("kn_")
    assert secret not in out  # written where it is used, not printed
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [t.scope for t in mcp.engine.tokens.all() if t.name.startswith("cursor-")] == ["read"]
    assert main(["connect", "cursor", "--url", mcp.url]) == 0  # print only
    printed = capsys.readouterr().out
    assert "${KENNING_TOKEN}" in printed
    assert "kn_" not in printed
    assert main(["connect", "claude-code", "--url", mcp.url, "--plugin", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / ".claude-plugin" / "plugin.json").exists()
    assert (
        main(["connect", "cursor", "--plugin", str(tmp_path / "q")]) == 1
    )  # --plugin: claude-code


def test_skills_sync_writes_approved_skills_marked_and_byte_stable(
    engine: Engine, tmp_path: Path
) -> None:
    skills = tmp_path / "plugin" / "skills"
    assert plugin.sync_skills(engine.skills, skills) == plugin.Synced((), (), ())  # none approved
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert plugin.sync_skills(engine.skills, skills).written == ()  # proposed is not approved
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.skills.write(proposal.id, actor="agent")
    own = skills / "my-own" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: my-own\ndescription: mine\n---\nmine\n", encoding="utf-8")
    stale = skills / "gone" / "SKILL.md"
    stale.parent.mkdir(parents=True)
    stale.write_text(f"old\n<!-- {plugin.MARKER}: gone sha256:x -->\n", encoding="utf-8")
    first = plugin.sync_skills(engine.skills, skills)
    assert (first.written, first.removed) == ((DOMAIN,), ("gone",))
    text = (skills / DOMAIN / "SKILL.md").read_text(encoding="utf-8")
    written = engine.skills.all()[0]
    assert text.startswith(written.body)
    assert f"{plugin.MARKER}: {DOMAIN} sha256:{written.sha}" in text
    assert own.read_text(encoding="utf-8").endswith("mine\n")  # the user's own skill: untouched
    again = plugin.sync_skills(engine.skills, skills)
    assert (again.written, again.unchanged) == ((), (DOMAIN,))
    assert (skills / DOMAIN / "SKILL.md").read_text(encoding="utf-8") == text
