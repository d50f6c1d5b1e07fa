"""A message to a helpdesk customer is posted to their ticket once, even by two runs at
once: the call's job and the sweep's delivery job both find it waiting, and the one that
comes second, while the first is posting, leaves it to the first. Against the served
Gorgias sandbox."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from flask import Flask
from helpdesk_support import shop_with_a_ticket
from sqlalchemy.orm import Session

from app.conversations.models import Author, Message
from app.crypto import secret_box
from app.db import Database
from app.drafting.drafters import RulesDrafter
from app.helpdesk.connection import GorgiasAccount
from app.helpdesk.gorgias_desk import GorgiasDesk, gorgias_desks
from app.helpdesk.jobs import HelpdeskContext, deliver_replies
from app.helpdesk.tickets import TicketFacts
from app.jobs.connection import connect_redis
from app.settings import Settings
from integrations.gorgias.sandbox import DemoAccount, GorgiasSandbox, seed_demo_account

WORDS = "Your refund of $48.00 went through on Stripe."


@pytest.fixture(scope="module")
def gorgias() -> Iterator[GorgiasSandbox]:
    box = GorgiasSandbox()
    box.start()
    yield box
    box.stop()


@pytest.fixture
def demo(gorgias: GorgiasSandbox) -> DemoAccount:
    gorgias.reset()
    return seed_demo_account(gorgias)


class PostingHeldOpen:
    """The real desk, whose first post waits (up to a few seconds) for the other run to
    end: two runs at once, in the order that posted twice before."""

    def __init__(self, desk: GorgiasDesk) -> None:
        self._desk = desk
        self.posting = threading.Event()
        self.other_run_ended = threading.Event()

    def ticket(self, ticket_id: int) -> TicketFacts:
        return self._desk.ticket(ticket_id)

    def post_reply(self, ticket: TicketFacts, *, body_text: str, our_id: str) -> int:
        if not self.posting.is_set():
            self.posting.set()
            # SQLite has no row lock to skip: there the other run waits for this one's
            # transaction instead, and this wait runs out.
            self.other_run_ended.wait(timeout=3)
        return self._desk.post_reply(ticket, body_text=body_text, our_id=our_id)

    def post_internal_note(
        self, ticket_id: int, *, body_text: str, our_id: str, already_tried: bool
    ) -> int:
        return self._desk.post_internal_note(
            ticket_id, body_text=body_text, our_id=our_id, already_tried=already_tried
        )


def test_two_runs_at_once_post_a_waiting_reply_once(
    app: Flask, session: Session, settings: Settings, gorgias: GorgiasSandbox, demo: DemoAccount
) -> None:
    shop_id, conversation_id = shop_with_a_ticket(session, demo.ticket_id)
    message = Message(
        shop_id=shop_id, conversation_id=conversation_id, author=Author.CASEWARD.value, body=WORDS
    )
    session.add(message)
    session.commit()
    # The desk the jobs use: the client on the account's budget in Redis.
    desks = gorgias_desks(replace(settings, gorgias_api_base=gorgias.url), connect_redis(settings))
    desk = PostingHeldOpen(desks(GorgiasAccount(demo.domain, demo.api_user, demo.api_key)))
    ctx = HelpdeskContext(
        session_factory=Database.state(app).session_factory,
        adapters=lambda *_args, **_kw: None,  # type: ignore[arg-type,return-value]
        settings=settings,
        box=secret_box(settings),
        desks=lambda _account: desk,
        drafter=RulesDrafter(),
    )
    first: list[int] = []

    def run_first() -> None:
        first.append(deliver_replies(ctx, desk, shop_id))

    posting_first = threading.Thread(target=run_first)
    posting_first.start()
    assert desk.posting.wait(timeout=10)
    second = deliver_replies(ctx, desk, shop_id)
    desk.other_run_ended.set()
    posting_first.join(timeout=30)

    assert (first, second) == ([1], 0)
    posted = [m for m in gorgias.ticket(demo.ticket_id)["messages"] if m["body_text"] == WORDS]
    assert len(posted) == 1
    assert posted[0]["external_id"] == f"caseward-message-{message.id}"
    session.expire_all()
    assert session.get(Message, message.id).delivered_at is not None  # type: ignore[union-attr]
