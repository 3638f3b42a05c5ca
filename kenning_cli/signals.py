"""Waiting in the foreground: until SIGINT/SIGTERM, or until a service stops by itself."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

from kenning.core.errors import KenningError


def wait_for_signal(alive: Callable[[], bool]) -> None:
    """Block until SIGINT/SIGTERM, or until ``alive()`` turns false."""
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            if not alive():
                raise KenningError("a Kenning service stopped unexpectedly")
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
