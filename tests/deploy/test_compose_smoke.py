"""A compose smoke test without Docker: every Kenning service of docker-compose.yml is started on
this host with its command and environment (the session's embedded Valkey stands in for the valkey
image), each healthcheck command is run until healthy, then an MCP call and a
dashboard request go through.

Two things differ from a real compose run and are said here: the host has no container network, so
the file's `valkey:6379` becomes the embedded server's loopback address; and the services listen on
free loopback ports instead of the declared container ports (8765/8080 may be
taken on a shared machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client

from kenning.ops.embedded import EmbeddedValkey
from tests.conftest import free_port
from tests.deploy.compose import KENNING_SERVICES, Service, services

PORT_SETTINGS = {8765: "KENNING_MCP_PORT", 8080: "KENNING_WEB_PORT"}


def service_env(
    service: Service, valkey: EmbeddedValkey, base: dict[str, str], ports: dict[int, int]
) -> dict[str, str]:
    env = dict(base)
    for key, declared in service.environment.items():
        value = declared
        if key == "KENNING_VALKEY_URL":
            assert "@valkey:6379/" in declared  # the file points at the compose service
            value = valkey.url
        elif declared == "0.0.0.0":  # the container binds all; on this host, loopback only
            value = "127.0.0.1"
        env[key] = value
    for container_port in service.container_ports:
        env[PORT_SETTINGS[container_port]] = str(ports[container_port])
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kenning_cli", *args]


def wait_healthy(
    service: Service, env: dict[str, str], proc: subprocess.Popen[str], timeout: float = 240
) -> str:
    check = service.healthcheck
    assert check[:2] == ["CMD", "kenning"]
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        assert proc.poll() is None, (
            f"{service.name} exited: {proc.stdout.read() if proc.stdout else ''}"
        )
        done = subprocess.run(
            cli(*check[2:]), env=env, capture_output=True, text=True, check=False, timeout=60
        )
        if done.returncode == 0:
            return done.stdout
        last = done.stdout + done.stderr
        time.sleep(1)
    raise AssertionError(f"{service.name} never became healthy: {last}")


@pytest.fixture
def stack(valkey_server: EmbeddedValkey, tmp_path: Path) -> Iterator[dict[str, Any]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    base.update(
        {"KENNING_KEY_PREFIX": f"smoke{uuid.uuid4().hex[:8]}:", "KENNING_LOG_LEVEL": "WARNING"}
    )
    ports = {8765: free_port(), 8080: free_port()}
    found = services()
    envs, procs = {}, {}
    try:
        for name in KENNING_SERVICES:
            env = service_env(found[name], valkey_server, base, ports)
            env["KENNING_DATA_DIR"] = str(tmp_path / name)
            env["KENNING_BACKUP_DIR"] = str(tmp_path / "backups")
            envs[name] = env
            procs[name] = subprocess.Popen(
                cli(*found[name].command),
                env=env,
                cwd=tmp_path,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        for name in KENNING_SERVICES:
            wait_healthy(found[name], envs[name], procs[name])
        yield {"env": envs, "ports": ports}
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


async def test_every_service_comes_up_healthy_and_answers(stack: dict[str, Any]) -> None:
    env = stack["env"]["mcp_server"]
    created = subprocess.run(
        cli("token", "create", "--scope", "write", "--name", "smoke"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    token = created.stdout.strip().splitlines()[-1]
    async with Client(f"http://127.0.0.1:{stack['ports'][8765]}/mcp", auth=token) as client:
        stored = await client.call_tool(
            "remember", {"content": "compose smoke: the stack answers", "project": "smoke"}
        )
        assert stored.structured_content is not None
        assert stored.structured_content["status"] == "stored"
    web = httpx.get(f"http://127.0.0.1:{stack['ports'][8080]}/login", timeout=30)
    assert web.status_code == 200
    assert "Kenning" in web.text
