"""The RQ job that answers a privacy request stored from a Shopify webhook.

The webhook handler only verifies, stores and queues (Shopify wants an answer within
five seconds); the work is done here, on the background queue, from the stored event.
The event's own payload names the person, so once answered it keeps only what was done.
Running the job twice does no harm: the second run finds the event answered.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from app.clock import utcnow
from app.crypto import SecretBox, secret_box
from app.execution.jobs import context
from app.execution.models import ProviderEvent
from app.privacy.service import answer_shopify_request
from app.shopify.install import SHOPIFY
from app.shops.models import Shop


def answer_privacy_request(event_row_id: int) -> str:
    ctx = context()
    return answer_stored_request(
        ctx.session_factory, secret_box(ctx.settings), event_row_id, now=utcnow()
    )


def answer_stored_request(
    session_factory: sessionmaker[Session], box: SecretBox, event_row_id: int, *, now: datetime
) -> str:
    with session_factory() as session, session.begin():
        event = session.get(ProviderEvent, event_row_id, with_for_update=True)
        if event is None or event.shop_id is None:
            raise LookupError(f"no stored provider event {event_row_id}")
        if "answered" in event.payload:
            return str(event.payload["answered"])
        shop = session.get(Shop, event.shop_id)
        if shop is None:
            raise LookupError(f"provider event {event_row_id} names no shop")
        done = answer_shopify_request(
            session, shop, event.type, dict(event.payload), box=box, actor=SHOPIFY, now=now
        )
        event.payload = {"answered": done}
        return done
