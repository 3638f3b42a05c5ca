"""Building and running the processes: the engine once per process, the front doors beside it."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol

from kenning.core.errors import BackendUnavailable
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.runtime.embedding import Embedder, load_embedder
from kenning.store import connect
from kenning_cli.logs import announce

if TYPE_CHECKING:
    from mcp_server.metrics import Metrics

log = logging.getLogger(__name__)


class Service(Protocol):
    """A front door running beside the engine (in its own thread)."""

    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def alive(self) -> bool: ...


def open_engine(settings: Settings, embedder: Embedder | None = None) -> Engine:
    """Connect, load the model (once) and open the engine: the start-up path of every process."""
    client = connect(settings)
    return Engine.open(
        settings, client, embedder or load_embedder(settings, _pinned(settings, client))
    )


def load_model(settings: Settings, *, strict: bool = True) -> Embedder:
    """The embedder for this store: ``auto`` reads which model wrote the store's vectors first.

    ``strict=False`` (the doctor) loads the new-store default when Valkey cannot be asked, so an
    outage is reported as an outage, not as a broken model.
    """
    try:
        pinned = _pinned(settings)
    except BackendUnavailable:
        if strict:
            raise
        pinned = None
    return load_embedder(settings, pinned)


def _pinned(settings: Settings, client: Any = None) -> str | None:
    """The store's pinned model when ``auto`` needs it; asks over ``client``, or a connection of
    its own that it closes (the engine opens its own pool)."""
    if settings.embedding_backend != "auto":
        return None
    from kenning.store import Store

    if client is not None:
        return Store(client, settings.key_prefix).pinned_model()
    own = connect(settings)
    try:
        return Store(own, settings.key_prefix).pinned_model()
    finally:
        own.close()  # type: ignore[no-untyped-call]


def front_doors(
    engine: Engine,
    settings: Settings,
    *,
    mcp: bool,
    worker: bool = True,
    web: bool = True,
    metrics: Metrics | None = None,
) -> list[Service]:
    """The services `kenning up` runs beside the engine, each imported lazily.

    All are part of this distribution: a missing dependency is an error,
    never a silently absent door.
    """
    services: list[Service] = []
    if mcp:
        from mcp_server.service import McpService

        services.append(McpService(engine, settings, metrics=metrics))
    if web:
        from web_ui.service import WebService
        from web_ui.sessions import logins_for

        services.append(WebService(engine, settings, logins_for(engine, settings)))
    # a core part of the package: a missing scheduler is an error, not a silently absent door
    if worker:
        from feed_worker.metrics import FeedMetrics
        from feed_worker.worker import Worker

        # with the MCP server, its /metrics shows the feed counters too
        feed_metrics = FeedMetrics(metrics.registry) if metrics is not None else None
        services.append(Worker(engine, settings, metrics=feed_metrics))
    return services


def up(settings: Settings, *, mcp: bool = True, worker: bool = True, web: bool = True) -> int:
    """Embedded Valkey (unless KENNING_VALKEY_URL or _CLUSTER) + every service, in the
    foreground; Ctrl-C stops all."""
    from kenning.ops.embedded import EmbeddedValkey
    from kenning_cli.signals import wait_for_signal

    if mcp:
        from mcp_server.auth import check_exposure

        check_exposure(settings)  # before Valkey and the model: a refused exposure fails fast
    with contextlib.ExitStack() as stack:
        server = None
        if settings.valkey_url is None and settings.valkey_cluster is None:
            server = stack.enter_context(EmbeddedValkey(settings))
            print(
                f"valkey ready on {settings.valkey_host}"
                f":{settings.valkey_port} (data {server.dir})",
                flush=True,
            )
        metrics, embedder = instrumented_embedder(settings) if mcp else (None, load_model(settings))
        engine = open_engine(settings, embedder)
        # after the doors stop, before Valkey does: pending recall writes land
        stack.callback(engine.close)
        doors = front_doors(engine, settings, mcp=mcp, worker=worker, web=web, metrics=metrics)
        running = _start_all(doors, stack)

        def alive() -> bool:
            return (server is None or server.alive()) and all(s.alive() for s in running)

        announce("kenning is up; Ctrl-C stops it")
        wait_for_signal(alive)
    return 0


def instrumented_embedder(settings: Settings) -> tuple[Metrics, Embedder]:
    """The model, loaded once, wrapped so /metrics sees the embedding latency of every caller."""
    from prometheus_client import CollectorRegistry

    from kenning.runtime.embedding import BatchingEmbedder, ObservedEmbedder
    from mcp_server.metrics import Metrics

    metrics = Metrics(CollectorRegistry())
    model = load_model(settings)
    if isinstance(model, BatchingEmbedder):
        model.on_overload = metrics.embedding_overloaded.inc
    return metrics, ObservedEmbedder(model, metrics.embedding_latency.observe)


def run_alone(service: Service, banner: str) -> int:
    """`kenning mcp` and `kenning worker`: start one service, print ``banner``, block until
    Ctrl-C (a service that stops by itself is an error, see ``wait_for_signal``), then stop it."""
    from kenning_cli.signals import wait_for_signal

    service.start()
    announce(f"{banner}; Ctrl-C stops it")
    try:
        wait_for_signal(service.alive)
    finally:
        service.stop()
    return 0


def _start_all(services: list[Service], stack: contextlib.ExitStack) -> list[Service]:
    for service in services:
        service.start()
        stack.callback(service.stop)
        announce(f"{service.name} started")
    return services
