"""Finding who a shopper is reads that shopper's rows, found by index, not every customer
(or code) the shop has: every Shopify order webhook and every signed-in chat finds the
customer by Shopify id, every Gorgias call finds the sender by email in any case, an
agent's case search finds the cases by the customer's email, and each code asked for an
order first counts the order's recent codes. With a few customers every lookup is fast;
without its index each one reads the whole shop, which a shop of 50,000 customers waits
on at every webhook, chat and ticket (``migrations/versions/0021_indexes_for_growing_shops.py``).

Each test seeds one shop with thousands of rows (and a few in a second shop), runs the
real code, and has PostgreSQL run the statement it sent again under ``EXPLAIN ANALYZE``
(:mod:`index_reads`) to say which rows it read."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from flask import Flask
from index_reads import analyzed, assert_read_by_index, reads_of_table, skip_unless_postgresql
from sent_statements import statements_sent
from sqlalchemy import Engine, insert
from sqlalchemy.orm import Session

from app.actors import Actor, ActorKind, Surface, system_actor
from app.agents.mcp_server import _find_case
from app.agents.models import AgentCredential
from app.cases.models import Case, CaseStatus, Customer, Order
from app.cases.store_orders import customers_of_order_change
from app.clock import utcnow
from app.conversations.identity import (
    CODE_LIFETIME,
    CODE_WINDOW,
    CODES_PER_WINDOW,
    _refuse_too_many,
    establish_helpdesk_sender,
    establish_logged_in,
)
from app.conversations.models import Channel, Conversation, VerificationCode
from app.conversations.service import start_conversation
from app.db import Database
from app.errors import TooManyRequests
from app.guard import IdentityLevel
from app.shops.models import Shop

# One shop's customers: enough that reading all of them shows in the plan, few enough
# that each test seeds them in about a second.
CUSTOMERS = 3000
OTHER_SHOP_CUSTOMERS = 20
# The shopper looked up. Every tenth address was typed with capitals, this one too, and
# the same person is also a customer of the other shop, under the same address.
SHOPPER = 10
BUSY_SHOPIFY_IDS = 6_000_000_000
QUIET_SHOPIFY_IDS = 7_000_000_000
# Codes asked over the last three months, three for each of the shop's orders.
ORDERS = 1000
CODES = 3 * ORDERS
CODES_OVER = timedelta(days=90)

VISITOR = Actor(ActorKind.CUSTOMER, "storefront-visitor", Surface.STOREFRONT)
GORGIAS = system_actor("gorgias", Surface.HELPDESK)


@pytest.fixture
def engine(app: Flask, database: str) -> Engine:
    skip_unless_postgresql(database)
    return Database.state(app).engine


def test_an_order_webhook_finds_the_orders_customer_by_shopify_id_not_among_the_shops(
    session: Session, engine: Engine
) -> None:
    busy, customers = _busy_shop_beside_a_quiet_one(session)
    analyzed(session)
    order_of_shopper = {
        "customer": {"admin_graphql_api_id": _gid(BUSY_SHOPIFY_IDS + SHOPPER)},
    }

    with statements_sent(engine) as sent:
        found = customers_of_order_change(session, busy, "orders/updated", order_of_shopper)

    assert found == [customers[SHOPPER]]
    (read,) = reads_of_table(sent, "customers")
    assert_read_by_index(session, read, "customers", rows=1, by="shopify_customer_id")


def test_a_signed_in_chat_finds_its_customer_by_shopify_id_not_among_the_shops(
    session: Session, engine: Engine
) -> None:
    now = utcnow()
    busy, customers = _busy_shop_beside_a_quiet_one(session)
    chat = start_conversation(
        session,
        shop_id=busy,
        channel=Channel.STOREFRONT,
        channel_ref="visitor-token-digest",
        actor=VISITOR,
        now=now,
    )
    analyzed(session)

    with statements_sent(engine) as sent:
        customer = establish_logged_in(
            session,
            conversation=chat,
            shopify_customer_id=str(BUSY_SHOPIFY_IDS + SHOPPER),
            actor=VISITOR,
            now=now,
        )

    # The shopper's own customer, not a new one added for an id not found.
    assert customer.id == customers[SHOPPER]
    assert chat.identity_level == IdentityLevel.STRONG
    (read,) = reads_of_table(sent, "customers")
    assert_read_by_index(session, read, "customers", rows=1, by="shopify_customer_id")


def test_a_helpdesk_sender_is_found_by_email_in_any_case_not_among_the_shops(
    session: Session, engine: Engine
) -> None:
    now = utcnow()
    busy, customers = _busy_shop_beside_a_quiet_one(session)
    ticket = start_conversation(
        session,
        shop_id=busy,
        channel=Channel.HELPDESK,
        channel_ref="gorgias:4711",
        actor=GORGIAS,
        now=now,
    )
    analyzed(session)

    with statements_sent(engine) as sent:
        customer = establish_helpdesk_sender(
            session,
            conversation=ticket,
            sender_email=f" {_email(SHOPPER).upper()} ",
            actor=GORGIAS,
            now=now,
        )

    assert customer is not None and customer.id == customers[SHOPPER]
    assert ticket.identity_level == IdentityLevel.MEDIUM
    (read,) = reads_of_table(sent, "customers")
    assert_read_by_index(session, read, "customers", rows=1, by="lower(")


def test_an_agents_case_search_reads_the_customer_by_email_and_only_their_cases(
    session: Session, engine: Engine
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy"), _shop(session, "quiet")
    customers = _customers(session, busy, CUSTOMERS, BUSY_SHOPIFY_IDS)
    others = _customers(session, quiet, OTHER_SHOP_CUSTOMERS, QUIET_SHOPIFY_IDS)
    # A case for every customer of both shops, a year old, and a newer one of the
    # shopper's in this shop.
    older = _cases(session, busy, customers, now - timedelta(days=365))[SHOPPER]
    _cases(session, quiet, others, now - timedelta(days=365))
    (newer,) = _cases(session, busy, [customers[SHOPPER]], now - timedelta(days=2))
    analyzed(session)

    with statements_sent(engine) as sent:
        answer = _find_case(session, AgentCredential(shop_id=busy), _email(SHOPPER).lower())

    assert [uuid.UUID(case["case_id"]) for case in answer.data["cases"]] == [newer, older]
    (read,) = reads_of_table(sent, "cases")
    assert_read_by_index(session, read, "customers", rows=1, by="lower(")
    assert_read_by_index(session, read, "cases", rows=2, by="customer_id")


def test_codes_asked_for_an_order_are_counted_from_that_orders_codes_alone(
    session: Session, engine: Engine
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy"), _shop(session, "quiet")
    orders = _orders(session, busy, _customers(session, busy, ORDERS, BUSY_SHOPIFY_IDS))
    chats = _conversations(session, busy, len(orders), now)
    # Three months of codes, one asked every forty minutes or so, for one order after
    # another: the order looked up had three, a month apart.
    spacing = CODES_OVER / CODES
    _codes(
        session,
        busy,
        [
            (chats[number % len(chats)], orders[number % len(orders)], now - number * spacing)
            for number in range(1, CODES + 1)
        ],
    )
    quiet_orders = _orders(
        session, quiet, _customers(session, quiet, OTHER_SHOP_CUSTOMERS, QUIET_SHOPIFY_IDS)
    )
    quiet_chats = _conversations(session, quiet, len(quiet_orders), now)
    _codes(
        session,
        quiet,
        [(chat, order, now) for chat, order in zip(quiet_chats, quiet_orders, strict=True)],
    )
    # Someone asked for all the codes one order allows within the window, while other
    # shoppers asked for codes for their own orders.
    chat, order = chats[0], orders[0]
    window = CODE_WINDOW / (CODES_PER_WINDOW + 1)
    lately = [now - share * window for share in range(1, CODES_PER_WINDOW + 1)]
    _codes(session, busy, [(chat, order, at) for at in lately])
    _codes(session, busy, [(chats[n], orders[n], at) for n, at in enumerate(lately, start=1)])
    analyzed(session)
    conversation = session.get_one(Conversation, chat)

    with statements_sent(engine) as sent, pytest.raises(TooManyRequests):
        _refuse_too_many(session, conversation=conversation, now=now, order_id=order)

    (read,) = reads_of_table(sent, "verification_codes")
    # By the order: a read by the codes' time alone reads every shop's recent codes, and
    # an index led by another column is gone through whole, with little discarded to show.
    assert_read_by_index(session, read, "verification_codes", rows=CODES_PER_WINDOW, by="order_id")


def _busy_shop_beside_a_quiet_one(session: Session) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A shop of thousands of customers and another of a few, the shopper in both; the busy
    shop's id and its customers' ids."""
    busy, quiet = _shop(session, "busy"), _shop(session, "quiet")
    _customers(session, quiet, OTHER_SHOP_CUSTOMERS, QUIET_SHOPIFY_IDS)
    return busy, _customers(session, busy, CUSTOMERS, BUSY_SHOPIFY_IDS)


