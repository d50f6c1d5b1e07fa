"""A linen shop's cases for the drafting tests, mostly without a database.

Orders are unsaved ``Order`` rows (what :func:`app.drafting.proposals.draft_for` reads);
:func:`brief_from` turns the customer's messages and those orders into the
:class:`~app.drafting.brief.CaseBrief` a drafter sees, the way
:func:`app.drafting.service.brief_for` does: orders only for a verified customer, the
order picked by :func:`~app.conversations.linking.link_order`, and what the customer
quoted that matches nothing. :func:`stored_case` saves the same case for the tests that
need the database, :func:`paid_case` in a shop that can refund what Maya paid at the
Stripe sandbox, and :func:`drafted` drafts a saved case as the drafting job does, down to
the reply Maya reads.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.actors import Actor, ActorKind, Surface
from app.cases.models import Case, Customer, Order
from app.clock import utcnow
from app.connections.adapters import AdapterFactory
from app.conversations.linking import link_order
from app.conversations.models import Channel, Conversation
from app.conversations.replies import ActionBrief
from app.conversations.service import receive_message, start_conversation
from app.drafting.brief import (
    CaseBrief,
    LineBrief,
    MessageBrief,
    OrderBrief,
    ShipmentBrief,
)
from app.drafting.drafters import ClaudeDrafter, Drafter
from app.drafting.service import CaseAtHand, Drafted, draft_now
from app.settings import Settings
from app.shops.models import Shop
from integrations.anthropic.sandbox import DEMO_API_KEY
from integrations.provider import ProviderAdapter
from integrations.stripe import seeding
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

START = 1_700_000_000.0
MODEL = "claude-sonnet-4-5"
SHOP_NAME = "Linen & Loom"
POLICY_LINES = (
    "A refund needs the customer verified at level medium or above.",
    "Refunds within 30 days of delivery (or fulfilment).",
)


def order_row(name: str, lines: Sequence[Mapping[str, Any]], *, currency: str = "usd") -> Order:
    """An unsaved order paid through Stripe; ``lines`` hold id, title, quantity and paid."""
    return Order(
        id=uuid.uuid4(),
        name=name,
        currency=currency,
        total=sum(int(line["paid"]) for line in lines),
        payment_provider="stripe",
        payment_id=f"pi_{name.lstrip('#')}",
        lines=[dict(line) for line in lines],
    )


def aprons_order() -> Order:
    """#1001: two linen aprons ($48.00 for both) and three tea towels ($36.00)."""
    return order_row(
        "#1001",
        [
            {"id": "L1", "title": "Linen apron", "quantity": 2, "paid": 4800},
            {"id": "L2", "title": "Tea towel", "quantity": 3, "paid": 3600},
        ],
    )


def basket_order() -> Order:
    """#1002: one bread basket ($32.00)."""
    return order_row("#1002", [{"id": "L3", "title": "Bread basket", "quantity": 1, "paid": 3200}])


def customer_row() -> Customer:
    return Customer(id=uuid.uuid4(), name="Maya Lin", stripe_customer_id="cus_maya")


def order_brief(order: Order, shipment: ShipmentBrief | None = None) -> OrderBrief:
    return OrderBrief(
        name=order.name,
        currency=order.currency,
        total=order.total,
        placed_on="2024-05-01",
        lines=tuple(
            LineBrief(str(line["id"]), str(line["title"]), int(line["quantity"]), int(line["paid"]))
            for line in order.lines
        ),
        delivered=order.delivered_at is not None,
        shipment=shipment,
    )


def brief_from(
    texts: Sequence[str],
    orders: Sequence[Order],
    *,
    chosen: Order | None = None,
    verified: bool = True,
    actions: Sequence[ActionBrief] = (),
    proposal_open: bool = False,
    wants_person: bool = False,
    shipments: Mapping[str, ShipmentBrief] | None = None,
    policy_lines: Sequence[str] = POLICY_LINES,
) -> CaseBrief:
    """The brief of a conversation in which the customer wrote ``texts``."""
    shown = list(orders) if verified else []
    linking = link_order(texts, shown, chosen) if verified else None
    return CaseBrief(
        shop_name=SHOP_NAME,
        verified=verified,
        identity_level="medium" if verified else "none",
        kinds_allowed=("refund", "customer_credit"),
        policy_lines=tuple(policy_lines),
        messages=tuple(MessageBrief("customer", text) for text in texts),
        orders=tuple(order_brief(o, (shipments or {}).get(o.name)) for o in shown),
        picked_order=linking.picked.name if linking and linking.picked else None,
        unmatched=linking.unmatched if linking else (),
        actions=tuple(actions),
        proposal_open=proposal_open,
        wants_person=wants_person,
    )


