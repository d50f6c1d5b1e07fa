"""Which adapter speaks for a shop's provider: the registry and the credentials behind it.

Adding a provider touches ``integrations/`` and one line of :data:`BUILDERS`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.connections.models import Connection
from app.crypto import SecretBox
from app.errors import Forbidden
from app.settings import Settings
from integrations.provider import ProviderAdapter
from integrations.stripe.adapter import StripeAdapter


class AdapterFactory(Protocol):
    def __call__(self, session: Session, shop_id: uuid.UUID, provider: str) -> ProviderAdapter: ...


def _stripe(settings: Settings, connection: Connection, secret: str) -> ProviderAdapter:
    return StripeAdapter(
        secret,
        livemode=connection.livemode,
        api_base=settings.stripe_api_base or None,
        timeout_seconds=settings.provider_timeout_seconds,
    )


BUILDERS: dict[str, Callable[[Settings, Connection, str], ProviderAdapter]] = {
    "stripe": _stripe,
}


def connection_adapters(settings: Settings, box: SecretBox) -> AdapterFactory:
    """Adapters built from the shop's stored (encrypted) connection."""

    def factory(session: Session, shop_id: uuid.UUID, provider: str) -> ProviderAdapter:
        connection = session.scalars(
            select(Connection).where(Connection.shop_id == shop_id, Connection.provider == provider)
        ).one_or_none()
        if connection is None or provider not in BUILDERS:
            raise Forbidden(f"the shop has no {provider} connection", code="not_connected")
        return BUILDERS[provider](settings, connection, box.decrypt(connection.encrypted_secret))

    return factory
