"""Settings (admin, read-only): every setting with its value and description; secrets masked."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.settings import Settings
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

MASK = "•••••• (set)"
SECRET_WORDS = ("password", "secret", "api_key", "token")  # masked even if a field forgot SecretStr


def shown(settings: Settings) -> list[dict[str, Any]]:
    """(variable, value, description) of every setting; a secret shows only whether it is set."""
    rows = []
    for name, info in type(settings).model_fields.items():
        value = getattr(settings, name)
        if isinstance(value, SecretStr) or any(word in name for word in SECRET_WORDS):
            raw = value.get_secret_value() if isinstance(value, SecretStr) else value
            value = MASK if raw else ""
        rows.append(
            {
                "variable": f"KENNING_{name.upper()}",
                "value": "" if value is None else str(value),
                "description": info.description or "",
            }
        )
    return rows


@guard("admin")
async def settings_page(request: Request) -> Response:
    return render(request, "settings.html", {"settings": shown(runtime(request).settings)})


routes = [Route("/settings", settings_page, methods=["GET"])]
