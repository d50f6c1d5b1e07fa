"""Provider webhooks: verify, keep once per shop and event id, answer fast, work in a job.

The handler never trusts the event's copy of an object: it queues a refresh that
asks the provider for the action's current state, so duplicates and any
delivery order end in the same recorded status. Two shops on one Stripe account each
get their own delivery, and each keeps and acts on its own copy. Nothing is stored
or queued before the signature verifies; a signed body we cannot read is a 400,
never a 500 (Stripe retries server errors for days). Bodies are capped in
``app.web.limits``.
"""

from __future__ import annotations

import contextlib
import uuid

from flask import Blueprint, Response, current_app, jsonify, request
from sqlalchemy import Uuid, bindparam, or_, select
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.connections.models import Connection
from app.db import request_session
from app.errors import InvalidInput, NotFound, Unauthenticated
from app.execution.models import Action, keep_provider_event
from app.execution.queueing import enqueue_refresh
from app.jobs.connection import RedisExtension
from app.words import said
from integrations.stripe.webhooks import InvalidWebhook, MalformedEvent, StripeEvent, verify_event

bp = Blueprint("webhooks", __name__, url_prefix="/webhooks")


@bp.post("/stripe/<uuid:connection_id>")
def stripe_webhook(connection_id: uuid.UUID) -> tuple[Response, int]:
    session = request_session()
    connection = session.execute(_ENDPOINT, {"connection_id": connection_id}).first()
    if connection is None or connection.provider != "stripe":
        raise NotFound(said("no such webhook endpoint"))
    if connection.encrypted_webhook_secret is None:
        raise Unauthenticated(said("this connection has no webhook signing secret"))
    secret = current_app.extensions["caseward.secret_box"].decrypt(
        connection.encrypted_webhook_secret
    )
    try:
        event = verify_event(
            request.get_data(cache=False), request.headers.get("Stripe-Signature"), secret
        )
    except InvalidWebhook as exc:
        raise Unauthenticated(str(exc)) from exc
    except MalformedEvent as exc:
        raise InvalidInput(str(exc), field="body") from exc

    # A redelivery to this shop keeps nothing and changes nothing; another shop's delivery
    # is its own.
    kept = keep_provider_event(
        session,
        shop_id=connection.shop_id,
        provider="stripe",
        event_id=event.id,
        event_type=event.type,
        object_id=event.object_id,
        payload=event.payload,
        created=event.created,
        received_at=utcnow(),
    )
    actions = _named_actions(session, connection.shop_id, event)
    if not kept:
        session.rollback()
        # Stripe sends an event again when it had no answer: the first delivery may have
        # been kept and its refreshes lost (the process died, Redis was away) before
        # answering. A refresh Redis still holds is not queued twice.
        queue = RedisExtension.queue(current_app)
        for action_id in actions:
            enqueue_refresh(queue, action_id, event.id, again=True)
        return jsonify({"received": True, "duplicate": True}), 200
    session.commit()
    queue = RedisExtension.queue(current_app)
    for action_id in actions:
        enqueue_refresh(queue, action_id, event.id)
    return jsonify({"received": True, "actions": [str(a) for a in actions]}), 200


def _named_actions(session: Session, shop_id: uuid.UUID, event: StripeEvent) -> list[uuid.UUID]:
    """The shop's actions the event names: by the provider's object, or our id in its
    metadata."""
    action_id = None
    if event.action_id:
        with contextlib.suppress(ValueError):  # not ours if it is not a uuid
            action_id = uuid.UUID(event.action_id)
    if not (event.object_id or action_id):
        return []
    return list(
        session.scalars(
            _NAMED_ACTIONS, {"shop_id": shop_id, "ref": event.object_id, "action_id": action_id}
        )
    )


# Built once, at import, as every delivery runs them (each parameter typed by hand, as a
# bind built before the mappers are configured may not know its column's type): building
# them at every delivery took more of its time than the database took to answer.
# The endpoint's connection, as columns: nothing of it is changed or read again.
_ENDPOINT = select(
    Connection.shop_id, Connection.provider, Connection.encrypted_webhook_secret
).where(Connection.id == bindparam("connection_id", type_=Uuid))
# The shop's actions the event names: the provider's object (a refund), or our own id in
# its metadata. A parameter that is None matches nothing.
_NAMED_ACTIONS = select(Action.id).where(
    Action.shop_id == bindparam("shop_id", type_=Uuid),
    or_(Action.provider_ref == bindparam("ref"), Action.id == bindparam("action_id", type_=Uuid)),
)
