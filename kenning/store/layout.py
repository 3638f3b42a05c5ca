"""One server or Valkey Cluster: the cluster client and what differs in how commands are sent.

``KENNING_VALKEY_CLUSTER`` names seed nodes (``host:port,host:port``, optionally ``:password@``
in front); set, every process talks to the cluster through valkey-py's ``ValkeyCluster`` and the
store uses the cluster layout (kenning.store.slots, cluster_unit, cluster_audit). Unset, nothing
changes: a plain ``valkey.Valkey`` on one server, whose keys and units stay as they were.

FT.* commands carry no key: the cluster client sends them to one primary, and valkey-search in
coordinator mode (``--use-coordinator``) fans a search out to every shard and merges the answers.
FT.INFO answers for the node it reaches; ``info_reply`` adds the ``PRIMARY`` scope (every shard's
documents) and the ``CLUSTER`` scope (backfill on every shard).
"""

from __future__ import annotations

from typing import Any, cast

import valkey
from valkey.cluster import ClusterNode, ValkeyCluster

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings


def clustered(client: Any) -> bool:
    """Whether ``client`` talks to a Valkey Cluster."""
    return isinstance(client, ValkeyCluster)


def seeds(spec: str) -> tuple[str | None, list[tuple[str, int]]]:
    """``[:password@]host:port[,host:port...]`` read into a password and the seed nodes."""
    password: str | None = None
    nodes = spec.strip()
    if "@" in nodes:
        secret, _, nodes = nodes.rpartition("@")
        password = secret.removeprefix(":") or None
    found: list[tuple[str, int]] = []
    for part in filter(None, (p.strip() for p in nodes.split(","))):
        host, _, port = part.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InvalidInput(
                f"KENNING_VALKEY_CLUSTER names {part!r}, not host:port",
                hint="write it as host:port,host:port (e.g. 127.0.0.1:7001,127.0.0.1:7002)",
            )
        found.append((host, int(port)))
    if not found:
        raise InvalidInput(
            "KENNING_VALKEY_CLUSTER names no node",
            hint="write it as host:port,host:port (e.g. 127.0.0.1:7001,127.0.0.1:7002)",
        )
    return password, found


def connect_cluster(settings: Settings, spec: str, *, max_connections: int) -> valkey.Valkey:
    """The cluster client. Typed as the one-server client: the store calls the commands both
    serve (a cluster client splits a pipeline by node)."""
    password, nodes = seeds(spec)
    client = ValkeyCluster(
        startup_nodes=[
            ClusterNode(host, port)  # type: ignore[no-untyped-call]
            for host, port in nodes
        ],
        password=password,
        socket_timeout=settings.valkey_timeout_seconds,
        socket_connect_timeout=settings.valkey_timeout_seconds,
        max_connections=max_connections,
        decode_responses=False,
        # a primary killed: its replica takes over within the node timeout; retry meanwhile
        cluster_error_retry_attempts=5,
    )
    return cast(valkey.Valkey, client)


def info_reply(client: Any, name: str) -> list[Any]:
    """FT.INFO of ``name``: the node's answer, on a cluster followed by every shard's counts."""
    local = list(client.execute_command("FT.INFO", name))
    if not clustered(client):
        return local
    wide = list(client.execute_command("FT.INFO", name, "CLUSTER"))
    everywhere = list(client.execute_command("FT.INFO", name, "PRIMARY"))
    # later keys win when the reply is read as key/value pairs: the cluster-wide counts, and
    # "still building" while a shard has not received the index yet (FT.CREATE reaches the
    # other shards after it returns: a hash written there before would not be indexed in time)
    lagging = [b"backfill_in_progress", b"1"] if not _on_every_primary(client, name) else []
    return local + wide + everywhere + lagging


def _on_every_primary(client: Any, name: str) -> bool:
    for node in client.get_primaries():
        try:
            client.execute_command("FT.INFO", name, target_nodes=node)
        except valkey.ResponseError:
            return False
    return True
