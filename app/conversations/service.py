"""Conversations: finding one for a channel, taking in messages, and the case they feed.

The sequence when a shopper writes (any channel):

1. :func:`find_conversation` / :func:`start_conversation` by the channel's own id (the
   storefront's is the SHA-256 of a token only the shopper's browser holds);
2. :func:`receive_message` stores the message once per channel message id, opens a case
   for the conversation when it has no open one (:func:`current_case`), adds the text to
   the case's request and audits the arrival (never the words);
3. the caller commits, then queues the drafting job for the case
   (:func:`app.drafting.jobs.enqueue_drafting`).

Replies Caseward composes and status updates are added with :func:`add_reply`; the
shopper's channel shows or delivers them.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, CaseStatus
from app.conversations.models import Author, Channel, Conversation, Message, Participant
from app.conversations.replies import ActionBrief, check_reply, refused_reply
from app.errors import InvalidInput
from app.money import Money
from app.shops.models import StaffRole
from app.shops.service import require_role
from app.validation import LONG_TEXT, text
from app.words import Sentence, said

# The longest message a shopper may send; the case's request keeps this many characters
# of the conversation, newest last.
MAX_MESSAGE = 2000


def storefront_ref(token: str) -> str:
    """The storefront conversation's stored id: the token's SHA-256, never the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def find_conversation(
    session: Session, *, shop_id: uuid.UUID, channel: Channel, channel_ref: str
) -> Conversation | None:
    return session.scalars(
        select(Conversation).where(
            Conversation.shop_id == shop_id,
            Conversation.channel == channel.value,
            Conversation.channel_ref == channel_ref,
        )
    ).one_or_none()


def start_conversation(
    session: Session,
    *,
    shop_id: uuid.UUID,
    channel: Channel,
    channel_ref: str,
    actor: Actor,
    now: datetime,
    locale: str | None = None,
) -> Conversation:
    conversation = Conversation(
        id=uuid.uuid4(),
        shop_id=shop_id,
        channel=channel.value,
        channel_ref=channel_ref,
        locale=locale,
        created_at=now,
        updated_at=now,
    )
    session.add(conversation)
    session.flush()
    join(session, conversation, actor, now)
    audit.record(
        session,
        shop_id=shop_id,
        kind="conversation.started",
        actor=actor,
        data={"conversation_id": str(conversation.id), "channel": channel.value},
        now=now,
    )
    return conversation


def start_storefront_conversation(
    session: Session, *, shop_id: uuid.UUID, actor: Actor, now: datetime, locale: str | None
) -> tuple[Conversation, str]:
    """A new storefront conversation and the token the shopper's browser keeps for it."""
    token = secrets.token_urlsafe(32)
    conversation = start_conversation(
        session,
        shop_id=shop_id,
        channel=Channel.STOREFRONT,
        channel_ref=storefront_ref(token),
        actor=actor,
        now=now,
        locale=locale,
    )
    return conversation, token


def join(session: Session, conversation: Conversation, actor: Actor, now: datetime) -> None:
    """``actor`` takes part in the conversation from now on (once per party)."""
    known = session.scalars(
        select(Participant.id).where(
            Participant.conversation_id == conversation.id,
            Participant.kind == actor.kind.value,
            Participant.ref == actor.ref,
        )
    ).first()
    if known is None:
        session.add(
            Participant(
                shop_id=conversation.shop_id,
                conversation_id=conversation.id,
                kind=actor.kind.value,
                ref=actor.ref,
                joined_at=now,
            )
        )


def current_case(session: Session, conversation: Conversation) -> Case | None:
    """The case the conversation feeds, while it is not resolved."""
    if conversation.case_id is None:
        return None
    case = session.get(Case, conversation.case_id)
    return case if case is not None and case.status != CaseStatus.RESOLVED else None


def receive_message(
    session: Session,
    *,
    conversation: Conversation,
    body: str,
    actor: Actor,
    now: datetime,
    author: Author = Author.CUSTOMER,
    channel_message_id: str | None = None,
    subject: str | None = None,
    owes_draft: bool = False,
) -> tuple[Message, Case] | None:
    """Store a message from the shopper and feed it to the conversation's open case
    (opened now if there is none). None when the channel delivered this message before.
    ``owes_draft``: the chat's drafting job is to answer it (:mod:`app.drafting.jobs`)."""
    body = str(text(body, "text", max_length=MAX_MESSAGE, multiline=True, required=True))
    if (
        channel_message_id is not None
        and received_from_channel(session, conversation.id, channel_message_id) is not None
    ):
        return None
    message = Message(
        id=uuid.uuid4(),
        shop_id=conversation.shop_id,
        conversation_id=conversation.id,
        author=author.value,
        author_ref=actor.ref,
        body=body,
        channel_message_id=channel_message_id,
        draft_owed_since=now if owes_draft else None,
        created_at=_after_the_last(session, conversation, now),
    )
    try:
        with session.begin_nested():
            session.add(message)
    except IntegrityError:
        # The same channel message delivered twice at once: the other delivery has it.
        return None
    case = current_case(session, conversation) or _open_case(
        session, conversation=conversation, subject=subject or body, actor=actor, now=now
    )
    join(session, conversation, actor, now)
    case.request_text = _appended(case.request_text, body)
    case.updated_at = now
    conversation.updated_at = now
    audit.record(
        session,
        shop_id=conversation.shop_id,
        kind="conversation.message_received",
        actor=actor,
        case_id=case.id,
        # The message's id, never its words: the chain holds no customer text.
        data={"conversation_id": str(conversation.id), "message_id": str(message.id)},
        now=now,
    )
    return message, case


