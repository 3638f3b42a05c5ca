"""One log format for the whole process: Kenning, uvicorn and FastMCP write through one handler,
as text or (``KENNING_LOG_FORMAT=json``) one JSON object per line. Called once, in ``main()``,
before any door is imported: FastMCP installs its own (boxed, rich) handler at
import unless told not to."""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from kenning.core.settings import Settings

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Libraries that bring their own handlers or formats; their records go to the root handler instead.
FOREIGN = ("uvicorn", "uvicorn.error", "uvicorn.access", "fastmcp", "mcp", "apscheduler")
# Libraries that log every request at INFO ("HTTP Request: POST ... 401 Unauthorized"): their
# warnings only, unless KENNING_LOG_LEVEL=DEBUG (doctor's expected 401 is no news).
CHATTY = ("httpx", "httpcore")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (ISO, UTC), level, logger, message,
    and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure(settings: Settings) -> None:
    """Route every library's records to the root logger; give the root our one handler unless the
    host process (a test run, an embedding application) already gave it handlers: then those
    stay, as with ``logging.basicConfig``."""
    # no rich handler of its own: ours formats it
    os.environ.setdefault("FASTMCP_LOG_ENABLED", "false")
    for name in FOREIGN:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    for name in CHATTY:
        logging.getLogger(name).setLevel(
            logging.DEBUG if settings.log_level == "DEBUG" else logging.WARNING
        )
    root = logging.getLogger()
    root.setLevel(settings.log_level)
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    formatter: logging.Formatter = (
        JsonFormatter() if settings.log_format == "json" else logging.Formatter(TEXT)
    )
    if isinstance(formatter, JsonFormatter):
        formatter.converter = time.gmtime  # the "Z" in its timestamps
    handler.setFormatter(formatter)
    root.addHandler(handler)


def announce(line: str) -> None:
    """``line`` on stdout in ONE write: processes sharing a terminal or a pipe (the workers of
    ``KENNING_MCP_WORKERS``) never run their lines together. ``print`` writes the text and its
    newline apart, and under ``PYTHONUNBUFFERED=1`` (usual in containers and CI) each is its own
    write: two workers starting at once printed "AB" and then two newlines."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
