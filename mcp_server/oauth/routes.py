"""The authorization server's HTTP routes: the SDK's, with Kenning's metadata, client
authentication (secrets compared by sha256), the token endpoint's standard answers, a rate-limited
and optionally key-gated registration, and the pages."""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Any
from urllib.parse import unquote, urlsplit

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, ProtectedResourceMetadata
from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kenning.access.oauth import digest
from kenning.access.oauth_rules import SCOPES_SUPPORTED
from kenning.core.errors import BackendUnavailable, RateLimited
from mcp_server.oauth.provider import CLIENT_IP, KenningClient, KenningOAuthProvider

AUTH_METHODS_SUPPORTED = ["none", "client_secret_post", "client_secret_basic"]
GRANT_TYPES = ("authorization_code", "refresh_token")


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's client authentication, but against the stored sha256 of the secret."""

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        client = await self.provider.get_client(client_id)
        if not isinstance(client, KenningClient):
            raise AuthenticationError("Invalid client_id")
        method = client.token_endpoint_auth_method
        if method == "none":
            return client
        if method == "client_secret_basic":
            secret = _basic_secret(request.headers.get("Authorization", ""), client_id)
        else:
            posted = form.get("client_secret")
            secret = posted if isinstance(posted, str) else None
        if (
            not secret
            or not client.secret_digest
            or not hmac.compare_digest(digest(secret), client.secret_digest)
        ):
            raise AuthenticationError("Invalid client_secret")
        return client


def _basic_secret(header: str, client_id: str) -> str | None:
    if not header.startswith("Basic "):
        raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
    try:
        user, _, secret = base64.b64decode(header[6:]).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
        raise AuthenticationError("Invalid Basic authentication header") from exc
    if unquote(user) != client_id:
        raise AuthenticationError("Client ID mismatch in Basic auth")
    return unquote(secret)


def metadata(base: str) -> OAuthMetadata:
    """RFC 8414 metadata; ``none`` is listed so public clients (Claude
    Code, Cursor) may register."""
    return OAuthMetadata.model_validate(
        {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "revocation_endpoint": f"{base}/revoke",
            "scopes_supported": list(SCOPES_SUPPORTED),
            "response_types_supported": ["code"],
            "grant_types_supported": list(GRANT_TYPES),
            "token_endpoint_auth_methods_supported": AUTH_METHODS_SUPPORTED,
            "revocation_endpoint_auth_methods_supported": AUTH_METHODS_SUPPORTED,
            "code_challenge_methods_supported": ["S256"],
        }
    )


def resource_metadata(base: str, resource: str) -> ProtectedResourceMetadata:
    """RFC 9728; built from strings so the issuer is spelled exactly as in RFC 8414's document."""
    return ProtectedResourceMetadata.model_validate(
        {
            "resource": resource,
            "authorization_servers": [base],
            "scopes_supported": list(SCOPES_SUPPORTED),
            "bearer_methods_supported": ["header"],
            "resource_name": "Kenning",
        }
    )


def revocation(provider: KenningOAuthProvider, authenticator: ClientAuthenticator) -> Any:
    """RFC 7009. The SDK's handler insists on a client_secret field, which a public client
    (Claude Code, Cursor) does not send; this one authenticates the client
    as the token endpoint does."""

    async def revoke(request: Request) -> Response:
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        try:
            client = await authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse(
                {"error": "invalid_client", "error_description": exc.message},
                status_code=401,
                headers=headers,
            )
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "token is required"},
                status_code=400,
                headers=headers,
            )
        found = await provider.load_access_token(token) or await provider.load_refresh_token(
            client, token
        )
        # another client's token: ignored (§2.1)
        if found is not None and found.client_id == client.client_id:
            await provider.revoke_token(found)
        return Response(status_code=200, headers=headers)  # unknown tokens too (RFC 7009 §2.2)

    return revoke


