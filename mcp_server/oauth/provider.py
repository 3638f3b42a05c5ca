"""The OAuth 2.1 authorization server on the MCP SDK's provider protocol (docs/remote-access.md).

``KenningOAuthProvider`` adapts the engine's ``kenning.access.oauth.OAuth`` (all state in Valkey) to
fastmcp's ``OAuthProvider``: the SDK parses requests, checks PKCE and redirect URIs through the
client model below, and calls these methods. Bearer tokens from `kenning token` are verified beside
OAuth tokens by the existing ``TokenAuth``. Every OAuth access token must name this server's
resource (RFC 8707): a token issued for another resource is refused here, on every request.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

import anyio
import anyio.to_thread
from fastmcp.server.auth import AccessToken, OAuthProvider
from mcp.server.auth.provider import (
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import (
    InvalidRedirectUriError,
    InvalidScopeError,
    OAuthClientInformationFull,
    OAuthToken,
)
from pydantic import AnyUrl

from kenning.access.oauth import ClientInfo, OAuth, actor_of, digest
from kenning.access.oauth_rules import (
    DEFAULT_SCOPES,
    MAX_REDIRECT_URIS,
    OFFLINE,
    SCOPES_SUPPORTED,
    check_redirect_uri,
    normalize_resource,
    parse_scopes,
    redirect_matches,
)
from kenning.access.tokens import SECRET_PREFIX
from kenning.core.errors import BackendUnavailable, InvalidInput
from mcp_server.auth import ACTOR_CLAIM, OUTAGE_GRACE_SECONDS, UNVERIFIED, TokenAuth

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")
CHALLENGE_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")  # base64url of a sha256 (RFC 7636 §4.2, S256)
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
CONSENT_PATH = "/oauth/consent"
SEEN_MAX = 10_000  # OAuth tokens remembered for the outage grace
# set by the /register route
CLIENT_IP: ContextVar[str] = ContextVar("kenning_oauth_client_ip", default="unknown")


class KenningClient(OAuthClientInformationFull):
    """A registered client as the SDK sees it; the secret is only its sha256 (``secret_digest``)."""

    secret_digest: str | None = None

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        """Tolerates stray spaces; any supported scope may be asked for (the consent page and the
        person's role decide what is granted). None means "the client's defaults"."""
        try:
            return parse_scopes(requested_scope)
        except InvalidInput as exc:
            raise InvalidScopeError(exc.message) from exc

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(u) for u in self.redirect_uris or []]
        if redirect_uri is None:
            if len(registered) == 1:
                return AnyUrl(registered[0])
            raise InvalidRedirectUriError("redirect_uri is required: the client registered several")
        if any(redirect_matches(r, str(redirect_uri)) for r in registered):
            return redirect_uri
        raise InvalidRedirectUriError(
            f"redirect URI {str(redirect_uri)[:100]!r} is not registered for this client"
        )


def to_sdk(client: ClientInfo) -> KenningClient:
    return KenningClient.model_validate(
        {
            **client.metadata,
            "client_id": client.client_id,
            "client_secret": None,
            "secret_digest": client.secret_digest or None,
        }
    )


