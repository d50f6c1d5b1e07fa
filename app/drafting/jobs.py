"""The RQ job that drafts a case after a customer writes (background queue).

One job per customer message (``draft-{message id}``), queued after the commit that
stored the message. The drafter runs outside any transaction; its result is applied
under the case's row lock, and only if no newer customer message arrived meanwhile
(that message's own job drafts from the whole conversation). Nothing is swallowed: a
failure fails the job and the customer's message stays, visible to staff in the case.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from rq import get_current_job
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.models import Case
from app.clock import utcnow
from app.conversations.models import Author, Conversation, Message
from app.drafting.drafters import Drafter, drafter_for
from app.drafting.service import apply_fresh, brief_for
from app.execution.jobs import context
from app.execution.providers import AdapterFactory
from app.execution.queueing import enqueue_execution, execution_queue
from app.queue import connect_redis
from app.settings import Settings
from app.shops.models import Shop


def draft_after_message(message_id: str) -> str:
    ctx = context()
    outcome, action_id = draft_for_message(
        ctx.session_factory,
        ctx.adapters,
        ctx.settings,
        drafter_for(ctx.settings),
        uuid.UUID(message_id),
        now=utcnow(),
    )
    if action_id is not None:
        job = get_current_job()
        connection = job.connection if job is not None else connect_redis(ctx.settings)
        enqueue_execution(execution_queue(connection, ctx.settings.queue_name), action_id)
    return outcome


def draft_for_message(
    session_factory: sessionmaker[Session],
    adapters: AdapterFactory,
    settings: Settings,
    drafter: Drafter,
    message_id: uuid.UUID,
    *,
    now: datetime,
) -> tuple[str, uuid.UUID | None]:
    """Draft the case of the message's conversation; returns what happened, and the
    action to queue when the shop's policy approved the proposal."""
    with session_factory() as session, session.begin():
        message = session.get(Message, message_id)
        if message is None:
            return "no such message", None
        conversation = session.get(Conversation, message.conversation_id)
        assert conversation is not None
        if _newer_message(session, message):
            return "superseded by a newer message", None
        case = session.get(Case, conversation.case_id) if conversation.case_id else None
        shop = session.get(Shop, conversation.shop_id)
        if case is None or shop is None:
            return "no case to draft", None
        brief, _ = brief_for(session, shop=shop, case=case, conversation=conversation)
        case_id = case.id
    run = drafter.run(brief)
    with session_factory() as session, session.begin():
        case = session.scalars(select(Case).where(Case.id == case_id).with_for_update()).one()
        message = session.get(Message, message_id)
        conversation = session.get(Conversation, case.conversation_id)
        shop = session.get(Shop, case.shop_id)
        assert message is not None and conversation is not None and shop is not None
        if _newer_message(session, message):
            return "superseded by a newer message", None
        drafted = apply_fresh(
            session,
            shop=shop,
            case=case,
            conversation=conversation,
            run=run,
            adapters=adapters,
            settings=settings,
            now=now,
        )
        action = drafted.proposal.action if drafted.proposal else None
        return f"drafted: {drafted.record.next_step}", action.id if action else None


def _newer_message(session: Session, message: Message) -> bool:
    return (
        session.scalars(
            select(Message.id).where(
                Message.conversation_id == message.conversation_id,
                Message.author == Author.CUSTOMER,
                Message.created_at > message.created_at,
            )
        ).first()
        is not None
    )
