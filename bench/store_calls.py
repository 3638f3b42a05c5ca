"""Which store round trips a recall and a remember make at a scale point, and
what each costs (issue 21).

    KENNING_SEARCH_MODULE=/path/to/libsearch.so PYTHONPATH=$PWD \
        .venv/bin/python -m bench.store_calls --size 250k

Loads the scale corpus (``bench.scale``: its vectors derived from real embeddings and cached) into a
private Valkey, then runs the scale point's recall queries and remembers of corpus texts reworded,
timing every call the store makes to Valkey (``kenning.store.client.call``: one pipeline or one
command each) and naming it by the commands it carries (an FT.SEARCH by its shape: KNN or not, with
a TEXT clause or not, NOCONTENT or RETURN). Prints, per operation, its p50 and each kind of call's
count, p50 and total, largest total first.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.corpus import Corpus
from bench.instrument import Stopwatch
from bench.run import Run, RunConfig, private_store
from bench.scale import _queries, load, wait_indexed
from bench.scale_vectors import scale_corpus, scale_vectors
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import load_embedder
from kenning.store import client as store_client
from kenning.store.client import text

SIZES = {"10k": 10_000, "100k": 100_000, "250k": 250_000, "500k": 500_000, "1m": 1_000_000}
Calls = dict[tuple[tuple[str, int], ...], list[float]]


def shape(command: tuple[Any, ...]) -> str:
    """A short name for one command: FT.SEARCH by its shape, anything else by its name."""
    name = text(command[0]).upper() if command else "?"
    if name != "FT.SEARCH":
        return name if len(name) < 24 else "EVAL"
    query = text(command[2])
    return " ".join(
        [
            "FT.SEARCH",
            *(["KNN"] if "KNN" in query else []),
            *(["TEXT"] if "@content:" in query else []),
            "NOCONTENT" if any(text(c) == "NOCONTENT" for c in command) else "RETURN",
        ]
    )


Call = Callable[..., Any]  # kenning.store.client.call: (fn, *args, **kwargs) -> the reply


def sent(fn: Callable[..., Any], args: tuple[Any, ...]) -> list[tuple[Any, ...]] | None:
    """The commands one ``call`` sends: a pipeline's, or ``execute_command``'s one; None for a
    client method (get, hgetall, ...), which names its command itself."""
    stack = getattr(getattr(fn, "__self__", None), "command_stack", None)
    if stack is not None:
        return [tuple(c[0]) for c in stack]
    return [args] if getattr(fn, "__name__", "") == "execute_command" else None


@contextmanager
def wrapped_calls(wrap: Callable[[Call], Call]) -> Iterator[None]:
    """Every ``store.client.call`` of the engine's modules replaced by ``wrap(call)``, while
    inside."""
    original = store_client.call
    modules = [
        m
        for m in list(sys.modules.values())
        if getattr(m, "call", None) is original and getattr(m, "__name__", "").startswith("kenning")
    ]
    wrapper = wrap(original)
    for module in modules:
        setattr(module, "call", wrapper)  # noqa: B010 - modules are typed without ``call``
    try:
        yield
    finally:
        for module in modules:
            setattr(module, "call", original)  # noqa: B010


@contextmanager
def timed_calls(calls: Calls) -> Iterator[None]:
    """Every ``store.client.call`` timed under the commands it sends, while inside."""

    def wrap(original: Call) -> Call:
        def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            commands = sent(fn, args)
            names = (
                [shape(c) for c in commands]
                if commands is not None
                else [getattr(fn, "__name__", "?").upper()]
            )
            start = time.perf_counter()
            try:
                return original(fn, *args, **kwargs)
            finally:
                calls.setdefault(tuple(sorted(collections.Counter(names).items())), []).append(
                    time.perf_counter() - start
                )

        return timed

    with wrapped_calls(wrap):
        yield


def scale_arguments(prog: str, doc: str, queries: int) -> argparse.ArgumentParser:
    """The options every scale-point probe takes: ``--size``, ``--seed``, ``--queries``."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="250k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--queries", type=int, default=queries, help="queries per family (three families)"
    )
    return parser


def recall_requests(corpus: Corpus, seed: int, queries: int) -> list[RecallRequest]:
    """The scale point's recalls (``bench.scale._queries``), each in its project, as an agent
    asks."""
    return [
        RecallRequest(q.text, projects=[q.project] if q.project else None, top_k=10, actor="bench")
        for q in _queries(corpus, seed, queries)
    ]


def report(label: str, samples: list[float], calls: Calls, top: int) -> None:
    print(f"{label}: p50 {1000 * statistics.median(samples):.2f} ms over {len(samples)}")
    for names, seconds in sorted(calls.items(), key=lambda item: -sum(item[1]))[:top]:
        kinds = ", ".join(f"{n} x{c}" for n, c in names)
        print(
            f"  {len(seconds):5d} calls  p50 {1000 * statistics.median(seconds):8.3f} ms  "
            f"total {1000 * sum(seconds):9.1f} ms  {kinds}"
        )


@contextmanager
def scale_engine(size: str, seed: int, queries: int) -> Iterator[tuple[Engine, Corpus]]:
    """An engine on a private Valkey (the search module KENNING_SEARCH_MODULE names, else
    RediSearch) holding the scale corpus of ``size`` (``bench.scale``: vectors derived from real
    embeddings, cached), every index built; closed and removed on exit."""
    base = Settings(_env_file=None)
    embedder = load_embedder(base)
    corpus = scale_corpus(SIZES[size], seed, "10k")
    matrix, _ = scale_vectors(
        embedder.embed_many,
        corpus,
        model=embedder.model_name,
        backend=base.embedding_backend,
        seed=seed,
        base_size="10k",
        progress=print,
    )
    with private_store(base) as (settings, client):
        engine = Engine.open(settings, client, embedder)
        try:
            run = Run(engine, Stopwatch(), corpus, RunConfig(size=size, seed=seed, queries=queries))
            load(run, client, matrix, 20 * 2**30, print)
            wait_indexed(client, engine.ctx.indexes)
            yield engine, corpus
        finally:
            engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = scale_arguments("python -m bench.store_calls", __doc__, queries=60)
    parser.add_argument("--remembers", type=int, default=60)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    with scale_engine(args.size, args.seed, args.queries) as (engine, corpus):
        requests = recall_requests(corpus, args.seed, args.queries)
        for request in requests[:20]:  # warm-up
            engine.recaller.recall(request)
        calls: Calls = {}
        samples: list[float] = []
        with timed_calls(calls):
            for request in requests:
                start = time.perf_counter()
                engine.recaller.recall(request)
                samples.append(time.perf_counter() - start)
        report("recall", samples, calls, args.top)
        calls, samples = {}, []
        items = random.Random(f"store-calls:{args.seed}").sample(corpus.items, args.remembers)
        with timed_calls(calls):
            for item in items:
                start = time.perf_counter()
                engine.memories.remember(
                    Draft(
                        f"{item.content} (noted again today)",
                        namespace=item.namespace,
                        project=item.project,
                    ),
                    actor="bench",
                )
                samples.append(time.perf_counter() - start)
        report("remember", samples, calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
