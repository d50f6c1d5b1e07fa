"""Session tokens as the Shopify admin mints them, and ``POST /admin/oauth/access_token``.

An embedded app never sees the authorization-code flow: the admin hands it a session
token (an HS256 JWT signed with the app secret, one minute of life), and the app
exchanges that token for an access token. The endpoint follows Shopify's sequence:

1. decode the body, JSON or form-encoded (``shopifyapp`` sends JSON);
2. authenticate the app: ``client_id`` and ``client_secret`` (constant-time), and the
   app must be installed in the shop -> else ``invalid_client``;
3. ``grant_type`` token exchange: verify the subject token (signature, ``aud`` = client
   id, ``iss``/``dest`` naming the shop the request addressed, ``exp``/``nbf`` on the
   sandbox clock with 10 s leeway, ``sub`` a staff member) -> else
   ``invalid_subject_token``; issue an offline token (with ``expiring=1``: one hour, plus
   a single-use refresh token good for 90 days) or an online one (a day, with the user);
4. ``grant_type`` refresh_token: the refresh token must be the shop's, unused and
   unexpired -> else ``invalid_grant``; it is spent, and a new pair issued.

Errors are HTTP 400 ``{"error", "error_description"}``, as OAuth servers answer.
"""

from __future__ import annotations

import hmac
import json
import secrets
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlparse

import jwt

from integrations.sandbox_kit import Clock, Response

from .state import AccessToken, RefreshToken, Shop, Store

JSON = dict[str, Any]

# OAuth type names (URNs), not secrets.
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"  # noqa: S105
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"  # noqa: S105
OFFLINE_TOKEN = "urn:shopify:params:oauth:token-type:offline-access-token"  # noqa: S105
ONLINE_TOKEN = "urn:shopify:params:oauth:token-type:online-access-token"  # noqa: S105

ACCESS_TOKEN_SECONDS = 3600
ONLINE_TOKEN_SECONDS = 86399
REFRESH_TOKEN_SECONDS = 90 * 24 * 3600
LEEWAY_SECONDS = 10
_CLAIMS = ["iss", "dest", "aud", "sub", "exp", "nbf", "iat", "jti", "sid"]


def mint_session_token(
    *, shop: str, user_id: int, api_key: str, api_secret: str, now: float, exp_in: float
) -> str:
    """A session token with the admin's claims, signed with the app secret."""
    issued = int(now)
    claims = {
        "iss": f"https://{shop}/admin",
        "dest": f"https://{shop}",
        "aud": api_key,
        "sub": str(user_id),
        "exp": issued + int(exp_in),
        "nbf": issued,
        "iat": issued,
        "jti": str(uuid.uuid4()),
        "sid": secrets.token_hex(16),
    }
    return jwt.encode(claims, api_secret, algorithm="HS256")


