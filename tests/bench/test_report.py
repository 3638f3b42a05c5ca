"""The page the benchmark writes: the rows a person reads come from the run's JSON."""

from __future__ import annotations

from typing import Any

from bench import floors, report


def _summary(p50: float) -> dict[str, float]:
    return {"p50_ms": p50, "p95_ms": p50 + 1, "p99_ms": p50 + 2, "mean_ms": p50, "n": 150.0}


def _run(**mcp: Any) -> dict[str, Any]:
    return {
        "corpus": {"size": "10k"},
        "embedder": {"model": "all-MiniLM-L6-v2+int8"},
        "settings": {"embedding_backend": "onnx-int8"},
        "latency": {},
        "mcp": mcp,
    }


def test_the_paired_mcp_rows_show_the_engine_and_what_the_transport_added() -> None:
    paired = _run(
        recall=_summary(15.5),
        remember=_summary(20.0),
        recall_paired={"engine": _summary(9.0), "added_by_mcp": _summary(6.5)},
    )
    rows = report.latency_table([paired])
    assert any("recall via MCP/HTTP | total | 15.50 |" in row for row in rows)
    assert any(
        "the same recall through the engine, just before | 9.00 | 10.00 | 11.00 |" in row
        for row in rows
    )
    assert any(
        "added by MCP/HTTP through fastmcp's Client (per query, paired) | 6.50 |" in row
        for row in rows
    )


def test_a_run_without_paired_numbers_shows_no_paired_rows() -> None:
    plain = report.latency_table([_run(recall=_summary(15.5), remember=_summary(20.0))])
    assert any("recall via MCP/HTTP | total | 15.50 |" in row for row in plain)  # positive control
    assert not any("paired" in row for row in plain)


def test_a_valkey_search_run_gets_its_own_column_beside_the_default_engine() -> None:
    default = _run(recall=_summary(15.5))  # runs before the engine was recorded ran on RediSearch
    recorded = {
        **_run(recall=_summary(15.5)),
        "search_module": {"name": "redisearch", "version": "2.10.5"},
    }
    production = {
        **_run(recall=_summary(16.0)),
        "search_module": {"name": "valkey-search", "version": "1.2.1"},
    }
    assert report._variant(default) == report._variant(recorded) == "onnx-int8"
    assert report._variant(production) == "onnx-int8 on valkey-search"
    assert any(
        row.startswith("| 10k / onnx-int8 on valkey-search | recall | total |")
        for row in report.latency_table([default, production])
    )


def _floored() -> dict[str, Any]:
    run = _run(
        recall=_summary(15.5),
        remember=_summary(20.0),
        recall_paired={
            "engine": _summary(9.0),
            "added_by_mcp": _summary(6.5),
            "added_by_bare_endpoint": _summary(1.5),
            "mcp_minus_bare_endpoint": _summary(5.0),
            "added_by_mcp_sdk": _summary(4.5),
            "mcp_sdk_minus_bare_endpoint": _summary(3.0),
            "added_by_mcp_bare_post": _summary(2.5),
            "mcp_bare_post_minus_bare_endpoint": _summary(1.0),
            "hits_differ": {"queries": 105, "recall": 0, "sdk": 0, "bare_post": 0, "bare": 0},
        },
    )
    run.update(
        {
            "latency": {"remember": {"total": _summary(12.0), "embed": _summary(8.0)}},
            "import": {"memories_per_second": 200.0},
            "floors": {
                "recall": {
                    "recall": _summary(9.0),
                    "embed": _summary(5.5),
                    "bare_knn": _summary(0.5),
                    "recall_over_floor": 1.5,
                },
                "embedding_rate": {"texts_per_second": 250.0},
            },
            "machine": {
                "load_average": [0.5, 0.4, 0.3],
                "load_average_end": [1.0, 0.8, 0.5],
                "cpu_steal_percent": 1.2,
            },
        }
    )
    return run


def test_the_ratios_divide_each_headline_by_its_floor() -> None:
    ratios = floors.ratios(_floored())
    assert ratios == {
        "recall_over_floor": 1.5,
        "mcp_minus_engine_ms": 6.5,
        "mcp_minus_bare_endpoint_ms": 5.0,
        "mcp_sdk_minus_engine_ms": 4.5,
        "mcp_sdk_minus_bare_endpoint_ms": 3.0,
        "mcp_bare_post_minus_engine_ms": 2.5,
        "mcp_bare_post_minus_bare_endpoint_ms": 1.0,
        "bare_endpoint_minus_engine_ms": 1.5,
        "remember_over_embed": 1.5,
        "import_over_embedding_rate": 0.8,
    }


def test_the_ratio_table_shows_each_ratio_beside_its_absolute_numbers() -> None:
    rows = report.ratio_table([_floored()])
    assert rows[0].startswith("| ratio (same run) | goal | 10k / onnx-int8 |")
    assert any("**1.50** (9.00 / 5.50 + 0.50 ms)" in row for row in rows)
    mcp = next(row for row in rows if row.startswith("| MCP recall"))
    assert (
        "server alone (bare JSON-RPC POST) **+2.50 ms** (1.00 over the bare endpoint); SDK "
        "`ClientSession` **+4.50 ms** (3.00 over the bare endpoint); fastmcp `Client` **+6.50 "
        "ms** (5.00 over the bare endpoint); bare endpoint +1.50 ms; answers whose hits were not "
        "the engine's: 0 of 105 queries x 4 targets"
    ) in mcp
    assert any("**1.50** (12.00 / 8.00 ms)" in row for row in rows)
    # a run before interleaving
    assert any("**0.80** (200 / 250 per s, minutes apart)" in row for row in rows)
    assert any("steal 1.2 %" in row for row in rows)


def test_a_run_without_floors_says_so_in_the_ratio_table() -> None:
    rows = report.ratio_table([_run(recall=_summary(15.5), remember=_summary(20.0))])
    assert any("not measured" in row for row in rows)
    assert report.ratio_table([]) == ["No run at 10k, 100k or 1M on this page yet."]


def test_the_ratio_table_has_a_column_for_the_1m_scale_point() -> None:
    scale = _floored()
    scale["corpus"] = {"size": "1m"}
    rows = report.ratio_table([_floored(), scale])
    assert rows[0] == "| ratio (same run) | goal | 10k / onnx-int8 | 1m / onnx-int8 |"


def test_a_run_that_measured_only_fastmcps_client_shows_that_row_alone() -> None:
    older = _run(
        recall=_summary(15.5),
        remember=_summary(20.0),
        recall_paired={"engine": _summary(9.0), "added_by_mcp": _summary(6.5)},
    )
    mcp = next(row for row in report.ratio_table([older]) if row.startswith("| MCP recall"))
    assert "| fastmcp `Client` **+6.50 ms** |" in mcp
    cell = mcp.split(" | ")[-1]
    assert "SDK" not in cell
    assert "server alone" not in cell


def test_the_import_ratio_reads_the_interleaved_rounds_when_a_run_has_them() -> None:
    run = _floored()
    run["import"]["interleaved"] = {
        "import": {"texts_per_second": 230.0},
        "embedding": {"texts_per_second": 240.0},
    }
    assert floors.import_rates(run) == (230.0, 240.0)
    assert floors.ratios(run)["import_over_embedding_rate"] == 230.0 / 240.0
    assert any("**0.96** (230 / 240 per s)" in row for row in report.ratio_table([run]))
