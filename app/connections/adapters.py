"""Which adapter speaks for a shop's provider: the registry and the credentials behind it.

Stripe's credential is the shop's stored restricted key (:class:`Connection`); Shopify's
is the app's offline token for the shop (:class:`ShopifyInstall`), refreshed before use
under the install's row lock (:func:`app.shopify.install.usable_token`); the merchant's
own endpoint's are its URL and signing secrets (:mod:`app.connections.merchant`). Adding
a provider touches ``integrations/``, :data:`TARGETS` and the factory below.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime
from functools import cache
from typing import Protocol

import httpx
from sqlalchemy import Uuid, bindparam, select
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.connections.merchant import MERCHANT, signing_secrets
from app.connections.models import Connection
from app.crypto import SecretBox, secret_box
from app.errors import Forbidden
from app.jobs.context import worker_context
from app.settings import Settings
from app.shopify.install import shop_currency, usable_token
from app.shops.models import Shop
from app.words import said
from integrations.merchant_endpoint.adapter import TARGETS as MERCHANT_TARGETS
from integrations.merchant_endpoint.adapter import MerchantEndpointAdapter, merchant_http_client
from integrations.provider import ProviderAdapter, Targets
from integrations.shopify.adapter import TARGETS as SHOPIFY_TARGETS
from integrations.shopify.adapter import ShopifyAdapter
from integrations.shopify.auth import ShopifyAuth
from integrations.shopify.errors import ShopifyTokenError
from integrations.stripe.adapter import TARGETS as STRIPE_TARGETS
from integrations.stripe.adapter import StripeAdapter

# What each provider's actions may name; a proposal's provider is one of these.
TARGETS: dict[str, Targets] = {
    "stripe": STRIPE_TARGETS,
    "shopify": SHOPIFY_TARGETS,
    MERCHANT: MERCHANT_TARGETS,
}

# Refreshing a Shopify token failed for good: the grant is gone until the next admin visit.
_LOST_GRANT = frozenset({"invalid_grant", "refresh_token_expired", "invalid_client"})


class AdapterFactory(Protocol):
    """The adapter speaking for ``shop_id`` at ``provider``. ``connection``: the shop's
    connection to that provider when the caller read it already (the executor reads it
    with the locked action); without it, it is read here."""

    def __call__(
        self,
        session: Session,
        shop_id: uuid.UUID,
        provider: str,
        *,
        connection: Connection | None = None,
    ) -> ProviderAdapter: ...


def _stripe(settings: Settings, connection: Connection, secret: str) -> ProviderAdapter:
    return StripeAdapter(
        secret,
        livemode=connection.livemode,
        api_base=settings.stripe_api_base or None,
        timeout_seconds=settings.provider_timeout_seconds,
    )


class ShopifyTokens:
    """A shop's usable offline token, on one :class:`ShopifyAuth` (one HTTP client) made on
    first use, so processes that never touch Shopify never build it. The money path's
    adapters and the history audit's readers both hold the token this way."""

    def __init__(self, settings: Settings, box: SecretBox) -> None:
        self._settings = settings
        self._box = box
        self._auth: ShopifyAuth | None = None
        self._lock = threading.Lock()

    def _shared_auth(self) -> ShopifyAuth:
        settings = self._settings
        if not (settings.shopify_api_key and settings.shopify_api_secret):
            raise Forbidden(
                said("Shopify is not configured for this Caseward"), code="not_connected"
            )
        with self._lock:
            if self._auth is None:
                self._auth = ShopifyAuth(
                    settings.shopify_api_key,
                    settings.shopify_api_secret,
                    old_client_secret=settings.shopify_old_api_secret or None,
                    api_base=settings.shopify_api_base or None,
                    timeout=settings.provider_timeout_seconds,
                )
            return self._auth

    def token(self, session: Session, shop_id: uuid.UUID) -> tuple[Shop, ShopifyAuth, str]:
        """The installed shop, the shared auth (its HTTP client) and the token, refreshed
        first when it is about to expire; :class:`Forbidden` (``not_connected``) when the
        app is not installed or Shopify no longer accepts the grant."""
        shop = session.get(Shop, shop_id)
        if shop is None or shop.uninstalled_at is not None:
            raise Forbidden(said("the app is not installed in this shop"), code="not_connected")
        auth = self._shared_auth()
        try:
            token = usable_token(
                session,
                shop,
                box=self._box,
                refresh=auth.refresh_if_needed,
                currency_of=lambda fresh: shop_currency(shop.domain, fresh, auth.http_client),
                now=utcnow(),
            )
        except LookupError as exc:  # no install row: the token was never stored
            raise Forbidden(
                said("the app is not installed in %(shop)s", shop=shop.domain),
                code="not_connected",
            ) from exc
        except ShopifyTokenError as exc:
            if exc.code in _LOST_GRANT:
                raise Forbidden(
                    said(
                        "Shopify no longer accepts the shop's token (%(code)s): "
                        "remove Caseward from the shop and install it again to grant a new one",
                        code=exc.code,
                    ),
                    code="not_connected",
                ) from exc
            raise  # a network or server failure: the job fails and is tried again
        return shop, auth, token.token


