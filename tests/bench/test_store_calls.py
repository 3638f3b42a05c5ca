"""bench.store_calls: naming a store call by its commands, and timing the calls the engine makes."""

from __future__ import annotations

from bench.store_calls import Calls, shape, timed_calls
from kenning.engine import Engine


def test_a_search_is_named_by_its_shape() -> None:
    knn = ("FT.SEARCH", "idx", "(@project:{a})=>[KNN 10 @vector $vec]", "RETURN", "1", "distance")
    worded = (
        "FT.SEARCH",
        b"idx",
        b"@state:{active} @content:weekly",
        b"NOCONTENT",
        b"LIMIT",
        b"0",
        b"400",
    )
    assert shape(knn) == "FT.SEARCH KNN RETURN"
    assert shape(worded) == "FT.SEARCH TEXT NOCONTENT"
    assert shape(("HMGET", "k", "vector")) == "HMGET"
    assert shape(("\nlocal key = KEYS[1]\n" + "x" * 40,)) == "EVAL"


def test_the_engines_calls_are_timed_under_their_commands(engine: Engine) -> None:
    calls: Calls = {}
    with timed_calls(calls):
        engine.ctx.store.remembers_written()
    assert list(calls) == [(("GET", 1),)]
    assert len(calls[(("GET", 1),)]) == 1
    engine.ctx.store.remembers_written()  # outside: no longer timed
    assert len(calls[(("GET", 1),)]) == 1
