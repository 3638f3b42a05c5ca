"""Every FT.SEARCH a recall sends at a scale point, replayed alone and in variants (issue 21):
what the search engine itself spends on each shape, apart from the round trip it rides in.

    KENNING_SEARCH_MODULE=/path/to/libsearch.so PYTHONPATH=$PWD \
        .venv/bin/python -m bench.replay --size 250k

Loads the scale corpus (``bench.store_calls.scale_engine``), runs the scale point's recall queries
once while capturing the searches they send, then sends each captured search again, alone and back
to back, in every variant below, the variants' order shuffled per search, ``--rounds`` times. Prints
per variant the p50 and p90 and the rows the replies count (a variant that changes the answer
shows it there). In situ the same searches pay what ``bench.store_calls`` shows: the server waking
after the query's embedding, the other commands of their pipeline and the reply's parsing.

The variants (``VARIANTS``; the RediSearch-only ones only on RediSearch):

- ``as sent``: the search unchanged;
- ``filter only``: a KNN's filter alone, NOCONTENT, at most 400 keys (what valkey-search's
  small-set path asks first);
- ``no negations``: the ``-@field:{...}`` clauses dropped;
- ``project only``: the ``@project:{...}`` clause alone;
- ``bare KNN``: the same KNN over every document (``(*)``), the floor's search;
- ``tags-only index``: the search sent to an index of the memory hashes' TAG fields alone;
- RediSearch: ``ADHOC_BF`` and ``BATCHES``, a KNN's hybrid policy forced.
"""

from __future__ import annotations

import random
import re
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.scale import wait_indexed
from bench.store_calls import (
    Call,
    recall_requests,
    scale_arguments,
    scale_engine,
    sent,
    wrapped_calls,
)
from kenning.engine import Engine
from kenning.store.client import text
from kenning.store.prefilter import MAX_SET
from kenning.store.search_module import REDISEARCH

Command = tuple[Any, ...]
TAGS_ONLY = "tags-only index"
_NEGATION = re.compile(r"-@\w+:\{[^}]*\}\s*")
_PROJECT = re.compile(r"@project:\{[^}]*\}")
_POLICY_FREE = re.compile(r"EF_RUNTIME \$\w+ ")  # RediSearch: EF_RUNTIME is for BATCHES only


def is_knn(command: Command) -> bool:
    return "=>[KNN" in text(command[2])


def _with_query(command: Command, query: str) -> Command:
    return (*command[:2], query, *command[3:])


def _split(command: Command) -> tuple[str, str]:
    """A KNN's filter (without its brackets) and its ``=>[...]`` clause; a filter has no clause."""
    query = text(command[2])
    if "=>" not in query:
        return query, ""
    base, knn = query.split("=>", 1)
    return base.strip()[1:-1] if base.startswith("(") else base, "=>" + knn


def filter_only(command: Command) -> Command:
    base, _ = _split(command)
    return (
        "FT.SEARCH",
        command[1],
        base or "*",
        "NOCONTENT",
        "LIMIT",
        "0",
        str(MAX_SET),
        "DIALECT",
        "2",
    )


def rewrite_filter(command: Command, rewrite: Callable[[str], str]) -> Command:
    """The search with its filter rewritten (a KNN keeps its clause; an empty filter matches every
    document: ``(*)`` in a KNN, and the search is left as it was otherwise)."""
    base, knn = _split(command)
    new = rewrite(base).strip()
    if knn:
        return _with_query(command, f"({new or '*'}){knn}")
    return _with_query(command, new) if new else command


def no_negations(command: Command) -> Command:
    return rewrite_filter(command, lambda base: _NEGATION.sub("", base))


def project_only(command: Command) -> Command:
    return rewrite_filter(command, lambda base: " ".join(_PROJECT.findall(base)))


def bare_knn(command: Command) -> Command:
    return rewrite_filter(command, lambda _: "") if is_knn(command) else command


def policy(name: str) -> Callable[[Command], Command]:
    """A RediSearch KNN with its hybrid policy forced (ADHOC_BF takes no EF_RUNTIME)."""

    def forced(command: Command) -> Command:
        if not is_knn(command):
            return command
        query = text(command[2])
        if name == "ADHOC_BF":
            query = _POLICY_FREE.sub("", query)
        return _with_query(command, query.replace(" AS ", f" HYBRID_POLICY {name} AS ", 1))

    return forced


def on_index(index: str) -> Callable[[Command], Command]:
    return lambda command: (command[0], index, *command[2:])


