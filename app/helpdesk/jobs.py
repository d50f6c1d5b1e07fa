"""The RQ jobs of the helpdesk (background queue): work a Gorgias call, post replies.

:func:`work_gorgias_call`, for one kept call: read the ticket from Gorgias (no
transaction held), sync it into its conversation and claim the agents' new commands
(one transaction); when a customer message arrived and the shop has cases prepared on
arrival (the connection's ``prepare_on_arrival``, unless an agent's "prepare case" is
among the commands), draft the case into an internal note; act on each command (the
drafter runs outside any transaction; each command's writes commit on their own), post
the internal notes, queue an action a command approved, then post what waits for the
customer (:func:`deliver_replies`).
Nothing is swallowed: a failure fails the job, which RQ runs again after 5 s, 30 s, two
minutes, a quarter of an hour and an hour (:data:`CALL_RETRY`) and then keeps a day among
its failed jobs; the kept call stays, and what a run kept or did is not done again (a
message kept, a command done). A command the failed run claimed is done by the next run of
its call, and one it did has its kept note posted and its action queued (once each:
Gorgias holds one note of ours per id, RQ one job per action); a customer message a failed
run kept is prepared when its call runs again, unless a note of ours on the ticket already
prepares it. The job names its call by the shop and the call's key, what it was kept once
by.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from rq import Queue, Retry
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, sessionmaker

from app.actors import Surface, system_actor
from app.cases.models import Case
from app.clock import utcnow
from app.connections.adapters import AdapterFactory, worker_adapters
from app.conversations.models import Conversation, Message
from app.conversations.service import received_from_channel
from app.crypto import SecretBox, secret_box
from app.drafting.drafters import Drafter, drafter_for
from app.drafting.service import CaseAtHand, apply_fresh, brief_for, proposal_in_hand
from app.execution.models import kept_event
from app.execution.queueing import enqueue_executions_from_job
from app.helpdesk.commands import approve_as_agent, draft_note, status_for_customer
from app.helpdesk.connection import GORGIAS, GorgiasAccount, gorgias_account, gorgias_connection
from app.helpdesk.delivery import mark_delivered, our_id, pending, shops_with_pending, ticket_of
from app.helpdesk.events import CALL_TRIGGERS
from app.helpdesk.gorgias_desk import gorgias_desks
from app.helpdesk.tickets import (
    AgentCommand,
    Command,
    TicketFacts,
    command_done,
    commands_in,
    from_customer,
    sync_ticket,
    take_command,
)
from app.jobs.connection import connect_redis
from app.jobs.context import WorkerContext, worker_context
from app.jobs.queueing import FAILURE_TTL, KeptEventJob, enqueue_unique
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.settings import Settings
from app.shopify.admin_links import admin_case_url
from app.shops.models import Shop

HELPDESK = system_actor("helpdesk", Surface.HELPDESK)


class Desk(Protocol):
    """What Caseward asks of a helpdesk's API (Gorgias': :mod:`integrations.gorgias`)."""

    def ticket(self, ticket_id: int) -> TicketFacts: ...

    def post_reply(self, ticket: TicketFacts, *, body_text: str, our_id: str) -> int: ...

    def post_internal_note(
        self, ticket_id: int, *, body_text: str, our_id: str, already_tried: bool
    ) -> int:
        """``already_tried``: an earlier run may have posted ``our_id``, so it is looked
        for first; False for a note this run made, which no run posted before."""
        ...


DeskFactory = Callable[[GorgiasAccount], Desk]


@dataclass(frozen=True)
class HelpdeskContext:
    session_factory: sessionmaker[Session]
    adapters: AdapterFactory
    settings: Settings
    box: SecretBox
    desks: DeskFactory
    drafter: Drafter
    clock: Callable[[], datetime] = utcnow


@functools.cache
def helpdesk_context() -> HelpdeskContext:
    """The worker process's context for helpdesk jobs, built once."""
    ctx = worker_context()
    return HelpdeskContext(
        session_factory=ctx.session_factory,
        adapters=worker_adapters(),
        settings=ctx.settings,
        box=secret_box(ctx.settings),
        desks=gorgias_desks(ctx.settings, connect_redis(ctx.settings)),
        drafter=drafter_for(ctx.settings),
    )


def work_gorgias_call(shop_id: str, call_key: str) -> str:
    helpdesk = helpdesk_context()
    outcome, actions = work_call(helpdesk, uuid.UUID(shop_id), call_key)
    enqueue_executions_from_job(helpdesk.settings, actions)
    return outcome


