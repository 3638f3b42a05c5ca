"""install.sh: shellcheck-clean, a dry run that changes nothing, a truncated download that runs
nothing, and the local mode end to end in a fresh HOME (up healthy, a working connection line,
idempotent re-run, uninstall that keeps the data)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastmcp import Client

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "install.sh"
VENV = Path(sys.executable).parent.parent  # the test run's own virtualenv stands in for a fresh one


def installer(
    home: Path,
    *args: str,
    timeout: float = 400,
    extra: dict[str, str] | None = None,
    script: Path = SCRIPT,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "VIRTUAL_ENV"))}
    env.update({"HOME": str(home), **(extra or {})})
    return subprocess.run(
        ["bash", str(script), *args],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_shellcheck_is_clean() -> None:
    binary = shutil.which("shellcheck")
    assert binary is not None, (
        "Debian's shellcheck is missing: apt-get install shellcheck (.ci/run does)"
    )
    done = subprocess.run([binary, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_dry_run_prints_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "kenning"
    done = installer(
        tmp_path,
        "--dry-run",
        "--local",
        "--dir",
        str(target),
        "--source",
        str(ROOT),
        "--venv",
        str(VENV),
        "--admin",
        "ada",
    )
    assert done.returncode == 0, done.stderr
    assert f"would write {target}/.env (mode 600)" in done.stdout
    assert "would start" in done.stdout or "would write" in done.stdout
    assert "would create an MCP token" in done.stdout
    assert "would create the admin account ada" in done.stdout
    assert not target.exists()
    assert "Kenning is installed" not in done.stdout  # nothing was
    assert done.stdout.rstrip().endswith("(local mode).")
    assert "Dry run: nothing was changed." in done.stdout


def test_piped_without_a_source_fails_clearly_and_creates_nothing(tmp_path: Path) -> None:
    """curl | bash: no checkout beside the script and no --source."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        ["bash", "-s", "--", "--local", "--yes"],
        input=SCRIPT.read_text(encoding="utf-8"),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "no Kenning source: pass --source PATH|URL" in done.stderr
    assert "Nothing was changed." in done.stderr
    assert not (tmp_path / ".kenning").exists()
    # a source that cannot be cloned: git's own message, then a clear one, and no empty directory
    bad = installer(tmp_path, "--local", "--yes", "--source", f"file://{tmp_path}/none.git")
    assert bad.returncode != 0
    assert "could not clone file://" in bad.stderr
    assert "Nothing was installed." in bad.stderr
    assert not (tmp_path / ".kenning").exists()
    # positive control: run from a checkout, the checkout is the source (a dry run shows it)
    here = installer(tmp_path, "--dry-run", "--local", "--venv", str(VENV))
    assert here.returncode == 0, here.stderr
    assert "would write" in here.stdout


