"""Which shards of a cluster do not answer: the names a failed search or read reports.

valkey-search 1.2.1 can answer a search from the shards that do (``SOMESHARDS``, or the config
``search.enable-partial-results yes``), but its reply then says nothing about the shards left
out: the fan-out's tracker returns the merged rows with an OK status as soon as one shard
answered (src/query/fanout.cc at tag 1.2.1, ``~SearchPartitionResultsTracker``), and a live shard
that only timed out is dropped the same way (``HandleResponse``). Kenning could not tell such an
answer from a complete one, so it never asks for one (docs/cluster.md, "Faults"): a search that
fails on a cluster is explained here, by asking every primary the client knows of directly, and
reported as ``BackendUnavailable`` naming each primary that does not answer and its slots.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import valkey

from kenning.core.errors import BackendUnavailable, KenningError, StoreError
from kenning.store import layout

PROBE_TIMEOUT = 0.5  # seconds: a node on loopback or a LAN answers a PING well within it


@dataclass(frozen=True)
class Down:
    """A primary that did not answer, and the slot ranges it owns (as the client last saw them)."""

    address: str
    slots: tuple[tuple[int, int], ...]

    def describe(self) -> str:
        owned = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in self.slots)
        return f"{self.address} (slots {owned or 'none'})"


def down(client: Any) -> list[Down]:
    """The primaries of ``client``'s cluster that do not answer a PING (none on one server)."""
    if not layout.clustered(client):
        return []
    password = client.get_connection_kwargs().get("password")
    found: list[Down] = []
    for node in client.get_primaries():
        if not _answers(node.host, node.port, password):
            found.append(Down(f"{node.host}:{node.port}", _owned(client, node.name)))
    return sorted(found, key=lambda d: d.address)


def _answers(host: str, port: int, password: str | None) -> bool:
    probe = valkey.Valkey(
        host=host,
        port=port,
        password=password,
        socket_timeout=PROBE_TIMEOUT,
        socket_connect_timeout=PROBE_TIMEOUT,
    )
    try:
        return bool(probe.ping())
    except (valkey.ValkeyError, OSError):
        return False
    finally:
        probe.close()  # type: ignore[no-untyped-call]


def _owned(client: Any, name: str) -> tuple[tuple[int, int], ...]:
    """The consecutive slot ranges whose primary (first node in the slot map) is ``name``."""
    cache: dict[int, list[Any]] = client.nodes_manager.slots_cache
    owned = sorted(s for s, nodes in cache.items() if nodes and nodes[0].name == name)
    spans: list[tuple[int, int]] = []
    for s in owned:
        if spans and spans[-1][1] == s - 1:
            spans[-1] = (spans[-1][0], s)
        else:
            spans.append((s, s))
    return tuple(spans)


def explained(client: Any, exc: KenningError) -> KenningError:
    """``exc`` (a search or read that failed) named for the shards that are down, when some are:
    a search reads every shard and is never answered from part of them."""
    if not isinstance(exc, BackendUnavailable | StoreError):
        return exc
    missing = down(client)
    if not missing:
        return exc
    names = " and ".join(d.describe() for d in missing)
    which = f"shards {names} are" if len(missing) > 1 else f"shard {names} is"
    # the shard's name before the first ": ", the summary an outage shows (mcp_server.errors)
    return BackendUnavailable(
        f"{which} down: a search reads every shard and Kenning never answers from part of "
        "them, so nothing was searched",
        hint=(
            "start the node again or promote a replica (`kenning cluster status` lists the "
            "nodes); memories on the other shards can still be read by key"
        ),
    )


@contextmanager
def named(client: Any) -> Iterator[None]:
    """Run a search: a failure on a cluster with a shard down says which (``explained``)."""
    try:
        yield
    except KenningError as exc:
        better = explained(client, exc)
        if better is exc:
            raise
        raise better from exc


COORDINATOR_OFFSET = 20294  # valkey-search 1.2.1, src/coordinator/util.h (docs/cluster.md)


def coordinator_port(port: int) -> int:
    """The gRPC port valkey-search's coordinator opens beside a node on ``port``."""
    return port + COORDINATOR_OFFSET + (1 if port == 6378 else 0)


def exposed_coordinators(client: Any) -> list[str]:
    """``host:port`` of each node's coordinator port that accepts a TCP connection on a
    non-loopback address: the node's own, or for a node on loopback this machine's outward
    address (the coordinator binds every interface). Empty on one server."""
    if not layout.clustered(client):
        return []
    outward = _outward_address()
    found: list[str] = []
    for node in client.get_nodes():
        host = node.host if not _loopback(node.host) else outward
        if host is None:
            continue
        target = (host, coordinator_port(int(node.port)))
        if _connects(target):
            found.append(f"{target[0]}:{target[1]}")
    return sorted(set(found))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def _outward_address() -> str | None:
    """The address this machine would send from (a UDP socket's connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # any routable address; no packet is sent
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if ipaddress.ip_address(address).is_loopback else address


def _connects(target: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(target, timeout=PROBE_TIMEOUT):
            return True
    except OSError:
        return False
