#!/usr/bin/env python3
"""Kenning's Claude Code hook (written into a plugin by `kenning connect claude-code --plugin`).

    kenning_hook.py session-start   SessionStart: the project's briefing as additional context
    kenning_hook.py capture         PreCompact / SessionEnd (opt-in): decisions and lessons of the
                                    session's transcript stored through `remember`

Standard library only, so it runs where nothing but the client is installed. It reads the hook's
JSON on stdin and ``kenning.json`` beside it (the server URL, the token's environment variable, the
token budget). On any failure (server down, 401, slow, a bad transcript) it prints nothing, exits 0
so the session goes on, and appends one line to the log (``KENNING_HOOK_LOG``, default
``~/.kenning/hooks.log``). It never sends a raw transcript, and a candidate that looks like a
credential is dropped before anything is sent.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROTOCOL = "2025-06-18"
PROJECT_CHARS = re.compile(r"[^a-z0-9._-]+")
REMOTE = re.compile(r'\[remote "origin"\][^\[]*?url\s*=\s*(\S+)', re.S)
# sentences a person or an agent writes when something was decided or learned
MARKERS = re.compile(
    r"(?i)^(?:decision|decided|lesson|learned|learnt|til|root cause|gotcha|note to self|"
    r"the fix (?:was|is)|turns out|it turned out|we (?:decided|chose|agreed)|"
    r"remember(?: that)?)\b[:\s-]*"
)
CREDENTIAL = re.compile(
    r"AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|xox[abprs]-[0-9A-Za-z-]+|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|://[^\s:/@]+:[^\s@/]+@|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+|"
    r"(?i:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S{6,}|kn[arc]?_[A-Za-z0-9_-]{30,}"
)
MAX_CAPTURED = 10
MAX_CHARS = 600


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else ""
    try:
        config = json.loads((HERE / "kenning.json").read_text(encoding="utf-8"))
        event = json.loads(sys.stdin.read() or "{}")
        if mode == "session-start":
            print(json.dumps(session_start(config, event)))
        elif mode == "capture":
            stored = capture(config, event)
            log(f"capture: {stored}")
        else:
            raise ValueError(f"unknown mode {mode!r} (session-start or capture)")
    except Exception as exc:
        log(f"{mode or 'hook'} failed: {type(exc).__name__}: {str(exc)[:300]}")
    return 0


def log(line: str) -> None:
    path = Path(os.environ.get("KENNING_HOOK_LOG") or Path.home() / ".kenning" / "hooks.log")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} kenning hook: {line}\n")
    except OSError:
        pass


def project_of(config: dict[str, Any], cwd: str) -> tuple[str, str]:
    """The project and how it was chosen: KENNING_PROJECT, the plugin's setting, the git remote
    origin's repository name, or the folder name."""
    chosen = os.environ.get("KENNING_PROJECT") or config.get("project")
    if chosen:
        return _name(chosen), "set by KENNING_PROJECT or the plugin"
    folder = Path(cwd or os.getcwd())
    for parent in (folder, *folder.parents):
        git = parent / ".git" / "config"
        if git.is_file():
            match = REMOTE.search(git.read_text(encoding="utf-8", errors="replace"))
            if match:
                repo = match.group(1).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
                return _name(repo.removesuffix(".git")), "the git remote origin's repository"
            return _name(parent.name), "the git checkout's folder name"
    return _name(folder.name), "the folder name"


def _name(value: str) -> str:
    return PROJECT_CHARS.sub("-", value.strip().lower()).strip("-._")[:64] or "global"


