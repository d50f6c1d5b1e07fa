"""A Gorgias ticket as a conversation, and the agents' commands in it.

The sequence of one kept integration call (run by :mod:`app.helpdesk.jobs`):

1. the ticket is read from Gorgias' API (its own word, not the call's copy);
2. :func:`sync_ticket`, in one transaction: the ticket's conversation (found by the
   ticket id, started on first sight), the sender's email setting the identity
   (:func:`app.conversations.identity.establish_helpdesk_sender`: medium when it is one
   customer's email), and every public customer message not yet received, each once by
   its Gorgias id;
3. the agents' commands, each taken once by the id of the internal note carrying it
   (:func:`commands_in`, :func:`take_command`): a Gorgias macro adds an internal note
   "caseward: prepare case", "caseward: send status" or "caseward: approve", and the
   note's sender is the agent; each is done once, in the transaction of its effect, with
   its note to the agents (:func:`command_done`), so a run of the call that failed before
   the effect or before the note was posted is finished by the next
   (:class:`app.conversations.models.HelpdeskCommand`);
4. what Caseward says to the customer is kept as a conversation message and posted to
   the ticket by :mod:`app.helpdesk.delivery`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.orm import Session

from app.actors import Actor
from app.conversations.identity import establish_helpdesk_sender
from app.conversations.models import Author, Channel, Conversation, HelpdeskCommand, Message
from app.conversations.service import find_conversation, receive_message, start_conversation
from app.db import insert_one_unless_present
from app.helpdesk.sidebar import ticket_ref


class Command(StrEnum):
    PREPARE_CASE = "prepare case"
    SEND_STATUS = "send status"
    APPROVE = "approve"


_COMMAND = re.compile(r"^\s*caseward\s*:\s*(prepare case|send status|approve)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TicketMessage:
    """One message of a ticket, as Caseward needs it from Gorgias' answer."""

    id: int
    body_text: str
    from_agent: bool
    public: bool
    sender_email: str | None
    external_id: str | None


@dataclass(frozen=True)
class TicketFacts:
    id: int
    subject: str
    customer_email: str | None
    channel: str  # where a reply goes: "email", "chat", ...
    messages: tuple[TicketMessage, ...]


@dataclass(frozen=True)
class AgentCommand:
    command: Command
    note_id: int
    agent_email: str | None


def sync_ticket(
    session: Session, *, shop_id: uuid.UUID, ticket: TicketFacts, actor: Actor, now: datetime
) -> tuple[Conversation, list[Message]]:
    """Bring the ticket's conversation up to date; returns it and the customer messages
    received now (none when Gorgias told us of them before)."""
    conversation = find_conversation(
        session, shop_id=shop_id, channel=Channel.HELPDESK, channel_ref=ticket_ref(ticket.id)
    ) or start_conversation(
        session,
        shop_id=shop_id,
        channel=Channel.HELPDESK,
        channel_ref=ticket_ref(ticket.id),
        actor=actor,
        now=now,
    )
    if ticket.customer_email:
        establish_helpdesk_sender(
            session,
            conversation=conversation,
            sender_email=ticket.customer_email,
            actor=actor,
            now=now,
        )
    received = []
    for message in filter(from_customer, ticket.messages):
        kept = receive_message(
            session,
            conversation=conversation,
            body=message.body_text[:2000],
            actor=actor,
            now=now,
            author=Author.CUSTOMER,
            channel_message_id=str(message.id),
            subject=ticket.subject or None,
        )
        if kept is not None:
            received.append(kept[0])
    return conversation, received


def from_customer(message: TicketMessage) -> bool:
    """Whether ``message`` is one Caseward keeps as the customer's: public, not an agent's,
    and not blank."""
    return not message.from_agent and message.public and bool(message.body_text.strip())


def commands_in(ticket: TicketFacts) -> list[AgentCommand]:
    """The agents' commands in the ticket's internal notes, oldest first."""
    return [
        AgentCommand(Command(found.group(1).lower()), message.id, message.sender_email)
        for message in ticket.messages
        if message.from_agent and not message.public
        for found in [_COMMAND.match(message.body_text)]
        if found is not None
    ]


@dataclass(frozen=True)
class TakenCommand:
    """A command this run of its call works on: to act on, or done by an earlier run of
    the call, with its note (``done_note``, which the ticket may not show yet) and the
    action it queued."""

    command: AgentCommand
    done_note: str | None = None
    action_id: uuid.UUID | None = None


def take_command(
    session: Session,
    *,
    shop_id: uuid.UUID,
    conversation_id: uuid.UUID,
    command: AgentCommand,
    call_key: str,
    now: datetime,
) -> TakenCommand | None:
    """Claim ``command`` for the run of the call ``call_key``; None when another call
    claimed it."""
    claimed = insert_one_unless_present(
        session,
        HelpdeskCommand,
        ("shop_id", "note_id"),
        {
            "shop_id": shop_id,
            "note_id": command.note_id,
            "conversation_id": conversation_id,
            "command": command.command.value,
            "agent_email": command.agent_email,
            "call_key": call_key,
            "claimed_at": now,
        },
    )
    if claimed:
        return TakenCommand(command)
    kept = session.get(HelpdeskCommand, (shop_id, command.note_id))
    if kept is None or kept.call_key != call_key:
        return None
    return TakenCommand(command, kept.note, kept.action_id)


def command_done(
    session: Session,
    *,
    shop_id: uuid.UUID,
    command: AgentCommand,
    note: str,
    action_id: uuid.UUID | None,
    now: datetime,
) -> None:
    """Mark ``command`` done in the transaction of its effect, keeping the agents' note and
    the action it queued. Done already, it raises, and the effect is rolled back with it."""
    done = cast(
        CursorResult[Any],
        session.execute(
            update(HelpdeskCommand)
            .where(
                HelpdeskCommand.shop_id == shop_id,
                HelpdeskCommand.note_id == command.note_id,
                HelpdeskCommand.done_at.is_(None),
            )
            .values(done_at=now, note=note, action_id=action_id)
        ),
    )
    if done.rowcount != 1:
        raise RuntimeError(f"helpdesk command {command.note_id} was done already")
