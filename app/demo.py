"""The linen shop of the seed story, for the offline demo and the end-to-end tests.

Two linen aprons at $48, one $96 card payment, and a logged-in customer writing
that one apron arrived torn. A proposer has drafted a $48 refund of that one
apron; an approver reviews the exact digest and approves; a worker executes it.

The seeder runs on every start of the demo: the first time it creates the shop,
afterwards it tells what has become of the proposed refund, read from the database.
The Stripe webhook endpoint is registered only once the shop is committed, so the
sandbox's first deliveries find the connection they are addressed to.

The shop brakes as a careful merchant's would (:data:`DEMO_BRAKES`), and when the demo
runs a Slack sandbox its alerts go to a channel there too (:data:`DEMO_SLACK_WEBHOOK`).

A second customer, Theo, writes that his order #1002 never arrived though the carrier marked
it delivered: the refund drafted for him raises an abuse signal (:func:`seed_signal_case`).

The same people are staff of the store in the Shopify sandbox (users 1001-1003, and
1004 with no role); inside the sandbox's stand-in admin they act under those ids, so
the demo gives each id the role and limits its staff-API self has. The Shopify sandbox
seeds order #1001 paid by the demo's Stripe payment, whose id the seeder hands over in
a file under ``instance/`` once that payment exists.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import requests
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session
from stripe import StripeClient

from app import audit
from app.actors import Actor, ActorKind, Surface, staff, system_actor
from app.alerts.service import save_slack
from app.approvals.drafts import parse_draft
from app.approvals.service import ProposalResult, create_proposal
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.cases.service import open_case
from app.clock import utcnow
from app.connections.adapters import AdapterFactory, connection_adapters
from app.connections.models import Connection
from app.connections.service import save_stripe_connection
from app.conversations.identity import establish, establish_helpdesk_sender
from app.conversations.models import Channel, Conversation, IdentityMethod, Message
from app.conversations.service import receive_message, start_conversation, storefront_ref
from app.crypto import SecretBox, secret_box
from app.db import make_engine, make_session_factory
from app.drafting.drafters import RulesDrafter
from app.drafting.service import CaseAtHand, draft_now
from app.execution.brakes import BrakeSettings, save_brakes
from app.execution.models import Action, ActionStatus
from app.guard import IdentityLevel
from app.helpdesk.connection import SECRET_HEADER, gorgias_connection, save_gorgias_connection
from app.helpdesk.events import CALL_TRIGGERS, call_body_template
from app.helpdesk.gorgias_desk import check_account
from app.history_audit.jobs import enqueue_scan
from app.history_audit.models import HistoryScan
from app.history_audit.scan import start_scan
from app.jobs.connection import connect_redis
from app.migrations import upgrade
from app.money import Money
from app.settings import Settings
from app.shopify.admin_links import APP_HANDLE
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import set_writes_enabled, staff_member
from app.staff.members import add_member
from app.staff.tokens import issue_token
from integrations.gorgias.sandbox.demo import (
    DEMO_ACCOUNT as GORGIAS_DEMO_ACCOUNT,
)
from integrations.gorgias.sandbox.demo import (
    DEMO_API_KEY as GORGIAS_DEMO_API_KEY,
)
from integrations.gorgias.sandbox.demo import (
    DEMO_API_USER as GORGIAS_DEMO_API_USER,
)
from integrations.shopify.sandbox.demo import (
    APPROVER_USER_ID,
    DEMO_SHOP,
    OWNER_USER_ID,
    PROPOSER_USER_ID,
    VIEWER_USER_ID,
)
from integrations.stripe import seeding
from integrations.stripe.sandbox import DEMO_ACCOUNT_ID, DEMO_RESTRICTED_KEY, DEMO_SECRET_KEY

SHOP_DOMAIN = f"{DEMO_SHOP}.myshopify.com"
OWNER, APPROVER, PROPOSER = "olivia.owner", "sam.approver", "pat.proposer"
# Each person's role and approval limit in US cents (an owner and an approver may approve).
APPROVER_LIMIT = 10_000
STAFF = (
    (OWNER, StaffRole.OWNER, 100_000),
    (APPROVER, StaffRole.APPROVER, APPROVER_LIMIT),
    (PROPOSER, StaffRole.PROPOSER, 0),
)
# As people know them, here and as Shopify staff of the store.
NAMES = {OWNER: "Olivia Owner", APPROVER: "Sam Approver", PROPOSER: "Pat Proposer"}
# The same people as Shopify staff of the store (the Shopify sandbox's demo seeds them).
SHOPIFY_USER_IDS = {OWNER: OWNER_USER_ID, APPROVER: APPROVER_USER_ID, PROPOSER: PROPOSER_USER_ID}
# The demo is seeded as if these people had used the staff API.
AS_OWNER, AS_PROPOSER = staff(OWNER, Surface.STAFF_API), staff(PROPOSER, Surface.STAFF_API)
AS_MAYA = Actor(ActorKind.CUSTOMER, "maya", Surface.STOREFRONT)
SUBJECT = "One apron arrived torn (order #1001)"
MAYAS_MESSAGE = (
    "Hi! One of the two linen aprons from order #1001 arrived with a torn seam. "
    "Could I get a refund for that one? The other is lovely."
)
APRON_LINE = "apron-natural"
ORDER_NAME = "#1001"
# Where the seeder hands the Shopify sandbox the Stripe payment that paid order #1001
# (the Procfile's shopify line reads it from the same place).
PAYMENT_HANDOFF = "demo-payment-intent"
# The demo shop's brakes: ceilings a shop of its size might set, the breaker as it comes.
DEMO_BRAKES = BrakeSettings(
    money_per_hour={"usd": 50_000},
    money_per_day={"usd": 200_000},
    actions_per_hour=20,
    actions_per_day=100,
)
# Slack's address of the demo shop's channel; the Slack sandbox takes its posts.
DEMO_SLACK_WEBHOOK = "https://hooks.slack.com/services/TLINEN/BCASEWARD/linen-and-loom-demo"


@dataclass(frozen=True)
class LinenShop:
    shop_id: uuid.UUID
    case_id: uuid.UUID
    proposal_id: uuid.UUID
    connection_id: uuid.UUID
    customer_id: str
    payment_intent_id: str


def seed_linen_shop(
    session: Session,
    *,
    settings: Settings,
    box: SecretBox,
    secret_key: str,
    restricted_key: str,
    webhook_base_url: str | None,
    shop_domain: str = SHOP_DOMAIN,
    now: datetime | None = None,
    from_chat: bool = False,
) -> LinenShop:
    """Create the shop, its staff, its Stripe connection, the paid order and the case.

    The case is a proposer's (the tests' fixture), or ``from_chat`` (the demo) Maya's
    storefront chat drafted by the offline rules, beside a conversation at each identity
    level. With ``webhook_base_url`` the shop is committed first and the webhook endpoint
    registered after, so no delivery arrives for a connection not yet visible.
    """
    now = now or utcnow()
    stripe = seeding.client(secret_key, settings.stripe_api_base)
    shop = _shop_and_staff(session, shop_domain=shop_domain, now=now)
    connection = _stripe_connection(
        session, shop=shop, restricted_key=restricted_key, box=box, now=now
    )
    customer, checkout = _paid_order(session, shop=shop, stripe=stripe, now=now)
    adapters = connection_adapters(settings, box)
    if from_chat:
        case, proposal_id = _chat_story(
            session, shop=shop, customer=customer, adapters=adapters, settings=settings, now=now
        )
        _identity_levels(session, shop=shop, adapters=adapters, settings=settings, now=now)
    else:
        case, proposal_id = _proposers_story(
            session,
            shop=shop,
            customer=customer,
            payment_intent_id=checkout.payment_intent_id,
            adapters=adapters,
            settings=settings,
            now=now,
        )
    audit.record(
        session,
        shop_id=shop.id,
        kind="demo.seeded",
        actor=AS_OWNER,
        case_id=case.id,
        data={"order": ORDER_NAME},
        now=now,
    )
    session.flush()
    if webhook_base_url:
        session.commit()
        register_webhook_endpoint(
            session,
            connection,
            stripe=stripe,
            base_url=webhook_base_url,
            box=box,
            now=now,
        )
    return LinenShop(
        shop.id,
        case.id,
        proposal_id,
        connection.id,
        checkout.customer_id,
        checkout.payment_intent_id,
    )


def _shop_and_staff(session: Session, *, shop_domain: str, now: datetime) -> Shop:
    """The shop, with its owner, approver and proposer (:data:`STAFF`)."""
    shop = Shop(domain=shop_domain, name="Linen & Loom", created_at=now)
    session.add(shop)
    session.flush()
    for user_id, role, limit in STAFF:
        session.add(
            StaffMember(
                shop_id=shop.id,
                user_id=user_id,
                email=f"{user_id}@{shop_domain}",
                name=NAMES[user_id],
                role=role,
                approval_limits={"usd": limit} if limit else {},
            )
        )
    session.flush()
    return shop


def _stripe_connection(
    session: Session, *, shop: Shop, restricted_key: str, box: SecretBox, now: datetime
) -> Connection:
    """The shop's Stripe connection through ``restricted_key``, writes enabled, as the
    owner's doing; its webhook endpoint is registered later, once the shop is committed."""
    connection = save_stripe_connection(
        session,
        shop=shop,
        actor=AS_OWNER,
        api_key=restricted_key,
        livemode=False,
        webhook_secret=None,
        box=box,
        now=now,
    ).connection
    set_writes_enabled(session, shop=shop, actor=AS_OWNER, enabled=True, now=now)
    return connection


