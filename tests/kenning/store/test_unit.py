"""The unit of work (kenning.store.unit): a write and its audit events go together or not at all."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import valkey

from kenning.core.settings import Settings
from kenning.store import AuditEvent, Store, Unit
from kenning.store.client import connection_url
from tests.conftest import REPO


def _event(key: str, action: str = "remember") -> AuditEvent:
    return AuditEvent(actor="t", action=action, key=key, reason="why", at=1.0, details={"n": 1})


def _key(settings: Settings, name: str) -> str:
    return f"{settings.key_prefix}mem:knowledge:{name}"


def test_a_unit_without_an_event_cannot_be_expressed() -> None:
    with pytest.raises(ValueError, match="at least one audit event"):
        Unit([])


def test_a_committed_unit_stores_the_write_the_event_and_its_history_link(
    client: valkey.Valkey, settings: Settings
) -> None:
    store = Store(client, settings.key_prefix)
    key = _key(settings, "A")
    done = store.units.commit(
        Unit([_event(key)]).hset(key, {"content": "x"}).sadd(store.key("set"), "m")
    )
    assert done.applied
    assert len(done.event_ids) == 1
    assert client.hmget(key, ["content"]) == [b"x"]
    assert client.sismember(store.key("set"), "m")
    [event] = store.audit.history(key)
    assert (event.id, event.action, event.details) == (done.event_ids[0], "remember", {"n": 1})
    assert [e.id for e in store.audit.recent(limit=5)] == [event.id]


def test_a_failed_gate_writes_nothing_and_records_nothing(
    client: valkey.Valkey, settings: Settings
) -> None:
    store = Store(client, settings.key_prefix)
    key = _key(settings, "B")
    # positive control
    assert store.units.commit(Unit([_event(key)]).hset(key, {"state": "active"})).applied
    changed = store.units.commit(
        Unit([_event(key, "archive")]).patch(
            key, {"state": "archived"}, expect={"state": "deprioritised"}
        )
    )
    gone = store.units.commit(
        Unit([_event(key + "x", "archive")]).patch(key + "x", {"state": "archived"})
    )
    assert (changed.outcome, gone.outcome, changed.event_ids, gone.event_ids) == (-1, 0, (), ())
    assert client.hmget(key, ["state"]) == [b"active"]
    assert not client.exists(key + "x")
    assert [e.action for e in store.audit.recent(limit=5)] == ["remember"]
    assert store.audit.history(key + "x") == []


def test_a_guard_creates_a_field_only_where_absent_and_deletes_only_what_was_read(
    client: valkey.Valkey, settings: Settings
) -> None:
    store = Store(client, settings.key_prefix)
    registry = store.key("registry")
    first = store.units.commit(
        Unit([_event("", "suppress")]).guard(registry, {"t": ""}).hset(registry, {"t": "1"})
    )
    second = store.units.commit(
        Unit([_event("", "suppress")]).guard(registry, {"t": ""}).hset(registry, {"t": "2"})
    )
    stale = store.units.commit(
        Unit([_event("", "unsuppress")]).guard(registry, {"t": "2"}).hdel(registry, "t")
    )
    # the hash was absent for the first
    assert (first.outcome, second.outcome, stale.outcome) == (1, -1, -1)
    assert client.hgetall(registry) == {b"t": b"1"}
    assert [e.action for e in store.audit.recent(limit=5)] == ["suppress"]
    gone = store.units.commit(
        Unit([_event("", "unsuppress")]).guard(registry, {"t": "1"}).hdel(registry, "t")
    )
    assert gone.applied
    assert client.hgetall(registry) == {}


def test_a_batch_of_units_is_one_pipeline_each_unit_on_its_own(
    client: valkey.Valkey, settings: Settings
) -> None:
    store = Store(client, settings.key_prefix)
    keys = [_key(settings, f"C{i}") for i in range(3)]
    client.hset(keys[0], "state", "active")
    done = store.units.commit_many([Unit([_event(k, "forget")]).gate(k).delete(k) for k in keys])
    # only the one that existed was deleted and recorded
    assert [d.applied for d in done] == [True, False, False]
    assert not client.exists(keys[0])
    assert [e.key for e in store.audit.recent(limit=5)] == [keys[0]]


# A child process that commits one unit and is SIGKILLed at a hook point of the Valkey client:
# before the unit is sent, half-way through sending it, or after it was sent and
# before the reply was read.
CHILD = textwrap.dedent("""
    import os, signal, sys
    import valkey
    from valkey.connection import AbstractConnection
    from kenning.store import AuditEvent, Store, Unit
    from kenning.store.unit import UNIT_SCRIPT

    prefix, key, where = sys.argv[1:4]
    client = valkey.Valkey.from_url(os.environ["UNIT_TEST_URL"])
    store = Store(client, prefix)
    client.script_load(UNIT_SCRIPT)  # so the unit is one EVALSHA, no NOSCRIPT retry
    send = AbstractConnection.send_packed_command

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    def half(self, command, check_health=True):
        data = b"".join(command) if isinstance(command, list) else command
        self._sock.sendall(data[: len(data) // 2])
        die()

    if where == "before_send":
        AbstractConnection.send_packed_command = die
    elif where == "mid_send":
        AbstractConnection.send_packed_command = half
    elif where == "after_send":
        AbstractConnection.read_response = die
    event = AuditEvent(actor="crash", action="forget", key=key, at=1.0)
    store.units.commit(Unit([event]).gate(key).delete(key))
    print("committed")
""")


def _run_child(settings: Settings, key: str, where: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PYTHONPATH": str(REPO),
        "PATH": "/usr/bin:/bin",
        "UNIT_TEST_URL": connection_url(settings),
    }
    return subprocess.run(
        [sys.executable, "-c", CHILD, settings.key_prefix, key, where],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("where", "stored"),
    [("none", True), ("before_send", False), ("mid_send", False), ("after_send", True)],
)
# the one-server unit; the cluster split has its own (test_cluster.py)
@pytest.mark.single_server
def test_a_process_killed_around_a_unit_leaves_the_write_and_its_record_together(
    client: valkey.Valkey, settings: Settings, where: str, stored: bool
) -> None:
    """The forget and its event are both in the store or neither is, wherever the writer died."""
    store = Store(client, settings.key_prefix)
    key = _key(settings, "D")
    client.hset(key, "content", "doomed")
    child = _run_child(settings, key, where)
    if where == "none":  # the control: the child lives and reports the commit
        assert (child.returncode, child.stdout.strip()) == (0, "committed"), child.stderr
    else:
        # it really died at the hook
        assert (child.returncode, child.stdout) == (-9, ""), child.stderr
    client.ping()  # the server took whatever it had received
    recorded = [e.action for e in store.audit.history(key)]
    assert (not client.exists(key), recorded) == ((True, ["forget"]) if stored else (False, []))
    assert [e.key for e in store.audit.recent(limit=5)] == ([key] if stored else [])
