"""Calls from the shop's Gorgias HTTP integration: checked, kept once, worked in a job.

Gorgias turns an integration off after 100 failed calls in a row, so the endpoint only
checks the secret and the body's shape, keeps the call once (a message by its Gorgias
id, a ticket update by its update time) and answers; the job reads the ticket from
Gorgias' API (:mod:`app.helpdesk.jobs`) and never trusts the call's copy of it. The
body the merchant sets in Gorgias (README, "Gorgias"):

    {"event": "ticket-message-created", "ticket_id": {{ticket.id}},
     "message_id": {{ticket.messages[-1].id}}, "updated": "{{ticket.updated_datetime}}"}
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.errors import InvalidInput
from app.execution.models import keep_provider_event
from app.helpdesk.connection import GORGIAS
from app.validation import choice, integer, only_keys, text
from app.words import said

EVENTS = ("ticket-created", "ticket-updated", "ticket-message-created")
# The body docs/gorgias.md asks the merchant to set for a new message (the demo sets it too).
CALL_BODY_TEMPLATE = (
    '{"event": "ticket-message-created", "ticket_id": {{ticket.id}}, '
    '"message_id": {{ticket.messages[-1].id}}, "updated": "{{ticket.updated_datetime}}"}'
)
# Caseward is called as a ticket opens and on each later message: one integration per
# trigger, its body naming it (call_body_template). Without the first, a ticket's opening
# message waits for the next one to be kept and prepared.
CALL_TRIGGERS = ("ticket-created", "ticket-message-created")


def call_body_template(trigger: str) -> str:
    """The integration's body for ``trigger``, one of :data:`EVENTS`."""
    return CALL_BODY_TEMPLATE.replace("ticket-message-created", trigger)


# Gorgias ids are 64-bit in places; anything larger is not one of its ids.
MAX_ID = 2**53


@dataclass(frozen=True)
class IntegrationCall:
    event: str
    ticket_id: int
    message_id: int | None
    updated: str | None

    @property
    def key(self) -> str:
        """What makes a call the same call again: Gorgias retries and replays it."""
        if self.event == "ticket-message-created" and self.message_id is not None:
            return f"message:{self.message_id}"
        return f"ticket:{self.ticket_id}:{self.event}:{self.updated or ''}"


def parse_call(body: Mapping[str, Any]) -> IntegrationCall:
    """The call's body, every field checked; 400 naming the field otherwise."""
    only_keys(dict(body), ("event", "ticket_id", "message_id", "updated"))
    event = str(choice(body.get("event"), "event", EVENTS))
    ticket_id = _gorgias_id(body.get("ticket_id"), "ticket_id")
    message_id = (
        _gorgias_id(body.get("message_id"), "message_id")
        if body.get("message_id") not in (None, "")
        else None
    )
    if event == "ticket-message-created" and message_id is None:
        raise InvalidInput(said("a new message's call names its message_id"), field="message_id")
    updated = text(body.get("updated"), "updated", max_length=64)
    return IntegrationCall(event, ticket_id, message_id, updated or None)


def keep_once(
    session: Session,
    *,
    shop_id: uuid.UUID,
    call: IntegrationCall,
    actor: Actor,
    now: datetime,
) -> bool:
    """Store the call; False when it was stored before (a retry or a replay). Its job
    names it by the shop and ``call.key``."""
    kept = keep_provider_event(
        session,
        shop_id=shop_id,
        provider=GORGIAS,
        event_id=call.key,
        event_type=call.event,
        object_id=str(call.ticket_id),
        payload={
            "event": call.event,
            "ticket_id": call.ticket_id,
            "message_id": call.message_id,
            "updated": call.updated,
        },
        created=now,
        received_at=now,
    )
    if not kept:
        return False
    audit.record(
        session,
        shop_id=shop_id,
        kind="helpdesk.call_received",
        actor=actor,
        data={"event": call.event, "ticket_id": call.ticket_id, "message_id": call.message_id},
        now=now,
    )
    return True


def _gorgias_id(value: object, field: str) -> int:
    # Templated bodies may carry the id as a number or as its digits in a string.
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16:
        value = int(value)
    return integer(value, field, minimum=1, maximum=MAX_ID)
