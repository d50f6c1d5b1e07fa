"""How a shopper's identity is established: one-time codes to the order's email (single
use, expiring, limited guesses and sends, the same answer whether or not the order
matched), a logged-in storefront customer, a helpdesk sender's email."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Actor, ActorKind, Surface, staff
from app.audit import AuditEvent
from app.cases.models import Customer, Order
from app.clock import utcnow
from app.conversations.identity import (
    CODE_LIFETIME,
    CODES_PER_WINDOW,
    MAX_ATTEMPTS,
    CodeCheck,
    CodeRequest,
    CodeResult,
    check_email_code,
    establish_helpdesk_sender,
    establish_logged_in,
    request_email_code,
)
from app.conversations.models import Author, Channel, Conversation, Participant
from app.conversations.service import add_reply, receive_message, start_conversation
from app.errors import TooManyRequests
from app.shops.models import Shop
from app.web.errors import status_of
from integrations.mail import Outbox

SECRET = b"test-code-secret"
SHOPPER = Actor(ActorKind.CUSTOMER, "storefront-visitor", Surface.STOREFRONT)


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain="linen.myshopify.com", name="Linen & Loom")
    session.add(shop)
    session.flush()
    maya = Customer(shop_id=shop.id, email="Maya@Example.com", name="Maya Lin")
    session.add(maya)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=maya.id,
            name="#1001",
            currency="usd",
            total=9600,
            payment_provider="stripe",
            payment_id="pi_1",
            lines=[],
        )
    )
    session.flush()
    return shop


@pytest.fixture
def conversation(session: Session, shop: Shop) -> Conversation:
    return start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.STOREFRONT,
        channel_ref="visitor-1",
        actor=SHOPPER,
        now=utcnow(),
    )


def _request(
    session: Session, conversation: Conversation, email: str, now: datetime | None = None
) -> CodeRequest:
    return request_email_code(
        session,
        conversation=conversation,
        order_name="1001",
        email=email,
        shop_name="Linen & Loom",
        locale=conversation.locale,
        secret=SECRET,
        actor=SHOPPER,
        now=now or utcnow(),
    )


def _check(
    session: Session, conversation: Conversation, code: str, now: datetime | None = None
) -> CodeResult:
    return check_email_code(
        session,
        conversation=conversation,
        code=code,
        secret=SECRET,
        actor=SHOPPER,
        now=now or utcnow(),
    )


def _sent_code(tmp_path: Path, requested: CodeRequest) -> str:
    outbox = Outbox(tmp_path / "outbox", "shop@example.com")
    requested.send(outbox)
    body = outbox.messages()[-1].get_content()
    return next(word.rstrip(".") for word in body.split() if word.rstrip(".").isdigit())


def test_a_code_to_the_orders_email_verifies_the_shopper_once(
    session: Session, conversation: Conversation, tmp_path: Path
) -> None:
    requested = _request(session, conversation, " maya@example.com ")
    assert requested.hint == "m•••@example.com"
    code = _sent_code(tmp_path, requested)

    accepted = _check(session, conversation, code)

    assert accepted.check is CodeCheck.ACCEPTED
    assert (conversation.identity_level, conversation.identity_method) == ("strong", "email_code")
    assert accepted.customer is not None and accepted.customer.email == "Maya@Example.com"
    assert _check(session, conversation, code).check is CodeCheck.EXPIRED  # spent
    events = session.scalars(
        select(AuditEvent.kind).where(AuditEvent.shop_id == conversation.shop_id)
    ).all()
    assert "conversation.identity_established" in events


def test_an_email_that_is_not_the_orders_gets_the_same_answer_and_no_mail(
    session: Session, conversation: Conversation, tmp_path: Path
) -> None:
    requested = _request(session, conversation, "mallory@example.com")

    assert requested.hint == "m•••@example.com"
    assert requested.mail is None
    # Whatever is guessed, that request can never verify anyone.
    for guess in ("000000", "123456", "999999"):
        assert _check(session, conversation, guess).check is CodeCheck.WRONG
    assert conversation.identity_level == "none"


def test_a_code_expires(session: Session, conversation: Conversation, tmp_path: Path) -> None:
    sent_at = utcnow()
    code = _sent_code(tmp_path, _request(session, conversation, "maya@example.com", sent_at))

    late = _check(session, conversation, code, sent_at + CODE_LIFETIME + timedelta(seconds=1))

    assert late.check is CodeCheck.EXPIRED
    assert conversation.identity_level == "none"


def test_guesses_are_limited_then_even_the_right_code_fails(
    session: Session, conversation: Conversation, tmp_path: Path
) -> None:
    code = _sent_code(tmp_path, _request(session, conversation, "maya@example.com"))
    wrong = str((int(code[0]) + 1) % 10) + code[1:]

    results = [_check(session, conversation, wrong).check for _ in range(MAX_ATTEMPTS)]

    assert results == [CodeCheck.WRONG] * MAX_ATTEMPTS
    assert _check(session, conversation, code).check is CodeCheck.EXPIRED


def test_codes_per_conversation_are_limited(session: Session, conversation: Conversation) -> None:
    now = utcnow()
    for _ in range(CODES_PER_WINDOW):
        _request(session, conversation, "maya@example.com", now)

    with pytest.raises(TooManyRequests) as refused:
        _request(session, conversation, "maya@example.com", now)

    assert int(refused.value.headers["Retry-After"]) > 0
    assert status_of(refused.value) == 429


def test_codes_to_one_orders_email_are_limited_across_conversations(
    session: Session, shop: Shop
) -> None:
    now = utcnow()
    for number in range(CODES_PER_WINDOW):
        other = start_conversation(
            session,
            shop_id=shop.id,
            channel=Channel.STOREFRONT,
            channel_ref=f"visitor-{number + 10}",
            actor=SHOPPER,
            now=now,
        )
        _request(session, other, "maya@example.com", now)
    fresh = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.STOREFRONT,
        channel_ref="visitor-99",
        actor=SHOPPER,
        now=now,
    )

    with pytest.raises(TooManyRequests):
        _request(session, fresh, "maya@example.com", now)


def test_a_logged_in_customer_is_strong_and_the_open_case_follows(
    session: Session, conversation: Conversation
) -> None:
    received = receive_message(
        session, conversation=conversation, body="Hello", actor=SHOPPER, now=utcnow()
    )
    assert received is not None
    _, case = received
    assert case.identity_level == "none"

    customer = establish_logged_in(
        session,
        conversation=conversation,
        shopify_customer_id="7391",
        actor=SHOPPER,
        now=utcnow(),
    )

    assert customer.shopify_customer_id == "gid://shopify/Customer/7391"
    assert (conversation.identity_level, conversation.identity_method) == ("strong", "logged_in")
    assert (case.identity_level, case.customer_id) == ("strong", customer.id)


def test_a_helpdesk_sender_matching_one_customer_is_medium(session: Session, shop: Shop) -> None:
    ticket = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.HELPDESK,
        channel_ref="ticket-1",
        actor=SHOPPER,
        now=utcnow(),
    )

    stranger = establish_helpdesk_sender(
        session, conversation=ticket, sender_email="nobody@example.com", actor=SHOPPER, now=utcnow()
    )
    assert stranger is None and ticket.identity_level == "none"

    maya = establish_helpdesk_sender(
        session, conversation=ticket, sender_email="MAYA@example.com", actor=SHOPPER, now=utcnow()
    )
    assert maya is not None
    assert (ticket.identity_level, ticket.identity_method) == ("medium", "helpdesk_email")


def test_a_redelivered_channel_message_is_kept_once(
    session: Session, conversation: Conversation
) -> None:
    first = receive_message(
        session,
        conversation=conversation,
        body="Hi",
        actor=SHOPPER,
        now=utcnow(),
        channel_message_id="m-1",
    )
    again = receive_message(
        session,
        conversation=conversation,
        body="Hi",
        actor=SHOPPER,
        now=utcnow(),
        channel_message_id="m-1",
    )

    assert first is not None and again is None


def test_everyone_who_writes_takes_part_once(session: Session, conversation: Conversation) -> None:
    for text in ("Hi", "Anyone there?"):
        receive_message(session, conversation=conversation, body=text, actor=SHOPPER, now=utcnow())
    add_reply(
        session,
        conversation=conversation,
        body="Yes, how can we help?",
        sentence=None,
        actor=staff("sam.approver", Surface.SHOPIFY_ADMIN),
        now=utcnow(),
        author=Author.STAFF,
    )
    session.flush()

    parties = session.execute(
        select(Participant.kind, Participant.ref).where(
            Participant.conversation_id == conversation.id
        )
    ).all()
    assert sorted(parties) == [
        ("customer", "customer:storefront-visitor"),
        ("staff", "sam.approver"),
    ]
