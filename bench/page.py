"""The prose of docs/benchmarks.md around the generated tables. The hand-written findings live in
bench/FINDINGS.md and are included verbatim, so regenerating the page never loses them."""

from __future__ import annotations

from typing import Any

from bench.system import ROOT

FINDINGS = ROOT / "bench" / "FINDINGS.md"

TITLE = "# Benchmarks"

RATIOS = """\
Every headline as a ratio to its floor or peer, measured in the same run on the same inputs (issue
21), because absolute numbers drift with the machine: the query embedding alone and one bare KNN
(`FT.SEARCH` KNN 10 on the one memory index, no filter, through the store's client) interleaved with
the engine recall on the paraphrase queries (`bench/floors.py`); the MCP recall paired per query
with the same engine call and with a bare Starlette JSON endpoint doing it in a process of its own
(`bench/bare.py`), three ways: a bare JSON-RPC `tools/call` POST from the same httpx client that
calls the bare endpoint (the MCP server's own cost, the number the goal is about), the official
`mcp` SDK's `ClientSession` and fastmcp's `Client` (each adds its client library's parsing and
validation; an agent pays its own client's); remember against the embedding inside it; the bulk
import against the embedding alone of the same texts, the two alternating in rounds of 512
(`bench/import_rate.py`). The machine is shared with other work: read the load and steal row before
comparing columns.

Reproduce: `python -m kenning_cli bench --size 10k` (and `--size 100k`); on valkey-search, the same
with `KENNING_SEARCH_MODULE=/path/to/libsearch.so`; the cost of each FT.SEARCH shape: `python -m
bench.shapes --size 10k`; what MCP over HTTP adds, per transport mode and client: `python -m
bench.transport` (with `--baseline DIR`, another checkout's server beside this one's in the same
run: an A/B of server code). `python -m bench.report` redraws this page and its chart from
`bench/results/`; the chart needs matplotlib, the `bench` extra (`pip install -e '.[bench]'`; `make
bench` installs it; the test suite does not need it)."""

LOAD = """\
`kenning bench --load` (`bench/load.py`): a private Valkey with a slice of the bench corpus and
`kenning mcp` in a process of its own (stateless, JSON answers: the defaults); N concurrent
clients (1, 4, 16, 64), each with its own token and HTTP connection, call `tools/call` as bare
JSON-RPC POSTs for a fixed time, picking recall / recall_index / remember / briefing from the mix
and pausing between calls for a drawn time. Beside each N, in the bench process and on the same
texts the query tools sent: the query embedding alone, one text at a time and from N threads (the
ceiling). Where a run has several variants (server environments), they alternate per N in one run.
On valkey-search: the same with `KENNING_SEARCH_MODULE=/path/to/libsearch.so`. "query calls/s":
recall and recall_index answered per second; "recall/embed-1": that over the one-at-a-time
embedding rate; "embed hot / after 200 ms": the query embedding alone back to back and after a
200 ms sleep (the floor as agents see it); "CPU ms per call": user + system CPU over the level of
the server's processes, Valkey and the bench's clients, per answered call; "server RSS": the peak
of all the server's processes, and of each (`KENNING_MCP_WORKERS=2`: the parent and two workers).
The 2-core box is shared with other work (the load column): read ratios. What the runs found:
"Issue 38" in the findings below."""

