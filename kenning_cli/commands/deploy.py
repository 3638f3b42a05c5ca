"""Commands a deployment runs: the container healthchecks and the model's one-time preparation."""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request

from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning_cli.registry import command

SERVICES = ("mcp", "web", "worker", "valkey")


def _health_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("service", choices=SERVICES, help="which service of this host to check")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds before the check fails")


@command(
    "health",
    "Check one service quickly for a container healthcheck (no model load): mcp|web "
    "(GET /healthz on its port), worker or valkey (a ping and the worker's job health); "
    "exit 0 when healthy.",
    _health_arguments,
)
def _health(args: argparse.Namespace, settings: Settings) -> int:
    ok, detail = check(args.service, settings, args.timeout)
    print(f"{'ok' if ok else 'FAIL'} {args.service}: {detail}")
    return 0 if ok else 1


def check(service: str, settings: Settings, timeout: float) -> tuple[bool, str]:
    if service in ("mcp", "web"):
        port = settings.mcp_port if service == "mcp" else settings.web_port
        return _http(f"http://127.0.0.1:{port}/healthz", timeout)
    return _store(service, settings)


def _http(url: str, timeout: float) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback http only
            return response.status == 200, f"{url} answered {response.status}"
    except urllib.error.HTTPError as exc:
        return False, f"{url} answered {exc.code}"
    except OSError as exc:
        return False, f"{url} unreachable: {exc}"


def _store(service: str, settings: Settings) -> tuple[bool, str]:
    from kenning.ops.jobs import Jobs
    from kenning.store import Store, connect

    try:
        store = Store(connect(settings), settings.key_prefix)
        store.ping()
        if service == "valkey":
            return True, "answers"
        return Jobs(store, settings).health()
    except KenningError as exc:
        return False, str(exc)


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=("prepare",), help="prepare: export + quantise the model once"
    )


@command(
    "model",
    "prepare: export the bundled model to ONNX and quantise it into KENNING_MODEL_DIR once "
    "(no torch; the image build runs it), then embed one text to prove it.",
    _model_arguments,
)
def _model(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.runtime.embedding import load_embedder

    embedder = load_embedder(settings)
    vector = embedder.embed("kenning model prepare")
    print(
        f"{embedder.model_name}: {len(vector)} dims, files in {settings.resolved_model_dir}",
        file=sys.stdout,
    )
    return 0
