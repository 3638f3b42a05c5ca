"""`kenning doctor`: check Valkey, the search module, the indexes and the
model; one line per check."""

from __future__ import annotations

import stat
from collections.abc import Callable
from datetime import UTC, datetime

from kenning.core import permissions, schema
from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning.curation.graph import REPORT
from kenning.memory.inspection import (
    Check,  # the same verdict the health tool reports, one shape for both
)
from kenning.ops.jobs import Jobs
from kenning.runtime.embedding import Embedder
from kenning.store import VALKEY_SEARCH, GraphCheck, Store, connect


def run(settings: Settings, load_model: Callable[[Settings], Embedder]) -> list[Check]:
    """Every check runs; a failed dependency makes the ones after it
    report why they could not run."""
    checks: list[Check] = []
    store: Store | None = None
    try:
        candidate = Store(connect(settings), settings.key_prefix)
        candidate.ping()
        store = candidate
        checks.append(Check("valkey", True, _where(settings)))
    except KenningError as exc:
        checks.append(Check("valkey", False, str(exc)))
    checks.append(_module(store))
    checks.append(forks(store))
    model = _model(settings, load_model, checks)
    checks.append(_indexes(store, settings, model))
    checks.append(graph(store))
    checks.append(files(settings))
    checks.append(_worker(store, settings))
    if settings.valkey_cluster is not None:
        checks.append(_coordinators(store))
    return checks


def _coordinators(store: Store | None) -> Check:
    """valkey-search's coordinator port has no authentication nor TLS (docs/cluster.md)."""
    try:
        open_ports = None if store is None else store.exposed_coordinators()
    except KenningError as exc:
        return Check("coordinator ports", False, str(exc))
    if open_ports is None:
        return Check("coordinator ports", False, "not checked: the cluster is unreachable")
    if open_ports:
        return Check(
            "coordinator ports",
            False,
            f"reachable over the network: {', '.join(open_ports)}; valkey-search's coordinator "
            "has no password nor TLS: allow these ports only from the cluster's own nodes "
            "(docs/cluster.md, 'The coordinator's port')",
        )
    return Check(
        "coordinator ports", True, "not reachable from this machine on a non-loopback address"
    )


def files(settings: Settings) -> Check:
    """The embedded Valkey's data (every memory is in its AOF) must be private to the user."""
    if settings.valkey_url is not None:
        return Check("data files", True, "not checked: an external Valkey keeps its own files")
    found = permissions.loose(settings.data_dir / "valkey")
    if found:
        shown = ", ".join(f"{p} ({stat.S_IMODE(p.stat().st_mode):o})" for p in found[:5])
        return Check(
            "data files",
            False,
            f"readable by others: {shown}; restart the embedded Valkey (it "
            f"makes them private) or chmod -R go= {settings.data_dir}",
        )
    return Check("data files", True, f"private (700/600) under {settings.data_dir / 'valkey'}")


def _where(settings: Settings) -> str:
    return (
        "external server (KENNING_VALKEY_URL)"
        if settings.valkey_url
        else f"embedded at {settings.valkey_host}:{settings.valkey_port}"
    )


def _module(store: Store | None) -> Check:
    if store is None:
        return Check("search module", False, "not checked: Valkey is unreachable")
    try:
        modules = store.modules()
    except KenningError as exc:
        return Check("search module", False, str(exc))
    if "search" not in modules:
        return Check(
            "search module", False, f"not loaded (modules: {', '.join(modules) or 'none'})"
        )
    try:
        found = store.search_module()
    except KenningError as exc:
        return Check("search module", False, str(exc))
    return Check("search module", True, f"loaded ({found})")


def forks(store: Store | None) -> Check:
    """Whether the server forks on its own while Kenning writes: on valkey-search 1.2.1 a search
    in a fork's window can deadlock the server for good (kenning.store.persistence)."""
    if store is None:
        return Check("persistence", False, "not checked: Valkey is unreachable")
    try:
        found = store.forks()
        module = store.search_module()
        aof = store.aof_state()
    except KenningError as exc:
        return Check("persistence", False, str(exc))
    size = f"AOF {aof.size:,} bytes ({aof.base:,} after its last rewrite)" if aof.enabled else ""
    if not found:
        return Check("persistence", True, size or "AOF off; no snapshots")
    said = "; ".join(found)
    if module is not None and module.name == VALKEY_SEARCH:
        return Check(
            "persistence",
            False,
            f"{said}: Valkey forks on its own, and a search during a fork can deadlock "
            "valkey-search 1.2.1 for good (valkey-io/valkey-search#1260). Set "
            'auto-aof-rewrite-percentage 0 and save "" (CONFIG SET, and in valkey.conf); '
            "Kenning's maintenance rewrites the AOF with writes paused (`kenning compact`)",
        )
    return Check("persistence", True, f"{size}; {said} (forks are safe with {module})")


def _model(
    settings: Settings, load_model: Callable[[Settings], Embedder], checks: list[Check]
) -> Embedder | None:
    try:
        embedder = load_model(settings)
        vector = embedder.embed("kenning doctor")
    except KenningError as exc:
        checks.append(Check("embedding model", False, str(exc)))
        return None
    checks.append(Check("embedding model", True, f"{embedder.model_name}, {len(vector)} dims"))
    return embedder


def _indexes(store: Store | None, settings: Settings, model: Embedder | None) -> Check:
    if store is None or model is None:
        return Check("indexes", False, "not checked: Valkey or the model is unavailable")
    try:
        live = store.live_indexes().get(schema.INDEX)
        current = None if live is None else store.index_info(live)
        rebuilding = store.rebuilding()
    except KenningError as exc:
        return Check("indexes", False, str(exc))
    if live is None:
        return Check("indexes", False, "no memory index: start a Kenning service to create it")
    if not schema.is_current(live, settings.key_prefix, model.dimension):
        return Check("indexes", False, f"schema drift ({live}): restart a service to migrate")
    if current is None:
        return Check("indexes", False, f"registered but absent in Valkey: {live}")
    if rebuilding is not None:
        return Check("indexes", True, f"{rebuilding.describe()}; searches use {live}")
    return Check("indexes", True, f"{live} current, {current.num_docs} memories indexed")


def graph(store: Store | None) -> Check:
    """The last self-check of the search graph (kenning.curation.graph): kept by the last reindex,
    restore, migration or `kenning reindex --check`; doctor does not search every memory itself."""
    if store is None:
        return Check("search graph", False, "not checked: Valkey is unreachable")
    try:
        kept = store.reports.load(REPORT)
    except KenningError as exc:
        return Check("search graph", False, str(exc))
    if kept is None:
        return Check("search graph", True, "no self-check yet: `kenning reindex --check` runs one")
    done = GraphCheck(**kept)
    when = datetime.fromtimestamp(done.at, UTC).isoformat(timespec="seconds")
    # a memory the graph misses but every KNN scores exactly is found: not a failure
    advice = "; run `kenning reindex` to rebuild the index" if done.unfound else ""
    return Check("search graph", not done.unfound, f"{done.describe()} ({when}){advice}")


def _worker(store: Store | None, settings: Settings) -> Check:
    """Who holds the worker lock and how each job's last run ended (docs/worker.md)."""
    if store is None:
        return Check("worker", False, "not checked: Valkey is unreachable")
    try:
        ok, detail = Jobs(store, settings).health()
    except KenningError as exc:
        return Check("worker", False, str(exc))
    return Check("worker", ok, detail)
