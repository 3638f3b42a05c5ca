"""The load harness run tiny (N = 1, 2 for two seconds each) on its own private Valkey and a real
`kenning mcp`: the shape of its report, every tool called, and the ceiling measured beside each N.
No timing is asserted (speed goes to docs/benchmarks.md)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bench import load
from kenning.core.settings import Settings
from kenning.runtime.embedding import Embedder


def test_a_tiny_load_run_reports_every_level_tool_and_the_ceiling(
    embedder: Embedder, embedding_backend: str, tmp_path: Path
) -> None:
    config = load.LoadConfig(
        clients=(1, 2), seconds=2.0, memories=60, pause="none", mix=(0.4, 0.2, 0.3, 0.1)
    )
    base = Settings(_env_file=None, data_dir=tmp_path, embedding_backend=embedding_backend)
    result = load.execute(config, embedder, base, progress=lambda _: None)
    assert [(lv["clients"], lv["variant"]) for lv in result["levels"]] == [
        (1, "default"),
        (2, "default"),
    ]
    for level in result["levels"]:
        assert level["calls"] > 0
        assert set(level["tools"]) == set(load.TOOLS)
        assert level["errors"] == {}, level["errors"]
        assert level["calls_per_s"] > 0
        assert level["server_rss_mb"]["max"] > 50
        assert level["server_rss_mb"]["processes"] >= 1
        ceiling = level["ceiling"]
        assert ceiling["texts"] >= load.CEILING_MIN_TEXTS
        assert ceiling["one_at_a_time_per_s"] > 0
        assert ceiling["at_concurrency_per_s"] > 0
        assert ceiling["concurrency"] == level["clients"]
        assert set(level["cpu_ms_per_call"]) == {"server", "valkey", "clients"}
        assert level["cpu_ms_per_call"]["server"] > 0  # the server worked for its answers
        assert ceiling["hot_p50_ms"] > 0
        assert ceiling["after_pause_p50_ms"] > 0
        assert level["recall_over_embedding_one_at_a_time"] is not None
    # two levels of a few seconds with this mix: every tool ran somewhere
    called = {t for lv in result["levels"] for t, s in lv["tools"].items() if s["n"] > 0}
    assert called == set(load.TOOLS)
    assert result["goals"] == {}  # no level at 16 clients
    table = load.render(result)
    assert len(table) == 2 + len(result["levels"])


def test_pause_distributions_and_the_mix_are_parsed_or_refused() -> None:
    rng = random.Random(1)
    assert load.pauser("none", rng)() == 0.0
    assert load.pauser("fixed:20", rng)() == pytest.approx(0.02)
    assert 0.0 <= load.pauser("uniform:5:10", rng)() <= 0.01
    assert load.pauser("exp:10", rng)() >= 0.0
    assert load.pauser("lognormal:10:0.5", rng)() > 0.0
    for bad in ("exp", "exp:-1", "uniform:9:3", "gauss:1", "fixed:1:2"):
        with pytest.raises(ValueError, match="pause"):
            load.pauser(bad, rng)
    assert load.parse_mix("70/10/15/5") == (70.0, 10.0, 15.0, 5.0)
    for bad in ("70/30", "1/-1/1/1", "0/0/0/0"):
        with pytest.raises(ValueError, match="mix"):
            load.parse_mix(bad)


def test_the_error_code_is_the_head_of_the_tool_error() -> None:
    overloaded = {"content": [{"type": "text", "text": "overloaded: too many embeddings (hint)"}]}
    assert load.error_code(overloaded) == "overloaded"
    assert load.error_code({"content": [{"text": "something went wrong"}]}) == "tool_error"
    assert load.error_code({"content": []}) == "tool_error"


def test_goals_are_judged_at_sixteen_clients() -> None:
    def level(p50: float, p99: float, ratio: float, errors: dict[str, int]) -> dict[str, object]:
        return {
            "clients": 16,
            "variant": "v",
            "tools": {"recall": {"p50_ms": p50, "p99_ms": p99, "n": 10.0}},
            "recall_over_embedding_one_at_a_time": ratio,
            "errors": errors,
        }

    met = load.goals([level(10.0, 25.0, 1.6, {})])["v"]
    assert met["throughput_met"]
    assert met["tail_met"]
    assert met["errors_met"]
    missed = load.goals([level(10.0, 40.0, 0.4, {"overloaded": 2})])["v"]
    assert not missed["throughput_met"]
    assert not missed["tail_met"]
    assert not missed["errors_met"]
    assert missed["errors"] == 2
