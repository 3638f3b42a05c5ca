"""Compose and the installer agree: install.sh's Docker mode runs against a stand-in ``docker`` and
``curl`` (no engine here) that record what they are asked, then Debian's docker-compose renders
the compose file exactly as the installer invokes it (its --project-directory and --env-file) and
every published port, mount source and writable path is checked against what the installer wrote
and waits on."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.compose import KENNING_SERVICES, ROOT
from tests.deploy.test_dockerfile import stages
from tests.deploy.test_install import installer

STUB_DOCKER = """#!/usr/bin/env bash
printf '%s\\n' "KENNING_ENV_FILE=${KENNING_ENV_FILE:-} $*" >> "$STUB_LOG"
case "$*" in
  info|"compose version") exit 0 ;;
  *" exec "*) echo "the secret is printed once, alone on the last line:"; echo "stub-token" ;;
esac
exit 0
"""
STUB_CURL = """#!/usr/bin/env bash
printf 'curl %s\\n' "$*" >> "$STUB_LOG"
exit 0
"""


def docker_install(tmp_path: Path, *args: str) -> dict[str, Any]:
    """Run install.sh in Docker mode with custom ports; what it wrote, ran and printed."""
    home = tmp_path / "home"
    stubs = tmp_path / "bin"
    for path in (home, stubs):
        path.mkdir()
    log = tmp_path / "stub.log"
    for name, text in (("docker", STUB_DOCKER), ("curl", STUB_CURL)):
        (stubs / name).write_text(text, encoding="utf-8")
        (stubs / name).chmod(0o755)
    target = home / ".kenning"
    ports = {"KENNING_MCP_PORT": "18765", "KENNING_WEB_PORT": "18080"}
    done = installer(
        home,
        "--yes",
        "--dir",
        str(target),
        "--source",
        str(ROOT),
        *args,
        extra={
            **ports,
            "PATH": f"{stubs}:{os.environ['PATH']}",
            "STUB_LOG": str(log),
            "KENNING_INSTALL_TIMEOUT": "5",
        },
    )
    assert done.returncode == 0, done.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    up = next(line for line in calls if line.split()[1:2] == ["compose"] and " up " in line)
    return {"target": target, "ports": ports, "out": done.stdout, "calls": calls, "up": up}


def render(up: str) -> dict[str, Any]:
    """docker-compose config, with the arguments and KENNING_ENV_FILE the installer used."""
    binary = shutil.which("docker-compose")
    assert binary is not None, "Debian's docker-compose is missing (.ci/run installs it)"
    words = up.split()
    env_file = words[0].removeprefix("KENNING_ENV_FILE=")
    project = words[words.index("--project-directory") + 1]
    assert words[words.index("--env-file") + 1] == env_file
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env["KENNING_ENV_FILE"] = env_file
    rest = ["--env-file", env_file, "config"]
    done = subprocess.run(
        [binary, "--project-directory", project, "-f", f"{project}/docker-compose.yml", *rest],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rendered: dict[str, Any] = yaml.safe_load(done.stdout)
    return rendered


def published(service: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(host ip, host port, container port) of each published port (docker-compose 1's form)."""
    out = []
    for port in service.get("ports", []):
        match = re.fullmatch(r"([\d.]+):(\d+):(\d+)(?:/tcp)?", str(port))
        assert match is not None, port
        out.append((match.group(1), int(match.group(2)), int(match.group(3))))
    return out


def mounts(service: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [tuple(str(v).split(":", 2)) for v in service.get("volumes", [])]  # type: ignore[misc]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result = docker_install(tmp_path_factory.mktemp("docker-install"))
    result["config"] = render(result["up"])
    return result


def test_the_installer_waits_on_the_ports_compose_publishes(installed: dict[str, Any]) -> None:
    services = installed["config"]["services"]
    mcp_port = int(installed["ports"]["KENNING_MCP_PORT"])
    web_port = int(installed["ports"]["KENNING_WEB_PORT"])
    assert published(services["mcp_server"]) == [("127.0.0.1", mcp_port, 8765)]
    assert published(services["web_ui"]) == [("127.0.0.1", web_port, 8080)]
    assert "ports" not in services["valkey"]  # reached only on the compose network
    assert "ports" not in services["feed_worker"]
    waited = [line for line in installed["calls"] if line.startswith("curl ")]
    assert waited
    assert all(f"http://127.0.0.1:{mcp_port}/healthz" in line for line in waited)
    assert f"http://127.0.0.1:{mcp_port}/mcp" in installed["out"]
    assert f"http://127.0.0.1:{web_port}/" in installed["out"]
    # inside, each service listens where its port is mapped to
    assert services["mcp_server"]["environment"]["KENNING_MCP_PORT"] == "8765"
    assert services["web_ui"]["environment"]["KENNING_WEB_PORT"] == "8080"


def test_every_mount_source_exists_and_is_what_the_installer_made(
    installed: dict[str, Any],
) -> None:
    config = installed["config"]
    named = set(config["volumes"])
    binds = 0
    for name, service in config["services"].items():
        for source, _target, _mode in mounts(service):
            if source in named:
                continue
            binds += 1
            path = Path(source)
            assert path.is_file(), (name, source)  # never a directory Docker would create
            assert path.stat().st_mode & 0o004, (name, source)  # the container's user reads it
    assert binds == 2  # valkey.conf and feeds.yml
    worker = {t: s for s, t, _m in mounts(config["services"]["feed_worker"])}
    assert worker["/etc/kenning/feeds.yml"] == str(installed["target"] / "feeds.yml")
    assert worker["/etc/kenning/feeds.yml"] != str(ROOT / "feeds.yml")


def test_every_writable_path_is_a_volume_the_image_makes_for_its_user(
    installed: dict[str, Any],
) -> None:
    config = installed["config"]
    volumes = re.search(r"(?m)^VOLUME \[(.*)\]$", stages()[-1])
    assert volumes is not None
    image_volumes = set(re.findall(r'"([^"]+)"', volumes.group(1)))
    for name in KENNING_SERVICES:
        service = config["services"][name]
        env = service["environment"]
        writable = {t for s, t, m in mounts(service) if s in config["volumes"] and m == "rw"}
        assert {env["KENNING_DATA_DIR"], env["KENNING_BACKUP_DIR"]} <= writable, name
        assert writable <= image_volumes, name  # so owned by uid 10001 (test_dockerfile.py)
        # the installer's .env reaches the service (compose inlines its env_file)
        assert env["KENNING_INSTALL_DIR"] == str(installed["target"]), name


def test_the_dashboard_reads_the_mcp_servers_metrics_by_service_name(
    installed: dict[str, Any],
) -> None:
    services = installed["config"]["services"]
    url = services["web_ui"]["environment"]["KENNING_WEB_MCP_METRICS_URL"]
    match = re.fullmatch(r"http://([a-z_]+):(\d+)/metrics", url)
    assert match is not None, url
    assert match.group(1) == "mcp_server"
    assert match.group(1) in services
    assert int(match.group(2)) == int(services["mcp_server"]["environment"]["KENNING_MCP_PORT"])


def test_expose_publishes_on_all_interfaces(tmp_path: Path) -> None:
    result = docker_install(tmp_path, "--expose", "https://kenning.example.com")
    services = render(result["up"])["services"]
    assert published(services["mcp_server"]) == [("0.0.0.0", 18765, 8765)]
    assert published(services["web_ui"]) == [("0.0.0.0", 18080, 8080)]
    assert "https://kenning.example.com/mcp" in result["out"]
