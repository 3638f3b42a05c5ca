"""valkey-search's coordinator port on a cluster (docs/cluster.md, "The coordinator's port"): it
binds every interface with neither password nor TLS, and `kenning doctor` says so.

The local cluster's nodes bind 127.0.0.1 only, so this machine's outward address reaches none of
their Valkey ports (the control: the probe tells a closed port from an open one) but reaches
every coordinator port, port + 20294.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.ops.cluster import LocalCluster
from kenning.store import Store, connect, shards
from kenning_cli.main import main
from tests.conftest import make_settings

pytestmark = pytest.mark.cluster


def test_each_coordinator_port_reachable_off_loopback_is_named_and_the_doctor_fails_it(
    cluster: LocalCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outward = shards._outward_address()
    assert outward is not None  # the test needs a machine with a network address
    assert not [p for p in cluster.ports if shards._connects((outward, p))]  # control: closed
    assert [shards.coordinator_port(p) for p in (6379, 6378)] == [26673, 26673]
    settings = make_settings(tmp_path, 6390, key_prefix="co:", valkey_cluster=cluster.spec)
    client = connect(settings)
    try:
        found = Store(client, settings.key_prefix).exposed_coordinators()
    finally:
        client.close()  # type: ignore[no-untyped-call]
    assert found == sorted(f"{outward}:{p + 20294}" for p in cluster.ports)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KENNING_VALKEY_CLUSTER", cluster.spec)
    assert main(["doctor", "--no-mcp", "--no-web"]) == 1
    lines = capsys.readouterr().out.splitlines()
    (line,) = [x for x in lines if "coordinator ports" in x]
    assert line.startswith("FAIL coordinator ports: reachable over the network: ")
    assert all(f"{outward}:{p + 20294}" in line for p in cluster.ports)