def work_call(
    ctx: HelpdeskContext, shop_id: uuid.UUID, call_key: str
) -> tuple[str, list[uuid.UUID]]:
    """Everything one kept call asks for; returns what happened and the actions to queue."""
    with ctx.session_factory() as session, session.begin():
        event = kept_event(session, shop_id, GORGIAS, call_key)
        if event is None:
            return "no such call", []
        ticket_id = int(event.payload["ticket_id"])
        # The customer message that set this call off, when one did.
        own_message = (
            event.payload.get("message_id") if event.payload["event"] in CALL_TRIGGERS else None
        )
        connection = gorgias_connection(session, shop_id)
        if connection is None:
            return "the shop's Gorgias connection is gone", []
        desk = ctx.desks(gorgias_account(connection, ctx.box))
        prepare_on_arrival = connection.prepare_on_arrival
    ticket = desk.ticket(ticket_id)
    with ctx.session_factory() as session, session.begin():
        conversation, received = sync_ticket(
            session, shop_id=shop_id, ticket=ticket, actor=HELPDESK, now=ctx.clock()
        )
        conversation_id = conversation.id
        claimed = [
            taken
            for command in commands_in(ticket)
            if (
                taken := take_command(
                    session,
                    shop_id=shop_id,
                    conversation_id=conversation_id,
                    command=command,
                    call_key=call_key,
                    now=ctx.clock(),
                )
            )
            is not None
        ]
        answering = (
            received[-1].id
            if received
            else _kept_unprepared(session, conversation_id, ticket, own_message)
        )
    asked_to_prepare = any(taken.command.command is Command.PREPARE_CASE for taken in claimed)
    if answering is not None and prepare_on_arrival and not asked_to_prepare:
        prepared = _prepare(ctx, shop_id, conversation_id)
        if prepared is not None:
            # Named by the newest message it answers: posted once, and looked for when
            # the call runs again. A message this run kept was prepared by no run before.
            desk.post_internal_note(
                ticket_id,
                body_text=prepared,
                our_id=_prepared_id(answering),
                already_tried=not received,
            )
    actions: list[uuid.UUID] = []
    for taken in claimed:
        command = taken.command
        if taken.done_note is not None:
            # Done by an earlier run, which may have posted its note before failing.
            note, action, already_tried = taken.done_note, taken.action_id, True
        else:
            note, action = _act(ctx, shop_id, conversation_id, command)
            already_tried = False
        desk.post_internal_note(
            ticket_id,
            body_text=note,
            our_id=f"caseward-note-{command.note_id}",
            already_tried=already_tried,
        )
        actions.extend([action] if action else [])
    delivered = deliver_replies(ctx, desk, shop_id, conversation_id, read=ticket)
    return (
        f"{len(received)} received, {len(claimed)} commands, {delivered} replies posted",
        actions,
    )


def deliver_helpdesk_replies(shop_id: str) -> str:
    """Post the shop's waiting messages to their tickets (queued by the sweeper)."""
    helpdesk = helpdesk_context()
    with helpdesk.session_factory() as session:
        connection = gorgias_connection(session, uuid.UUID(shop_id))
        if connection is None:
            return "the shop's Gorgias connection is gone"
        desk = helpdesk.desks(gorgias_account(connection, helpdesk.box))
    return f"{deliver_replies(helpdesk, desk, uuid.UUID(shop_id))} replies posted"


def deliver_replies(
    ctx: HelpdeskContext,
    desk: Desk,
    shop_id: uuid.UUID,
    conversation_id: uuid.UUID | None = None,
    read: TicketFacts | None = None,
) -> int:
    """Post the shop's waiting messages (of one conversation, when given) to their
    tickets, each ticket read once (``read``: one already read); returns how many this
    run posted.

    Each message is posted under its row lock, taken without waiting, and marked delivered
    in that transaction: a message another run is posting (the call's job and the sweep's
    delivery job at once) is left to it. The client's look-up of our id before posting
    settles a run that died after posting; it cannot settle two runs at once, each
    looking before the other posts (the budget's wait for Gorgias falls between)."""
    tickets = {read.id: read} if read is not None else {}
    with ctx.session_factory() as session:
        waiting = [
            (message.id, ticket_of(session, message))
            for message in pending(session, shop_id)
            if conversation_id is None or message.conversation_id == conversation_id
        ]
    posted = 0
    for message_id, ticket_id in waiting:
        with ctx.session_factory() as session, session.begin():
            message = session.scalars(_UNDELIVERED, {"id": message_id}).one_or_none()
            if message is None:
                continue  # posted meanwhile, or being posted by another run
            if ticket_id not in tickets:
                tickets[ticket_id] = desk.ticket(ticket_id)
            posted_id = desk.post_reply(
                tickets[ticket_id], body_text=message.body, our_id=our_id(message)
            )
            mark_delivered(
                session, message=message, posted_id=posted_id, actor=HELPDESK, now=ctx.clock()
            )
            posted += 1
    return posted


_UNDELIVERED = (
    select(Message)
    .where(Message.id == bindparam("id"), Message.delivered_at.is_(None))
    .with_for_update(skip_locked=True)
)


