"""Which reader reads a shop's history, built from its stored credentials.

As :func:`app.connections.adapters.connection_adapters` builds the shop's adapters:
Stripe's reader on the shop's stored restricted key (decrypted here, never logged), and
Shopify's on the app's offline token for the shop, refreshed before use under the install
row's lock (:func:`app.shopify.install.usable_token`). Readers only read: Stripe's sends
GET requests, which a restricted key's read permissions allow, and Shopify's sends queries,
never a mutation. A shop with no such connection, or whose grant Shopify no longer
accepts, is refused with :class:`~app.errors.Forbidden` (``not_connected``), which ends a
scan ``failed`` with that reason.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.connections.adapters import ShopifyTokens
from app.connections.models import Connection
from app.crypto import SecretBox
from app.errors import Forbidden
from app.history_audit.scan import ReaderFactory
from app.settings import Settings
from app.words import said
from integrations.history import HistoryReader
from integrations.shopify.history import ShopifyHistoryReader
from integrations.stripe.history import StripeHistoryReader


def history_readers(settings: Settings, box: SecretBox) -> ReaderFactory:
    """Readers built from the shop's stored (encrypted) credentials, each per use (a key
    re-saved or a token refreshed takes effect at the next slice of a scan)."""
    shopify = ShopifyTokens(settings, box)

    def factory(session: Session, shop_id: uuid.UUID, provider: str) -> HistoryReader:
        if provider == "shopify":
            shop, auth, token = shopify.token(session, shop_id)
            return ShopifyHistoryReader(shop.domain, token, http_client=auth.http_client)
        connection = session.scalars(
            select(Connection).where(Connection.shop_id == shop_id, Connection.provider == provider)
        ).one_or_none()
        if connection is None or provider != "stripe":
            raise Forbidden(
                said("the shop has no %(provider)s connection", provider=provider),
                code="not_connected",
            )
        return StripeHistoryReader(
            box.decrypt(connection.encrypted_secret),
            livemode=connection.livemode,
            api_base=settings.stripe_api_base or None,
            timeout_seconds=settings.provider_timeout_seconds,
        )

    return factory