def _shop(session: Session, name: str) -> uuid.UUID:
    shop = Shop(domain=f"{name}.myshopify.com", name=name.title())
    session.add(shop)
    session.flush()
    return shop.id


def _email(number: int) -> str:
    return f"Shopper{number}@Example.com" if number % 10 == 0 else f"shopper{number}@example.com"


def _gid(shopify_id: int) -> str:
    return f"gid://shopify/Customer/{shopify_id}"


def _customers(
    session: Session, shop_id: uuid.UUID, count: int, first_shopify_id: int
) -> list[uuid.UUID]:
    """``count`` customers, each with an email and a Shopify id; their ids in order."""
    ids = [uuid.uuid4() for _ in range(count)]
    session.execute(
        insert(Customer),
        [
            {
                "id": customer_id,
                "shop_id": shop_id,
                "email": _email(number),
                "name": f"Shopper {number}",
                "shopify_customer_id": _gid(first_shopify_id + number),
            }
            for number, customer_id in enumerate(ids)
        ],
    )
    return ids


def _cases(
    session: Session, shop_id: uuid.UUID, customers: list[uuid.UUID], opened: datetime
) -> list[uuid.UUID]:
    """A resolved case for each of ``customers``, whose identity was verified."""
    ids = [uuid.uuid4() for _ in customers]
    session.execute(
        insert(Case),
        [
            {
                "id": case_id,
                "shop_id": shop_id,
                "customer_id": customer_id,
                "subject": "Where is my order?",
                "identity_level": IdentityLevel.STRONG,
                "status": CaseStatus.RESOLVED,
                "created_at": opened,
                "updated_at": opened,
            }
            for case_id, customer_id in zip(ids, customers, strict=True)
        ],
    )
    return ids