def _paid_order(
    session: Session, *, shop: Shop, stripe: StripeClient, now: datetime
) -> tuple[Customer, seeding.PaidCheckout]:
    """Maya, and her order #1001 of two aprons, paid $96.00 at Stripe and delivered three
    days ago."""
    checkout = seeding.paid_checkout(
        stripe, email="maya@example.com", name="Maya Lin", amount=9600, currency="usd"
    )
    customer = Customer(
        shop_id=shop.id,
        email="maya@example.com",
        name="Maya Lin",
        stripe_customer_id=checkout.customer_id,
    )
    session.add(customer)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=customer.id,
            name=ORDER_NAME,
            currency="usd",
            total=9600,
            payment_provider="stripe",
            payment_id=checkout.payment_intent_id,
            lines=[
                {"id": APRON_LINE, "title": "Linen apron, natural", "quantity": 2, "paid": 9600}
            ],
            fulfilled_at=now - timedelta(days=6),
            delivered_at=now - timedelta(days=3),
            # As the Shopify sandbox's demo store ships it.
            shipments=[
                {
                    "status": "delivered",
                    "carrier": "UPS",
                    "tracking_number": "1Z999AA10123456784",
                    "tracking_url": "https://www.ups.com/track?tracknum=1Z999AA10123456784",
                    "shipped_at": (now - timedelta(days=6)).isoformat(),
                    "delivered_at": (now - timedelta(days=3)).isoformat(),
                    "estimated_delivery": None,
                }
            ],
            created_at=now - timedelta(days=8),
        )
    )
    return customer, checkout


