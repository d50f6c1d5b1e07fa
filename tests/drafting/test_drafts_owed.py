"""The sweep asks every few seconds which chat messages are still owed a draft: it reads
the few marked in the last hour by their index, not every message every shop was sent
(``migrations/versions/0025_chat_messages_owed_a_draft.py``). What it does with them, and
what a lost or failed drafting job comes to, is told from the shopper's side in
``tests/money_path/test_storefront_chat.py``."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from flask import Flask
from index_reads import analyzed, assert_read_by_index, reads_of_table, skip_unless_postgresql
from sent_statements import statements_sent
from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.actors import Surface, system_actor
from app.clock import utcnow
from app.conversations.models import Author, Channel, Message
from app.conversations.service import start_conversation
from app.db import Database
from app.drafting.jobs import DRAFT_OWED_FOR, drafts_owed
from app.shops.models import Shop

# Two shops' conversations: the shoppers' messages drafted long ago and the shop's replies.
ANSWERED = 3000


def test_the_sweep_reads_only_the_messages_owed_a_draft_lately(
    app: Flask, session: Session, database: str
) -> None:
    skip_unless_postgresql(database)
    now = utcnow()
    linen, pottery = (_conversation(session, name, now) for name in ("linen", "pottery"))
    answered = [
        _message(
            (linen, pottery)[number % 2],
            now - timedelta(minutes=number),
            Author.CUSTOMER if number % 3 else Author.CASEWARD,
        )
        for number in range(ANSWERED)
    ]
    owed = [
        _message(linen, now - timedelta(seconds=30), Author.CUSTOMER, owed=True),
        _message(pottery, now - timedelta(seconds=90), Author.CUSTOMER, owed=True),
    ]
    # Owed past the hour: its job failed and RQ has forgotten it; staff have the case.
    given_up = _message(linen, now - DRAFT_OWED_FOR * 2, Author.CUSTOMER, owed=True)
    session.execute(insert(Message), [*answered, *owed, given_up])
    analyzed(session)

    with statements_sent(Database.state(app).engine) as sent:
        found = drafts_owed(session, now)

    assert found == [owed[1]["id"], owed[0]["id"]]
    (read,) = reads_of_table(sent, "conversation_messages")
    assert_read_by_index(session, read, "conversation_messages", rows=len(owed))


def _conversation(session: Session, name: str, now: datetime) -> tuple[uuid.UUID, uuid.UUID]:
    shop = Shop(domain=f"{name}.myshopify.com", name=name)
    session.add(shop)
    session.flush()
    conversation = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.STOREFRONT,
        channel_ref=f"{name}-chat",
        actor=system_actor("test", Surface.STOREFRONT),
        now=now,
    )
    session.flush()
    return shop.id, conversation.id


def _message(
    conversation: tuple[uuid.UUID, uuid.UUID], at: datetime, author: Author, *, owed: bool = False
) -> dict[str, Any]:
    shop_id, conversation_id = conversation
    return {
        "id": uuid.uuid4(),
        "shop_id": shop_id,
        "conversation_id": conversation_id,
        "author": author.value,
        "body": "Where is my order?",
        "draft_owed_since": at if owed else None,
        "created_at": at,
    }