SHOPPER = Actor(ActorKind.CUSTOMER, "storefront-visitor", Surface.STOREFRONT)


@dataclass(frozen=True)
class StoredCase:
    shop: Shop
    customer: Customer
    order: Order
    conversation: Conversation
    case: Case


def stored_case(
    session: Session, words: str, *, verified: bool = True, order: Order | None = None
) -> StoredCase:
    """Maya, her order (#1001 unless ``order``) and a storefront conversation in which she
    wrote ``words``; ``verified``: she proved who she is with that order."""
    now = utcnow()
    shop = Shop(domain="linen.myshopify.com", name=SHOP_NAME)
    session.add(shop)
    session.flush()
    customer = Customer(shop_id=shop.id, email="maya@example.com", name="Maya Lin")
    session.add(customer)
    session.flush()
    order = order or aprons_order()
    order.shop_id, order.customer_id = shop.id, customer.id
    session.add(order)
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
        conversation.order_id = order.id
    received = receive_message(
        session, conversation=conversation, body=words, actor=SHOPPER, now=now
    )
    assert received is not None
    return StoredCase(shop, customer, order, conversation, received[1])


@dataclass(frozen=True)
class PaidCase(StoredCase):
    # The shop's adapters: Stripe, at the sandbox account where Maya paid.
    adapters: AdapterFactory


def paid_case(
    session: Session,
    words: str,
    *,
    stripe: StripeSandbox,
    orders: Sequence[Order] = (),
    verified: bool = True,
) -> PaidCase:
    """:func:`stored_case` in a shop that can refund: writes on, and Maya paid for each of
    ``orders`` (#1001 unless given; the first the newest) in the shop's own account at the
    Stripe sandbox. With several orders the conversation is about none until her words
    pick one."""
    assert stripe.url is not None
    keys = stripe.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    client = seeding.client(keys.secret_key, stripe.url)
    orders = list(orders) or [aprons_order()]
    now = utcnow()
    customer_id: str | None = None
    for age, order in enumerate(orders):
        paid = seeding.paid_checkout(
            client,
            email="maya@example.com",
            name="Maya Lin",
            amount=order.total,
            currency=order.currency,
            customer_id=customer_id,
        )
        customer_id, order.payment_id = paid.customer_id, paid.payment_intent_id
        order.created_at = now - timedelta(days=age)
    stored = stored_case(session, words, verified=verified, order=orders[0])
    for order in orders[1:]:
        order.shop_id, order.customer_id = stored.shop.id, stored.customer.id
        session.add(order)
    if len(orders) > 1:
        stored.conversation.order_id = None
    stored.shop.writes_enabled = True
    stored.customer.stripe_customer_id = customer_id
    adapter = StripeAdapter(keys.restricted_keys[0].key, livemode=False, api_base=stripe.url)

    def adapters(session: Session, shop_id: uuid.UUID, provider: str, **_: Any) -> ProviderAdapter:
        assert (shop_id, provider) == (stored.shop.id, "stripe")
        return adapter

    return PaidCase(
        stored.shop, stored.customer, stored.order, stored.conversation, stored.case, adapters
    )


def no_provider(session: Session, shop_id: uuid.UUID, provider: str, **_: Any) -> ProviderAdapter:
    """The adapters of a draft that proposes nothing: no provider is asked anything."""
    raise AssertionError(f"a draft that proposes nothing asked {provider} for facts")


def drafted(
    session: Session,
    stored: StoredCase,
    drafter: Drafter,
    settings: Settings,
    *,
    adapters: AdapterFactory = no_provider,
) -> Drafted:
    """``drafter`` drafts the case of ``stored`` as the drafting job does: the brief read
    from the database, then the draft applied (the run recorded, any proposal made, the
    reply kept for Maya)."""
    return draft_now(
        CaseAtHand(
            session,
            stored.shop,
            stored.case,
            stored.conversation,
            adapters,
            settings,
            utcnow(),
        ),
        drafter,
    )


def claude_drafter(
    url: str, *, timeout_seconds: float = 5.0, max_retries: int = 0
) -> ClaudeDrafter:
    return ClaudeDrafter(
        api_key=DEMO_API_KEY,
        base_url=url,
        model=MODEL,
        timeout_seconds=timeout_seconds,
        max_retries=max_retries,
    )


# Characters a card number may be spread out with that still read as one number.
_BETWEEN_DIGITS = re.compile(r"(?<=\d)[^\w]{1,3}(?=\d)")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def shows_number(text: str, digits: str) -> bool:
    """Whether ``digits`` can still be read in ``text``, however they are spaced, grouped
    or written (fullwidth digits, invisible characters between them)."""
    plain = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return digits in _BETWEEN_DIGITS.sub("", plain)