class KenningOAuthProvider(OAuthProvider):
    """Authorization server + resource server for /mcp; ``oauth`` holds the state, ``bearer`` checks
    `kenning token` secrets."""

    def __init__(
        self,
        oauth: OAuth,
        bearer: TokenAuth,
        public_url: str,
        resource_path: str,
        *,
        limiter: anyio.CapacityLimiter | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        base = public_url.rstrip("/")
        super().__init__(
            base_url=base,
            issuer_url=base,
            client_registration_options=ClientRegistrationOptions(
                enabled=True,
                valid_scopes=list(SCOPES_SUPPORTED),
                default_scopes=list(DEFAULT_SCOPES),
            ),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=[],
        )
        self.oauth = oauth
        self.bearer = bearer
        self.base = base
        self.resource_path = resource_path
        self.resource = normalize_resource(base + resource_path)
        self.limiter = limiter
        self.monotonic = monotonic
        # sha256 -> (verified at, token): outage grace
        self._seen: dict[str, tuple[float, AccessToken]] = {}

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Engine code (it blocks on Valkey) in a worker thread."""
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), limiter=self.limiter
        )

    # --- clients ----------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> KenningClient | None:
        found = await self.run(self.oauth.client, client_id)
        return None if found is None else to_sdk(found)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        await self.run(
            self.oauth.register,
            client_record(client_info, self.oauth.clock.now()),
            ip=CLIENT_IP.get(),
        )

    # --- authorization ----------------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = normalize_resource(params.resource) if params.resource else self.resource
        if resource != self.resource:
            raise AuthorizeError("invalid_target", f"this server is the resource {self.resource}")
        if not CHALLENGE_RE.match(params.code_challenge):
            raise AuthorizeError(
                "invalid_request", "code_challenge must be an S256 challenge (43 base64url chars)"
            )
        scopes = list(params.scopes or parse_scopes(client.scope) or DEFAULT_SCOPES)
        if not set(scopes) - {OFFLINE}:  # offline_access alone would be an empty grant
            scopes.append("read")
        request = await self.run(
            self.oauth.begin,
            client.client_id,
            str(params.redirect_uri),
            params.redirect_uri_provided_explicitly,
            scopes,
            params.state,
            params.code_challenge,
            resource,
        )
        return f"{self.base}{CONSENT_PATH}?request={request.id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        grant = await self.run(self.oauth.code, authorization_code)
        if grant is None or grant.client_id != client.client_id:
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=list(grant.scopes),
            expires_at=grant.expires_at,
            client_id=grant.client_id,
            code_challenge=grant.code_challenge,
            redirect_uri=AnyUrl(grant.redirect_uri),
            redirect_uri_provided_explicitly=grant.redirect_explicit,
            resource=grant.resource,
            subject=grant.username,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        issued = await self.run(
            self.oauth.redeem,
            authorization_code.code,
            refresh="refresh_token" in client.grant_types,
        )
        if issued is None:
            raise TokenError("invalid_grant", "authorization code was already used or has expired")
        return OAuthToken(
            access_token=issued.access_token,
            expires_in=issued.expires_in,
            scope=" ".join(issued.scopes),
            refresh_token=issued.refresh_token,
        )

    # --- tokens -----------------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        info = await self.run(self.oauth.refresh_token, refresh_token)
        if info is None or info.client_id != client.client_id:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=info.client_id,
            scopes=list(info.scopes),
            expires_at=int(info.expires_at),
            resource=info.resource,
            subject=info.username,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if refresh_token.client_id != client.client_id:
            raise TokenError("invalid_grant", "refresh token was issued to another client")
        issued = await self.run(self.oauth.rotate, refresh_token.token, scopes)
        if issued is None:
            raise TokenError(
                "invalid_grant", "refresh token was already used, revoked or has expired"
            )
        return OAuthToken(
            access_token=issued.access_token,
            expires_in=issued.expires_in,
            scope=" ".join(issued.scopes),
            refresh_token=issued.refresh_token,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        if token.startswith(SECRET_PREFIX):  # a `kenning token` bearer token, checked as before
            return await self.bearer.verify_token(token)
        key = digest(token)
        try:
            info = await self.run(self.oauth.access, token)
        except BackendUnavailable:
            return self._unverified(key)
        if info is None:
            self._seen.pop(key, None)
            return None
        if normalize_resource(info.resource) != self.resource:
            log.warning("refused an OAuth token issued for another resource (%s)", info.resource)
            return None
        access = AccessToken(
            token=token,
            client_id=info.client_id,
            scopes=list(info.scopes),
            expires_at=int(info.expires_at),
            resource=info.resource,
            subject=info.username,
            claims={
                ACTOR_CLAIM: actor_of(info.username),
                UNVERIFIED: False,
                "iss": self.base,
                "sub": info.username,
            },
        )
        self._remember(key, access)
        return access

    def _unverified(self, key: str) -> AccessToken | None:
        """As for bearer tokens (mcp_server.auth): during an outage a token verified within the
        grace is let through with no scopes, marked unverified, so its caller hears "memory could
        NOT be checked" instead of a 401 that would send it into a new login;
        ScopeGuard runs nothing for it."""
        seen = self._seen.get(key)
        if seen is None or self.monotonic() - seen[0] >= OUTAGE_GRACE_SECONDS:
            log.warning("an OAuth token could not be checked: Valkey did not answer")
            return None
        return seen[1].model_copy(
            update={"scopes": [], "claims": {**seen[1].claims, UNVERIFIED: True}}
        )

    def _remember(self, key: str, access: AccessToken) -> None:
        now = self.monotonic()
        # forget the ones past the grace (tokens rotate; keep this bounded)
        if len(self._seen) >= SEEN_MAX:
            self._seen = {k: v for k, v in self._seen.items() if now - v[0] < OUTAGE_GRACE_SECONDS}
        if len(self._seen) < SEEN_MAX:
            self._seen[key] = (now, access)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        lookup = self.oauth.refresh_token if isinstance(token, RefreshToken) else self.oauth.access
        info = await self.run(lookup, token.token)
        if info is not None:
            await self.run(self.oauth.revoke, info)


def client_record(client_info: OAuthClientInformationFull, now: float) -> ClientInfo:
    """The registration, validated beyond what the SDK checks: redirect URIs (RFC 8252), the auth
    method, the name. Raises RegistrationError, which the SDK answers with a 400."""
    uris = [str(u) for u in client_info.redirect_uris or []]
    if not uris or len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationError(
            "invalid_redirect_uri", f"register 1 to {MAX_REDIRECT_URIS} redirect URIs"
        )
    try:
        for uri in uris:
            check_redirect_uri(uri)
        scopes = parse_scopes(client_info.scope) or list(DEFAULT_SCOPES)
    except InvalidInput as exc:
        raise RegistrationError(
            "invalid_redirect_uri" if "redirect" in exc.message else "invalid_client_metadata",
            f"{exc.message} ({exc.hint})",
        ) from exc
    method = client_info.token_endpoint_auth_method or "client_secret_post"
    if method not in AUTH_METHODS:
        raise RegistrationError(
            "invalid_client_metadata", f"token_endpoint_auth_method must be one of {AUTH_METHODS}"
        )
    name = (client_info.client_name or "").strip()[:100] or "unnamed client"
    metadata: dict[str, Any] = client_info.model_dump(
        mode="json", exclude_none=True, exclude={"client_secret", "client_id"}
    )
    metadata.update(scope=" ".join(scopes), client_name=name, token_endpoint_auth_method=method)
    secret = client_info.client_secret
    return ClientInfo(
        client_id=client_info.client_id,
        name=name,
        redirect_uris=tuple(uris),
        scope=" ".join(scopes),
        auth_method=method,
        grant_types=tuple(client_info.grant_types),
        created_at=now,
        secret_digest=digest(secret) if secret else "",
        metadata=metadata,
    )