def variants(module: str, tags_index: str | None) -> dict[str, Callable[[Command], Command]]:
    """The variants this engine can answer (see the module's docstring)."""
    out: dict[str, Callable[[Command], Command]] = {
        "as sent": lambda command: command,
        "filter only": filter_only,
        "no negations": no_negations,
        "project only": project_only,
        "bare KNN": bare_knn,
    }
    if tags_index is not None:
        out[TAGS_ONLY] = lambda command: filter_only(on_index(tags_index)(command))
    if module == REDISEARCH:
        out |= {"ADHOC_BF": policy("ADHOC_BF"), "BATCHES": policy("BATCHES")}
    return out


@contextmanager
def captured(into: list[Command]) -> Iterator[None]:
    """Every FT.SEARCH the engine sends through ``store.client.call`` (alone or in a pipeline),
    appended to ``into`` while inside."""

    def wrap(original: Call) -> Call:
        def spy(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            into.extend(c for c in sent(fn, args) or [] if c and text(c[0]).upper() == "FT.SEARCH")
            return original(fn, *args, **kwargs)

        return spy

    with wrapped_calls(wrap):
        yield


def tags_only_index(client: Any, engine: Engine) -> str:
    """An index of the memory hashes' TAG fields alone, on the store's memory prefix, built."""
    from kenning.core import schema

    name = engine.ctx.store.key("idx", "tags-only")
    fields = [
        f for spec in schema.FIELDS if spec.kind is schema.Kind.TAG for f in (spec.name, "TAG")
    ]
    client.execute_command(
        "FT.CREATE",
        name,
        "ON",
        "HASH",
        "PREFIX",
        "1",
        schema.memory_prefix(engine.ctx.store.prefix),
        "SCHEMA",
        *fields,
    )
    wait_indexed(client, {"tags-only": name})
    return name


def replay(
    client: Any,
    searches: list[Command],
    named: dict[str, Callable[[Command], Command]],
    rounds: int,
    seed: int,
) -> dict[str, dict[str, list[float]]]:
    """Each search in every variant, back to back in a shuffled order, ``rounds`` times: per
    variant its seconds and the row count of each reply."""
    rng = random.Random(f"replay:{seed}")
    out: dict[str, dict[str, list[float]]] = {n: {"seconds": [], "rows": []} for n in named}
    for _ in range(rounds):
        for search in searches:
            order = list(named)
            rng.shuffle(order)
            for name in order:
                command = named[name](search)
                start = time.perf_counter()
                reply = client.execute_command(*command)
                out[name]["seconds"].append(time.perf_counter() - start)
                out[name]["rows"].append(float(reply[0]))
    return out


def report(label: str, timings: dict[str, dict[str, list[float]]]) -> None:
    print(label)
    for name, taken in timings.items():
        seconds = sorted(taken["seconds"])
        print(
            f"  {name:16s} p50 {1000 * statistics.median(seconds):7.3f} ms  "
            f"p90 {1000 * seconds[int(0.9 * (len(seconds) - 1))]:7.3f} ms  "
            f"rows p50 {statistics.median(taken['rows']):7.0f}  ({len(seconds)} searches)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = scale_arguments("python -m bench.replay", __doc__, queries=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with scale_engine(args.size, args.seed, args.queries) as (engine, corpus):
        client = engine.ctx.store.client
        module = engine.ctx.store.search_module()
        if module is None:
            raise RuntimeError("the scale point's Valkey has no search module loaded")
        searches: list[Command] = []
        with captured(searches):
            for request in recall_requests(corpus, args.seed, args.queries):
                engine.recaller.recall(request)
        named = variants(module.name, tags_only_index(client, engine))
        knn = [s for s in searches if is_knn(s) and "@content:" not in text(s[2])]
        filters = [s for s in searches if not is_knn(s) and "@content:" not in text(s[2])]
        worded = [s for s in searches if "@content:" in text(s[2])]
        print(
            f"{len(searches)} searches captured: {len(knn)} KNN, {len(filters)} filters, "
            f"{len(worded)} with TEXT terms ({module.name})"
        )
        if knn:
            report("the KNN searches", replay(client, knn, named, args.rounds, args.seed))
        if filters:
            filter_variants = {
                n: v for n, v in named.items() if n not in ("bare KNN", "ADHOC_BF", "BATCHES")
            }
            report(
                "the filter searches (valkey-search's small-set path)",
                replay(client, filters, filter_variants, args.rounds, args.seed),
            )
        if worded:
            report(
                "the searches with TEXT terms",
                replay(client, worded, {"as sent": named["as sent"]}, args.rounds, args.seed),
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
