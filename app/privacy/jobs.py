"""The RQ job that answers a privacy request stored from a Shopify webhook.

The webhook handler only verifies, stores and queues (Shopify wants an answer within
five seconds); the work is done here, on the background queue, from the stored event.
The event's own payload names the person, so once answered it keeps only what was done.
Running the job twice does no harm: the second run finds the event answered.

The job names its request by the shop and Shopify's event id, what the stored event is
kept once by, not by the row's number (numbers start again with each database and go
back with a restore). A request whose job never reached the queue (the web process died
between its commit and the enqueue) is queued by the sweep (:func:`unanswered_requests`).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from app.crypto import SecretBox, secret_box
from app.execution.models import ProviderEvent, kept_event
from app.jobs.context import WorkerContext, worker_context
from app.jobs.queueing import KeptEventJob
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.privacy.models import UNANSWERED_PRIVACY_REQUEST
from app.privacy.service import answer_shopify_request
from app.shopify.install import SHOPIFY
from app.shops.models import Shop


def answer_privacy_request(shop_id: str, event_id: str) -> str:
    ctx = worker_context()
    return answer_stored_request(
        ctx.session_factory, secret_box(ctx.settings), uuid.UUID(shop_id), event_id, now=ctx.clock()
    )


def answer_stored_request(
    session_factory: sessionmaker[Session],
    box: SecretBox,
    shop_id: uuid.UUID,
    event_id: str,
    *,
    now: datetime,
) -> str:
    with session_factory() as session, session.begin():
        event = kept_event(session, shop_id, "shopify", event_id, locked=True)
        if event is None:
            raise LookupError(f"no stored Shopify event {event_id} of shop {shop_id}")
        if "answered" in event.payload:
            return str(event.payload["answered"])
        shop = session.get(Shop, shop_id)
        if shop is None:
            raise LookupError(f"no shop {shop_id}")
        done = answer_shopify_request(
            session, shop, event.type, dict(event.payload), box=box, actor=SHOPIFY, now=now
        )
        event.payload = {"answered": done}
        return done


def unanswered_requests(session: Session) -> list[tuple[uuid.UUID, str]]:
    """The stored privacy requests not answered yet, oldest first, as ``(shop id, event
    id)``: the arguments of their jobs."""
    rows = session.execute(
        select(ProviderEvent.shop_id, ProviderEvent.event_id)
        .where(text(UNANSWERED_PRIVACY_REQUEST))
        .order_by(ProviderEvent.received_at)
    )
    return [(shop_id, event_id) for shop_id, event_id in rows if shop_id is not None]


# Shopify allows 30 days to act on a privacy request: a failure is kept as long.
PRIVACY_REQUEST = KeptEventJob(
    "app.privacy.jobs.answer_privacy_request", "privacy", failure_ttl=30 * 24 * 3600
)


def sweep_unanswered(ctx: WorkerContext, queues: Queues) -> SweepReport:
    with ctx.session_factory() as session:
        unanswered = unanswered_requests(session)
    return {
        "answering_privacy": [
            event_id
            for shop_id, event_id in unanswered
            if PRIVACY_REQUEST.requeue(queues.background, shop_id, event_id)
        ]
    }


SWEEP = Sweep("privacy requests", sweep_unanswered)
