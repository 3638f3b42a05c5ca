"""docker-compose.yml without a Docker engine: Debian's docker-compose validates it, and its
settings, commands, healthchecks, ports and images are checked against the code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kenning.core.settings import Settings
from kenning_cli.commands.deploy import SERVICES as HEALTH_TARGETS
from kenning_cli.main import load_commands
from kenning_cli.registry import COMMANDS
from tests.deploy.compose import COMPOSE, KENNING_SERVICES, ROOT, services

# interpolation variables of the compose file itself (not settings of a Kenning process)
COMPOSE_VARIABLES = {
    "KENNING_IMAGE",
    "KENNING_BIND",
    "KENNING_INSTALL_DIR",
    "KENNING_ENV_FILE",
}


def test_docker_compose_validates_the_file(tmp_path: Path) -> None:
    binary = shutil.which("docker-compose")
    assert binary is not None, (
        "Debian's docker-compose is missing: apt-get install docker-compose (.ci/run does)"
    )
    env_file = tmp_path / "env"
    env_file.write_text("VALKEY_PASSWORD=not-a-real-secret\n", encoding="utf-8")
    env = {**os.environ, "KENNING_ENV_FILE": str(env_file)}
    done = subprocess.run(
        [
            binary,
            "--project-directory",
            str(ROOT),
            "-f",
            str(COMPOSE),
            "--env-file",
            str(env_file),
            "config",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "redis://:not-a-real-secret@valkey:6379/0" in done.stdout  # the secret comes from .env


def test_a_missing_password_is_refused(tmp_path: Path) -> None:
    env_file = tmp_path / "env"
    env_file.write_text("# no password\n", encoding="utf-8")
    done = subprocess.run(
        [
            "docker-compose",
            "--project-directory",
            str(ROOT),
            "-f",
            str(COMPOSE),
            "--env-file",
            str(env_file),
            "config",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "KENNING_ENV_FILE": str(env_file)},
    )
    assert done.returncode != 0
    assert "set VALKEY_PASSWORD in .env" in done.stderr


def test_four_services_each_with_a_healthcheck_restart_and_log_rotation() -> None:
    found = services()
    assert set(found) == {"valkey", *KENNING_SERVICES}
    for service in found.values():
        assert service.healthcheck[0] in ("CMD", "CMD-SHELL"), service.name
        assert service.spec["restart"] == "unless-stopped", service.name
        assert service.spec["logging"]["options"]["max-size"], service.name
        assert service.spec["deploy"]["resources"]["limits"]["memory"], service.name


def test_kenning_services_wait_for_a_healthy_valkey_and_use_pinned_images() -> None:
    found = services()
    for name in KENNING_SERVICES:
        assert found[name].spec["depends_on"] == {"valkey": {"condition": "service_healthy"}}
    images = [service.spec["image"] for service in found.values()]
    assert len(images) == 4
    for image in images:
        tag = image.rsplit(":", 1)[-1].rstrip("}")
        assert ":" in image, image
        assert tag != "latest", image
        assert re.search(r"\d", tag), image


def test_every_kenning_variable_the_file_sets_is_a_setting() -> None:
    fields = {f"KENNING_{name.upper()}" for name in Settings.model_fields}
    seen = set()
    for service in services().values():
        for key in service.environment:
            if key.startswith("KENNING_"):
                seen.add(key)
                assert key in fields, f"{service.name} sets {key}, which is no setting"
    text = COMPOSE.read_text(encoding="utf-8")
    for variable in set(re.findall(r"\$\{(KENNING_[A-Z_]+)", text)):
        assert variable in fields | COMPOSE_VARIABLES, variable
    assert {"KENNING_VALKEY_URL", "KENNING_MCP_PORT"} <= seen


def test_every_service_command_and_healthcheck_exists_in_the_cli() -> None:
    load_commands()
    for name in KENNING_SERVICES:
        service = services()[name]
        assert service.command[0] in COMMANDS, (
            f"{name} runs `kenning {service.command[0]}`, which does not exist"
        )
        check = service.healthcheck
        assert check[:3] == ["CMD", "kenning", "health"], name
        assert check[3] in HEALTH_TARGETS, name


@pytest.mark.parametrize("name", ["mcp_server", "web_ui"])
def test_published_ports_bind_to_loopback_unless_exposed(name: str) -> None:
    ports = services()[name].spec["ports"]
    assert ports
    assert all(p.startswith("${KENNING_BIND:-127.0.0.1}:") for p in ports), ports


def test_valkey_config_requires_what_production_needs() -> None:
    conf = (ROOT / "valkey" / "valkey.conf").read_text(encoding="utf-8")
    lines = {
        line.split()[0]: line.split()[1:]
        for line in conf.splitlines()
        if line and not line.startswith("#")
    }
    assert lines["loadmodule"] == ["/usr/lib/valkey/libsearch.so"]
    assert lines["appendonly"] == ["yes"]
    assert lines["appendfsync"] == ["everysec"]
    assert lines["maxmemory-policy"] == ["noeviction"]
    assert lines["hash-max-listpack-value"] == ["4096"]
    assert "requirepass" not in lines  # the password comes from .env on the command line
    assert "--requirepass" in services()["valkey"].command
