"""The data dir and everything the embedded Valkey writes in it are
private (docs/reliability.md)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.core import permissions
from kenning.ops import doctor
from kenning.ops.embedded import EmbeddedValkey
from kenning.store import connect
from tests.conftest import free_port, make_settings


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common default umask, under which new files are world-readable."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_the_aof_and_everything_valkey_writes_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "valkey").mkdir(parents=True)
    data.chmod(0o755)
    left = data / "valkey" / "old.log"
    left.write_text("from an earlier run\n", encoding="utf-8")
    assert _mode(left) == 0o644  # the positive control: this umask makes files world-readable
    settings = make_settings(data, free_port())
    with EmbeddedValkey(settings):
        client = connect(settings)
        client.set("kenning-test:secret", "every memory is in the AOF")
        client.execute_command("BGREWRITEAOF")  # type: ignore[no-untyped-call]
        client.close()  # type: ignore[no-untyped-call]
    written = list((data / "valkey").rglob("*"))
    assert data / "valkey" / "appendonlydir" in written
    assert [p.name for p in written if p.parent.name == "appendonlydir"]
    assert {p.name: _mode(p) for p in written if p.is_dir()} == {"appendonlydir": 0o700}
    assert {p.name: _mode(p) for p in written if p.is_file() and _mode(p) != 0o600} == {}
    assert (_mode(data), _mode(data / "valkey")) == (0o700, 0o700)


@pytest.mark.usefixtures("open_umask")
def test_doctor_warns_when_the_data_files_are_readable_by_others(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, free_port())
    with EmbeddedValkey(settings):
        pass
    assert doctor.files(settings).ok
    aof = next((tmp_path / "valkey" / "appendonlydir").iterdir())
    aof.chmod(0o644)
    check = doctor.files(settings)
    assert not check.ok
    assert str(aof) in check.detail
    assert permissions.tighten(tmp_path / "valkey") == [aof]
    assert doctor.files(settings).ok