def session_start(config: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    project, why = project_of(config, str(event.get("cwd") or ""))
    brief = call(config, "briefing", {"project": project})
    budget = int(config.get("budget_tokens", 1500))
    text = render(brief, project, why, budget)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def render(brief: dict[str, Any], project: str, why: str, budget: int) -> str:
    """The briefing as short Markdown, cut to ``budget`` tokens (4 characters each) with a note of
    what was left out."""
    head = (
        f"Kenning memory for project `{project}` (chosen from {why}; set KENNING_PROJECT to "
        "change it). Recall more with the kenning MCP tools."
    )
    lines = [head]
    if isinstance(brief.get("context"), dict):
        lines += ["\n## project context", f"- {_item(brief['context'])}"]
    for name, items in brief.items():
        if not isinstance(items, list) or not items:
            continue
        lines.append(f"\n## {name.replace('_', ' ')}")
        lines += [f"- {_item(item)}" for item in items]
    limit, out, used = budget * 4, [], 0
    for n, line in enumerate(lines):
        if used + len(line) + 1 > limit:
            out.append(f"\n({len(lines) - n} more lines left out: {budget}-token budget)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _item(item: Any) -> str:
    if isinstance(item, dict):
        for field in ("content", "summary", "text", "ask", "term", "name"):
            if item.get(field):
                return " ".join(str(item[field]).split())[:300]
        return json.dumps(item, sort_keys=True)[:300]
    return " ".join(str(item).split())[:300]


def capture(config: dict[str, Any], event: dict[str, Any]) -> str:
    """Store the decisions and lessons of the session's transcript; what happened, in a line."""
    project, _ = project_of(config, str(event.get("cwd") or ""))
    candidates, dropped = lessons(Path(str(event.get("transcript_path") or "")))
    stored = duplicates = 0
    for text in candidates:
        result = call(
            config,
            "remember",
            {
                "content": text,
                "project": project,
                "namespace": "episodic",
                "source": "claude-code",
                "tags": ["claude-code"],
            },
        )
        stored += result.get("status") == "stored"
        duplicates += result.get("status") == "duplicate"
    return (
        f"{stored} stored, {duplicates} already known, {dropped} dropped as credentials "
        f"({project}, {event.get('hook_event_name', '?')})"
    )


def lessons(transcript: Path) -> tuple[list[str], int]:
    """The marked decisions and lessons the assistant and the person wrote, and how many were
    dropped because they looked like credentials."""
    found: list[str] = []
    dropped = 0
    for line in transcript.read_text(encoding="utf-8").splitlines():
        for text in _texts(line):
            for sentence in re.split(r"\n+|(?<=[.!?])\s+(?=[A-Z])", text):
                clean = sentence.strip(" -*>#`\t")
                if not MARKERS.match(clean) or len(clean) < 20:
                    continue
                if CREDENTIAL.search(clean):
                    dropped += 1
                    continue
                if clean not in found:
                    found.append(clean[:MAX_CHARS])
    return found[-MAX_CAPTURED:], dropped


def _texts(line: str) -> list[str]:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        return []
    message = entry.get("message") if isinstance(entry, dict) else None
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        ]
    return []


def call(config: dict[str, Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One MCP tool call over Streamable HTTP: initialize, initialized, tools/call."""
    timeout = float(config.get("timeout_seconds", 5))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    token = os.environ.get(str(config.get("token_env", "KENNING_TOKEN")))
    if token:
        headers["Authorization"] = f"Bearer {token}"
    init = {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "kenning-hook", "version": "1"},
    }
    reply, session = _post(config["url"], _rpc(1, "initialize", init), headers, timeout)
    if session:
        headers["Mcp-Session-Id"] = session
    headers["MCP-Protocol-Version"] = str(reply.get("result", {}).get("protocolVersion", PROTOCOL))
    _post(
        config["url"], {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers, timeout
    )
    reply, _ = _post(
        config["url"],
        _rpc(2, "tools/call", {"name": tool, "arguments": arguments}),
        headers,
        timeout,
    )
    result = reply.get("result") or {}
    if "error" in reply or result.get("isError"):
        raise RuntimeError(
            f"{tool} refused: {json.dumps(reply.get('error') or result.get('content'))[:300]}"
        )
    structured = result.get("structuredContent")
    return structured if isinstance(structured, dict) else {}


def _rpc(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def _post(
    url: str, body: dict[str, Any], headers: dict[str, str], timeout: float
) -> tuple[dict[str, Any], str | None]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, headers, method="POST")  # noqa: S310
    # the server kenning.json names (S310: no file: or custom schemes come from there)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
        raw = response.read().decode("utf-8")
        session = response.headers.get("Mcp-Session-Id")
        kind = response.headers.get("Content-Type", "")
    if not raw.strip():
        return {}, session
    if kind.startswith("text/event-stream"):
        events = [line[5:].strip() for line in raw.splitlines() if line.startswith("data:")]
        replies = [json.loads(e) for e in events if e]
        return next((r for r in replies if r.get("id") == body.get("id")), {}), session
    return json.loads(raw), session


if __name__ == "__main__":
    sys.exit(main(sys.argv))