def _proposers_story(
    session: Session,
    *,
    shop: Shop,
    customer: Customer,
    payment_intent_id: str,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
) -> tuple[Case, uuid.UUID]:
    """The proposer opens Maya's case from her message and proposes a $48 refund of one
    apron, for a person to approve."""
    case = open_case(
        session,
        shop=shop,
        actor=AS_PROPOSER,
        customer_id=customer.id,
        subject=SUBJECT,
        request_text=MAYAS_MESSAGE,
        identity_level="strong",
        now=now,
    )
    proposal = create_proposal(
        session,
        shop=shop,
        case=case,
        actor=AS_PROPOSER,
        draft=parse_draft(
            {
                "kind": "refund",
                "target": payment_intent_id,
                "amount": 4800,
                "currency": "usd",
                "line_items": [{"line_id": APRON_LINE, "amount": 4800}],
                "params": {"reason": "requested_by_customer"},
                "reason": "One of two aprons arrived damaged; refund that apron.",
            }
        ),
        adapter=adapters(session, shop.id, "stripe"),
        settings=settings,
        now=now,
    ).proposal
    return case, proposal.id


def _chat_story(
    session: Session,
    *,
    shop: Shop,
    customer: Customer,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
) -> tuple[Case, uuid.UUID]:
    """Maya writes on the storefront chat, proves who she is with the code mailed to her
    order's email, and the offline rules draft her case: a $48 refund of one apron for a
    person to approve, and a reply that promises nothing the provider has not reported."""
    conversation = _conversation(session, shop, Channel.STOREFRONT, now)
    establish(
        session,
        conversation=conversation,
        customer=customer,
        level=IdentityLevel.STRONG,
        method=IdentityMethod.EMAIL_CODE,
        actor=AS_MAYA,
        now=now,
    )
    drafted = _drafted(
        session,
        shop=shop,
        conversation=conversation,
        text=MAYAS_MESSAGE,
        subject=SUBJECT,
        adapters=adapters,
        settings=settings,
        now=now,
    )
    assert drafted.proposal is not None, "the rules propose Maya's refund"
    return drafted.case, drafted.proposal.proposal.id


def _identity_levels(
    session: Session, *, shop: Shop, adapters: AdapterFactory, settings: Settings, now: datetime
) -> None:
    """A conversation at each other identity level, each drafted as it would be."""
    visitor = _conversation(session, shop, Channel.STOREFRONT, now)
    _drafted(
        session,
        shop=shop,
        conversation=visitor,
        text="Hi, where is order #1001? I paid $96.00.",
        subject=None,
        adapters=adapters,
        settings=settings,
        now=now,
    )
    ticket = _conversation(session, shop, Channel.HELPDESK, now)
    establish_helpdesk_sender(
        session, conversation=ticket, sender_email="maya@example.com", actor=AS_MAYA, now=now
    )
    _drafted(
        session,
        shop=shop,
        conversation=ticket,
        text="Hello, where is my order? I would like to know when it arrives.",
        subject=None,
        adapters=adapters,
        settings=settings,
        now=now,
    )
    # This ticket stands for one answered in the helpdesk itself: it has no Gorgias ticket
    # behind it (Maya's Gorgias ticket arrives through the sandbox), so nothing of it waits
    # to be posted there.
    for reply in session.scalars(
        select(Message).where(Message.conversation_id == ticket.id, Message.delivered_at.is_(None))
    ):
        reply.delivered_at = now


