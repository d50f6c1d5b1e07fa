"""Which adapter speaks for a shop's provider: the registry and the credentials behind it.

Adding a provider touches ``integrations/`` and one line of :data:`BUILDERS`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
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


def connection_adapters(
    settings: Settings, box: SecretBox, *, reuse: bool = False
) -> AdapterFactory:
    """Adapters built from the shop's stored (encrypted) connection.

    With ``reuse`` (one worker process, one thread) an adapter and its HTTP connection
    are kept per connection version, so consecutive jobs skip decryption and a new
    TCP connection; a re-saved connection gets a new adapter.
    """
    kept: dict[tuple[uuid.UUID, datetime], ProviderAdapter] = {}

    def factory(session: Session, shop_id: uuid.UUID, provider: str) -> ProviderAdapter:
        connection = session.scalars(
            select(Connection).where(Connection.shop_id == shop_id, Connection.provider == provider)
        ).one_or_none()
        if connection is None or provider not in BUILDERS:
            raise Forbidden(f"the shop has no {provider} connection", code="not_connected")
        version = (connection.id, connection.created_at)
        if reuse and version in kept:
            return kept[version]
        adapter = BUILDERS[provider](settings, connection, box.decrypt(connection.encrypted_secret))
        if reuse:
            if len(kept) >= _KEPT_ADAPTERS:
                kept.clear()
            kept[version] = adapter
        return adapter

    return factory


# Enough for every shop a busy worker serves in a row; beyond it, start afresh.
_KEPT_ADAPTERS = 256
