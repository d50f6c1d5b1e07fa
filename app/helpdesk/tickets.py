"""A Gorgias ticket as a conversation, and the agents' commands in it.

The sequence of one kept integration call (run by :mod:`app.helpdesk.jobs`):

1. the ticket is read from Gorgias' API (its own word, not the call's copy);
2. :func:`sync_ticket`, in one transaction: the ticket's conversation (found by the
   ticket id, started on first sight), the sender's email setting the identity
   (:func:`app.conversations.identity.establish_helpdesk_sender`: medium when it is one
   customer's email), and every public customer message not yet received, each once by
   its Gorgias id;
3. the agents' commands, each once by the id of the internal note carrying it
   (:func:`commands_in`): a Gorgias macro adds an internal note "caseward: prepare case",
   "caseward: send status" or "caseward: approve", and the note's sender is the agent;
4. what Caseward says to the customer is kept as a conversation message and posted to
   the ticket by :mod:`app.helpdesk.delivery`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.orm import Session

from app.actors import Actor
from app.conversations.identity import establish_helpdesk_sender
from app.conversations.models import Author, Channel, Conversation, Message
from app.conversations.service import find_conversation, receive_message, start_conversation
from app.execution.models import keep_provider_event
from app.helpdesk.connection import GORGIAS
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


def take_command(
    session: Session, *, shop_id: uuid.UUID, command: AgentCommand, now: datetime
) -> bool:
    """Claim ``command`` to act on it; False when it was acted on before."""
    return keep_provider_event(
        session,
        shop_id=shop_id,
        provider=GORGIAS,
        event_id=f"command:{command.note_id}",
        event_type=f"command:{command.command.value}",
        object_id=str(command.note_id),
        payload={"command": command.command.value, "agent": command.agent_email},
        created=now,
        received_at=now,
    )
