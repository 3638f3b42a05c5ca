"""Forming and reading a Valkey Cluster: the commands ``kenning cluster`` sends (kenning.ops.cluster
runs the processes).

``form`` MEETs every node, gives each primary an equal range of slots (ADDSLOTSRANGE), attaches
each replica to its primary (CLUSTER REPLICATE) and waits until every node says the cluster is ok
and every replica's link is up. ``describe`` reads what ``kenning cluster status`` prints.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import valkey

from kenning.core.errors import BackendUnavailable
from kenning.store.client import guarded
from kenning.store.slots import SLOTS

FORM_TIMEOUT = 60.0
MAP_REFRESH = 1.0


def ranges(shards: int) -> list[tuple[int, int]]:
    """The slots cut into ``shards`` equal consecutive ranges."""
    step = SLOTS / shards
    return [(round(i * step), round((i + 1) * step) - 1) for i in range(shards)]


@dataclass(frozen=True)
class NodeState:
    """One node as CLUSTER NODES describes it."""

    address: str
    id: str
    role: str  # primary | replica
    up: bool
    slots: str  # its ranges, e.g. "0-5461"
    primary_of: str = ""  # a replica: its primary's id


class ClusterAdmin:
    """Talks to each node of a local cluster by its port."""

    def __init__(self, host: str, password: str) -> None:
        self.host, self.password = host, password
        self.clients: dict[int, valkey.Valkey] = {}

    def client(self, port: int) -> valkey.Valkey:
        """One connection pool per node, kept (a slot move sends thousands of commands)."""
        if port not in self.clients:
            self.clients[port] = valkey.Valkey(
                host=self.host, port=port, password=self.password, socket_timeout=5
            )
        return self.clients[port]

    def close(self) -> None:
        for conn in self.clients.values():
            conn.close()  # type: ignore[no-untyped-call]
        self.clients.clear()

    def answers(self, port: int) -> bool:
        with contextlib.suppress(BackendUnavailable):
            return bool(self.run(port, "PING"))
        return False

    def run(self, port: int, *args: object) -> Any:
        with guarded():
            return self.client(port).execute_command(*args)  # type: ignore[no-untyped-call]

    def form(self, ports: list[int], shards: int) -> None:
        """Primaries are the first ``shards`` ports; the others replicate them in turn. A cluster
        formed before (restarted on its data) is only waited for."""
        if b"cluster_slots_assigned:0" not in bytes(self.run(ports[0], "CLUSTER", "INFO")):
            for port in ports:
                until(partial(self.healthy, port), f"node {port} reporting the cluster ok")
            return
        for port in ports[1:]:
            self.run(ports[0], "CLUSTER", "MEET", self.host, port)
        for port, (low, high) in zip(ports[:shards], ranges(shards), strict=True):
            self.run(port, "CLUSTER", "ADDSLOTSRANGE", low, high)
        ids = [self.node_id(p) for p in ports[:shards]]
        for j, port in enumerate(ports[shards:]):
            until(partial(self.knows_all, port, len(ports)), f"node {port} meeting every node")
            self.run(port, "CLUSTER", "REPLICATE", ids[j % shards])
        for port in ports:
            until(partial(self.healthy, port), f"node {port} reporting the cluster ok")
        # valkey-search's coordinator reads the shard map every search.cluster-map-expiration-ms
        # (250): a search sent before its next read may fan out to fewer shards
        time.sleep(MAP_REFRESH)

    def healthy(self, port: int) -> bool:
        if b"cluster_state:ok" not in bytes(self.run(port, "CLUSTER", "INFO")):
            return False
        info = self.run(port, "INFO", "replication")  # parsed: a dict
        assert isinstance(info, dict)
        return info.get("role") == "master" or info.get("master_link_status") == "up"

    def node_id(self, port: int) -> str:
        return str(bytes(self.run(port, "CLUSTER", "MYID")).decode())

    def knows_all(self, port: int, count: int) -> bool:
        return len(self.nodes(port)) >= count

    def nodes(self, port: int) -> list[NodeState]:
        raw = bytes(self.run(port, "CLUSTER", "NODES")).decode()
        return [parse_node(line) for line in raw.strip().splitlines()]


class SlotMover:
    """Moves slots from one primary to another while the cluster serves: CLUSTER SETSLOT
    IMPORTING/MIGRATING, MIGRATE of the slot's keys in batches, then SETSLOT NODE on every
    primary (Valkey's own resharding steps, as ``valkey-cli --cluster reshard`` sends them)."""

    def __init__(self, admin: ClusterAdmin, ports: list[int]) -> None:
        self.admin, self.ports = admin, ports

    def move(self, slot: int, source: int, target: int, *, batch: int = 100) -> int:
        """Move ``slot`` from the node on port ``source`` to ``target``; the keys moved."""
        run = self.admin.run
        source_id, target_id = self.admin.node_id(source), self.admin.node_id(target)
        run(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        run(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        moved = 0
        while keys := list(run(source, "CLUSTER", "GETKEYSINSLOT", slot, batch)):
            auth = ("AUTH", self.admin.password) if self.admin.password else ()
            run(source, "MIGRATE", self.admin.host, target, "", 0, 10_000, *auth, "KEYS", *keys)
            moved += len(keys)
        for port in [target, source, *(p for p in self.ports if p not in (source, target))]:
            run(port, "CLUSTER", "SETSLOT", slot, "NODE", target_id)
        return moved


def parse_node(line: str) -> NodeState:
    """One CLUSTER NODES line: ``id addr flags primary ping pong epoch link slots...``."""
    parts = line.split()
    flags = parts[2].split(",")
    return NodeState(
        address=parts[1].split("@")[0],
        id=parts[0],
        role="primary" if "master" in flags else "replica",
        up="fail" not in flags and "fail?" not in flags and parts[7] == "connected",
        slots=" ".join(parts[8:]),
        primary_of="" if parts[3] == "-" else parts[3],
    )


def until(check: Callable[[], bool], what: str, timeout: float = FORM_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(valkey.ValkeyError, BackendUnavailable, OSError):
            if check():
                return
        time.sleep(0.1)
    raise BackendUnavailable(f"the cluster did not form: {what} timed out")


def topology(client: valkey.Valkey) -> list[NodeState]:
    """The cluster's nodes as the node the client reaches sees them (``kenning cluster status``)."""
    with guarded():
        raw = client.execute_command("CLUSTER", "NODES")  # type: ignore[no-untyped-call]
    lines = (raw.decode() if isinstance(raw, bytes) else str(raw)).strip().splitlines()
    return sorted((parse_node(line) for line in lines), key=lambda n: n.address)
