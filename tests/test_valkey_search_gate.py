"""A plain clone has no valkey-search: pass 1 leaves out what needs it, loudly, and pass 2 says it
did not run; where it is required (KENNING_REQUIRE_VALKEY_SEARCH=1, as .ci/run sets, or CI=true)
both fail instead. Never a silent skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

ONE = "tests/kenning/test_engines.py::test_the_engine_is_the_one_named"


def _pytest(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "KENNING_SEARCH_MODULE", "KENNING_REQUIRE_VALKEY_SEARCH")
    }
    env["KENNING_TEST_VALKEY_SEARCH_MODULE"] = str(tmp_path / "none" / "libsearch.so")
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, ONE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_plain_clone_runs_the_redisearch_half_and_says_what_it_left_out(tmp_path: Path) -> None:
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 deselected" in done.stdout
    assert "NOT RUN: needs valkey-search" in done.stdout
    assert "docs/valkey-search.md" in done.stdout
    assert "KENNING_REQUIRE_VALKEY_SEARCH=1" in done.stdout


def test_under_xdist_the_controller_says_what_the_workers_left_out(tmp_path: Path) -> None:
    """`make test PYTEST_JOBS=2`: the workers collect and leave out; the summary is the
    controller's, so it must hear of it from them."""
    done = _pytest(tmp_path, "-n", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bringing up nodes" in done.stdout  # xdist ran it
    assert "1 passed" in done.stdout
    assert "NOT RUN: needs valkey-search" in done.stdout
    assert "1 tests were not run (tests/kenning/test_engines.py)" in done.stdout


@pytest.mark.parametrize("flag", [{"KENNING_REQUIRE_VALKEY_SEARCH": "1"}, {"CI": "true"}])
def test_where_it_is_required_a_missing_valkey_search_fails(
    tmp_path: Path, flag: dict[str, str]
) -> None:
    done = _pytest(tmp_path, **flag)
    assert done.returncode == 1, done.stdout
    assert "1 passed, 1 error" in done.stdout
    assert f"valkey-search not found at {tmp_path}/none/libsearch.so" in done.stdout
    assert "NOT RUN" not in done.stdout


def _pass_two(require: str) -> subprocess.CompletedProcess[str]:
    """The Makefile's pass 2 alone, with no valkey-search (pass 1 and the installs not remade)."""
    venv = "/nonexistent-venv"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "KENNING_SEARCH_MODULE")}
    env["KENNING_REQUIRE_VALKEY_SEARCH"] = require
    keep = ["-o", "unit-default", "-o", f"{venv}/.kenning-test-installed"]
    keep += ["-o", f"{venv}/.kenning-installed"]
    # nor the MCP clients: an `npm ci` here would replace node_modules under the running suite
    keep += ["-o", "tests/clients/node_modules/.package-lock.json"]
    return subprocess.run(
        ["make", "-s", "unit-valkey-search", f"VENV={venv}", "VALKEY_SEARCH_MODULE=", *keep],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_pass_two_says_not_run_and_fails_only_where_required() -> None:
    plain = _pass_two("")
    assert plain.returncode == 0, plain.stderr
    assert "pass 2 NOT RUN: needs valkey-search" in plain.stdout
    assert "docs/valkey-search.md" in plain.stdout
    required = _pass_two("1")
    assert required.returncode != 0
    assert "a missing valkey-search is a failure" in required.stderr
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "export KENNING_REQUIRE_VALKEY_SEARCH=1" in ci
    assert ci.index("export KENNING_REQUIRE_VALKEY_SEARCH=1") < ci.index("make test")