def token(provider: KenningOAuthProvider, authenticator: ClientAuthenticator) -> Any:
    """The MCP SDK's token endpoint (not fastmcp's subclass, which answers invalid_grant with 401:
    it reads the MCP rule for the resource server, "invalid or expired tokens MUST receive a 401",
    into the token endpoint). RFC 6749 §5.2: 400 for every error but invalid_client, 401 with a
    ``WWW-Authenticate`` challenge when the client authenticated with the Authorization header;
    a grant type this server does not know is unsupported_grant_type (the SDK's form parser calls
    it invalid_request)."""
    handler = TokenHandler(provider=provider, client_authenticator=authenticator)

    async def endpoint(request: Request) -> Response:
        grant = (await request.form()).get("grant_type")
        if isinstance(grant, str) and grant and grant not in GRANT_TYPES:
            return JSONResponse(
                {
                    "error": "unsupported_grant_type",
                    "error_description": f"grant types supported: {', '.join(GRANT_TYPES)}",
                },
                status_code=400,
                headers={"Cache-Control": "no-store", "Pragma": "no-cache"},
            )
        response: Response = await handler.handle(request)
        sent = request.headers.get("Authorization", "")
        if response.status_code == 401 and sent.lower().startswith("basic "):
            response.headers["WWW-Authenticate"] = 'Basic realm="kenning"'
        return response

    return endpoint


def registration(
    provider: KenningOAuthProvider,
    options: ClientRegistrationOptions,
    *,
    key: SecretStr | None,
    per_hour: int,
) -> Any:
    """RFC 7591 registration behind a per-address rate limit and, when configured, a registration
    key (RFC 7591 §3: an initial access token sent as a bearer token)."""
    handler = RegistrationHandler(provider, options=options)

    async def register(request: Request) -> Response:
        if key is not None:
            sent = request.headers.get("Authorization", "")
            expected = f"Bearer {key.get_secret_value()}"
            if not hmac.compare_digest(sent.encode(), expected.encode()):
                return JSONResponse(
                    {
                        "error": "invalid_token",
                        "error_description": (
                            "registration needs the key from "
                            "KENNING_OAUTH_REGISTRATION_KEY as a bearer token"
                        ),
                    },
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
                )
        ip = request.client.host if request.client else "unknown"
        try:
            await provider.run(provider.oauth.check_registration_rate, ip, per_hour)
        except RateLimited as exc:
            return JSONResponse(
                {"error": "rate_limited", "error_description": str(exc)},
                status_code=429,
                headers={"Retry-After": "3600"},
            )
        except BackendUnavailable:
            return JSONResponse({"error": "temporarily_unavailable"}, status_code=503)
        CLIENT_IP.set(ip)
        return await handler.handle(request)

    return register


def rebuild(
    provider: KenningOAuthProvider, routes: list[Route], *, key: SecretStr | None, per_hour: int
) -> list[Route]:
    """The SDK's routes with Kenning's metadata, authenticator and registration swapped in."""
    authenticator = HashedSecretAuthenticator(provider)
    options = provider.client_registration_options or ClientRegistrationOptions()
    replaced: dict[str, Any] = {
        "/.well-known/oauth-authorization-server": (
            MetadataHandler(metadata(provider.base)).handle,
            ["GET", "OPTIONS"],
        ),
        "/token": (token(provider, authenticator), ["POST", "OPTIONS"]),
        "/revoke": (revocation(provider, authenticator), ["POST", "OPTIONS"]),
        "/register": (
            registration(provider, options, key=key, per_hour=per_hour),
            ["POST", "OPTIONS"],
        ),
    }
    resource = f"{provider.base}{provider.resource_path}"
    prm = (
        ProtectedResourceMetadataHandler(resource_metadata(provider.base, resource)).handle,
        ["GET", "OPTIONS"],
    )
    replaced[f"/.well-known/oauth-protected-resource{urlsplit(resource).path}"] = prm
    out: list[Route] = []
    for route in routes:
        if route.path in replaced:
            endpoint, methods = replaced[route.path]
            out.append(
                Route(route.path, endpoint=cors_middleware(endpoint, methods), methods=methods)
            )
        else:
            out.append(route)
    issuer_path = urlsplit(provider.base).path.rstrip("/")
    if issuer_path:  # behind a path prefix: RFC 8414 §3.1 inserts the well-known segment before it
        endpoint, methods = replaced["/.well-known/oauth-authorization-server"]
        out.append(
            Route(
                f"/.well-known/oauth-authorization-server{issuer_path}",
                endpoint=cors_middleware(endpoint, methods),
                methods=methods,
            )
        )
    return out
