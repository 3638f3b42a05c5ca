"""`kenning scan`: find stored memories whose content holds a credential (docs/memory-model.md,
"Secrets"), and with ``--redact`` replace each credential by ``[REDACTED: kind]``.

Prints one line per memory (key, namespace, project, kinds; never the value). Exit 0 when nothing is
found (or everything found was redacted), 1 when credentials remain stored.
"""

from __future__ import annotations

import argparse

from kenning.core.settings import Settings
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redact",
        action="store_true",
        help="replace each credential found by [REDACTED: kind] (an audited update per memory)",
    )
    parser.add_argument("--actor", default="cli:scan", help="who the redactions are recorded as")


@command(
    "scan",
    "Find stored memories that hold a credential (API key, token, private key, password); "
    "--redact replaces them.",
    _arguments,
)
def _scan(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    inspection = open_engine(settings).inspection
    found = inspection.credentials()
    for hit in found:
        print(f"{hit.key}\t{hit.namespace}\t{hit.project}\t{', '.join(hit.kinds)}")
    if not found:
        print("no stored credentials found")
        return 0
    if not args.redact:
        print(f"{len(found)} memories hold credentials: run `kenning scan --redact` to redact them")
        return 1
    changed = inspection.redact_credentials([hit.key for hit in found], actor=args.actor)
    print(f"redacted {changed} of {len(found)} memories")
    return 0 if changed == len(found) else 1