@dataclass(frozen=True)
class _Drafted:
    case: Case
    proposal: ProposalResult | None


def _conversation(
    session: Session, shop: Shop, channel: Channel, now: datetime, actor: Actor = AS_MAYA
) -> Conversation:
    return start_conversation(
        session,
        shop_id=shop.id,
        channel=channel,
        channel_ref=storefront_ref(uuid.uuid4().hex),
        actor=actor,
        now=now,
    )


def _drafted(
    session: Session,
    *,
    shop: Shop,
    conversation: Conversation,
    text: str,
    subject: str | None,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
    actor: Actor = AS_MAYA,
) -> _Drafted:
    received = receive_message(
        session, conversation=conversation, body=text, actor=actor, now=now, subject=subject
    )
    assert received is not None
    _, case = received
    drafted = draft_now(
        CaseAtHand(session, shop, case, conversation, adapters, settings, now), RulesDrafter()
    )
    return _Drafted(case, drafted.proposal)


# A second customer's case, to show an abuse signal: Theo says his order never arrived, and
# the carrier marked it delivered (the guard's ``delivered_but_not_received``).
SIGNAL_SUBJECT = "Order #1002 never arrived"
THEOS_MESSAGE = (
    "Hello, my order #1002 never arrived, although the tracking says it was delivered. "
    "Could I get a refund for the throw?"
)
AS_THEO = Actor(ActorKind.CUSTOMER, "theo", Surface.STOREFRONT)


def seed_signal_case(
    session: Session,
    *,
    settings: Settings,
    box: SecretBox,
    secret_key: str,
    now: datetime | None = None,
) -> uuid.UUID | None:
    """Theo's case, once: his order #1002 of one linen throw, paid $64.00 at Stripe and marked
    delivered by the carrier five days ago, and his storefront chat saying it never arrived.
    The offline rules draft the refund of the throw; its checks raise a signal, so a person
    decides. Returns the case; None when the shop has it already (a restart)."""
    now = now or utcnow()
    shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
    known = select(Case.id).where(Case.shop_id == shop.id, Case.subject == SIGNAL_SUBJECT)
    if session.scalars(known).first() is not None:
        return None
    stripe = seeding.client(secret_key, settings.stripe_api_base)
    checkout = seeding.paid_checkout(
        stripe, email="theo@example.com", name="Theo Park", amount=6400, currency="usd"
    )
    theo = Customer(
        shop_id=shop.id,
        email="theo@example.com",
        name="Theo Park",
        stripe_customer_id=checkout.customer_id,
    )
    session.add(theo)
    session.flush()
    delivered = now - timedelta(days=5)
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=theo.id,
            name="#1002",
            currency="usd",
            total=6400,
            payment_provider="stripe",
            payment_id=checkout.payment_intent_id,
            lines=[{"id": "throw-oat", "title": "Linen throw, oat", "quantity": 1, "paid": 6400}],
            fulfilled_at=now - timedelta(days=8),
            delivered_at=delivered,
            shipments=[
                {
                    "status": "delivered",
                    "carrier": "UPS",
                    "tracking_number": "1Z999AA10123456785",
                    "tracking_url": "https://www.ups.com/track?tracknum=1Z999AA10123456785",
                    "shipped_at": (now - timedelta(days=8)).isoformat(),
                    "delivered_at": delivered.isoformat(),
                    "estimated_delivery": None,
                }
            ],
            created_at=now - timedelta(days=10),
        )
    )
    conversation = _conversation(session, shop, Channel.STOREFRONT, now, AS_THEO)
    establish(
        session,
        conversation=conversation,
        customer=theo,
        level=IdentityLevel.STRONG,
        method=IdentityMethod.EMAIL_CODE,
        actor=AS_THEO,
        now=now,
    )
    drafted = _drafted(
        session,
        shop=shop,
        conversation=conversation,
        text=THEOS_MESSAGE,
        subject=SIGNAL_SUBJECT,
        adapters=connection_adapters(settings, box),
        settings=settings,
        now=now,
        actor=AS_THEO,
    )
    assert drafted.proposal is not None, "the rules propose Theo's refund"
    return drafted.case.id