INTRO = """\
Measured by the harness in `bench/` (`make bench`, or `kenning bench --size 1k|10k|100k --seed N`).
Each run starts its own embedded Valkey with the search module in a temporary data dir on a free
port (never the user's), imports a seeded synthetic corpus through the bulk path, runs every query
family, and writes one JSON file to `bench/results/` (machine info, git revision, settings, every
number). This page is generated from the newest result per corpus size and embedder backend; the
findings section is hand-written.

**The corpus** (`bench/corpus.py`, `bench/scenarios.py`, our own templates): 50 memories per project
(1k: 19 projects, 10k: 199, 100k: 1,999) -- build, test and deploy notes, style rules, dependency
pins, API quirks, decisions with reasons, bug fixes with symptom/cause/fix and an error code,
experience records of abandoned approaches, and session notes as filler -- plus global preferences.
The same scenario occurs in many projects with different values: those twins are the cross-project
distractors.

**The families** (`bench/families.py`, `bench/lifecycle.py`): (a) near-verbatim -- the first
sentences without markup or label; (b) paraphrase -- hand-written questions in different vocabulary,
never word swaps; (c) the same scenario in two projects, the project filter names one (a control
query without the filter shows the twins compete); (d) a newer fact supersedes a pin, the old one
must not come back; (e) a suppressed vendor name and forgotten memories must never come back (each
with a positive control showing the memory was found before); (f) near-duplicate writes -- half
rewordings that must be refused, half the same scenario with other values that must be stored; (g)
questions nothing answers; (h) an error code, ticket id or version pin, alone or in a short
question; (i) plans that name an abandoned approach must warn, plans that do not must not. Recall
runs with `top_k=10` and, like an agent working in a project, with that project as filter (global
memories are always included).

**Latency** is measured around the engine calls; the split comes from wrappers the harness puts
around the embedder and the memory store's search (`bench/instrument.py`), so `kenning/` carries no
timing code: embed = the embedding call(s), search = every FT.SEARCH, rest = everything else
(graveyard and suppression look-ups, lexical pass, scoring, recall log, audit, HSET). Samples are
every recall/remember the families make. Throughput runs the paraphrase queries from 1 and 8 threads
sharing one engine. **MCP over HTTP** is a real fastmcp client calling `kenning mcp` running in a
process of its own on the bench's Valkey (bearer auth on), as a remote agent would (beside it, per
query and in rotating order, the official SDK's client and a bare JSON-RPC POST; every answer must
be a recall result, and those whose hits are not the engine call's are counted: `bench/clients.py`);
runs before 2026-11-30 15:00 had the server in the client's process (`same_process` in the JSON,
also measured now). The **server RSS** is a fresh process that runs what `kenning up` runs beside
Valkey -- embedder, engine, MCP server and worker -- and serves 30 recalls (runs before the same
date loaded only the embedder and engine).
"""


def render(
    main: dict[str, Any],
    results: list[dict[str, Any]],
    targets: list[str],
    families: list[str],
    latency: list[str],
    resources: list[str],
    chart_name: str,
    *,
    ratios: list[str] | None = None,
    load: list[str] | None = None,
) -> str:
    machine = main.get("machine", {})
    git = main.get("git", {})
    lines = [
        TITLE,
        "",
        "## Ratios against the floor (issue 21)",
        "",
        RATIOS,
        "",
        *(ratios or ["No run on this page measured the floors yet."]),
        "",
        INTRO,
        "## Targets (issue 6)",
        "",
        f"Judged on the {main['corpus']['size']} corpus, embedder backend "
        f"`{main['settings']['embedding_backend']}`, run {main['started_at']} at commit "
        f"`{str(git.get('commit', ''))[:10]}`{' (dirty tree)' if git.get('dirty') else ''}; "
        f"machine: {machine.get('cores')} cores ({machine.get('cpu')}), "
        f"{machine.get('memory_gb')} GB, Python {machine.get('python')}, load average at start "
        f"{machine.get('load_average')} (the machine is shared with other work: "
        "latencies are upper bounds).",
        "",
        *targets,
        "",
        f"![latency vs corpus size]({chart_name})",
        "",
        "## Retrieval quality per family",
        "",
        *families,
        "",
        "## Latency (milliseconds)",
        "",
        *latency,
        "",
        "## Throughput, import and memory",
        "",
        *resources,
        "",
        "## Under load: many agents at once (issue 38)",
        "",
        LOAD,
        "",
        *(load or ["No load run yet (`kenning bench --load`)."]),
        "",
        "## Runs on this page",
        "",
        *[
            (
                f"- `bench/results/{r['_file']}`: {r['corpus']['items']} memories, wall time "
                f"{r.get('wall_seconds', 0):.0f} s"
            )
            for r in results
        ],
        "",
    ]
    if FINDINGS.exists():
        lines += [FINDINGS.read_text(encoding="utf-8").rstrip(), ""]
    return "\n".join(lines)
