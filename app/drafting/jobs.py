"""The RQ job that drafts a case after a customer writes (background queue).

One job per customer message (``draft-{message id}``), queued after the commit that
stored the message. The drafter runs outside any transaction; its result is applied
under the case's row lock, and only if no newer customer message arrived meanwhile
(that message's own job drafts from the whole conversation). Nothing is swallowed: a
failure fails the job and the customer's message stays, visible to staff in the case.

A shopper logged in to the storefront is known by their Shopify id alone: while our copy
holds none of their orders, the job reads them from Shopify first
(:func:`app.cases.jobs.refresh_orders_of`), so the draft that answers their first message
sees them without anyone opening the case.

The database, not the queue, says a draft is owed: the message is marked when it is kept
(and again when the shopper is verified, for a draft with their orders), in the same
commit, and the job clears the mark it read with the conversation, whatever it decided; a
mark set again meanwhile (a verification while the draft was made) stays; a job that
finds no mark drafts nothing (the draft owed was made). The sweep queues the job again
for a mark younger than an hour with no job waiting or running (:func:`drafts_owed`): one
that finished before a newer mark is run again; a job runs again when it fails or its
worker dies under it, three times over some eight minutes (RQ's retry,
:data:`DRAFT_RETRY`; abandoned, as RQ finds it), then one that failed is left in RQ's
failed jobs for people rather than call the model at every sweep; past the hour the case
waits for staff.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import cast

from rq import Queue, Retry
from rq.job import JobStatus
from sqlalchemy import Table, Uuid, bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.cases.jobs import refresh_orders_of
from app.cases.models import Case, Order
from app.connections.adapters import AdapterFactory, worker_adapters
from app.conversations.models import Author, Conversation, IdentityMethod, Message
from app.conversations.service import current_case, messages_of
from app.drafting.drafters import Drafter, drafter_for
from app.drafting.service import CaseAtHand, apply_fresh, brief_for
from app.execution.queueing import enqueue_executions_from_job
from app.jobs.context import WorkerContext, worker_context
from app.jobs.queueing import ENDED, enqueue_unique
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.settings import Settings
from app.shops.models import Shop


def draft_after_message(message_id: str) -> str:
    ctx = worker_context()
    outcome, action_id = draft_for_message(
        ctx.session_factory,
        worker_adapters(),
        ctx.settings,
        drafter_for(ctx.settings),
        uuid.UUID(message_id),
        now=ctx.clock(),
    )
    if action_id is not None:
        enqueue_executions_from_job(ctx.settings, [action_id])
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
    if (customer_id := _orders_unread(session_factory, message_id)) is not None:
        refresh_orders_of(session_factory, adapters, customer_id, now=now)
    with session_factory() as session, session.begin():
        message = session.get(Message, message_id)
        if message is None:
            return "no such message", None
        conversation = session.get(Conversation, message.conversation_id)
        assert conversation is not None
        # The mark this run answers, read with what its brief is made of.
        answering = message.draft_owed_since
        if answering is None:
            # Drafted already: a sweep that read the mark just before an earlier run
            # cleared it found that run's job finished and queued it again. Or erased.
            return "no draft owed", None
        if _newer_message(session, message):
            _drafted(session, message_id, answering)
            return "superseded by a newer message", None
        case = session.get(Case, conversation.case_id) if conversation.case_id else None
        shop = session.get(Shop, conversation.shop_id)
        if case is None or shop is None:
            _drafted(session, message_id, answering)
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
        _drafted(session, message_id, answering)
        if _newer_message(session, message):
            return "superseded by a newer message", None
        drafted = apply_fresh(
            CaseAtHand(session, shop, case, conversation, adapters, settings, now), run
        )
        action = drafted.proposal.action if drafted.proposal else None
        return f"drafted: {drafted.record.next_step}", action.id if action else None


def _orders_unread(
    session_factory: sessionmaker[Session], message_id: uuid.UUID
) -> uuid.UUID | None:
    """The logged-in shopper of the message's conversation while our copy holds none of
    their orders."""
    with session_factory() as session, session.begin():
        conversation = session.scalar(
            select(Conversation)
            .join(Message, Message.conversation_id == Conversation.id)
            .where(Message.id == message_id)
        )
        if (
            conversation is None
            or conversation.customer_id is None
            or conversation.identity_method != IdentityMethod.LOGGED_IN
        ):
            return None
        held = session.scalar(
            select(Order.id)
            .where(
                Order.shop_id == conversation.shop_id,
                Order.customer_id == conversation.customer_id,
            )
            .limit(1)
        )
        return conversation.customer_id if held is None else None


def owe_draft_with_orders(
    session: Session, conversation: Conversation, now: datetime
) -> Message | None:
    """Once the shopper is verified, their newest message is owed a draft again, with their
    orders, in the verification's transaction; returns it, to queue its job after the commit
    (None when the case is closed). A message is first marked as it is kept
    (``receive_message(owes_draft=True)``)."""
    if current_case(session, conversation) is None:
        return None
    newest = next(
        (
            m
            for m in reversed(messages_of(session, conversation, 20))
            if m.author == Author.CUSTOMER
        ),
        None,
    )
    if newest is not None:
        newest.draft_owed_since = now
    return newest


# Past this, a draft owed and never made (its job failed, and RQ has since forgotten the
# failure) is not tried again: the shopper has moved on or staff have answered, and the
# case is in their queue.
DRAFT_OWED_FOR = timedelta(hours=1)


def drafts_owed(session: Session, now: datetime) -> list[uuid.UUID]:
    """The chat messages owed a draft for less than :data:`DRAFT_OWED_FOR`, oldest first,
    of every shop: the arguments of their drafting jobs, for the sweep."""
    return list(
        session.scalars(
            select(Message.id)
            .where(
                Message.draft_owed_since.is_not(None),
                Message.draft_owed_since > now - DRAFT_OWED_FOR,
            )
            .order_by(Message.draft_owed_since)
        )
    )


def _drafted(session: Session, message_id: uuid.UUID, answered: datetime | None) -> None:
    """Clear the mark the run answered, if the message still has it: compared in the one
    statement, so a mark set again meanwhile stays, whatever the clocks of the processes
    that set and read it say."""
    if answered is not None:
        session.execute(_CLEAR_OWED, {"message_id": message_id, "answered": answered})


_MESSAGES = cast(Table, Message.__table__)
_CLEAR_OWED = (
    update(_MESSAGES)
    .where(
        _MESSAGES.c.id == bindparam("message_id", type_=Uuid),
        _MESSAGES.c.draft_owed_since == bindparam("answered"),
    )
    .values(draft_owed_since=None)
)


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


# Run again three times, over some eight minutes: faults come one after another (the model
# overloaded for a while, then the worker of the retry killed), and a shopper waits. A job
# that fails a fourth time stays in front of people.
DRAFT_RETRY = Retry(max=3, interval=[30, 120, 300])


def enqueue_drafting(queue: Queue, message_id: uuid.UUID) -> bool:
    """Draft the case of a customer's message (background queue), once per message."""
    return _enqueue_drafting(queue, message_id, replacing=ENDED)


