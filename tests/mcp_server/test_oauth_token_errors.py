"""The token endpoint's errors as RFC 6749 §5.2 writes them: HTTP 400 and the error code for each
refusal, except a client that failed to authenticate (401 invalid_client, with a challenge when it
used the Authorization header); every answer no-store. Each beside its positive control."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.oauth_kit import Client, OAuthKit, pkce, start_oauth

REDIRECT = "http://127.0.0.1:53682/callback"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings)
    yield started
    started.service.stop()


async def post(kit: OAuthKit, form: dict[str, Any], **headers: str) -> httpx.Response:
    async with kit.http() as http:
        return await http.post("/token", data=form, headers=headers)


def refused(reply: httpx.Response, status: int, error: str) -> None:
    assert (reply.status_code, reply.json()["error"]) == (status, error), reply.text
    assert reply.headers["cache-control"] == "no-store"


async def test_each_grant_error_is_a_400_with_its_code(kit: OAuthKit) -> None:
    client = await kit.register(redirect_uris=[REDIRECT], token_endpoint_auth_method="none")
    verifier, challenge = pkce()
    code = await kit.code(client, challenge, scope="read offline_access")
    grant = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": REDIRECT,
        "client_id": client.client_id,
    }
    refused(await post(kit, {**grant, "code": "not-a-code"}), 400, "invalid_grant")
    refused(await post(kit, {**grant, "code_verifier": pkce()[0]}), 400, "invalid_grant")
    refused(await post(kit, {**grant, "redirect_uri": f"{REDIRECT}/x"}), 400, "invalid_request")
    without_verifier = {k: v for k, v in grant.items() if k != "code_verifier"}
    refused(await post(kit, without_verifier), 400, "invalid_request")
    refused(await post(kit, {**grant, "grant_type": "password"}), 400, "unsupported_grant_type")
    issued = await post(kit, grant)  # positive control: the same code, every field right
    assert issued.status_code == 200, issued.text
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": issued.json()["refresh_token"],
        "client_id": client.client_id,
    }
    refused(await post(kit, {**refresh, "scope": "write"}), 400, "invalid_scope")
    refused(await post(kit, {**refresh, "refresh_token": "knr_nope"}), 400, "invalid_grant")
    assert (await post(kit, refresh)).status_code == 200
    refused(await post(kit, grant), 400, "invalid_grant")  # a code is good once


async def test_a_client_that_fails_to_authenticate_gets_401_invalid_client(kit: OAuthKit) -> None:
    posting = await kit.register(redirect_uris=[REDIRECT])
    basic = await kit.register(
        redirect_uris=[REDIRECT], token_endpoint_auth_method="client_secret_basic"
    )
    assert posting.secret
    assert basic.secret
    refresh = {"grant_type": "refresh_token", "refresh_token": "knr_nope"}
    unknown = await post(kit, {**refresh, "client_id": "no-such-client"})
    refused(unknown, 401, "invalid_client")
    wrong = await post(
        kit, {**refresh, "client_id": posting.client_id, "client_secret": "not-the-secret"}
    )
    refused(wrong, 401, "invalid_client")
    assert "www-authenticate" not in wrong.headers  # it did not use the Authorization header
    header = _basic(basic, "not-the-secret")
    challenged = await post(kit, {**refresh, "client_id": basic.client_id}, Authorization=header)
    refused(challenged, 401, "invalid_client")
    assert challenged.headers["www-authenticate"] == 'Basic realm="kenning"'
    # positive controls: the right secrets authenticate, and the refusal is about the grant
    right = await post(kit, {**refresh, **posting.auth()})
    refused(right, 400, "invalid_grant")
    right_basic = await post(
        kit, {**refresh, "client_id": basic.client_id}, Authorization=_basic(basic, basic.secret)
    )
    refused(right_basic, 400, "invalid_grant")


def _basic(client: Client, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client.client_id}:{secret}".encode()).decode()
