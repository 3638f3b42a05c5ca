"""The phrase index: look-ups by a query's n-grams, alone or in several
indexes in a shared pipeline."""

from __future__ import annotations

import pytest
import valkey

from kenning.language import phrases
from kenning.store.client import call
from kenning.store.phrase_index import Lookup, PhraseIndex


def test_lookup_finds_whole_phrases_only(client: valkey.Valkey, prefix: str) -> None:
    index = PhraseIndex(client, prefix, "graveyard")
    index.add("redis cluster", "k1", '{"a": 1}')
    index.add("go", "k2")
    assert index.lookup(phrases.ngrams("should we try a Redis cluster?")) == {
        "redis cluster": {"k1": '{"a": 1}'}
    }
    assert index.lookup(phrases.ngrams("search it on google")) == {}
    assert index.lookup([]) == {}


# its own pipeline PINGs: a cluster pipeline refuses PING
@pytest.mark.single_server
def test_a_lookup_in_two_indexes_rides_in_a_shared_pipeline(
    client: valkey.Valkey, prefix: str
) -> None:
    graveyard, hints = (
        PhraseIndex(client, prefix, "graveyard"),
        PhraseIndex(client, prefix, "hints"),
    )
    graveyard.add("celery", "k1", "{}")
    hints.add("stripe", "k2")
    hints.add("celery beat", "k3")
    look = Lookup((graveyard, hints), phrases.ngrams("celery or stripe?"))
    pipe = client.pipeline(transaction=False)
    pipe.ping()
    look.queue(pipe)
    pong, *present = call(pipe.execute)
    assert pong is True
    assert look.finish(client, present) == [{"celery": {"k1": "{}"}}, {"stripe": {"k2": ""}}]


def test_a_lookup_of_no_phrases_queues_nothing(client: valkey.Valkey, prefix: str) -> None:
    index = PhraseIndex(client, prefix, "graveyard")
    index.add("go", "k1")
    look = Lookup((index,), phrases.ngrams("?!"))
    pipe = client.pipeline(transaction=False)
    look.queue(pipe)
    assert len(pipe) == 0
    assert look.finish(client, []) == [{}]