def register_webhook_endpoint(
    session: Session,
    connection: Connection,
    *,
    stripe: StripeClient,
    base_url: str,
    box: SecretBox,
    now: datetime,
) -> None:
    """Ask Stripe to send every event to this connection's webhook URL; keep the secret.

    Call it with the connection committed: Stripe may deliver as soon as it answers.
    """
    url = f"{base_url}/webhooks/stripe/{connection.id}"
    connection.encrypted_webhook_secret = box.encrypt(seeding.webhook_endpoint(stripe, url))
    audit.record(
        session,
        shop_id=connection.shop_id,
        kind="connection.webhook_registered",
        actor=AS_OWNER,
        data={"provider": "stripe", "url": url},
        now=now,
    )
    session.flush()


def give_shopify_staff_roles(session: Session, shop: Shop, *, now: datetime) -> None:
    """Make the store's Shopify staff members of the shop, each with the role and limit
    of the same person's staff-API self (audited, as the owner's doing). A member who is
    there already keeps what they have: an owner may have changed it since."""
    for user_id, role, limit in STAFF:
        shopify_id = str(SHOPIFY_USER_IDS[user_id])
        if staff_member(session, shop.id, shopify_id) is None:
            member = add_member(
                session,
                shop=shop,
                actor=AS_OWNER,
                user_id=shopify_id,
                role=role,
                email=None,
                approval_limits={"usd": limit} if limit else {},
                now=now,
            )
            member.name = NAMES[user_id]


@dataclass(frozen=True)
class DemoCase:
    """The demo's case as it stands, for the message printed at start, and the Stripe
    payment that paid its order (the Shopify sandbox's order names it too)."""

    case_id: uuid.UUID
    seeded_now: bool
    awaiting_approval: bool
    story: str
    payment_id: str


def open_demo(
    session: Session,
    *,
    settings: Settings,
    box: SecretBox,
    secret_key: str,
    restricted_key: str,
    web: str,
) -> DemoCase:
    """Seed the linen shop on the first start; on every start, give the store's Shopify
    staff their roles if they lack them and say where the case stands."""
    shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one_or_none()
    seeded_now = shop is None
    if shop is None:
        seed_linen_shop(
            session,
            settings=settings,
            box=box,
            secret_key=secret_key,
            restricted_key=restricted_key,
            webhook_base_url=web,
            from_chat=True,
        )
        session.commit()
        shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
        _brakes_and_alerts(session, shop, settings=settings, box=box, now=utcnow())
        session.commit()
    connection = session.scalars(
        select(Connection).where(Connection.shop_id == shop.id, Connection.provider == "stripe")
    ).one()
    if connection.encrypted_webhook_secret is None:  # a start that stopped before registering
        register_webhook_endpoint(
            session,
            connection,
            stripe=seeding.client(secret_key, settings.stripe_api_base),
            base_url=web,
            box=box,
            now=utcnow(),
        )
        session.commit()
    give_shopify_staff_roles(session, shop, now=utcnow())
    session.commit()
    case = session.scalars(
        select(Case)
        .where(Case.shop_id == shop.id, Case.subject == SUBJECT)
        .order_by(Case.created_at)
    ).first()
    assert case is not None, "the demo shop always has its case"
    proposal = session.scalars(
        select(Proposal)
        .where(Proposal.shop_id == shop.id, Proposal.case_id == case.id)
        .order_by(Proposal.created_at.desc())
    ).first()
    action = (
        session.scalars(
            select(Action)
            .where(Action.shop_id == shop.id, Action.proposal_id == proposal.id)
            .order_by(Action.created_at.desc())
        ).first()
        if proposal is not None
        else None
    )
    payment_id = session.scalars(
        select(Order.payment_id).where(Order.shop_id == shop.id, Order.name == ORDER_NAME)
    ).one()
    assert payment_id is not None, "the demo's order is paid"
    return DemoCase(
        case_id=case.id,
        seeded_now=seeded_now,
        awaiting_approval=proposal is not None
        and proposal.status == ProposalStatus.AWAITING_APPROVAL,
        story=_story(proposal, action),
        payment_id=payment_id,
    )


def _brakes_and_alerts(
    session: Session, shop: Shop, *, settings: Settings, box: SecretBox, now: datetime
) -> None:
    """The demo shop's ceilings, as its owner set them, and its alerts posted to the Slack
    sandbox when the demo runs one."""
    save_brakes(session, shop=shop, actor=AS_OWNER, settings=DEMO_BRAKES, now=now)
    if settings.slack_api_base:
        save_slack(
            session,
            shop=shop,
            actor=AS_OWNER,
            url=DEMO_SLACK_WEBHOOK,
            keep_url=False,
            kinds=None,
            box=box,
            now=now,
        )


