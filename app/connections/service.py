"""Connecting a shop to a provider. Keys are checked, encrypted, and never shown again."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.connections.models import Connection
from app.crypto import SecretBox, mask_secret
from app.errors import InvalidInput
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role
from integrations.provider import CredentialsRefused
from integrations.stripe.adapter import StripeAdapter


def connect_stripe(
    session: Session,
    *,
    shop: Shop,
    actor: str,
    api_key: str,
    livemode: bool,
    webhook_secret: str | None,
    box: SecretBox,
    now: datetime,
) -> Connection:
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, "connect providers")
    try:
        StripeAdapter(api_key, livemode=livemode)
    except CredentialsRefused as exc:
        raise InvalidInput(str(exc), field="api_key") from exc
    if webhook_secret is not None and not webhook_secret.startswith("whsec_"):
        raise InvalidInput(
            "a Stripe webhook signing secret starts with whsec_", field="webhook_secret"
        )
    connection = session.scalars(
        select(Connection).where(Connection.shop_id == shop.id, Connection.provider == "stripe")
    ).one_or_none()
    if connection is None:
        connection = Connection(shop_id=shop.id, provider="stripe")
        session.add(connection)
    connection.livemode = livemode
    connection.encrypted_secret = box.encrypt(api_key)
    connection.key_hint = mask_secret(api_key)
    connection.encrypted_webhook_secret = box.encrypt(webhook_secret) if webhook_secret else None
    connection.created_by = actor
    connection.created_at = now
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="connection.saved",
        actor=actor,
        data={"provider": "stripe", "key": connection.key_hint, "livemode": livemode},
        now=now,
    )
    return connection
