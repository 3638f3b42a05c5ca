"""The one place that speaks to Valkey: connection, command execution, error translation."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import valkey
from valkey import exceptions as vx

from kenning.core.errors import BackendUnavailable, KenningError, StoreError
from kenning.core.settings import Settings
from kenning.store.layout import connect_cluster

log = logging.getLogger(__name__)
_MODULE_MISSING = ("unknown command", "ft.search", "ft.create", "ft.info")
# How each engine says an index does not exist (RediSearch 2.10: "Unknown index name", "Unknown
# Index name", "<name>: no such index"; valkey-search 1.2.1: "Index with name '<name>' not found in
# database 0"). Both wordings are covered by tests/kenning/test_engines.py against both modules.
# valkey-search's coordinator when a fan-out (FT.INFO ... CLUSTER|PRIMARY) misses a shard
_SHARD_SILENT = "unable to contact all cluster members"
_NO_INDEX = ("unknown index name", ": no such index", "not found in database")


def password_file(settings: Settings) -> Path:
    return settings.data_dir / "valkey" / "password"


def connection_url(settings: Settings) -> str:
    """The external URL when configured, else the embedded server's
    loopback URL with its password."""
    if settings.valkey_url is not None:
        return settings.valkey_url.get_secret_value()
    path = password_file(settings)
    try:
        secret = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise BackendUnavailable(
            f"the embedded Valkey has no password file at {path}",
            hint="start it with `kenning valkey` or `kenning up`, or set KENNING_VALKEY_URL",
        ) from exc
    return f"redis://:{secret}@{settings.valkey_host}:{settings.valkey_port}/0"


def connect(settings: Settings, *, max_connections: int = 32) -> valkey.Valkey:
    """A pooled client; built once per process by the entry point and passed in. With
    ``KENNING_VALKEY_CLUSTER`` set, a cluster client (kenning.store.layout)."""
    if settings.valkey_cluster is not None:
        spec = settings.valkey_cluster.get_secret_value()
        return connect_cluster(settings, spec, max_connections=max_connections)
    return valkey.Valkey.from_url(
        connection_url(settings),
        socket_timeout=settings.valkey_timeout_seconds,
        socket_connect_timeout=settings.valkey_timeout_seconds,
        max_connections=max_connections,
        decode_responses=False,
        health_check_interval=30,
    )


def translate(exc: Exception) -> KenningError:
    """Valkey errors -> typed engine errors. A failure is never turned into an empty result."""
    text = str(exc)
    if isinstance(exc, vx.AuthenticationError | vx.AuthorizationError):
        return BackendUnavailable(
            f"Valkey refused the credentials: {text}",
            hint="check KENNING_VALKEY_URL or the embedded password file",
        )
    if isinstance(exc, vx.ConnectionError | vx.TimeoutError | OSError):
        return BackendUnavailable(
            f"Valkey is unreachable: {text}", hint="is Valkey running? `kenning doctor` checks it"
        )
    lowered = text.lower()
    if (
        isinstance(exc, vx.ResponseError)
        and any(m in lowered for m in _MODULE_MISSING)
        and "unknown command" in lowered
    ):
        return BackendUnavailable(
            "the search module is not loaded in Valkey",
            hint="load valkey-search (or RediSearch) or use `kenning valkey`",
        )
    if isinstance(exc, vx.ResponseError) and _SHARD_SILENT in lowered:
        return BackendUnavailable(
            f"a shard of the cluster does not answer: {text}",
            hint="retry in a moment; `kenning cluster status` shows which node is down",
        )
    if isinstance(
        exc, vx.ReadOnlyError | vx.OutOfMemoryError | vx.ClusterDownError | vx.TryAgainError
    ):
        return BackendUnavailable(f"Valkey cannot serve this now: {text}", hint="retry in a moment")
    return StoreError(
        f"Valkey answered with an error: {text}",
        hint="the store is up; this command was refused (see the server's answer)",
    )


def index_missing(exc: KenningError) -> bool:
    """Whether a translated error says the named index does not exist (either engine's wording)."""
    lowered = exc.message.lower()
    return isinstance(exc, StoreError) and any(marker in lowered for marker in _NO_INDEX)


def index_exists_already(exc: KenningError) -> bool:
    """Whether a translated FT.CREATE error says the index exists (both
    engines say "already exists")."""
    return isinstance(exc, StoreError) and "already exists" in exc.message.lower()


@contextmanager
def guarded() -> Iterator[None]:
    try:
        yield
    except KenningError:
        raise
    except (vx.ValkeyError, OSError) as exc:
        raise translate(exc) from exc


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run one client call with error translation. Typed ``Any``: the client's
    stubs mix sync and async."""
    with guarded():
        return fn(*args, **kwargs)


def text(value: Any) -> str:
    """A reply element as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
