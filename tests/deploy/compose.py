"""Reading docker-compose.yml the way the deployment tests need it (no Docker engine here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
KENNING_SERVICES = ("mcp_server", "web_ui", "feed_worker")


@dataclass(frozen=True)
class Service:
    name: str
    spec: dict[str, Any]

    @property
    def command(self) -> list[str]:
        command: list[str] = self.spec["command"]
        return command

    @property
    def environment(self) -> dict[str, str]:
        env: dict[str, str] = self.spec.get("environment", {})
        return {key: str(value) for key, value in env.items()}

    @property
    def healthcheck(self) -> list[str]:
        test: list[str] = self.spec["healthcheck"]["test"]
        return test

    @property
    def container_ports(self) -> list[int]:
        return [int(mapping.rsplit(":", 1)[-1]) for mapping in self.spec.get("ports", [])]


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return data


def services() -> dict[str, Service]:
    return {name: Service(name, spec) for name, spec in load()["services"].items()}