def requeue_drafting(queue: Queue, message_id: uuid.UUID) -> bool:
    """Queue the drafting of a message still owed a draft, unless its job waits or runs.
    A finished job is replaced (the message was owed a draft again after it began: the
    shopper was verified meanwhile); a failed one is left in front of people (RQ's failed
    jobs) rather than call the model again at every sweep."""
    return _enqueue_drafting(queue, message_id, replacing=(JobStatus.FINISHED,))


def _enqueue_drafting(
    queue: Queue, message_id: uuid.UUID, *, replacing: tuple[JobStatus, ...]
) -> bool:
    return enqueue_unique(
        queue,
        "app.drafting.jobs.draft_after_message",
        (str(message_id),),
        f"draft-{message_id}",
        replacing=replacing,
        # Again when it fails or its worker dies under it (RQ finds it abandoned): a
        # shopper is not left without a reply by a lost process or a model busy for a
        # while. The job drafts only what is still owed.
        retry=DRAFT_RETRY,
    )


def sweep_drafts_owed(ctx: WorkerContext, queues: Queues) -> SweepReport:
    with ctx.session_factory() as session:
        owed = drafts_owed(session, ctx.clock())
    return {
        "drafting": [
            str(message) for message in owed if requeue_drafting(queues.background, message)
        ]
    }


SWEEP = Sweep("drafting", sweep_drafts_owed)
