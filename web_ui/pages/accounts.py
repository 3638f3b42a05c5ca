"""Accounts (admin only): who may log in and with which role; create, change a role, disable or
enable, reset a password, delete. The engine keeps an enabled admin (``Accounts`` refuses to
remove the last one) and refuses the signed-in admin's demoting, disabling or deleting their own
account (``by``). A disabled, deleted or reset account's sessions stop working at their next
request (kenning.access.sessions)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.access.accounts import ROLES, USERNAME_RULE, Account, Accounts
from kenning.core.errors import InvalidInput
from web_ui.forms import Done, Submitted, login, submit
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

AUDITED = {
    "create": "account_create",
    "role": "account_role",
    "disable": "account_disable",
    "enable": "account_enable",
    "password": "account_password",
    "delete": "account_delete",
}


async def _accounts(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    listed = await rt.run(rt.logins.accounts.list)
    return render(
        request,
        "accounts.html",
        {
            "accounts": [asdict(a) for a in listed],
            "roles": ROLES,
            "username_rule": USERNAME_RULE,
            **extra,
        },
    )


@guard("admin")
async def accounts(request: Request) -> Response:
    return await _accounts(request, {})


def _password(form: Submitted) -> str:
    if form.get("password") != form.get("again"):
        raise InvalidInput("the two passwords differ", hint="type the same password twice")
    return form.get("password")


def _seen(form: Submitted) -> int | None:
    """The account's revision the page showed when the person chose the change."""
    value = form.get("seen")
    if not value:
        return None
    if not value.isdigit() or len(value) > 12:
        raise InvalidInput(f"seen must be a whole number; got {value[:20]!r}", hint="reload")
    return int(value)


def _apply(book: Accounts, form: Submitted, actor: str, me: str) -> Account:
    do, name, seen = form.get("do"), form.get("username"), _seen(form)
    if do == "create":
        return book.create(name, _password(form), form.get("role"), actor=actor)
    if do == "role":
        return book.set_role(name, form.get("role"), actor=actor, by=me, seen=seen)
    if do == "password":
        return book.set_password(name, _password(form), actor=actor, seen=seen)
    if do in ("disable", "enable"):
        return (
            book.disable(name, actor=actor, by=me, seen=seen)
            if do == "disable"
            else book.enable(name, actor=actor, seen=seen)
        )
    if do == "delete":
        if form.get("confirm") != name:
            raise InvalidInput(
                f"type {name!r} to confirm deleting the account", hint="or disable it instead"
            )
        return book.delete(name, actor=actor, by=me, seen=seen)
    raise InvalidInput(f"unknown action {do!r}", hint=f"use one of {', '.join(AUDITED)}")


def change(book: Accounts, me: str, form: Submitted, actor: str) -> Done:
    """One account action (``do`` names it), validated by the engine before anything is written."""
    account = _apply(book, form, actor, me)
    shown = {k: v for k, v in asdict(account).items() if k != "sessions_since"}
    return Done(
        AUDITED[form.get("do")], f"account {account.username}: {form.get('do')}", shown, "/accounts"
    )


@guard("admin")
async def account_action(request: Request) -> Response:
    return await submit(
        request,
        _accounts,
        partial(change, runtime(request).logins.accounts, login(request).username),
    )


routes = [
    Route("/accounts", accounts, methods=["GET"]),
    Route("/accounts", account_action, methods=["POST"]),
]
