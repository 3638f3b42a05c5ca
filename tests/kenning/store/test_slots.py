"""The cluster layout's key names (kenning/store/slots.py) and the cluster setting's reading
(kenning/store/layout.py): pure, no server."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput
from kenning.store import layout, slots


def test_a_hash_tag_is_what_the_server_hashes() -> None:
    assert slots.hash_tag("k:{user1}:a") == "user1"
    assert slots.hash_tag("k:{}:a") is None  # empty braces: the whole key is hashed
    assert slots.hash_tag("k:plain") is None
    assert slots.slot("a:{user1}:x") == slots.slot("user1")
    assert slots.slot("a:{}:x") != slots.slot("")  # control: an empty tag is no tag


def test_every_slot_has_a_tag_that_hashes_to_it() -> None:
    tags = slots.slot_tags()
    assert len(tags) == slots.SLOTS
    assert all(slots.slot(tag) == at for at, tag in enumerate(tags))


@pytest.mark.parametrize(
    "key", ["kenning:mem:project:01ABC", "kenning:{graveyard}:names", "odd}key", "x{y"]
)
def test_a_history_list_lives_in_its_record_slot(key: str) -> None:
    events = slots.events_key("kenning:", key)
    assert slots.slot(events) == slots.slot(key)
    assert events != slots.events_key("kenning:", key + "2")  # one list per record


def test_an_untagged_record_names_its_history_readably() -> None:
    assert slots.events_key("p:", "p:mem:k:1") == "p:events:{p:mem:k:1}"


def test_pending_done_and_audit_partitions_sit_where_they_are_named() -> None:
    for at in (0, 1, 5460, 16383):
        assert slots.slot(slots.pending_key("p:", at)) == at
        assert slots.slot(slots.done_key("p:", at)) == at
    streams = slots.audit_keys("p:")
    assert len(set(streams)) == slots.PARTITIONS
    for part, stream in enumerate(streams):
        assert slots.partition(slots.slot(stream)) == part


def test_the_cluster_setting_is_read_into_seeds_and_a_password() -> None:
    assert layout.seeds("127.0.0.1:7001, 10.0.0.2:7002") == (
        None,
        [("127.0.0.1", 7001), ("10.0.0.2", 7002)],
    )
    assert layout.seeds(":s3cr@t@h:1") == ("s3cr@t", [("h", 1)])


@pytest.mark.parametrize("bad", ["", "host", "host:port", "h:0", "h:70000", ":pw@"])
def test_a_malformed_cluster_setting_says_how_to_write_it(bad: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        layout.seeds(bad)
    assert "host:port" in (caught.value.hint or "")
