"""Who is asking, on behalf of which shop: every request Shopify sends, verified.

Shopify's own package ``shopifyapp`` (module ``shopify_app``) does the verifying and the
token calls; this module wraps it so that the rest of Caseward depends on plain typed
results, never on ``shopify_app`` objects. The surfaces and their sequences:

* **Admin (App Home) requests** (:meth:`ShopifyAuth.verify_admin_request`): the session
  token (HS256 JWT, a minute's life) comes as ``Authorization: Bearer`` on a fetch or as
  ``id_token`` on a page load. ``verify_app_home_req`` checks the signature with the
  current or the old secret, ``exp``/``nbf`` with 10 s of leeway and the audience; a page
  load without a token is sent to the patch-id-token page, a bad token on a fetch gets
  401 with ``X-Shopify-Retry-Invalid-Session-Request: 1``. On top of it, by hand (the
  package reads only ``dest``): the token must carry ``exp``, ``nbf``, ``iss``, ``dest``
  and ``sub``, and ``iss`` and ``dest`` must name the same ``*.myshopify.com`` shop.
* **Token exchange** (:meth:`~ShopifyAuth.exchange_offline_token`,
  :meth:`~ShopifyAuth.exchange_online_user`) from a verified session token, and
  **refresh** (:meth:`~ShopifyAuth.refresh_if_needed`) of an expiring offline token; a
  failure raises :class:`ShopifyTokenError` carrying the answer to send.
* **Webhooks** (:meth:`~ShopifyAuth.verify_webhook`): HMAC of the raw body
  (``verify_webhook_req``, constant-time, old secret accepted); any failure is a bare 401.
* **App proxy** (:meth:`~ShopifyAuth.verify_app_proxy`): the query signature and a
  timestamp within 90 s (``verify_app_proxy_req``); gives the logged-in customer.
* **Patch-id-token page** (:meth:`~ShopifyAuth.patch_id_token_response`).

Shops are always full permanent domains here (``{name}.myshopify.com``). Tokens never
appear in a ``repr``, a log line or an error message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shopify_app import (
    IdTokenDetails,
    RequestInput,
    Res,
    ShopifyApp,
    TokenExchangeAccessToken,
    TokenExchangeResult,
)

from integrations.shopify.errors import HttpAnswer, ShopifyTokenError
from integrations.shopify.transport import is_shop_domain, shopify_http_client

_log = logging.getLogger(__name__)

RETRY_HEADER = "X-Shopify-Retry-Invalid-Session-Request"
_REQUIRED_CLAIMS = ("exp", "nbf", "iss", "dest", "sub")


@dataclass(frozen=True)
class Refusal:
    """A request that failed verification: ``answer`` is what to send back, unchanged."""

    code: str
    answer: HttpAnswer


@dataclass(frozen=True)
class AdminVerified:
    """A verified App Home request.

    ``headers`` go onto the response (for a page: ``Content-Security-Policy:
    frame-ancestors https://{shop} https://admin.shopify.com`` and App Bridge preloads).
    ``invalid_token_answer`` is what to send if the token later proves unusable (a 302 to
    the patch-id-token page for a page, a 401 with the retry header for a fetch).
    """

    shop: str
    user_id: str
    session_id: str | None
    headers: dict[str, str]
    invalid_token_answer: HttpAnswer
    id_token: str = field(repr=False)
    claims: Mapping[str, Any] = field(repr=False)


AdminVerification = AdminVerified | Refusal


@dataclass(frozen=True)
class VerifiedWebhook:
    """A webhook whose body Shopify signed. Headers are not signed; ``shop`` is the
    ``X-Shopify-Shop-Domain`` of a request only a holder of the app secret could make."""

    shop: str
    topic: str
    webhook_id: str
    event_id: str | None
    triggered_at: datetime | None
    api_version: str | None
    payload: Mapping[str, Any]


WebhookVerification = VerifiedWebhook | Refusal


@dataclass(frozen=True)
class VerifiedProxyRequest:
    """A storefront request through the app proxy; the customer id is Shopify's word."""

    shop: str
    logged_in_customer_id: str | None
    path_prefix: str | None


AppProxyVerification = VerifiedProxyRequest | Refusal


@dataclass(frozen=True)
class OfflineToken:
    """The shop's offline access token. Expiring tokens last an hour and come with a
    refresh token; for a non-expiring token the three expiry fields are None."""

    shop: str
    token: str = field(repr=False)
    scope: str
    expires_at: datetime | None
    refresh_token: str | None = field(repr=False)
    refresh_token_expires_at: datetime | None


@dataclass(frozen=True)
class ShopifyUser:
    """The staff member behind a session token, as an online token exchange reports them."""

    id: str
    email: str
    first_name: str
    last_name: str
    account_owner: bool
    collaborator: bool
    email_verified: bool
    locale: str

    @property
    def name(self) -> str | None:
        """First and last name, as the admin shows the person; None when Shopify gives none."""
        return " ".join(part for part in (self.first_name, self.last_name) if part) or None


class ShopifyAuth:
    """The app's credentials and the one HTTP client its token calls share.

    ``api_base`` None talks to Shopify itself; a URL sends every shop request to the
    sandbox there (:mod:`integrations.shopify.transport`).
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        old_client_secret: str | None = None,
        api_base: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.client_id = client_id
        self._app = ShopifyApp(client_id, client_secret, old_client_secret=old_client_secret)
        self.http_client = shopify_http_client(api_base, timeout)

    def __repr__(self) -> str:
        return f"ShopifyAuth(client_id={self.client_id!r})"

    def close(self) -> None:
        self.http_client.close()

    # ------------------------------------------------------------ admin (App Home)

    def verify_admin_request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | str,
        *,
        patch_id_token_path: str,
        fetch: bool = False,
    ) -> AdminVerification:
        """Verify an App Home request; pass the raw request unchanged.

        ``fetch=True`` marks a route that serves only App Bridge fetches (JSON): a
        request there without a bearer token is answered 401 with the retry header
        (App Bridge then retries with a fresh token) instead of the page redirect the
        package gives a request without a token.
        """
        bearer = _bearer_token(headers)
        if fetch and not bearer:
            return _refused("missing_session_token", 401, {RETRY_HEADER: "1"})
        result = self._app.verify_app_home_req(
            _request(method, url, headers, body), app_home_patch_id_token_path=patch_id_token_path
        )
        if not result.ok or result.id_token is None or result.invalid_token_response is None:
            _log.info("Shopify admin request refused: %s", result.log.code)
            return Refusal(result.log.code, _answer(result.response))
        claims = result.id_token.claims
        problem = _session_claims_problem(claims)
        if problem is not None:
            _log.info("Shopify admin request refused: %s", problem)
            # As the package answers a wrong audience: 401, the retry header on fetches.
            return _refused(problem, 401, {RETRY_HEADER: "1"} if bearer else {})
        session_id = claims.get("sid")
        return AdminVerified(
            shop=f"{result.shop}.myshopify.com",
            user_id=str(claims["sub"]),
            session_id=str(session_id) if session_id is not None else None,
            headers=dict(result.response.headers),
            invalid_token_answer=_answer(result.invalid_token_response),
            id_token=result.id_token.token,
            claims=dict(claims),
        )

    def patch_id_token_response(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | str
    ) -> HttpAnswer:
        """The patch-id-token page (App Bridge fetches a fresh session token there)."""
        shops = parse_qs(urlsplit(url).query).get("shop", [])
        # The package writes the ``shop`` parameter into the page's CSP frame-ancestors
        # as it is; only a shop domain may get there, or any site could frame the page.
        if len(shops) != 1 or not is_shop_domain(shops[0]):
            return HttpAnswer(400, "Bad Request", {})
        result = self._app.app_home_patch_id_token(_request(method, url, headers, body))
        return _answer(result.response)

    # ------------------------------------------------------------ tokens

    def exchange_offline_token(self, verified: AdminVerified) -> OfflineToken:
        """Exchange the verified session token for the shop's expiring offline token."""
        result = self._app.exchange_using_token_exchange(
            access_mode="offline",
            id_token=_id_token_details(verified),
            invalid_token_response=_res(verified.invalid_token_answer),
            expiring=True,
            http_client=self.http_client,
        )
        token = _exchanged(result)
        return _offline_token(token, verified.shop)

    def exchange_online_user(self, verified: AdminVerified) -> ShopifyUser:
        """Who the staff member is (account owner or not), by an online token exchange.

        The online token itself is dropped: Caseward acts with the shop's offline token.
        """
        result = self._app.exchange_using_token_exchange(
            access_mode="online",
            id_token=_id_token_details(verified),
            invalid_token_response=_res(verified.invalid_token_answer),
            http_client=self.http_client,
        )
        user = _exchanged(result).user
        if user is None:
            raise ShopifyTokenError(
                "exchange_error",
                "the online token exchange named no user",
                HttpAnswer(500, "", {}),
            )
        return ShopifyUser(
            id=str(user.id),
            email=user.email,
            first_name=user.first_name,
            last_name=user.last_name,
            account_owner=user.account_owner,
            collaborator=user.collaborator,
            email_verified=user.email_verified,
            locale=user.locale,
        )

    def refresh_if_needed(self, token: OfflineToken) -> OfflineToken:
        """A usable token: ``token`` itself while it has more than 60 s left (or never
        expires), else a new one from its refresh token. A different token returned
        means the old refresh token is spent: store the new one before anything else."""
        result = self._app.refresh_token_exchanged_access_token(
            TokenExchangeAccessToken(
                shop=token.shop.removesuffix(".myshopify.com"),
                token=token.token,
                expires=_iso(token.expires_at),
                scope=token.scope,
                access_mode="offline",
                refresh_token=token.refresh_token,
                refresh_token_expires=_iso(token.refresh_token_expires_at),
                user=None,
            ),
            http_client=self.http_client,
        )
        if not result.ok:
            raise ShopifyTokenError(result.log.code, result.log.detail, _answer(result.response))
        if result.access_token is None:
            return token
        return _offline_token(result.access_token, token.shop)

    # ------------------------------------------------------------ webhooks, app proxy

    def verify_webhook(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | str
    ) -> WebhookVerification:
        """Verify a webhook's HMAC over the raw body; every failure is a bare 401."""
        try:
            text = body.decode("utf-8") if isinstance(body, bytes) else body
        except UnicodeDecodeError:
            return _refused("invalid_body", 401)
        result = self._app.verify_webhook_req(_request(method, url, headers, text))
        if not result.ok:
            _log.info("Shopify webhook refused: %s", result.log.code)
            return _refused(result.log.code, 401)
        shop = f"{result.shop}.myshopify.com"
        lowered = {name.lower(): value for name, value in headers.items()}
        topic = _webhook_header(lowered, "topic")
        webhook_id = _webhook_header(lowered, "webhook-id")
        if not is_shop_domain(shop) or not topic or not webhook_id:
            return _refused("missing_webhook_headers", 401)
        try:
            payload = json.loads(text)
        except json.JSONDecodeError:
            payload = None
        if not isinstance(payload, dict):
            return _refused("invalid_json", 400)
        return VerifiedWebhook(
            shop=shop,
            topic=topic,
            webhook_id=webhook_id,
            event_id=_webhook_header(lowered, "event-id"),
            triggered_at=_parse_iso(_webhook_header(lowered, "triggered-at")),
            api_version=_webhook_header(lowered, "api-version"),
            payload=payload,
        )

    def verify_app_proxy(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | str
    ) -> AppProxyVerification:
        """Verify an app proxy request's signature and freshness (90 s)."""
        result = self._app.verify_app_proxy_req(_request(method, url, headers, body))
        if not result.ok:
            _log.info("Shopify app proxy request refused: %s", result.log.code)
            return Refusal(result.log.code, _answer(result.response))
        shop = f"{result.shop}.myshopify.com"
        if not is_shop_domain(shop):
            return _refused("invalid_shop_domain", 401)
        prefixes = parse_qs(urlsplit(url).query).get("path_prefix", [])
        return VerifiedProxyRequest(
            shop=shop,
            logged_in_customer_id=result.logged_in_customer_id or None,
            path_prefix=prefixes[0] if prefixes else None,
        )


# ---------------------------------------------------------------- helpers


def _request(method: str, url: str, headers: Mapping[str, str], body: bytes | str) -> RequestInput:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return {"method": method, "url": url, "headers": dict(headers), "body": text}


def _answer(response: Res) -> HttpAnswer:
    return HttpAnswer(response.status, response.body, dict(response.headers))


def _res(answer: HttpAnswer) -> Res:
    return Res(status=answer.status, body=answer.body, headers=dict(answer.headers))


def _refused(code: str, status: int, headers: dict[str, str] | None = None) -> Refusal:
    body = "Unauthorized" if status == 401 else "Bad Request"
    return Refusal(code, HttpAnswer(status, body, headers or {}))


def _bearer_token(headers: Mapping[str, str]) -> str:
    for name, value in headers.items():
        if name.lower() == "authorization" and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return ""


def _host(url: object) -> str:
    return (urlsplit(url).hostname or "") if isinstance(url, str) else ""


def _session_claims_problem(claims: Mapping[str, Any]) -> str | None:
    """What ``verify_app_home_req`` leaves unchecked: claims present, one shop in both."""
    if any(claims.get(name) in (None, "") for name in _REQUIRED_CLAIMS):
        return "missing_claim"
    dest, iss = claims["dest"], claims["iss"]
    shop = _host(dest)
    if not is_shop_domain(shop) or not isinstance(dest, str) or not dest.startswith("https://"):
        return "invalid_dest"
    if not isinstance(iss, str) or iss.rstrip("/") != f"https://{shop}/admin":
        return "iss_dest_mismatch"
    return None


def _id_token_details(verified: AdminVerified) -> IdTokenDetails:
    return IdTokenDetails(exchangeable=True, token=verified.id_token, claims=dict(verified.claims))


def _exchanged(result: TokenExchangeResult) -> TokenExchangeAccessToken:
    if not result.ok or result.access_token is None:
        _log.info("Shopify token exchange failed: %s", result.log.code)
        raise ShopifyTokenError(result.log.code, result.log.detail, _answer(result.response))
    return result.access_token


def _offline_token(token: TokenExchangeAccessToken, shop: str) -> OfflineToken:
    return OfflineToken(
        shop=shop,
        token=token.token,
        scope=token.scope,
        expires_at=_parse_iso(token.expires),
        refresh_token=token.refresh_token or None,
        refresh_token_expires_at=_parse_iso(token.refresh_token_expires),
    )


def _webhook_header(lowered: Mapping[str, str], suffix: str) -> str | None:
    # Shopify sends ``X-Shopify-*``; newer deliveries may drop the ``X-``.
    value = lowered.get(f"x-shopify-{suffix}") or lowered.get(f"shopify-{suffix}")
    return value or None


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


__all__ = [
    "RETRY_HEADER",
    "AdminVerification",
    "AdminVerified",
    "AppProxyVerification",
    "HttpAnswer",
    "OfflineToken",
    "Refusal",
    "ShopifyAuth",
    "ShopifyTokenError",
    "ShopifyUser",
    "VerifiedProxyRequest",
    "VerifiedWebhook",
    "WebhookVerification",
]
