"""`kenning web`: the dashboard alone, in the foreground, against a running
Valkey (docs/dashboard.md)."""

from __future__ import annotations

import argparse

from kenning.core.settings import Settings
from kenning_cli.registry import command


@command("web", "Run the dashboard alone in the foreground (Valkey must be running).")
def _web(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine, run_alone
    from web_ui.service import WebService
    from web_ui.sessions import logins_for

    engine = open_engine(settings)
    service = WebService(engine, settings, logins_for(engine, settings))
    return run_alone(service, f"dashboard on {service.url}")