def _act(
    ctx: HelpdeskContext, shop_id: uuid.UUID, conversation_id: uuid.UUID, command: AgentCommand
) -> tuple[str, uuid.UUID | None]:
    """Do ``command``; returns the agents' note and the action it queued, both kept with
    the command, done in the transaction of its effect."""
    if command.command is Command.PREPARE_CASE:
        prepared = _prepare(ctx, shop_id, conversation_id, done=command)
        if prepared is not None:
            return prepared, None
    with ctx.session_factory() as session, session.begin():
        shop, case = _shop_and_case(session, shop_id, conversation_id)
        action_id = None
        if case is None or command.command is Command.PREPARE_CASE:
            note = _NO_CASE
        elif command.command is Command.SEND_STATUS:
            note = status_for_customer(
                session, case=case, actor_name=command.agent_email or "agent", now=ctx.clock()
            )
        else:
            result, note = approve_as_agent(
                session,
                shop=shop,
                case=case,
                agent_email=command.agent_email,
                settings=ctx.settings,
                now=ctx.clock(),
            )
            action_id = result.action.id if result and result.action else None
        command_done(
            session,
            shop_id=shop_id,
            command=command,
            note=note,
            action_id=action_id,
            now=ctx.clock(),
        )
        return note, action_id


_NO_CASE = "No case is linked to this ticket yet: the customer has not written."


def _prepared_id(message_id: uuid.UUID) -> str:
    """Our id of the note that prepares the case of the customer's message ``message_id``."""
    return f"caseward-prepared-{message_id}"


def _kept_unprepared(
    session: Session, conversation_id: uuid.UUID, ticket: TicketFacts, own_message: int | None
) -> uuid.UUID | None:
    """The call's own customer message when an earlier run of the call kept it but failed
    before its case was prepared (the drafter or Gorgias failing): still the ticket's newest
    from the customer, kept, and with no note of ours preparing it on the ticket."""
    from_them = [message for message in ticket.messages if from_customer(message)]
    if own_message is None or not from_them or from_them[-1].id != own_message:
        return None
    kept = received_from_channel(session, conversation_id, str(own_message))
    posted = {message.external_id for message in ticket.messages}
    return kept if kept is not None and _prepared_id(kept) not in posted else None


def _prepare(
    ctx: HelpdeskContext,
    shop_id: uuid.UUID,
    conversation_id: uuid.UUID,
    done: AgentCommand | None = None,
) -> str | None:
    """The case drafted (nothing said to the customer), as the agents' internal note; None
    when the ticket has no case yet. ``done``: the "prepare case" command it does, marked
    done with the draft."""
    with ctx.session_factory() as session:
        shop, case = _shop_and_case(session, shop_id, conversation_id)
        conversation = session.get(Conversation, conversation_id)
        if case is None or conversation is None:
            return None
        brief, _ = brief_for(session, shop=shop, case=case, conversation=conversation)
        case_id = case.id
    run = ctx.drafter.run(brief)
    with ctx.session_factory() as session, session.begin():
        case = session.scalars(select(Case).where(Case.id == case_id).with_for_update()).one()
        shop, _ = _shop_and_case(session, shop_id, conversation_id)
        conversation = session.get(Conversation, conversation_id)
        assert conversation is not None
        at = CaseAtHand(session, shop, case, conversation, ctx.adapters, ctx.settings, ctx.clock())
        drafted = apply_fresh(at, run, reply_to_customer=False)
        note = draft_note(
            drafted,
            approve_url=admin_case_url(ctx.settings.shopify_admin_origin, shop.domain, case.id),
            in_hand=None if drafted.proposal else proposal_in_hand(session, case),
        )
        if done is not None:
            command_done(
                session, shop_id=shop_id, command=done, note=note, action_id=None, now=ctx.clock()
            )
        return note


def _shop_and_case(
    session: Session, shop_id: uuid.UUID, conversation_id: uuid.UUID
) -> tuple[Shop, Case | None]:
    shop = session.get(Shop, shop_id)
    conversation = session.get(Conversation, conversation_id)
    assert shop is not None and conversation is not None
    case = session.get(Case, conversation.case_id) if conversation.case_id else None
    return shop, case


# A call's work fails on a blip of Gorgias (a read answered 500 or timed out) more often
# than for good: run again soon, since a customer waits, then less often, so that an
# outage of Gorgias' API of up to an hour still ends with the customer's message prepared,
# not left until the ticket moves again. Each run is safe to repeat: what the first kept
# or claimed is not done twice.
CALL_RETRY = Retry(max=5, interval=[5, 30, 120, 900, 3600])
HELPDESK_CALL = KeptEventJob(
    "app.helpdesk.jobs.work_gorgias_call", "gorgias", FAILURE_TTL, retry=CALL_RETRY
)


def enqueue_helpdesk_delivery(queue: Queue, shop_id: uuid.UUID) -> bool:
    """Post the shop's waiting replies to their helpdesk tickets (background queue)."""
    return enqueue_unique(
        queue, "app.helpdesk.jobs.deliver_helpdesk_replies", (str(shop_id),), f"deliver-{shop_id}"
    )


def sweep_replies_owed(ctx: WorkerContext, queues: Queues) -> SweepReport:
    with ctx.session_factory() as session:
        replying = shops_with_pending(session)
    return {
        "delivering": [
            str(shop_id)
            for shop_id in replying
            if enqueue_helpdesk_delivery(queues.background, shop_id)
        ]
    }


SWEEP = Sweep("helpdesk replies", sweep_replies_owed)
