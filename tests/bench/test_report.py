"""The page the benchmark writes: the rows a person reads come from the run's JSON."""

from __future__ import annotations

from typing import Any

from bench import report


def _summary(p50: float) -> dict[str, float]:
    return {"p50_ms": p50, "p95_ms": p50 + 1, "p99_ms": p50 + 2, "mean_ms": p50, "n": 150.0}


def _run(**mcp: Any) -> dict[str, Any]:
    return {"corpus": {"size": "10k"}, "embedder": {"model": "all-MiniLM-L6-v2+int8"},
            "settings": {"embedding_backend": "onnx-int8"}, "latency": {}, "mcp": mcp}


def test_the_paired_mcp_rows_show_the_engine_and_what_the_transport_added() -> None:
    paired = _run(recall=_summary(15.5), remember=_summary(20.0),
                  recall_paired={"engine": _summary(9.0), "added_by_mcp": _summary(6.5)})
    rows = report.latency_table([paired])
    assert any("recall via MCP/HTTP | total | 15.50 |" in row for row in rows)
    assert any("the same recall through the engine, just before | 9.00 | 10.00 | 11.00 |" in row for row in rows)
    assert any("added by MCP/HTTP (per query, paired) | 6.50 |" in row for row in rows)


def test_a_run_without_paired_numbers_shows_no_paired_rows() -> None:
    plain = report.latency_table([_run(recall=_summary(15.5), remember=_summary(20.0))])
    assert any("recall via MCP/HTTP | total | 15.50 |" in row for row in plain)  # positive control
    assert not any("paired" in row for row in plain)


def test_a_valkey_search_run_gets_its_own_column_beside_the_default_engine() -> None:
    default = _run(recall=_summary(15.5))  # runs before the engine was recorded ran on RediSearch
    recorded = {**_run(recall=_summary(15.5)), "search_module": {"name": "redisearch", "version": "2.10.5"}}
    production = {**_run(recall=_summary(16.0)), "search_module": {"name": "valkey-search", "version": "1.2.1"}}
    assert report._variant(default) == report._variant(recorded) == "onnx-int8"
    assert report._variant(production) == "onnx-int8 on valkey-search"
    assert any(row.startswith("| 10k / onnx-int8 on valkey-search | recall | total |")
               for row in report.latency_table([default, production]))