# What became of an approved action, by its status; the rest were never sent.
_ACTION_STORIES = {
    ActionStatus.SUCCEEDED: "succeeded at Stripe{ref}.",
    ActionStatus.PENDING: "is pending at Stripe{ref}.",
    ActionStatus.REQUIRES_ACTION: "is waiting for the customer at Stripe{ref}.",
    ActionStatus.FAILED: "failed at Stripe{ref}{why}.",
    ActionStatus.CANCELED: "was canceled at Stripe{ref}{why}.",
    ActionStatus.QUEUED: "is queued for the worker; reload the case to see the outcome.",
    ActionStatus.SUBMITTING: "is being sent to Stripe; reload the case to see the outcome.",
    ActionStatus.UNKNOWN: "was sent, but Stripe's answer is unclear; it is being looked up.",
    ActionStatus.NEEDS_DECISION: (
        "was sent, but Stripe never confirmed it; a person decides on the case."
    ),
}


def _story(proposal: Proposal | None, action: Action | None) -> str:
    if proposal is None:
        return "No money action has been proposed on the case."
    what = f"{_amount(proposal.amount, proposal.currency)}{proposal.kind.replace('_', ' ')}"
    if action is None:
        if proposal.status == ProposalStatus.AWAITING_APPROVAL:
            return f"The {what} is awaiting approval."
        return f"The {what} is {proposal.status.replace('_', ' ')}; nothing was sent."
    status = ActionStatus(action.status)
    reason = action.failure_reason or action.status_reason
    outcome = _ACTION_STORIES.get(status, "was not sent ({status}){why}.").format(
        ref=f" as {action.provider_ref}" if action.provider_ref else "",
        why=f": {reason}" if reason else "",
        status=status.replace("_", " "),
    )
    by = " and ".join(action.approved_by) or "nobody on record"
    return f"The {what} was approved by {by} and {outcome}"


def _amount(amount: int | None, currency: str | None) -> str:
    return f"{Money(amount, currency).format()} " if amount is not None and currency else ""