def _orders(session: Session, shop_id: uuid.UUID, customers: list[uuid.UUID]) -> list[uuid.UUID]:
    """An order for each of ``customers``."""
    ids = [uuid.uuid4() for _ in customers]
    session.execute(
        insert(Order),
        [
            {
                "id": order_id,
                "shop_id": shop_id,
                "customer_id": customer_id,
                "name": f"#{1001 + number}",
                "currency": "usd",
                "total": 9600,
                "payment_provider": "shopify",
                "lines": [],
                "shipments": [],
            }
            for number, (order_id, customer_id) in enumerate(zip(ids, customers, strict=True))
        ],
    )
    return ids


def _conversations(
    session: Session, shop_id: uuid.UUID, count: int, now: datetime
) -> list[uuid.UUID]:
    """``count`` storefront chats."""
    ids = [uuid.uuid4() for _ in range(count)]
    session.execute(
        insert(Conversation),
        [
            {
                "id": conversation_id,
                "shop_id": shop_id,
                "channel": Channel.STOREFRONT,
                "channel_ref": f"visitor-{number}",
                "created_at": now - CODES_OVER,
                "updated_at": now,
            }
            for number, conversation_id in enumerate(ids)
        ],
    )
    return ids


def _codes(
    session: Session, shop_id: uuid.UUID, asked: list[tuple[uuid.UUID, uuid.UUID, datetime]]
) -> None:
    """A code for each (conversation, order, when asked) in ``asked``, spent at once."""
    session.execute(
        insert(VerificationCode),
        [
            {
                "shop_id": shop_id,
                "conversation_id": conversation_id,
                "order_id": order_id,
                "code_digest": "0" * 64,
                "attempts": 1,
                "expires_at": at + CODE_LIFETIME,
                "used_at": at,
                "created_at": at,
            }
            for conversation_id, order_id, at in asked
        ],
    )
