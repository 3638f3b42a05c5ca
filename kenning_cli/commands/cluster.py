"""`kenning cluster up|status|repair`: a local Valkey Cluster, what it looks like, and the sweep
that completes units of work whose second half was lost (docs/cluster.md)."""

from __future__ import annotations

import argparse
import sys

from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning_cli.registry import command
from kenning_cli.signals import wait_for_signal


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("up", "status", "repair"))
    parser.add_argument("--shards", type=int, default=3, help="primaries (up; default 3)")
    parser.add_argument("--replicas", type=int, default=0, help="replicas per primary (up)")
    parser.add_argument(
        "--port", type=int, default=7001, help="first node's port (up; the others follow)"
    )


@command(
    "cluster",
    "A local Valkey Cluster with valkey-search in coordinator mode (up: start and form it in the "
    "foreground), its nodes (status), or the repair sweep (repair); status and repair use "
    "KENNING_VALKEY_CLUSTER.",
    _arguments,
)
def _cluster(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "up":
        return _up(args, settings)
    if settings.valkey_cluster is None:
        print(
            "KENNING_VALKEY_CLUSTER is unset: name the cluster's nodes (host:port,host:port)",
            file=sys.stderr,
        )
        return 2
    return _status(settings) if args.action == "status" else _repair(settings)


def _up(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.ops.cluster import LocalCluster

    cluster = LocalCluster(
        settings.data_dir,
        settings.search_module,
        shards=args.shards,
        replicas=args.replicas,
        base_port=args.port,
        binary=settings.valkey_binary,
    )
    with cluster:
        seeds = cluster.spec.partition("@")[2]
        password = cluster.dir / "password"
        print(f"cluster ready: {cluster.shards} shards, {cluster.replicas} replicas each")
        print(f'export KENNING_VALKEY_CLUSTER=":$(cat {password})@{seeds}"', flush=True)
        wait_for_signal(cluster.alive)
    return 0


def _status(settings: Settings) -> int:
    from kenning.store import connect, topology

    client = connect(settings)
    try:
        nodes = topology(client)
    except KenningError as exc:
        print(f"the cluster does not answer: {exc.message}", file=sys.stderr)
        return 1
    finally:
        client.close()  # type: ignore[no-untyped-call]
    for node in nodes:
        state = "up" if node.up else "DOWN"
        serves = node.slots or f"replica of {node.primary_of[:8]}"
        print(f"{node.address:22} {node.role:8} {state:5} {node.id[:8]}  {serves}")
    down = [n.address for n in nodes if not n.up]
    print(f"{len(nodes)} nodes; " + (f"down: {', '.join(down)}" if down else "all up"))
    return 1 if down else 0


def _repair(settings: Settings) -> int:
    from kenning.store import Store, connect

    client = connect(settings)
    try:
        done = Store(client, settings.key_prefix).repair()
    finally:
        client.close()  # type: ignore[no-untyped-call]
    print(f"completed {len(done.completed)} units; {done.waiting} still in flight")
    for uid in done.blocked:
        print(f"blocked: unit {uid} (a gate on another slot changed; nothing forced)")
    return 1 if done.blocked else 0
