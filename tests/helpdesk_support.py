"""A shop's Gorgias account, kept as the owner's save keeps it, for tests with no Gorgias to
read it back from; a shop with a ticket's conversation."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.clock import utcnow
from app.conversations.models import Channel
from app.conversations.service import start_conversation
from app.crypto import secret_box
from app.helpdesk.connection import GorgiasConnected, save_gorgias_connection
from app.helpdesk.jobs import HELPDESK
from app.settings import Settings
from app.shops.models import Shop


def connect_gorgias(
    session: Session, shop: Shop, settings: Settings, *, owner: str, account: str
) -> GorgiasConnected:
    """``account`` (``NAME`` of ``NAME.gorgias.com``) saved by ``owner``, unchecked."""
    return save_gorgias_connection(
        session,
        shop=shop,
        actor=staff(owner, Surface.STAFF_API),
        domain=account,
        username="api@linen.example",
        api_key="gorgias-api-key-0123456789",
        box=secret_box(settings),
        check=lambda _account: None,
        now=utcnow(),
    )


def shop_with_a_ticket(session: Session, ticket_id: int) -> tuple[uuid.UUID, uuid.UUID]:
    """A new shop and the conversation of its Gorgias ticket ``ticket_id``, committed:
    (shop id, conversation id)."""
    shop = Shop(domain=f"desk-{uuid.uuid4().hex[:6]}.myshopify.com", name="Desk")
    session.add(shop)
    session.flush()
    conversation = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.HELPDESK,
        channel_ref=f"gorgias:{ticket_id}",
        actor=HELPDESK,
        now=utcnow(),
    )
    session.commit()
    return shop.id, conversation.id
