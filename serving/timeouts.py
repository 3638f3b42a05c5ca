"""A header timeout for every listener: a connection that opens and sends no complete request
header within ``header_timeout`` seconds is closed (docs/reliability.md, "Connections").

uvicorn times out only an idle keep-alive connection *between* requests (``timeout_keep_alive``); a
connection that never sends a request -- or sends half a header and stops, a half-open client or a
slowloris -- is held open forever, one file descriptor and one protocol object each. ``protocol``
gives uvicorn's HTTP protocol (httptools when installed, else h11) a timer armed whenever the
connection waits for a request header and checked when it fires: when no new request began since,
the connection is closed. Bytes trickling in do not re-arm it within one wait.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


def _base() -> type[Any]:
    """uvicorn's choice for ``http="auto"``: httptools when it is installed."""
    if importlib.util.find_spec("httptools") is not None:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    return H11Protocol


def protocol(header_timeout: float) -> type[Any]:
    """uvicorn's HTTP protocol class with the header timeout (pass it as ``Config(http=...)``)."""
    base = _base()

    class HeaderTimeout(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.Transport) -> None:
            self._header_timer: asyncio.TimerHandle | None = None
            self._waiting: object = object()
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if idle and self._waiting is not self.cycle:  # a new wait for a request header
                self._arm()
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._waiting = self.cycle
            self._header_timer = self.loop.call_later(header_timeout, self._expire)

        def _expire(self) -> None:
            self._header_timer = None
            idle = self.cycle is None or self.cycle.response_complete
            if idle and self._waiting is self.cycle and not self.transport.is_closing():
                self.transport.close()  # no request began within the timeout

    return HeaderTimeout
