"""The dashboard as a service of `kenning up` (uvicorn in a thread) and as
`kenning web` (foreground)."""

from __future__ import annotations

import logging

from kenning.core.settings import Settings
from kenning.engine import Engine
from serving.threaded import Listing, ThreadedServer
from web_ui.app import build_app
from web_ui.metrics import Metrics
from web_ui.sessions import SessionBook

log = logging.getLogger(__name__)


class WebService(ThreadedServer):
    """Runs the dashboard beside the engine: ``start()`` returns once it listens."""

    name = "dashboard"

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        logins: SessionBook,
        *,
        metrics: Metrics | None = None,
    ) -> None:
        self.settings = settings
        self.app = build_app(engine, settings, logins, metrics=metrics)
        listing = Listing("the dashboard", "KENNING_WEB_PORT", "/", "kenning-web", log)
        # proxy_headers: behind a TLS proxy the scheme it reports decides the Secure cookie flag
        super().__init__(
            self.app,
            listing,
            host=settings.web_host,
            port=settings.web_port,
            log_level=settings.log_level,
            keep_alive=settings.http_keep_alive_seconds,
            header_timeout=settings.http_header_timeout_seconds,
            lifespan="off",
            proxy_headers=True,
        )
