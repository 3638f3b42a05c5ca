"""docs/remote-access.md's "Try it on one machine" cannot drift: its shell block runs in bash as a
person would paste it, from a clean store to a recall through `mcp-remote` whose browser step is
scripts/oauth_login.py. Only what a shared machine needs changes: free ports instead of 8765 and
the defaults, this virtualenv for `.venv/bin`, and no `npm ci` (.ci/run ran it)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "remote-access.md"
PROXY = ROOT / "tests" / "clients" / "node_modules" / "mcp-remote" / "dist" / "proxy.js"


def walkthrough() -> str:
    section = DOC.read_text(encoding="utf-8").split("## Try it on one machine", 1)[1]
    found = re.search(r"```sh\n(.*?)\n```\n", section, flags=re.DOTALL)
    assert found, "docs/remote-access.md: no ```sh block under 'Try it on one machine'"
    return found.group(1)


def as_run_here(block: str, port: int) -> str:
    lines = [line for line in block.splitlines() if not line.startswith("npm ci ")]
    script = "\n".join(lines).replace("8765", str(port))
    script = re.sub(r"(\$PWD/)?\.venv/bin", str(Path(sys.executable).parent), script)
    # whatever happens, the background `kenning up` is stopped and waited for
    stop = "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT"
    return f"set -euo pipefail\n{stop}\n{script}\nwait\n"


def test_the_walkthrough_recalls_through_mcp_remote_from_a_clean_store(tmp_path: Path) -> None:
    assert PROXY.exists(), "mcp-remote is missing: run `npm ci --prefix tests/clients`"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "OAUTH_LOGIN_"))}
    env.update(
        {
            "TMPDIR": str(tmp_path),  # mktemp -d: the clean store
            "HOME": str(tmp_path),  # mcp-remote's ~/.mcp-auth
            "PYTHONPATH": str(ROOT),
            "KENNING_VALKEY_PORT": str(free_port()),
            "KENNING_WEB_PORT": str(free_port()),
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    env.pop("BROWSER", None)
    port = free_port()
    env["KENNING_MCP_PORT"] = str(port)  # the block's 8765 is the default port
    transcript = tmp_path / "walkthrough.log"
    with transcript.open("w") as log:
        proc = subprocess.Popen(
            ["bash", "-c", as_run_here(walkthrough(), port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=420)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    out = transcript.read_text()
    assert proc.returncode == 0, out
    assert "recalled: The walk-through's memory went in through mcp-remote" in out, out
    assert "MCP CLI Proxy" in out, out