def test_uninstall_says_uninstalling_and_what_happens_to_the_model_cache(tmp_path: Path) -> None:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "docker").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")  # no engine
    (stubs / "docker").chmod(0o755)
    cache = tmp_path / "cache" / "kenning" / "models"
    cache.mkdir(parents=True)
    (cache / "model-x.onnx").write_bytes(b"x" * 100_000)
    target = tmp_path / "kenning"
    target.mkdir()
    extra = {"PATH": f"{stubs}:{os.environ['PATH']}", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("--uninstall", "--yes", "--dir", str(target), "--venv", str(VENV))
    kept = installer(tmp_path, *args, extra=extra)
    assert kept.returncode == 0, kept.stderr
    assert "uninstalling the local mode" in kept.stderr
    assert "installing the local mode" not in kept.stderr.replace("uninstalling", "")
    assert f"the model cache {cache} (" in kept.stderr
    assert "stays" in kept.stderr
    assert cache.is_dir()
    purged = installer(tmp_path, *args, "--purge", extra=extra)
    assert purged.returncode == 0, purged.stderr
    assert f"removed the model cache {cache}" in purged.stderr
    assert not cache.exists()
    assert not target.exists()


def test_bad_flags_are_refused_with_a_hint(tmp_path: Path) -> None:
    done = installer(tmp_path, "--expose", "not a url", "--dry-run")
    assert done.returncode != 0
    assert "--expose wants a base URL" in done.stderr
    assert installer(tmp_path, "--frobnicate").returncode != 0


def test_a_truncated_download_runs_nothing(tmp_path: Path) -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    body = text[: text.rindex('main "$@"')]  # everything but the last line: definitions only
    cuts = [len(body), *range(200, len(body), max(1, len(body) // 12))]
    for cut in cuts:
        partial = tmp_path / f"cut-{cut}.sh"
        partial.write_text(text[:cut], encoding="utf-8")
        target = tmp_path / f"target-{cut}"
        done = installer(
            tmp_path,
            "--local",
            "--yes",
            "--dir",
            str(target),
            "--source",
            str(ROOT),
            "--venv",
            str(VENV),
            script=partial,
            timeout=60,
        )
        assert "==>" not in done.stderr, (cut, done.stderr)  # no step ever started
        assert not target.exists(), cut
    # positive control: the whole script does act (here: a dry run prints its plan)
    assert (
        "would write"
        in installer(
            tmp_path,
            "--dry-run",
            "--local",
            "--dir",
            str(tmp_path / "t"),
            "--source",
            str(ROOT),
            "--venv",
            str(VENV),
        ).stdout
    )


@pytest.fixture
def local_install(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    home = tmp_path / "home"
    home.mkdir()
    target = home / ".kenning"  # install.sh's default directory
    ports = {
        "KENNING_MCP_PORT": str(free_port()),
        "KENNING_WEB_PORT": str(free_port()),
        "KENNING_VALKEY_PORT": str(free_port()),
    }
    yield home, target, ports
    installer(
        home,
        "--uninstall",
        "--local",
        "--yes",
        "--dir",
        str(target),
        "--venv",
        str(VENV),
        extra=ports,
    )


async def test_local_mode_end_to_end(local_install: tuple[Path, Path, dict[str, str]]) -> None:
    home, target, ports = local_install
    args = ("--local", "--yes", "--dir", str(target), "--source", str(ROOT), "--venv", str(VENV))
    first = installer(home, *args, extra=ports)
    assert first.returncode == 0, first.stderr + (target / "kenning.log").read_text(
        encoding="utf-8"
    )
    env_file = target / ".env"
    assert env_file.stat().st_mode & 0o777 == 0o600
    secret = next(
        line.split("=", 1)[1]
        for line in env_file.read_text().splitlines()
        if line.startswith("VALKEY_PASSWORD=")
    )
    assert secret not in first.stdout + first.stderr  # generated, never echoed
    token = (target / "mcp-token").read_text(encoding="utf-8").strip()
    assert token not in first.stdout + first.stderr
    mcp_url = f"http://127.0.0.1:{ports['KENNING_MCP_PORT']}/mcp"
    line = next(li for li in first.stdout.splitlines() if li.strip().startswith("claude mcp add"))
    assert mcp_url in line
    assert f"$(cat {target}/mcp-token)" in line
    async with Client(mcp_url, auth=token) as client:  # the connection line's token works
        stored = await client.call_tool(
            "remember", {"content": "installed by install.sh", "project": "inst"}
        )
        assert stored.structured_content is not None
        assert stored.structured_content["status"] == "stored"
    pid = (target / "kenning.pid").read_text().strip()

    # the installed command line works from any directory: it finds ~/.kenning/.env
    anywhere = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    anywhere["HOME"] = str(home)
    made = subprocess.run(
        [str(VENV / "bin" / "kenning"), "token", "create", "--scope", "read", "--name", "root"],
        cwd="/",
        env=anywhere,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    async with Client(mcp_url, auth=made.stdout.strip().splitlines()[-1]) as client:
        assert await client.list_tools()  # the new token is accepted
    doctor = subprocess.run(
        [str(VENV / "bin" / "kenning"), "doctor"],
        cwd="/",
        env=anywhere,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert doctor.stdout.startswith(f"settings file: {env_file}, install.sh's"), doctor.stdout
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "ok   dashboard: " in doctor.stdout
    # positive control: pointed at an empty KENNING_HOME, the same command finds no settings
    lost = subprocess.run(
        [str(VENV / "bin" / "kenning"), "token", "create", "--name", "lost"],
        cwd="/",
        env={**anywhere, "KENNING_HOME": str(home / "empty")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert lost.returncode != 0

    # idempotent: same secrets, same process, same token
    again = installer(home, *args, extra=ports)
    assert again.returncode == 0, again.stderr
    assert f"VALKEY_PASSWORD={secret}" in env_file.read_text()
    assert (target / "kenning.pid").read_text().strip() == pid
    assert (target / "mcp-token").read_text(encoding="utf-8").strip() == token

    gone = installer(
        home,
        "--uninstall",
        "--local",
        "--yes",
        "--dir",
        str(target),
        "--venv",
        str(VENV),
        extra=ports,
    )
    assert gone.returncode == 0, gone.stderr
    assert "the data stays" in gone.stderr
    assert (target / "data").is_dir()
    assert env_file.exists()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{ports['KENNING_MCP_PORT']}/healthz", timeout=5)