def ready_message(
    demo: DemoCase, web: str, token: str, admin: str | None = None, helpdesk: str | None = None
) -> str:
    """What the demo prints once the stack is up: where to open Caseward (inside the
    stand-in Shopify admin at ``admin``, or on the operator page), what to do next, and
    the sidebar of the Gorgias ticket that arrived (``helpdesk``)."""
    limit = Money(APPROVER_LIMIT, "usd").format()
    lines = [
        "",
        "Caseward demo is ready." if demo.seeded_now else "Caseward demo is running again.",
        "  Maya wrote on the shop's storefront chat that one apron arrived torn, proved who she",
        "  is with the code mailed to her order's email, and Caseward's drafter prepared the",
        "  refund of that apron for a person to approve. Two more conversations show the other",
        "  identity levels: an unverified visitor asked to verify, a helpdesk ticket answered.",
    ]
    if admin:
        lines += [
            "  Open Caseward inside the Shopify admin (the Shopify sandbox's stand-in) as",
            f"    the approver (Shopify staff {APPROVER_USER_ID}, approves up to {limit}):",
            f"      {admin}?user={APPROVER_USER_ID}",
            f"    the owner ({OWNER_USER_ID}): {admin}?user={OWNER_USER_ID}",
            f"    a viewer ({VIEWER_USER_ID}, no role: reads, cannot approve):",
            f"      {admin}?user={VIEWER_USER_ID}",
            "  and open 'One apron arrived torn (order #1001)' from the case queue.",
            "  Or on the operator page:",
        ]
    lines += [
        f"  1. Open {web}/operator/login and paste this staff token for sam.approver",
        f"     (who may approve up to {limit}):",
        f"     {token}",
        "  2. Open the case 'One apron arrived torn (order #1001)':",
        f"     {web}/operator/cases/{demo.case_id}",
        f"  {demo.story}",
    ]
    if demo.awaiting_approval:
        lines += [
            "  3. Read the checks, then press 'Approve $48.00' ('Approve' in the Shopify admin).",
            "  4. Reload: the action goes queued -> succeeded, with the Stripe refund id,",
            "     and the audit trail shows every step.",
        ]
    if helpdesk:
        lines += [
            "  Maya also wrote to the shop's Gorgias helpdesk (the Gorgias sandbox); the ticket",
            "  arrived in Caseward as a conversation. Its sidebar, as an agent sees it (the link",
            f"  opens for ten minutes): {helpdesk}",
        ]
    if admin:
        lines += [
            "  Settings shows the shop's brakes (at most $500.00 or 20 actions an hour); the",
            "  owners hear of a tripped brake by email (instance/mail-outbox) and in the Slack",
            "  sandbox's channel (http://127.0.0.1:12116/_sandbox/posts, with the header",
            "  X-Sandbox-Control-Token: caseward-demo-slack-control).",
            "  'History check' in the app's menu shows what Caseward's checks would have",
            "  stopped or questioned in the shop's last 80 days at Stripe, before Caseward",
            "  (a refund made twice, a refund on a disputed payment, a 60%-off code).",
            "  The owner's Policy page replays that past and Maya's refund under the rules typed",
            "  there ('See what this would have done'), saving nothing: try approved by the",
            "  policy itself up to $10.00, two people above $15.00, no single refund above $40.00.",
            f"  '{SIGNAL_SUBJECT}' in the case queue shows an abuse signal: Theo says his",
            "  order never arrived, the carrier marked it delivered, so a person decides.",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """The demo process: wait for the stack, seed once, print where things stand, stay up."""
    settings = Settings.from_env()
    web = settings.public_url or "http://127.0.0.1:5000"
    _wait_for(f"{web}/health")
    _wait_for(settings.stripe_api_base + "/v1/charges", accept_status=401)
    upgrade(settings.database_url)
    session_factory = make_session_factory(make_engine(settings.database_url))
    with session_factory() as session:
        demo = open_demo(
            session,
            settings=settings,
            box=secret_box(settings),
            secret_key=DEMO_SECRET_KEY,
            restricted_key=DEMO_RESTRICTED_KEY,
            web=web,
        )
        seed_signal_case(
            session, settings=settings, box=secret_box(settings), secret_key=DEMO_SECRET_KEY
        )
        session.commit()
    _hand_over(settings.instance_path / PAYMENT_HANDOFF, demo.payment_id)
    admin = f"{settings.shopify_api_base}/admin-standin/store/{DEMO_SHOP}/apps/{APP_HANDLE}"
    # The stand-in answers 200 once the sandbox has seeded the store with that payment.
    _wait_for(f"{admin}?user={APPROVER_USER_ID}")
    with session_factory() as session:
        shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
        token = issue_token(
            session,
            shop=shop,
            user_id=APPROVER,
            issued_by=system_actor("demo", Surface.CONSOLE),
            lifetime=timedelta(hours=12),
            now=utcnow(),
            label="demo sign-in",
            console=True,
        ).secret
        session.commit()
    helpdesk = None
    control_token = os.environ.get("GORGIAS_SANDBOX_CONTROL_TOKEN")
    if settings.gorgias_api_base and control_token:
        # The sandbox serves each account at its own host, as Gorgias does.
        _wait_for(
            f"{settings.gorgias_api_base}/api/account",
            accept_status=401,
            headers={"Host": f"{GORGIAS_DEMO_ACCOUNT}.gorgias.com"},
        )
        with session_factory() as session:
            helpdesk = connect_demo_helpdesk(
                session,
                settings=settings,
                box=secret_box(settings),
                web=web,
                control_token=control_token,
            )
    stripe_control = os.environ.get("STRIPE_SANDBOX_CONTROL_TOKEN")
    if stripe_control:
        queue = Queue(settings.background_queue_name, connection=connect_redis(settings))
        with session_factory() as session:
            check_demo_history(
                session,
                settings=settings,
                control_token=stripe_control,
                enqueue=lambda scan: enqueue_scan(queue, scan),
            )
    print(ready_message(demo, web, token, admin, helpdesk), flush=True)
    signal.sigwait({signal.SIGINT, signal.SIGTERM})


# A few months of the linen shop's past at Stripe, before Caseward: clean records, and the
# problems the history check must find (its rules: app/history_audit/findings.py).
DEMO_HISTORY_COUNTS = {"refund": 36, "customer_credit": 8, "discount": 6, "subscription_cancel": 3}
# The rules the ready message suggests trying on the policy page's what-if: over that past
# (clean refunds and credits of $5.00 to $17.95, the planted $35.00 ones) and Maya's $48.00
# refund, they would have approved some by themselves, sent some to two people and blocked
# Maya's, and left the rest to one person as the defaults do.
WHAT_IF_EXAMPLE = {
    "auto_approve_ceiling": "10.00",
    "two_person_threshold": "15.00",
    "refund_ceiling": "40.00",
}


def demo_history(now: datetime) -> list[dict[str, object]]:
    """The records ``check_demo_history`` seeds: clean ones over the last 80 days, and
    three planted problems: the same $35.00 refunded twice within an hour, a refund on a
    payment the customer then disputed, and a 60%-off code (the policy allows 50%)."""
    records: list[dict[str, object]] = list(
        seeding.spread_history(
            DEMO_HISTORY_COUNTS, start=now - timedelta(days=80), end=now - timedelta(days=2)
        )
    )
    day = 86_400
    twice = int((now - timedelta(days=21)).timestamp())
    records += [
        {
            "kind": "refund",
            "created": twice,
            "amount": 3500,
            "payment": "torn-throw",
            "payment_amount": 9000,
            "customer": "ines",
        },
        {
            "kind": "refund",
            "created": twice + 1800,
            "amount": 3500,
            "payment": "torn-throw",
            "customer": "ines",
        },
        {
            "kind": "refund",
            "created": twice - 9 * day,
            "amount": 6400,
            "disputed": True,
            "customer": "theo",
        },
        {"kind": "discount", "created": twice - 30 * day, "percent_off": 60, "code": "FRIENDS60"},
    ]
    return records


def check_demo_history(
    session: Session,
    *,
    settings: Settings,
    control_token: str,
    enqueue: Callable[[HistoryScan], object],
    account: str = DEMO_ACCOUNT_ID,
) -> bool:
    """On the first start: write the linen shop's past into the Stripe sandbox's demo
    account (:func:`demo_history`) and start the history check over it, as connecting
    Stripe starts it for a real shop. False when the shop was checked before (the sandbox
    keeps what it was given in its snapshot)."""
    shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
    if session.scalars(select(HistoryScan.id).where(HistoryScan.shop_id == shop.id)).first():
        return False
    now = utcnow()
    seeding.seed_history(settings.stripe_api_base, control_token, account, demo_history(now))
    scan = start_scan(
        session, shop=shop, provider="stripe", actor=system_actor("demo", Surface.CONSOLE), now=now
    )
    session.commit()
    enqueue(scan)
    return True


def connect_demo_helpdesk(
    session: Session, *, settings: Settings, box: SecretBox, web: str, control_token: str
) -> str:
    """Connect the linen shop to the Gorgias sandbox's demo account as the README tells a
    merchant to, point its HTTP integration at this app, and let Maya write on her ticket
    so it arrives; returns a signed link to the ticket's sidebar (valid ten minutes)."""
    shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
    connection = gorgias_connection(session, shop.id)
    if connection is None:
        connection = save_gorgias_connection(
            session,
            shop=shop,
            actor=AS_OWNER,
            domain=GORGIAS_DEMO_ACCOUNT,
            username=GORGIAS_DEMO_API_USER,
            api_key=GORGIAS_DEMO_API_KEY,
            box=box,
            check=lambda account: check_account(settings, connect_redis(settings), account),
            now=utcnow(),
        ).connection
        session.commit()
    secret = box.decrypt(connection.encrypted_webhook_secret or b"")
    control = {"X-Sandbox-Control-Token": control_token}
    base = settings.gorgias_api_base
    domain = f"{GORGIAS_DEMO_ACCOUNT}.gorgias.com"
    # The sandbox starts empty of integrations each time: set the demo's up again, as
    # docs/gorgias.md asks a merchant to.
    for trigger in CALL_TRIGGERS:
        requests.post(
            f"{base}/_sandbox/accounts/{domain}/integrations",
            json={
                "url": f"{web}/helpdesk/gorgias/{connection.id}/events",
                "headers": {SECRET_HEADER: secret},
                "triggers": [trigger],
                "body_template": call_body_template(trigger),
                "name": f"Caseward ({trigger})",
            },
            headers=control,
            timeout=10,
        ).raise_for_status()
    ticket_id = int(
        requests.post(
            f"{base}/_sandbox/accounts/{domain}/tickets",
            json={
                "customer_email": "maya@example.com",
                "customer_name": "Maya Lin",
                "subject": SUBJECT,
                "body_text": MAYAS_MESSAGE,
            },
            headers=control,
            timeout=10,
        ).json()["id"]
    )
    requests.post(
        f"{base}/_sandbox/tickets/{ticket_id}/customer_writes",
        json={"body_text": "It is the apron with the torn seam; the other one is fine."},
        headers=control,
        timeout=10,
    ).raise_for_status()
    link = requests.get(
        f"{web}/helpdesk/gorgias/{connection.id}/sidebar-link",
        params={"ticket_id": ticket_id},
        headers={SECRET_HEADER: secret},
        timeout=10,
    )
    link.raise_for_status()
    return str(link.json()["url"])


def _hand_over(path: Path, payment_id: str) -> None:
    """Write the payment's id for the Shopify sandbox whole, by renaming a finished file
    into place: the sandbox reads the file as soon as it appears."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(payment_id + "\n")
    os.replace(partial, path)


def _wait_for(
    url: str,
    accept_status: int = 200,
    timeout: float = 60.0,
    headers: dict[str, str] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2, headers=headers).status_code == accept_status:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    sys.exit(f"{url} did not come up within {timeout:.0f} s")


if __name__ == "__main__":
    main()
