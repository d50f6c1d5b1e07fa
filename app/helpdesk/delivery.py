"""Posting what Caseward tells a helpdesk customer to their ticket, exactly once.

A message to the customer of a helpdesk conversation (a status update, a reply staff
typed in Caseward) is kept first, with ``delivered_at`` empty; the chat's messages are
delivered as they are kept, so only a helpdesk's wait, and a partial index holds just
those for the sweeper's look every few seconds. :func:`pending` finds them, and the job
posts each as a public reply under our id (``caseward-message-{id}``, Gorgias'
``external_id``), under the message's row lock, taken without waiting, so that two runs at
once (the call's job, the sweep's delivery job) post it once
(:func:`app.helpdesk.jobs.deliver_replies`); it is marked delivered in that transaction.
The client looks our id up on the ticket before sending, which settles a run that died
after posting and before its commit. The sweeper queues the job while anything waits.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.conversations.models import Author, Conversation, Message

TO_CUSTOMER = (Author.CASEWARD.value, Author.STAFF.value)


def our_id(message: Message) -> str:
    return f"caseward-message-{message.id}"


def pending(session: Session, shop_id: uuid.UUID, limit: int = 50) -> list[Message]:
    """The shop's messages to helpdesk customers not posted yet, oldest first."""
    return list(
        session.scalars(
            select(Message)
            .where(
                Message.shop_id == shop_id,
                Message.author.in_(TO_CUSTOMER),
                Message.delivered_at.is_(None),
            )
            .order_by(Message.created_at)
            .limit(limit)
        )
    )


def shops_with_pending(session: Session) -> list[uuid.UUID]:
    """Shops with a message to a helpdesk customer waiting to be posted."""
    return list(
        session.scalars(
            select(Message.shop_id)
            .where(Message.author.in_(TO_CUSTOMER), Message.delivered_at.is_(None))
            .distinct()
        )
    )


def mark_delivered(
    session: Session, *, message: Message, posted_id: int, actor: Actor, now: datetime
) -> None:
    message.delivered_at = now
    audit.record(
        session,
        shop_id=message.shop_id,
        kind="conversation.reply_delivered",
        actor=actor,
        data={"message_id": str(message.id), "helpdesk_message_id": posted_id},
        now=now,
    )


def ticket_of(session: Session, message: Message) -> int:
    """The Gorgias ticket a helpdesk conversation's message belongs to."""
    conversation = session.get(Conversation, message.conversation_id)
    assert conversation is not None and conversation.channel_ref.startswith("gorgias:")
    return int(conversation.channel_ref.removeprefix("gorgias:"))
