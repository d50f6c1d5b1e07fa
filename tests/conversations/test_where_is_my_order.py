"""Where is my order: the carrier, tracking and expected date Shopify reported reach a
verified customer through our copy of their orders, in Caseward's own sentence, and
nobody else."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import WORKER, Actor, ActorKind, Surface
from app.cases.models import Case, Customer, Order
from app.cases.store_orders import refresh_store_orders
from app.clock import utcnow
from app.conversations.models import Channel, Conversation
from app.conversations.service import receive_message, start_conversation
from app.drafting.brief import ShipmentBrief
from app.drafting.drafters import RulesDrafter
from app.drafting.result import Fact, NextStep
from app.drafting.service import CaseAtHand, Drafted, brief_for, draft_now
from app.settings import Settings
from app.shops.models import Shop
from integrations.provider import OrderFacts, OrderLine, ProviderAdapter, Shipment

SHOPPER = Actor(ActorKind.CUSTOMER, "storefront-visitor", Surface.STOREFRONT)
MAYA_GID = "gid://shopify/Customer/10000000002"
ORDER_GID = "gid://shopify/Order/10000000003"
TRACKING = "1Z999AA10123456784"
TRACKING_URL = f"https://www.ups.com/track?tracknum={TRACKING}"
SHIPPED = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
EXPECTED = datetime(2026, 11, 26, 18, 0, tzinfo=UTC)
QUESTION = "Hi, where is my order #1001?"


@dataclass(frozen=True)
class Asked:
    shop: Shop
    conversation: Conversation
    case: Case


def order_facts(*shipments: Shipment) -> OrderFacts:
    """#1001 as Shopify reports it: two aprons, shipped and not delivered yet."""
    return OrderFacts(
        id=ORDER_GID,
        name="#1001",
        currency="usd",
        payment_id=None,
        lines=(OrderLine("gid://shopify/LineItem/1", "Linen apron", 2, 9600),),
        fulfilled_at=SHIPPED if shipments else None,
        total=9600,
        created_at=SHIPPED - timedelta(days=2),
        customer_id=MAYA_GID,
        shipments=shipments,
    )


IN_TRANSIT_WITH_UPS = Shipment(
    status="in_transit",
    carrier="UPS",
    tracking_number=TRACKING,
    tracking_url=TRACKING_URL,
    estimated_delivery=EXPECTED,
    shipped_at=SHIPPED,
)


def ask(session: Session, facts: OrderFacts, *, verified: bool) -> Asked:
    """Maya's orders copied from ``facts``, then she asks where #1001 is on the storefront;
    ``verified``: she proved who she is (medium)."""
    now = utcnow()
    shop = Shop(domain="linen.myshopify.com", name="Linen & Loom")
    session.add(shop)
    session.flush()
    customer = Customer(
        shop_id=shop.id,
        email="maya@example.com",
        name="Maya Lin",
        shopify_customer_id=MAYA_GID,
    )
    session.add(customer)
    session.flush()
    refresh_store_orders(session, customer=customer, orders=[facts], actor=WORKER, now=now)
    conversation = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.STOREFRONT,
        channel_ref="visitor-1",
        actor=SHOPPER,
        now=now,
    )
    if verified:
        conversation.customer_id = customer.id
        conversation.identity_level = "medium"
    received = receive_message(
        session, conversation=conversation, body=QUESTION, actor=SHOPPER, now=now
    )
    assert received is not None
    return Asked(shop, conversation, received[1])


def no_provider(session: Session, shop_id: uuid.UUID, provider: str, **_: Any) -> ProviderAdapter:
    raise AssertionError(f"answering where an order is asked {provider} for facts")


def answered(session: Session, asked: Asked, settings: Settings) -> Drafted:
    """The offline rules draft Maya's question and the draft is applied: what she reads."""
    return draft_now(
        CaseAtHand(
            session,
            asked.shop,
            asked.case,
            asked.conversation,
            no_provider,
            settings,
            utcnow(),
        ),
        RulesDrafter(),
    )


def shipment_told(session: Session, asked: Asked) -> ShipmentBrief | None:
    brief, _ = brief_for(session, shop=asked.shop, case=asked.case, conversation=asked.conversation)
    (order,) = brief.orders
    assert order.name == "#1001"
    return order.shipment


def test_a_verified_customer_is_told_the_carrier_tracking_and_expected_date(
    session: Session, settings: Settings
) -> None:
    asked = ask(session, order_facts(IN_TRANSIT_WITH_UPS), verified=True)

    result = answered(session, asked, settings)

    assert shipment_told(session, asked) == ShipmentBrief(
        status="in_transit",
        carrier="UPS",
        tracking_number=TRACKING,
        tracking_url=TRACKING_URL,
        estimated_delivery="2026-11-26",
    )
    assert result.record.next_step == NextStep.ANSWER
    assert result.reply is not None
    assert result.reply.body == (
        f"Happy to help. Order #1001 is on its way with UPS. Tracking number: {TRACKING} "
        f"({TRACKING_URL}). Expected by 2026-11-26."
    )


def test_the_newest_shipment_is_the_one_told(session: Session) -> None:
    earlier = Shipment(
        status="in_transit",
        carrier="Canada Post",
        tracking_number="7023210039414604",
        shipped_at=SHIPPED - timedelta(days=1),
    )
    asked = ask(session, order_facts(earlier, IN_TRANSIT_WITH_UPS), verified=True)

    told = shipment_told(session, asked)

    assert told is not None
    assert (told.carrier, told.tracking_number) == ("UPS", TRACKING)


def test_an_order_copied_without_shipments_is_in_transit_once_fulfilled(
    session: Session,
) -> None:
    asked = ask(session, order_facts(), verified=True)
    # Copied before shipments were kept: fulfilled, with nothing about the carrier.
    row = session.scalars(select(Order).where(Order.shopify_order_id == ORDER_GID)).one()
    row.fulfilled_at = SHIPPED

    assert shipment_told(session, asked) == ShipmentBrief("in_transit")


def test_an_unverified_customer_is_asked_to_verify_and_told_nothing_of_the_shipment(
    session: Session, settings: Settings
) -> None:
    asked = ask(session, order_facts(IN_TRANSIT_WITH_UPS), verified=False)
    brief, _ = brief_for(session, shop=asked.shop, case=asked.case, conversation=asked.conversation)

    result = answered(session, asked, settings)

    assert brief.orders == ()
    assert result.record.next_step == NextStep.ASK_TO_VERIFY
    assert result.reply is not None and "verify" in result.reply.body
    for detail in ("UPS", TRACKING, TRACKING_URL, "2026-11-26", "on its way", "Linen apron"):
        assert detail not in result.reply.body


def test_the_drafter_asks_for_the_shipment_and_caseward_words_it(session: Session) -> None:
    """The rules state no shipment themselves: Caseward tells it from our copy."""
    asked = ask(session, order_facts(IN_TRANSIT_WITH_UPS), verified=True)
    brief, _ = brief_for(session, shop=asked.shop, case=asked.case, conversation=asked.conversation)

    draft = RulesDrafter().run(brief).draft

    assert (draft.step, draft.tell) == (NextStep.ANSWER, (Fact.SHIPMENT,))
    for detail in ("UPS", TRACKING, "2026-11-26"):
        assert detail not in draft.free_text
