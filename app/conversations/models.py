"""Conversations on every channel, their messages, and one-time codes that verify a shopper.

A conversation is one thread with one shopper on one channel (the storefront chat, a
helpdesk ticket, the admin), known by the channel's own id. It carries how sure we are
who the shopper is and how that was established, and the one case it currently feeds
(``case_id``): a new case is opened only once that one is resolved, so a conversation
links to at most one open case at a time.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class Channel(StrEnum):
    STOREFRONT = "storefront"  # the chat widget, through Shopify's app proxy
    HELPDESK = "helpdesk"  # a helpdesk ticket (Gorgias)
    ADMIN = "admin"  # opened by staff in the Shopify admin or the API


class IdentityMethod(StrEnum):
    """How a conversation's identity level was established."""

    LOGGED_IN = "logged_in"  # Shopify's signed app proxy named a logged-in customer
    EMAIL_CODE = "email_code"  # a one-time code sent to the order's email came back
    HELPDESK_EMAIL = "helpdesk_email"  # the helpdesk sender's email is the order's email
    STAFF = "staff"  # a member of staff opened the case for a customer they chose


class Author(StrEnum):
    CUSTOMER = "customer"
    STAFF = "staff"
    CASEWARD = "caseward"  # a reply Caseward composed (drafted and validated, or a status update)
    AGENT = "agent"


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (UniqueConstraint("shop_id", "channel", "channel_ref"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    channel: Mapped[str] = mapped_column(String(16))
    # The channel's own id: a helpdesk ticket id, or for the storefront the SHA-256 of
    # the token only the shopper's browser holds.
    channel_ref: Mapped[str] = mapped_column(String(255))
    customer_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("customers.id"))
    identity_level: Mapped[str] = mapped_column(String(16), default="none")
    identity_method: Mapped[str | None] = mapped_column(String(16))
    identity_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The storefront customer id Shopify vouched for; a conversation verified by login is
    # shown only to requests from that same login.
    storefront_customer_ref: Mapped[str | None] = mapped_column(String(64))
    case_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("cases.id"))
    # The order the shopper picked, when their orders leave it open; None while unasked.
    order_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("orders.id"))
    locale: Mapped[str | None] = mapped_column(String(16))
    wants_person: Mapped[bool] = mapped_column(default=False)
    # A drafted step waiting for the customer's choice (refund or store credit), in the
    # drafter's tool shape (app/drafting/result.py::step_dict); None when nothing is offered.
    pending_step: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Participant(Base):
    """Someone in a conversation: the shopper, a member of staff, an agent."""

    __tablename__ = "conversation_participants"
    __table_args__ = (UniqueConstraint("conversation_id", "kind", "ref"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("conversations.id"))
    kind: Mapped[str] = mapped_column(String(16))
    # The participant in their kind's terms: an actor ref, or the channel's sender id.
    ref: Mapped[str] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(320))
    name: Mapped[str | None] = mapped_column(String(255))
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


_UNDELIVERED = "delivered_at IS NULL AND author IN ('caseward', 'staff')"
_DRAFT_OWED = "draft_owed_since IS NOT NULL"


class Message(Base):
    """One message. ``channel_message_id`` makes a channel's redelivery a no-op;
    ``about_action_id`` + ``about_status`` make each status update to the customer
    happen once."""

    __tablename__ = "conversation_messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "channel_message_id"),
        UniqueConstraint("about_action_id", "about_status"),
        Index("ix_conversation_messages_conversation", "conversation_id", "created_at"),
        # What the sweeper asks every few seconds: the few messages still to be posted.
        Index(
            "ix_conversation_messages_undelivered",
            "shop_id",
            postgresql_where=text(_UNDELIVERED),
            sqlite_where=text(_UNDELIVERED),
        ),
        # What the sweep asks every few seconds: the few chat messages still owed a draft.
        Index(
            "ix_conversation_messages_draft_owed",
            "draft_owed_since",
            postgresql_where=text(_DRAFT_OWED),
            sqlite_where=text(_DRAFT_OWED),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("conversations.id"))
    author: Mapped[str] = mapped_column(String(16))
    author_ref: Mapped[str | None] = mapped_column(String(255))
    body: Mapped[str] = mapped_column(Text)
    channel_message_id: Mapped[str | None] = mapped_column(String(255))
    about_action_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("actions.id"))
    about_status: Mapped[str | None] = mapped_column(String(32))
    # What the text says, as the sentence Caseward composed it (see app/words.py).
    sentence: Mapped[dict[str, object] | None] = mapped_column(JSON)
    # When a message to the customer reached them: at once in the chat, once posted for
    # a helpdesk ticket; None while it waits (and for the customer's own messages).
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Since when a shopper's chat message is owed a draft (it came in, or the shopper was
    # verified since); its drafting job clears it, whatever it decided. The database, not
    # the queue, says a draft is owed: a job lost between the commit and the enqueue is
    # queued again by the sweep (app.drafting.jobs.drafts_owed).
    draft_owed_since: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class VerificationCode(Base):
    """A one-time code sent to an order's email. Only an HMAC of the code is kept."""

    __tablename__ = "verification_codes"
    __table_args__ = (
        Index("ix_verification_codes_conversation", "conversation_id", "created_at"),
        # Codes asked for one order lately, counted before another is sent.
        Index("ix_verification_codes_order_id_created_at", "order_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("conversations.id"))
    # None when the order and email named matched nothing: the shopper is told the same
    # either way, and no code can ever verify against this row.
    order_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("orders.id"))
    code_digest: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class HelpdeskCommand(Base):
    """An agent's command in a helpdesk ticket (a macro's internal note, "caseward:
    approve"), taken once by the note's id and done once.

    The run of the kept call that first reads it claims it (``call_key``); it is done in the
    transaction of its effect (the approval, the status kept for the customer, the case
    drafted), with the note that tells the agents what came of it and the action it queued.
    A run of the same call that finds it claimed and not done (the run before failed
    between the claim and the effect) acts on it; one that finds it done posts its note
    again, which the helpdesk holds once (our id on it). Another call's run leaves it be.
    """

    __tablename__ = "helpdesk_commands"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    # The helpdesk's id of the internal note carrying the command.
    note_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # The ticket's conversation; None for commands taken before it was kept.
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("conversations.id"), index=True
    )
    command: Mapped[str] = mapped_column(String(32))
    agent_email: Mapped[str | None] = mapped_column(String(255))
    # The kept call whose run claimed it; empty for commands taken before calls were named.
    call_key: Mapped[str] = mapped_column(String(255))
    claimed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # What the agents were told of it; None until done, and for commands done before notes
    # were kept.
    note: Mapped[str | None] = mapped_column(Text)
    action_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("actions.id"))
