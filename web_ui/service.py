"""The dashboard as a service of `kenning up` (uvicorn in a thread) and as `kenning web` (foreground)."""

from __future__ import annotations

import logging
import threading
import time

import uvicorn

from kenning.engine import Engine
from kenning.errors import BackendUnavailable
from kenning.settings import Settings
from web_ui.app import build_app
from web_ui.metrics import Metrics
from web_ui.sessions import SessionBook

log = logging.getLogger(__name__)
START_TIMEOUT = 30.0


class WebService:
    """Runs the dashboard beside the engine: ``start()`` returns once it listens."""

    name = "dashboard"

    def __init__(self, engine: Engine, settings: Settings, logins: SessionBook, *,
                 metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.app = build_app(engine, settings, logins, metrics=metrics)
        # proxy_headers: behind a TLS proxy the scheme it reports decides the Secure cookie flag
        config = uvicorn.Config(self.app, host=settings.web_host, port=settings.web_port,
                                log_level=settings.log_level.lower(), lifespan="off", access_log=False,
                                proxy_headers=True)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="kenning-web", daemon=True)

    @property
    def url(self) -> str:
        host = self.settings.web_host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.settings.web_port}/"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started:
            if not self.thread.is_alive():
                raise BackendUnavailable(f"the dashboard could not start on {self.settings.web_host}:"
                                         f"{self.settings.web_port}", hint="is the port in use? set KENNING_WEB_PORT")
            if time.monotonic() > deadline:
                raise BackendUnavailable("the dashboard did not start in time")
            time.sleep(0.05)
        log.info("dashboard listening on %s", self.url)

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.server.should_exit