def add_reply(
    session: Session,
    *,
    conversation: Conversation,
    body: str,
    sentence: Sentence | None,
    actor: Actor,
    now: datetime,
    author: Author = Author.CASEWARD,
    about_action_id: uuid.UUID | None = None,
    about_status: str | None = None,
) -> Message | None:
    """Add a message to the shopper. With ``about_action_id`` and ``about_status`` it is
    that action's status update, added once: None when it was added before."""
    if (
        about_action_id is not None
        and session.scalars(
            select(Message.id).where(
                Message.about_action_id == about_action_id, Message.about_status == about_status
            )
        ).first()
    ):
        return None
    message = Message(
        id=uuid.uuid4(),
        shop_id=conversation.shop_id,
        conversation_id=conversation.id,
        author=author.value,
        author_ref=actor.ref,
        body=body,
        sentence=sentence.to_dict() if sentence is not None else None,
        about_action_id=about_action_id,
        about_status=about_status,
        created_at=_after_the_last(session, conversation, now),
        # The chat shows a message as soon as it is kept; a helpdesk ticket gets it posted.
        delivered_at=None if conversation.channel == Channel.HELPDESK else now,
    )
    session.add(message)
    join(session, conversation, actor, now)
    conversation.updated_at = now
    session.flush()
    audit.record(
        session,
        shop_id=conversation.shop_id,
        kind="conversation.reply_added",
        actor=actor,
        case_id=conversation.case_id,
        action_id=about_action_id,
        data={
            "conversation_id": str(conversation.id),
            "message_id": str(message.id),
            "author": author.value,
            **({"status": about_status} if about_status else {}),
        },
        now=now,
    )
    return message


def staff_reply(
    session: Session,
    *,
    case: Case,
    body: str,
    actor: Actor,
    now: datetime,
    facts: Sequence[ActionBrief],
    proposed: Sequence[Money],
) -> Message:
    """A reply a member of staff typed, to the case's conversation. It passes the same
    check as a drafted one (``facts``: the case's actions as reported; ``proposed``: the
    amounts under review): a claim the provider has not reported, or another amount, is
    refused with the reason, and nothing is sent."""
    require_role(session, case.shop_id, actor, StaffRole.CAN_PROPOSE, said("reply to customers"))
    body = str(text(body, "text", max_length=MAX_MESSAGE, multiline=True, required=True))
    conversation = conversation_of(session, case)
    if conversation is None:
        raise InvalidInput(said("this case has no conversation to reply to"), field="case")
    problems = check_reply(body, actions=facts, proposed=proposed)
    if problems:
        raise InvalidInput(refused_reply(problems), field="text")
    message = add_reply(
        session,
        conversation=conversation,
        body=body,
        sentence=None,
        actor=actor,
        now=now,
        author=Author.STAFF,
    )
    assert message is not None
    return message


def conversation_of(session: Session, case: Case) -> Conversation | None:
    """The conversation ``case`` came from, if it came from one."""
    if case.conversation_id is None:
        return None
    conversation = session.get(Conversation, case.conversation_id)
    return (
        conversation if conversation is not None and conversation.shop_id == case.shop_id else None
    )


def messages_of(session: Session, conversation: Conversation, limit: int = 100) -> list[Message]:
    """The conversation's newest ``limit`` messages, oldest first."""
    newest = list(
        session.scalars(
            select(Message)
            .where(Message.conversation_id == conversation.id)
            .order_by(Message.created_at.desc(), Message.id)
            .limit(limit)
        )
    )
    return newest[::-1]


def _after_the_last(session: Session, conversation: Conversation, now: datetime) -> datetime:
    """When a new message of ``conversation`` is kept: ``now``, or just after its newest
    message when that one is no older (a shopper's message and the reply to it kept in one
    transaction share its time), so the conversation always reads in the order it was
    written, reply below message."""
    newest = session.scalar(
        select(func.max(Message.created_at)).where(Message.conversation_id == conversation.id)
    )
    return now if newest is None or newest < now else newest + timedelta(microseconds=1)


def received_from_channel(
    session: Session, conversation_id: uuid.UUID, channel_message_id: str
) -> uuid.UUID | None:
    """Our id of the message the channel delivered as ``channel_message_id``, if it has."""
    return session.scalars(
        select(Message.id).where(
            Message.conversation_id == conversation_id,
            Message.channel_message_id == channel_message_id,
        )
    ).first()


def _open_case(
    session: Session, *, conversation: Conversation, subject: str, actor: Actor, now: datetime
) -> Case:
    case = Case(
        id=uuid.uuid4(),
        shop_id=conversation.shop_id,
        customer_id=conversation.customer_id,
        subject=_subject(subject),
        request_text="",
        identity_level=conversation.identity_level,
        conversation_id=conversation.id,
        created_at=now,
        updated_at=now,
    )
    session.add(case)
    session.flush()
    conversation.case_id = case.id
    audit.record(
        session,
        shop_id=conversation.shop_id,
        kind="case.opened",
        actor=actor,
        case_id=case.id,
        data={
            "identity_level": conversation.identity_level,
            "conversation_id": str(conversation.id),
            "channel": conversation.channel,
        },
        now=now,
    )
    return case


def _subject(first_message: str) -> str:
    line = first_message.strip().splitlines()[0] if first_message.strip() else ""
    return line if len(line) <= 80 else line[:79] + "…"


def _appended(request_text: str, body: str) -> str:
    joined = f"{request_text}\n\n{body}" if request_text else body
    return joined[-LONG_TEXT:] if len(joined) > LONG_TEXT else joined