class OAuthError(Exception):
    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def _truthy(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true")


class TokenEndpoint:
    """``/admin/oauth/access_token`` for one app over the sandbox state."""

    def __init__(self, store: Store, clock: Clock, api_key: str, api_secret: str) -> None:
        self.store = store
        self.clock = clock
        self.api_key = api_key
        self.api_secret = api_secret

    def handle(self, shop: Shop, headers: Mapping[str, str], body: bytes) -> Response:
        """Serve one token request addressed to ``shop``."""
        try:
            params = self._params(headers, body)
            self._authenticate(shop, params)
            grant = params.get("grant_type")
            if grant == TOKEN_EXCHANGE:
                answer = self._exchange(shop, params)
            elif grant == "refresh_token":
                answer = self._refresh(shop, params)
            else:
                raise OAuthError("unsupported_grant_type", f"Unsupported grant type {grant!r}.")
        except OAuthError as exc:
            answer_body: JSON = {"error": exc.error, "error_description": exc.description}
            return _json(400, answer_body)
        return _json(200, answer)

    def _params(self, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
        text = body.decode("utf-8", "replace")
        if "json" in (headers.get("Content-Type") or "").lower():
            try:
                decoded = json.loads(text)
            except ValueError:
                raise OAuthError("invalid_request", "The body is not valid JSON.") from None
            if not isinstance(decoded, dict):
                raise OAuthError("invalid_request", "The body must be an object.")
            return decoded
        return dict(parse_qsl(text))

    def _authenticate(self, shop: Shop, params: Mapping[str, Any]) -> None:
        client_id = str(params.get("client_id") or "")
        secret = str(params.get("client_secret") or "")
        known = hmac.compare_digest(client_id.encode(), self.api_key.encode()) and (
            hmac.compare_digest(secret.encode(), self.api_secret.encode())
        )
        if not known or not shop.installed:
            raise OAuthError(
                "invalid_client",
                "Client authentication failed: unknown client, wrong secret, or the app is "
                "not installed.",
            )

    def verify_session_token(self, shop: Shop, token: str) -> JSON:
        """The claims of a session token for ``shop``, checked as Shopify checks them."""
        try:
            claims: JSON = jwt.decode(
                token,
                self.api_secret,
                algorithms=["HS256"],
                audience=self.api_key,
                # Times are checked below against the sandbox clock, not the wall clock.
                options={
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "require": _CLAIMS,
                },
            )
        except jwt.PyJWTError as exc:
            raise OAuthError("invalid_subject_token", f"Invalid session token: {exc}") from None
        now = self.clock.now()
        if now > float(claims["exp"]) + LEEWAY_SECONDS:
            raise OAuthError("invalid_subject_token", "The session token has expired.")
        if now < float(claims["nbf"]) - LEEWAY_SECONDS:
            raise OAuthError("invalid_subject_token", "The session token is not valid yet.")
        dest_host = urlparse(str(claims["dest"])).hostname
        if dest_host != shop.domain or claims["iss"] != f"https://{shop.domain}/admin":
            raise OAuthError("invalid_subject_token", "The session token names another shop.")
        return claims

    def _exchange(self, shop: Shop, params: Mapping[str, Any]) -> JSON:
        if params.get("subject_token_type") != ID_TOKEN:
            raise OAuthError("invalid_request", "subject_token_type must be an id_token.")
        requested = params.get("requested_token_type")
        if requested not in (OFFLINE_TOKEN, ONLINE_TOKEN):
            raise OAuthError("invalid_request", f"Unsupported requested_token_type {requested!r}.")
        claims = self.verify_session_token(shop, str(params.get("subject_token") or ""))
        sub = str(claims["sub"])
        staff = shop.staff.get(int(sub)) if sub.isdigit() else None
        if staff is None:
            raise OAuthError("invalid_subject_token", "The session token's user is not staff.")
        now = self.clock.now()
        scope = ",".join(shop.scopes)
        with self.store.lock:
            if requested == ONLINE_TOKEN:
                token = self._issue(shop, "online", staff.user_id, now, ONLINE_TOKEN_SECONDS)
                return {
                    "access_token": token.value,
                    "scope": scope,
                    "expires_in": ONLINE_TOKEN_SECONDS,
                    "associated_user_scope": scope,
                    "associated_user": {
                        "id": staff.user_id,
                        "first_name": staff.first_name,
                        "last_name": staff.last_name,
                        "email": staff.email,
                        "email_verified": staff.email_verified,
                        "account_owner": staff.account_owner,
                        "locale": staff.locale,
                        "collaborator": staff.collaborator,
                    },
                }
            if not _truthy(params.get("expiring", 0)):
                token = self._issue(shop, "offline", None, now, None)
                return {"access_token": token.value, "scope": scope}
            return self._expiring_pair(shop, now, scope)

    def _refresh(self, shop: Shop, params: Mapping[str, Any]) -> JSON:
        presented = str(params.get("refresh_token") or "")
        now = self.clock.now()
        with self.store.lock:
            token = self.store.refresh_tokens.get(presented)
            if token is None or token.shop != shop.domain or now >= token.expires_at:
                raise OAuthError(
                    "invalid_grant", "The refresh token is invalid, expired, or already used."
                )
            del self.store.refresh_tokens[presented]  # single use
            return self._expiring_pair(shop, now, ",".join(shop.scopes))

    def _expiring_pair(self, shop: Shop, now: float, scope: str) -> JSON:
        token = self._issue(shop, "offline", None, now, ACCESS_TOKEN_SECONDS)
        refresh = RefreshToken(
            "shprt_" + secrets.token_hex(16), shop.domain, now + REFRESH_TOKEN_SECONDS
        )
        self.store.refresh_tokens[refresh.value] = refresh
        return {
            "access_token": token.value,
            "scope": scope,
            "expires_in": ACCESS_TOKEN_SECONDS,
            "refresh_token": refresh.value,
            "refresh_token_expires_in": REFRESH_TOKEN_SECONDS,
        }

    def _issue(
        self, shop: Shop, mode: str, user_id: int | None, now: float, lifetime: float | None
    ) -> AccessToken:
        prefix = "shpua_" if mode == "online" else "shpat_"
        token = AccessToken(
            value=prefix + secrets.token_hex(16),
            shop=shop.domain,
            mode=mode,
            user_id=user_id,
            issued_at=now,
            expires_at=now + lifetime if lifetime is not None else None,
        )
        self.store.access_tokens[token.value] = token
        return token


def _json(status: int, body: JSON) -> Response:
    headers = {"Content-Type": "application/json; charset=utf-8", "X-Request-Id": str(uuid.uuid4())}
    return Response(status, json.dumps(body).encode("utf-8"), headers)