class _MerchantAdapters:
    """Adapters for shops' own endpoints, made per use (a rotation takes effect at once)
    on one HTTP client made on first use."""

    def __init__(self, settings: Settings, box: SecretBox) -> None:
        self._timeout = settings.provider_timeout_seconds
        self._box = box
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def adapter(self, connection: Connection) -> ProviderAdapter:
        if connection.endpoint_url is None:
            raise Forbidden(
                said("the shop has no %(provider)s connection", provider=MERCHANT),
                code="not_connected",
            )
        with self._lock:
            if self._client is None:
                self._client = merchant_http_client(self._timeout)
        return MerchantEndpointAdapter(
            connection.endpoint_url,
            signing_secrets(connection, self._box),
            http_client=self._client,
        )


@cache
def worker_adapters() -> AdapterFactory:
    """The worker process's adapters (:func:`connection_adapters` kept per connection),
    shared by every job the process runs."""
    settings = worker_context().settings
    return connection_adapters(settings, secret_box(settings), reuse=True)


def connection_adapters(
    settings: Settings, box: SecretBox, *, reuse: bool = False
) -> AdapterFactory:
    """Adapters built from the shop's stored (encrypted) credentials.

    With ``reuse`` (one worker process, one thread) a Stripe adapter and its HTTP
    connection are kept per connection version, so consecutive jobs skip decryption and
    a new TCP connection; a re-saved connection gets a new adapter. Shopify and merchant
    endpoint adapters are made per use (the token may have been refreshed, the signing
    secret rotated), each provider's on one shared HTTP client.
    """
    kept: dict[tuple[uuid.UUID, datetime], ProviderAdapter] = {}
    shopify = ShopifyTokens(settings, box)
    merchant = _MerchantAdapters(settings, box)

    def factory(
        session: Session,
        shop_id: uuid.UUID,
        provider: str,
        *,
        connection: Connection | None = None,
    ) -> ProviderAdapter:
        if provider == "shopify":
            shop, auth, token = shopify.token(session, shop_id)
            return ShopifyAdapter(shop.domain, token, http_client=auth.http_client)
        if connection is None:
            connection = session.scalars(
                _CONNECTION, {"shop_id": shop_id, "provider": provider}
            ).one_or_none()
        elif (connection.shop_id, connection.provider) != (shop_id, provider):
            raise ValueError(f"connection {connection.id} is not the shop's {provider} connection")
        if connection is None or provider not in ("stripe", MERCHANT):
            raise Forbidden(
                said("the shop has no %(provider)s connection", provider=provider),
                code="not_connected",
            )
        if provider == MERCHANT:
            return merchant.adapter(connection)
        version = (connection.id, connection.created_at)
        if reuse and version in kept:
            return kept[version]
        adapter = _stripe(settings, connection, box.decrypt(connection.encrypted_secret))
        if reuse:
            if len(kept) >= _KEPT_ADAPTERS:
                kept.clear()
            kept[version] = adapter
        return adapter

    return factory


# Built once, at import: the worker reads the shop's connection for every action. The shop's
# parameter is typed by hand, as in ``executor._LOCKED_ACTION``.
_CONNECTION = select(Connection).where(
    Connection.shop_id == bindparam("shop_id", type_=Uuid),
    Connection.provider == bindparam("provider"),
)

# Enough for every shop a busy worker serves in a row; beyond it, start afresh.
_KEPT_ADAPTERS = 256
