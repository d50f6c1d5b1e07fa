"""The case bench: synthetic shops' cases run end to end, judged from the providers.

    .venv/bin/python tests/benchmarks/bench_cases.py [--cases 300] [--seed 39]
        [--concurrency 6] [--doors widget,admin,macros,mcp]

``--doors`` runs only the plan's cases through those doors (the same cases, numbers and
shops as in the whole plan).

The sequence:

1. a database and a Redis database number of their own (``bench_money_path.database``,
   ``redis_server``),
   the Stripe sandbox as a process (refundFail refunds failing 4 s after they succeed,
   createDispute charges disputed at once), the Gorgias and Anthropic sandboxes as
   processes;
2. :func:`case_shops.generate` makes the plan; each shop gets a Stripe account of its
   own, its staff (an approver with a staff token, a helpdesk email and a Shopify user id),
   a Shopify install, its Stripe connection with writes on and its webhook endpoint, a
   Gorgias account connected with its HTTP integrations calling the web app
   (:func:`case_surfaces.connect_helpdesk`) and an MCP agent credential; every order is
   paid at the sandbox by its customer (the merchant's earlier refunds made there
   directly), and our copy of it kept with its shipment;
3. two web apps under gunicorn, one per drafter (the drafter lives in the worker that
   serves a web's background queue): workers with no Anthropic key (the offline rules)
   and workers with the sandbox's key (Claude, no retries), every worker on the one
   money queue; and the sweeper (looking up unclear outcomes after 1 s);
4. ``--concurrency`` cases at a time, each through its door (:class:`case_shops.Door`):
   - widget: the customer writes on the storefront chat, POSTed as Shopify's app proxy
     forwards it (signed; a logged-in customer unless the case is of an unverified one),
     and a worker drafts; then a person reads the case and approves, through the staff
     API, or in the embedded admin (its JSON API and the case page's approve form, each
     request with a fresh Shopify session token; the form's post is the click);
   - Gorgias, macros: the customer opens a ticket at the Gorgias sandbox, whose HTTP
     integration calls Caseward, which prepares the case into an internal note as the
     message arrives (the shop's ``prepare_on_arrival``); an agent reads the note and the
     sidebar and applies "caseward: approve" (one click);
   - Gorgias, MCP: the ticket as above, in a shop that leaves preparing to its agent: an
     agent on ``/mcp`` finds the case by the customer's email, reads it and its orders,
     slips ``approved`` into a proposal (which must be refused) and proposes the line's
     refund; a person approves in the admin.
   A Claude draft holds the model for itself alone: the sandbox's script is one queue, so
   its answer is queued just before the draft is asked for and the draft waited for. A
   person approves only a proposal every check passed, with the digest they read; the
   rest (a failed check, a blocked proposal) is left for a person's decision (an
   escalation). For a lost response a ``drop_after_commit`` fault is armed on the shop's
   account before the approval; for an amount changed after approval the worker's read
   of the payment is held at the sandbox while the merchant refunds at Stripe directly,
   then let go. The case then is waited for until it settles (on a ticket: until the
   provider's status is posted there);
5. everything is judged from the Stripe sandbox's refunds (by Caseward's action id in
   their metadata) and from what the customer read (the chat's messages; on a ticket,
   what Caseward posted to it at the Gorgias sandbox): duplicate provider actions, refunds
   above the captured amount, customer messages saying money moved without a
   provider-reported state behind them, messages posted to a ticket twice (each must be
   0, else exit 1, naming the cases); Caseward's requests to Gorgias and its 429s;
   each case's outcome against the plan's, per situation and per door; escalations
   (cases with a person) and the needless ones; approvals and clicks per routine case;
   fields staff typed besides the approval; the agent's approvals refused; and from the
   customer's first message to the message stating the provider's success.

Not covered here: Shopify as the refund provider; on a ticket, the shipment and the
request to verify, which Caseward leaves to the agent (see ``case_shops.FITS``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import requests
import stripe
from bench_drafting import APP_KEY, APP_SECRET, Storefront, anthropic_sandbox
from bench_money_path import (
    REPO,
    Sandbox,
    bench_settings,
    percentile,
    posted_twice,
    sandbox_process,
    web_process,
    worker_env,
    workers,
)
from benchmarks.figures import record
from case_shops import (
    AGENT_SHOPS,
    GORGIAS_SHOP,
    NEEDS_A_PERSON,
    ROUTINE,
    CasePlan,
    Door,
    Outcome,
    Plan,
    Situation,
    generate,
)
from case_surfaces import (
    AdminPerson,
    Helpdesk,
    McpAgent,
    Ticket,
    agent_credential,
    answer_of,
    connect_helpdesk,
    our_message_id,
    posted_at,
)
from redis import Redis
from rq.job import Job, JobStatus
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.actors import Surface, staff
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.connections.service import save_stripe_connection
from app.conversations.models import Author, Conversation, Message
from app.crypto import SecretBox
from app.db import make_engine, make_session_factory
from app.demo import register_webhook_endpoint
from app.execution.models import Action
from app.helpdesk.connection import set_prepare_on_arrival
from app.helpdesk.sidebar import ticket_ref
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import set_writes_enabled
from app.staff.tokens import issue_token
from integrations.stripe import seeding
from integrations.stripe.sandbox import DEMO_PERMISSIONS

OWNER, APPROVER = "bench.owner", "bench.approver"
# The approver as the helpdesk knows them (the macros' sender) and as Shopify's admin does.
APPROVER_EMAIL = "approver@cases.example"
ADMIN_USER = "4201"
STRIPE_PORT = 13110
GORGIAS_PORT = 13111
CASE_DEADLINE = 120.0  # seconds a case may take to settle on a loaded machine
REFUND_FAILURE_DELAY = 4.0
# Caseward's words that say money moved; each must stand on a provider's report.
MONEY_MOVED = re.compile(
    r"has been (?:made|processed|issued|refunded|credited|sent)|(?:was|were|been) refunded"
    r"|refund (?:is|was) (?:complete|done|processed)|credited",
    re.IGNORECASE,
)
COUNTING = ("pending", "requires_action", "succeeded")
# ``--doors``' names for the doors.
DOOR_NAMES = {"widget": Door.WIDGET, "admin": Door.ADMIN, "macros": Door.GORGIAS, "mcp": Door.MCP}


# ------------------------------------------------------------------ seeding


@dataclass
class SeededShop:
    domain: str
    shop_id: uuid.UUID
    account: str  # the Stripe account id
    stripe: stripe.StripeClient  # its secret key, for provider truth and direct refunds
    token: str  # the approver's staff token
    helpdesk: Helpdesk
    agent_secret: str  # the MCP agent's credential
    payments: dict[str, str] = field(default_factory=dict)  # order name -> payment intent


def seed_plan(
    plan: Plan,
    sandbox: Sandbox,
    gorgias: Sandbox,
    factory: sessionmaker[Session],
    box: SecretBox,
    webs: dict[str, str],
) -> dict[str, SeededShop]:
    now = utcnow()
    seeded = {}
    for key, shop_plan in plan.shops.items():
        account = sandbox.control(
            "POST", "/accounts", {"restricted_keys": [{"permissions": DEMO_PERMISSIONS}]}
        )
        client = seeding.client(account["secret_key"], sandbox.url)
        owner = staff(OWNER, Surface.STAFF_API)
        with factory() as session:
            shop = Shop(
                domain=f"cases-{key}-{uuid.uuid4().hex[:6]}.myshopify.com", name=shop_plan.name
            )
            session.add(shop)
            session.flush()
            limits = {currency: 10_000_000 for currency in ("usd", "eur", "jpy")}
            for user, role, email in (
                (OWNER, StaffRole.OWNER, None),
                (APPROVER, StaffRole.APPROVER, APPROVER_EMAIL),
                (ADMIN_USER, StaffRole.APPROVER, None),
            ):
                session.add(
                    StaffMember(
                        shop_id=shop.id,
                        user_id=user,
                        role=role,
                        email=email,
                        name=user,
                        approval_limits=limits,
                    )
                )
            # Installed as token exchange leaves it: the admin's session tokens admit its staff.
            session.add(
                ShopifyInstall(
                    shop_id=shop.id,
                    encrypted_access_token=box.encrypt(f"shpat_{uuid.uuid4().hex}"),
                    scopes="read_orders,write_orders",
                    installed_at=now,
                )
            )
            session.flush()
            connection = save_stripe_connection(
                session,
                shop=shop,
                actor=owner,
                api_key=account["restricted_keys"][0]["key"],
                livemode=False,
                webhook_secret=None,
                box=box,
                now=now,
            ).connection
            set_writes_enabled(session, shop=shop, actor=owner, enabled=True, now=now)
            token = issue_token(
                session,
                shop=shop,
                user_id=APPROVER,
                issued_by=owner,
                lifetime=timedelta(days=1),
                now=now,
            )
            drafter = next(name for name, keys in GORGIAS_SHOP.items() if key in keys)
            helpdesk = connect_helpdesk(
                session,
                gorgias,
                shop=shop,
                owner=owner,
                agent_email=APPROVER_EMAIL,
                web=webs[drafter],
                box=box,
            )
            if key in AGENT_SHOPS:
                set_prepare_on_arrival(session, shop=shop, actor=owner, enabled=False, now=now)
            this = SeededShop(
                shop.domain,
                shop.id,
                account["id"],
                client,
                token.secret,
                helpdesk,
                agent_credential(session, shop, owner),
            )
            for customer_plan in shop_plan.customers:
                _seed_customer(session, this, shop_plan.currency, customer_plan, now)
            session.commit()
            register_webhook_endpoint(
                session, connection, stripe=client, base_url=webs["offline"], box=box, now=now
            )
            session.commit()
        seeded[key] = this
    return seeded


def _seed_customer(
    session: Session, shop: SeededShop, currency: str, plan: Any, now: datetime
) -> None:
    stripe_customer = None
    payments = []
    for order in plan.orders:
        paid = seeding.paid_checkout(
            shop.stripe,
            email=plan.email,
            name=plan.name,
            amount=order.total,
            currency=currency,
            payment_method=order.payment_method,
            customer_id=stripe_customer,
        )
        stripe_customer = paid.customer_id
        payments.append(paid.payment_intent_id)
        shop.payments[order.name] = paid.payment_intent_id
        if order.refunded_before:
            shop.stripe.v1.refunds.create(
                params={"payment_intent": paid.payment_intent_id, "amount": order.refunded_before}
            )
    customer = Customer(
        shop_id=shop.shop_id,
        email=plan.email,
        name=plan.name,
        shopify_customer_id=f"gid://shopify/Customer/{plan.number}",
        stripe_customer_id=stripe_customer,
    )
    session.add(customer)
    session.flush()
    for order, payment in zip(plan.orders, payments, strict=True):
        placed = now - timedelta(days=12 if order.delivered else 4)
        session.add(
            Order(
                shop_id=shop.shop_id,
                customer_id=customer.id,
                name=order.name,
                currency=currency,
                total=order.total,
                payment_provider="stripe",
                payment_id=payment,
                lines=[
                    {
                        "id": line.id,
                        "title": line.title,
                        "quantity": line.quantity,
                        "paid": line.paid,
                    }
                    for line in order.lines
                ],
                created_at=placed,
                fulfilled_at=placed + timedelta(days=1),
                delivered_at=placed + timedelta(days=5) if order.delivered else None,
                shipments=[_shipment(order.name, placed, delivered=order.delivered)],
            )
        )


def _shipment(name: str, placed: datetime, *, delivered: bool) -> dict[str, Any]:
    shipped = placed + timedelta(days=1)
    return {
        "status": "delivered" if delivered else "in_transit",
        "carrier": "UPS",
        "tracking_number": f"1Z{name.lstrip('#'):0>16}",
        "tracking_url": None,
        "shipped_at": shipped.isoformat(),
        "delivered_at": (placed + timedelta(days=5)).isoformat() if delivered else None,
        "estimated_delivery": None if delivered else (placed + timedelta(days=7)).isoformat(),
    }


# ------------------------------------------------------------------ running a case


@dataclass
class Rig:
    factory: sessionmaker[Session]
    redis: Redis
    stripe: Sandbox
    anthropic: Sandbox
    gorgias: Sandbox
    webs: dict[str, str]  # drafter -> the web app serving its shoppers
    shops: dict[str, SeededShop]
    model_lock: threading.Lock = field(default_factory=threading.Lock)
    # One approval at a time per shop, until its action has left the queue: a fault armed on
    # the shop's Stripe account is then taken by that approval's refund alone.
    approving: dict[str, threading.Lock] = field(default_factory=dict)

    def admin(self, shop: SeededShop) -> AdminPerson:
        return AdminPerson(self.webs["offline"], shop.domain, ADMIN_USER, APP_KEY, APP_SECRET)


@dataclass
class Ran:
    plan: CasePlan
    sent_at: float  # wall clock of the customer's POST
    case_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None
    ticket: Ticket | None = None  # the case's Gorgias ticket, on the helpdesk's doors
    approvals: int = 0  # the people's approve clicks (a call, a form post, a macro)
    clicks: int = 0  # every click of a person: approvals and the helpdesk's other macros
    typed: int = 0  # fields the staff actor submitted besides the approval's digest
    # Proposals the staff actor left for a person's decision: a check failed on them.
    declined: int = 0
    # Approvals the MCP agent slipped into a proposal, and how many were refused.
    agent_approvals: int = 0
    agent_refused: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Waiting:
    """A proposal a person approves: what they approve it by, and its amount."""

    id: str
    digest: str
    amount: int


def run_case(rig: Rig, plan: CasePlan) -> Ran:
    shop = rig.shops[plan.shop]
    ran = Ran(plan, time.time())
    try:
        if plan.door in (Door.GORGIAS, Door.MCP):
            _helpdesk_case(rig, ran, shop)
        else:
            _widget_case(rig, ran, shop)
        _settled(rig, ran)
    except Exception as failed:
        ran.error = f"{type(failed).__name__}: {failed}"
    return ran


def _drafting(rig: Rig, plan: CasePlan) -> AbstractContextManager[object]:
    """Claude's scripted answer queued for this case's draft alone, or nothing to hold."""
    if plan.model_answer is None:
        return nullcontext()
    return _scripted(rig, plan.model_answer)


@contextmanager
def _scripted(rig: Rig, answer: dict[str, Any]) -> Iterator[None]:
    with rig.model_lock:
        rig.anthropic.control("DELETE", "/answers")
        rig.anthropic.control(
            "POST", "/answers", {"answers": [{"kind": "tool_use", "input": answer}]}
        )
        try:
            yield
        finally:
            rig.anthropic.control("DELETE", "/answers")


def _widget_case(rig: Rig, ran: Ran, shop: SeededShop) -> None:
    with _drafting(rig, ran.plan):
        message_id = _write(rig, ran, shop)
        _drafted(rig, message_id)
    with rig.factory() as session:
        message = session.get(Message, message_id)
        assert message is not None
        conversation = session.get(Conversation, message.conversation_id)
        assert conversation is not None
        ran.conversation_id, ran.case_id = conversation.id, conversation.case_id
    if ran.case_id is None:
        return
    if ran.plan.door == Door.ADMIN:
        _admin_acts(rig, ran, shop)
        return
    headers = {"Authorization": f"Bearer {shop.token}"}
    web = rig.webs[ran.plan.drafter]
    case = requests.get(f"{web}/api/cases/{ran.case_id}", headers=headers, timeout=30).json()

    def approve(proposal: Waiting) -> str:
        body = {"digest": proposal.digest}
        ran.typed += len(body) - 1
        answer = requests.post(
            f"{web}/api/proposals/{proposal.id}/approve", json=body, headers=headers, timeout=30
        )
        if answer.status_code != 200:
            raise RuntimeError(f"approval answered {answer.status_code}: {answer.text[:200]}")
        return str(answer.json()["action"]["id"])

    for proposal in _decide(ran, case["proposals"]):
        _approving(rig, ran, shop, proposal, approve)


def _admin_acts(rig: Rig, ran: Ran, shop: SeededShop) -> None:
    """A person in the Shopify admin reads the case and presses approve on its page: the
    form's post, with the digest the page shows."""
    admin = rig.admin(shop)
    assert ran.case_id is not None
    case_id = ran.case_id

    def approve(proposal: Waiting) -> str:
        forms = admin.approve_forms(case_id)
        url = next((url for url in forms if proposal.id in url), None)
        if url is None:
            raise RuntimeError("the case page offers no approve button")
        answer = admin.approve(url, forms[url])
        if answer.status_code != 200:
            raise RuntimeError(f"approval answered {answer.status_code}: {answer.text[:200]}")
        return str(answer.json()["action"]["id"])

    for proposal in _decide(ran, admin.case(case_id)["proposals"]):
        _approving(rig, ran, shop, proposal, approve)


def _decide(ran: Ran, proposals: list[dict[str, Any]]) -> list[Waiting]:
    """A careful person approves only what every check passed; the rest (a failed check,
    a blocked proposal) they decide on."""
    waiting = []
    for proposal in proposals:
        passed = all(check["passed"] for check in proposal["verdict"]["checks"])
        if proposal["status"] == "awaiting_approval" and passed:
            waiting.append(
                Waiting(proposal["id"], proposal["digest"], proposal["amount"]["amount"])
            )
        elif proposal["status"] in ("awaiting_approval", "blocked"):
            ran.declined += 1
    return waiting


def _helpdesk_case(rig: Rig, ran: Ran, shop: SeededShop) -> None:
    """The customer writes to the shop's helpdesk. On the macros' door Caseward prepares
    the case as the message arrives, and an agent reads the note and the sidebar and
    approves by macro; on the MCP door an agent reads the case and proposes, and a person
    approves in the admin."""
    plan = ran.plan
    ticket = Ticket(rig.gorgias, shop.helpdesk)
    ran.ticket = ticket
    deadline = time.monotonic() + CASE_DEADLINE
    if plan.door == Door.MCP:
        ran.sent_at = time.time()
        ticket.open(plan.customer.email, plan.customer.name, plan.text)
        _ticket_kept(rig, ran, shop)
        _agent_proposes(rig, ran, shop)
        _admin_acts(rig, ran, shop)
        return
    with _drafting(rig, plan):
        ran.sent_at = time.time()
        ticket.open(plan.customer.email, plan.customer.name, plan.text)
        _ticket_kept(rig, ran, shop)
        ticket.note(("Caseward drafted",), 0, deadline)
    web = rig.webs[plan.drafter]
    shown = ticket.sidebar(web).get("proposals", [])
    passed = [
        p
        for p in shown
        if p["status"] == "awaiting_approval" and all(c["passed"] for c in p["checks"])
    ]
    ran.declined += sum(p["status"] in ("awaiting_approval", "blocked") for p in shown) - len(
        passed
    )
    if not passed:
        return
    with rig.factory() as session:
        proposal = session.scalars(
            select(Proposal).where(
                Proposal.case_id == ran.case_id, Proposal.status == "awaiting_approval"
            )
        ).one()
        waiting = Waiting(str(proposal.id), proposal.digest, proposal.amount)

    def approve(proposal: Waiting) -> str:
        seen = len(ticket.messages())
        ticket.macro("approve", APPROVER_EMAIL)
        note = ticket.note(
            ("Approved", "Not approved", "No proposal", APPROVER_EMAIL), seen, deadline
        )
        if not note.startswith("Approved"):
            raise RuntimeError(f"the approve macro answered {note[:120]!r}")
        return _action_of(rig, proposal.id)

    _approving(rig, ran, shop, waiting, approve)


def _ticket_kept(rig: Rig, ran: Ran, shop: SeededShop) -> None:
    """Wait until Gorgias' call has been worked: the ticket a conversation with its case."""
    assert ran.ticket is not None
    deadline = time.monotonic() + CASE_DEADLINE
    while time.monotonic() < deadline:
        with rig.factory() as session:
            conversation = session.scalars(
                select(Conversation).where(
                    Conversation.shop_id == shop.shop_id,
                    Conversation.channel_ref == ticket_ref(ran.ticket.id),
                )
            ).first()
            if conversation is not None and conversation.case_id is not None:
                ran.conversation_id, ran.case_id = conversation.id, conversation.case_id
                return
        time.sleep(0.1)
    raise RuntimeError("the ticket never became a case")


def _agent_proposes(rig: Rig, ran: Ran, shop: SeededShop) -> None:
    """The agent finds the case by the customer's email, reads it and its orders, slips an
    approval into a proposal (which must be refused) and proposes the line the customer
    wrote about."""
    plan = ran.plan
    agent = McpAgent(rig.webs["offline"], shop.agent_secret)
    found, read, orders = agent.calls(
        ("find_case", {"customer_email": plan.customer.email}),
        ("read_case", {"case_id": str(ran.case_id)}),
        ("list_orders_and_payments", {"case_id": str(ran.case_id)}),
    )
    if str(ran.case_id) not in [c["case_id"] for c in answer_of(found)["cases"]]:
        raise RuntimeError("the agent did not find the case by the customer's email")
    answer_of(read)
    order = next(o for o in answer_of(orders)["orders"] if o["name"] == plan.order.name)
    proposal = {
        "kind": "refund",
        "target": order["payment_id"],
        "amount": plan.line.unit,
        "currency": order["currency"],
        "line_items": [{"line_id": plan.line.id, "amount": plan.line.unit}],
        "params": {"reason": "requested_by_customer"},
        "reason": f"One {plan.line.title} arrived damaged.",
    }
    smuggled, proposed = agent.calls(
        (
            "propose_action",
            {"case_id": str(ran.case_id), "proposal": {**proposal, "approved": True}},
        ),
        ("propose_action", {"case_id": str(ran.case_id), "proposal": proposal}),
    )
    ran.agent_approvals += 1
    ran.agent_refused += smuggled.is_error
    answer_of(proposed)


def _action_of(rig: Rig, proposal_id: str) -> str:
    deadline = time.monotonic() + CASE_DEADLINE
    while time.monotonic() < deadline:
        with rig.factory() as session:
            action = session.scalars(
                select(Action.id).where(Action.proposal_id == uuid.UUID(proposal_id))
            ).first()
        if action is not None:
            return str(action)
        time.sleep(0.1)
    raise RuntimeError("the approval made no action")


def _write(rig: Rig, ran: Ran, shop: SeededShop) -> uuid.UUID:
    ran.sent_at = time.time()
    customer = "" if ran.plan.situation == Situation.UNVERIFIED else ran.plan.customer.number
    return Storefront(rig.webs[ran.plan.drafter], shop.domain).send(customer, ran.plan.text)


def _drafted(rig: Rig, message_id: uuid.UUID) -> None:
    deadline = time.monotonic() + CASE_DEADLINE
    while time.monotonic() < deadline:
        try:
            status = Job.fetch(f"draft-{message_id}", connection=rig.redis).get_status()
        except Exception:
            status = None
        if status in (JobStatus.FINISHED, JobStatus.FAILED):
            if status == JobStatus.FAILED:
                raise RuntimeError("the drafting job failed")
            return
        time.sleep(0.1)
    raise RuntimeError("the draft did not come")


def _approving(
    rig: Rig,
    ran: Ran,
    shop: SeededShop,
    proposal: Waiting,
    approve: Callable[[Waiting], str],
) -> None:
    """One approval (one click), with the faults of the plan's situation set up around
    it, held until its action has left the queue."""
    payment = shop.payments[ran.plan.order.name]
    lock = rig.approving.setdefault(ran.plan.shop, threading.Lock())
    with lock:
        hold = None
        if ran.plan.situation == Situation.LOST_RESPONSE:
            rig.stripe.control(
                "POST",
                "/faults",
                {
                    "kind": "drop_after_commit",
                    "method": "POST",
                    "path": "/v1/refunds",
                    "account": shop.account,
                },
            )
        if ran.plan.situation == Situation.AMOUNT_CHANGED:
            hold = rig.stripe.control(
                "POST",
                "/faults",
                {
                    "kind": "hold",
                    "method": "GET",
                    "path": f"/v1/payment_intents/{payment}",
                    "ms": 30_000,
                },
            )["id"]
        ran.approvals += 1
        ran.clicks += 1
        action_id = approve(proposal)
        if hold is not None:
            _merchant_refunds_meanwhile(rig, shop, payment, hold, proposal.amount)
        _left_queue(rig, action_id)


def _left_queue(rig: Rig, action_id: str) -> None:
    deadline = time.monotonic() + CASE_DEADLINE
    while time.monotonic() < deadline:
        with rig.factory() as session:
            action = session.get(Action, uuid.UUID(action_id))
            if action is not None and action.status not in ("queued", "submitting"):
                return
        time.sleep(0.1)
    raise RuntimeError("the action stayed queued")


def _merchant_refunds_meanwhile(
    rig: Rig, shop: SeededShop, payment: str, hold: str, approved: int
) -> None:
    """Once the worker's read of the payment waits at the hold, the merchant refunds at
    Stripe so that less than the approved amount is left; then the read goes on."""
    deadline = time.monotonic() + CASE_DEADLINE
    while not any(h["id"] == hold and h["waiting"] for h in rig.stripe.control("GET", "/holds")):
        if time.monotonic() > deadline:
            raise RuntimeError("the worker never read the payment")
        time.sleep(0.05)
    intent = shop.stripe.v1.payment_intents.retrieve(payment, params={"expand": ["latest_charge"]})
    charge = intent.latest_charge
    assert isinstance(charge, stripe.Charge)
    left = charge.amount_captured - charge.amount_refunded
    shop.stripe.v1.refunds.create(params={"payment_intent": payment, "amount": left - approved + 1})
    rig.stripe.control("POST", "/holds/release", {"id": hold})


SETTLED_ACTIONS = (
    "succeeded",
    "failed",
    "halted",
    "rejected",
    "canceled",
    "needs_decision",
    "cannot_run",
)


def _settled(rig: Rig, ran: Ran) -> None:
    """Wait until the case's actions have stopped moving and the customer was told their
    last status (a refund failing later: until it failed)."""
    deadline = time.monotonic() + CASE_DEADLINE
    while time.monotonic() < deadline:
        with rig.factory() as session:
            actions = (
                session.scalars(select(Action).where(Action.case_id == ran.case_id)).all()
                if ran.case_id
                else []
            )
            told = {(t.action_id, t.status) for t in customer_read(session, ran)}
            done = all(
                a.status in SETTLED_ACTIONS
                and (a.status not in ("succeeded", "failed") or (a.id, a.status) in told)
                for a in actions
            )
            late = ran.plan.expected == Outcome.REFUND_FAILED and not any(
                a.status == "failed" for a in actions
            )
        if done and not late:
            return
        time.sleep(0.25)
    raise RuntimeError("the case did not settle")


# ------------------------------------------------------------------ judging


@dataclass(frozen=True)
class Told:
    """One of Caseward's messages as the customer read it, and what it was about."""

    body: str
    action_id: uuid.UUID | None
    status: str | None
    at: float  # when the customer could read it (wall clock)


def customer_read(session: Session, ran: Ran) -> list[Told]:
    """What Caseward said to the customer: on the widget its messages in the chat; on a
    ticket, the public messages it posted there as the Gorgias sandbox holds them, each
    tied to its message by the ``external_id`` it was posted with."""
    if ran.ticket is None:
        return [
            Told(m.body or "", m.about_action_id, m.about_status, m.created_at.timestamp())
            for m in session.scalars(
                select(Message)
                .where(
                    Message.conversation_id == ran.conversation_id,
                    Message.author == Author.CASEWARD,
                )
                .order_by(Message.created_at)
            )
        ]
    read = []
    for posted in ran.ticket.told():
        ours = our_message_id(posted)
        message = session.get(Message, ours) if ours else None
        read.append(
            Told(
                posted.get("body_text") or "",
                message.about_action_id if message else None,
                message.about_status if message else None,
                posted_at(posted),
            )
        )
    return read


@dataclass
class Judged:
    ran: Ran
    outcome_ok: bool
    why: str
    escalated: bool
    confirmed_after: float | None  # seconds from the POST to the provider-confirmed message


def provider_refunds(shops: dict[str, SeededShop]) -> dict[str, list[dict[str, Any]]]:
    """Every refund at the Stripe sandbox, per payment intent."""
    found: dict[str, list[dict[str, Any]]] = {}
    for shop in shops.values():
        for refund in shop.stripe.v1.refunds.list(params={"limit": 100}).auto_paging_iter():
            found.setdefault(str(refund.payment_intent), []).append(refund.to_dict())
    return found


def invariants(
    factory: sessionmaker[Session],
    shops: dict[str, SeededShop],
    refunds: dict[str, list[dict[str, Any]]],
    ran: list[Ran],
) -> dict[str, list[str]]:
    """The three zero-invariants, each as the list of what broke it: Caseward's messages
    in the database, and what the customers of tickets read in Gorgias."""
    by_action = Counter(
        r["metadata"]["caseward_action_id"]
        for listed in refunds.values()
        for r in listed
        if (r.get("metadata") or {}).get("caseward_action_id")
    )
    duplicates = [f"action {a}: {n} refunds" for a, n in by_action.items() if n > 1]
    above = []
    for shop in shops.values():
        for payment in shop.payments.values():
            intent = shop.stripe.v1.payment_intents.retrieve(payment)
            refunded = sum(r["amount"] for r in refunds.get(payment, []) if r["status"] in COUNTING)
            if refunded > intent.amount_received:
                above.append(f"{payment}: {refunded} refunded of {intent.amount_received}")
    statuses = {
        r["metadata"]["caseward_action_id"]: (r["status"], r["created"])
        for listed in refunds.values()
        for r in listed
        if (r.get("metadata") or {}).get("caseward_action_id")
    }
    unreported = []
    with factory() as session:
        for message in session.scalars(select(Message).where(Message.author == Author.CASEWARD)):
            if not MONEY_MOVED.search(message.body or ""):
                continue
            at_provider = statuses.get(str(message.about_action_id))
            if (
                at_provider is None
                or message.about_status not in ("succeeded", "failed")
                or at_provider[1] > message.created_at.timestamp() + 1
            ):
                unreported.append(f"message {message.id}: {message.body[:80]!r}")
        for each in ran:
            if each.ticket is None or not each.ticket.id:
                continue
            for told in customer_read(session, each):
                if not MONEY_MOVED.search(told.body):
                    continue
                at_provider = statuses.get(str(told.action_id))
                if (
                    at_provider is None
                    or told.status not in ("succeeded", "failed")
                    or at_provider[1] > told.at + 1
                ):
                    unreported.append(f"ticket {each.ticket.id}: {told.body[:80]!r}")
    return {
        "duplicate provider actions": duplicates,
        "refunds above the refundable amount": above,
        "customer messages claiming an unreported state": unreported,
    }


def judge(
    factory: sessionmaker[Session], ran: Ran, refunds: dict[str, list[dict[str, Any]]]
) -> Judged:
    plan = ran.plan
    if ran.error is not None:
        return Judged(ran, False, ran.error, False, None)
    with factory() as session:
        case = session.get(Case, ran.case_id) if ran.case_id else None
        actions = (
            session.scalars(select(Action).where(Action.case_id == ran.case_id)).all()
            if case
            else []
        )
        shop_words = customer_read(session, ran)
        ids = {str(a.id) for a in actions}
        ours = [
            r
            for listed in refunds.values()
            for r in listed
            if (r.get("metadata") or {}).get("caseward_action_id") in ids
        ]
        escalated = case is not None and (case.status == "needs_attention" or ran.declined > 0)
        confirmed = next(
            (m.at - ran.sent_at for m in shop_words if m.status == "succeeded"),
            None,
        )
        why = ""
        if plan.expected == Outcome.REFUNDED:
            ok = [(r["amount"], r["status"]) for r in ours] == [
                (plan.refund, "succeeded")
            ] and confirmed is not None
            why = f"refunds {[(r['amount'], r['status']) for r in ours]}, expected {plan.refund}"
        elif plan.expected == Outcome.REFUND_FAILED:
            ok = (
                [(r["amount"], r["status"]) for r in ours] == [(plan.refund, "failed")]
                and any(m.status == "failed" for m in shop_words)
                and escalated
            )
            why = f"refunds {[(r['amount'], r['status']) for r in ours]}, escalated {escalated}"
        elif plan.expected == Outcome.NOTHING_SENT:
            ok = not ours and escalated
            why = f"refunds {len(ours)}, case {case.status if case else None}"
        elif plan.expected == Outcome.SHIPMENT:
            tracking = f"1Z{plan.order.name.lstrip('#'):0>16}"
            ok = not actions and any(tracking in (m.body or "") for m in shop_words)
            why = f"actions {len(actions)}, told {[m.body[:60] for m in shop_words]}"
        else:
            conversation = session.get(Conversation, ran.conversation_id)
            shown = " ".join(m.body or "" for m in shop_words)
            ok = (
                not actions
                and conversation is not None
                and conversation.identity_level == "none"
                and plan.order.name not in shown
                and bool(shop_words)
            )
            why = f"actions {len(actions)}, told {shown[:80]!r}"
    return Judged(ran, ok, "" if ok else why, escalated, confirmed if plan.refund else None)


# ------------------------------------------------------------------ the run


@contextmanager
def sweeper(env: dict[str, str]) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, "-m", "app.background", "sweeper"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=20)


@dataclass
class Report:
    judged: list[Judged]
    broken: dict[str, list[str]]
    wall: float
    # Caseward's requests to the Gorgias sandbox, and how many it refused with 429.
    gorgias_requests: int = 0
    gorgias_refused: int = 0

    def figures(self) -> dict[str, Any]:
        judged = self.judged
        routine = [j for j in judged if j.ran.plan.situation in ROUTINE]
        escalated = [j for j in judged if j.escalated]
        needless = [j for j in escalated if j.ran.plan.situation not in NEEDS_A_PERSON]
        confirmed = [j.confirmed_after for j in judged if j.confirmed_after is not None]
        per_situation = []
        for situation in Situation:
            of = [j for j in judged if j.ran.plan.situation == situation]
            if of:
                per_situation.append(
                    {
                        "situation": situation.value,
                        "cases": len(of),
                        "correct": sum(j.outcome_ok for j in of),
                        "offline": sum(j.ran.plan.drafter == "offline" for j in of),
                        "claude": sum(j.ran.plan.drafter == "claude" for j in of),
                        "agent": sum(j.ran.plan.drafter == "agent" for j in of),
                        "escalated": sum(j.escalated for j in of),
                    }
                )
        per_door = []
        for door in Door:
            of = [j for j in judged if j.ran.plan.door == door]
            routine_here = [j for j in of if j.ran.plan.situation in ROUTINE]
            per_door.append(
                {
                    "door": door.value,
                    "cases": len(of),
                    "correct": sum(j.outcome_ok for j in of),
                    "escalated": sum(j.escalated for j in of),
                    "routine_cases": len(routine_here),
                    "approvals_per_routine_case": round(
                        sum(j.ran.approvals for j in routine_here) / max(1, len(routine_here)), 3
                    ),
                    "clicks_per_routine_case": round(
                        sum(j.ran.clicks for j in routine_here) / max(1, len(routine_here)), 3
                    ),
                }
            )
        return {
            "cases": len(judged),
            "wall_seconds": round(self.wall, 1),
            "invariants": {name: len(found) for name, found in self.broken.items()},
            "resolved_correctly": sum(j.outcome_ok for j in judged),
            "resolved_correctly_share": round(sum(j.outcome_ok for j in judged) / len(judged), 4),
            "escalations": len(escalated),
            "needless_escalations": len(needless),
            "needless_escalation_share": round(len(needless) / max(1, len(escalated)), 4),
            "staff_approvals_per_routine_case": round(
                sum(j.ran.approvals for j in routine) / max(1, len(routine)), 3
            ),
            "staff_clicks_per_routine_case": round(
                sum(j.ran.clicks for j in routine) / max(1, len(routine)), 3
            ),
            "facts_typed_twice": sum(j.ran.typed for j in judged),
            "agent_approvals_slipped_in": sum(j.ran.agent_approvals for j in judged),
            "agent_approvals_refused": sum(j.ran.agent_refused for j in judged),
            "first_message_to_confirmed_seconds": {
                "p50": round(statistics.median(confirmed), 2) if confirmed else None,
                "p95": round(percentile(confirmed, 0.95), 2) if confirmed else None,
                "count": len(confirmed),
            },
            "gorgias_requests": {
                "sent": self.gorgias_requests,
                "refused_429": self.gorgias_refused,
            },
            "per_situation": per_situation,
            "per_door": per_door,
        }


def print_report(report: Report) -> None:
    figures = report.figures()
    print(
        f"\n{'situation':<32} {'cases':>5} {'correct':>7} {'offline':>7} {'claude':>6} "
        f"{'agent':>5} {'escalated':>9}"
    )
    for row in figures["per_situation"]:
        print(
            f"{row['situation']:<32} {row['cases']:>5} {row['correct']:>7} {row['offline']:>7} "
            f"{row['claude']:>6} {row['agent']:>5} {row['escalated']:>9}"
        )
    print(
        f"\n{'door':<32} {'cases':>5} {'correct':>7} {'escalated':>9} "
        f"{'approvals/routine':>17} {'clicks/routine':>14}"
    )
    for row in figures["per_door"]:
        print(
            f"{row['door']:<32} {row['cases']:>5} {row['correct']:>7} {row['escalated']:>9} "
            f"{row['approvals_per_routine_case']:>17} {row['clicks_per_routine_case']:>14}"
        )
    print()
    for name, found in report.broken.items():
        print(f"{name}: {len(found)} (goal 0)")
        for item in found[:10]:
            print(f"    {item}")
    share = figures["resolved_correctly_share"]
    print(
        f"resolved correctly: {figures['resolved_correctly']}/{figures['cases']} "
        f"({share:.1%}, goal >= 99%)"
    )
    print(
        f"escalations: {figures['escalations']}, needless {figures['needless_escalations']} "
        f"({figures['needless_escalation_share']:.1%} of escalations, goal <= 5%)"
    )
    print(
        f"staff clicks per routine case: {figures['staff_clicks_per_routine_case']} (goal 1; "
        f"approvals {figures['staff_approvals_per_routine_case']})"
    )
    print(f"facts typed twice: {figures['facts_typed_twice']} (goal 0)")
    print(
        f"approvals the MCP agent slipped into a proposal: "
        f"{figures['agent_approvals_slipped_in']}, refused "
        f"{figures['agent_approvals_refused']} (goal: all)"
    )
    timing = figures["first_message_to_confirmed_seconds"]
    print(
        f"first message to the provider-confirmed answer: p50 {timing['p50']} s, p95 "
        f"{timing['p95']} s ({timing['count']} cases with money)"
    )
    gorgias = figures["gorgias_requests"]
    print(
        f"requests to Gorgias: {gorgias['sent']}, refused 429 (over the account's limit): "
        f"{gorgias['refused_429']}"
    )
    print(f"wall time {figures['wall_seconds']} s; load average {os.getloadavg()}")
    for judged in report.judged:
        if not judged.outcome_ok:
            plan = judged.ran.plan
            print(
                f"  case {plan.number} ({plan.situation.value}, {plan.door.value}, "
                f"{plan.drafter}): {judged.why}"
            )


def run(cases: int, seed: int, concurrency: int, doors: frozenset[Door] | None = None) -> Report:
    plan = only_through(generate(cases, seed), doors)
    with ExitStack() as stack:
        settings = stack.enter_context(bench_settings("cases"))
        stripe_box = stack.enter_context(
            sandbox_process(
                "stripe",
                "--port",
                str(STRIPE_PORT),
                "--refund-failure-delay",
                str(REFUND_FAILURE_DELAY),
                "--dispute-delay",
                "0.1",
            )
        )
        gorgias_box = stack.enter_context(sandbox_process("gorgias", "--port", str(GORGIAS_PORT)))
        anthropic_box, api_key = stack.enter_context(anthropic_sandbox())
        anthropic_box.control(
            "POST",
            "/answers/default",
            {
                "answer": {
                    "kind": "tool_use",
                    "input": {
                        "summary": "unscripted",
                        "next_step": "needs_person",
                        "needs_person_reason": "unscripted",
                        "free_text": "",
                    },
                }
            },
        )
        key = SecretBox.generate_key()
        settings = replace(settings, encryption_keys=(key,), stripe_api_base=stripe_box.url)
        box = SecretBox([key])
        factory = make_session_factory(make_engine(settings.database_url))
        common = {
            "STRIPE_API_BASE": stripe_box.url,
            "SHOPIFY_API_KEY": APP_KEY,
            "SHOPIFY_API_SECRET": APP_SECRET,
            "CASEWARD_RECONCILE_DELAY": "1",
            "CASEWARD_RECONCILE_MAX_DELAY": "2",
            "CASEWARD_SWEEP_INTERVAL": "0.5",
            "CASEWARD_PENDING_REFRESH": "2",
            "CASEWARD_ANTHROPIC_MAX_RETRIES": "0",
            "GORGIAS_API_BASE": gorgias_box.url,
            # One agent handles every MCP case of its shop: Caseward's default is per person.
            "CASEWARD_AGENT_RATE_LIMIT": "6000/minute",
        }
        base = {
            name: value
            for name, value in worker_env(settings, **common).items()
            if name not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
        }
        envs = {
            "offline": {
                **base,
                "CASEWARD_BACKGROUND_QUEUE": f"{settings.background_queue_name}-offline",
            },
            "claude": {
                **base,
                "CASEWARD_BACKGROUND_QUEUE": f"{settings.background_queue_name}-claude",
                "ANTHROPIC_API_KEY": api_key,
                "ANTHROPIC_BASE_URL": anthropic_box.url,
            },
        }
        webs = {name: stack.enter_context(web_process(env)) for name, env in envs.items()}
        started = time.monotonic()
        shops = seed_plan(plan, stripe_box, gorgias_box, factory, box, webs)
        print(
            f"seeded {len(shops)} shops, {sum(len(s.payments) for s in shops.values())} "
            f"paid orders in {time.monotonic() - started:.1f} s"
        )
        for env in envs.values():
            stack.enter_context(
                workers(2, env, settings.queue_name, env["CASEWARD_BACKGROUND_QUEUE"])
            )
        stack.enter_context(sweeper(envs["offline"]))
        rig = Rig(
            factory,
            Redis.from_url(settings.redis_url),
            stripe_box,
            anthropic_box,
            gorgias_box,
            webs,
            shops,
        )
        started = time.monotonic()
        with ThreadPoolExecutor(concurrency) as pool:
            ran = list(pool.map(lambda case: run_case(rig, case), plan.cases))
        wall = time.monotonic() - started
        refunds = provider_refunds(shops)
        judged = [judge(factory, each, refunds) for each in ran]
        gorgias = gorgias_box.received()
        broken = invariants(factory, shops, refunds, ran)
        broken["messages posted to a ticket twice"] = posted_twice(gorgias)[1]
        return Report(
            judged,
            broken,
            wall,
            gorgias_requests=len(gorgias),
            gorgias_refused=sum(r["status"] == 429 for r in gorgias),
        )


def only_through(plan: Plan, doors: frozenset[Door] | None) -> Plan:
    """The plan's cases that come through ``doors`` (all: ``None``), their shops holding
    only those cases' customers (each case's customer is its own)."""
    if doors is None:
        return plan
    kept = [case for case in plan.cases if case.door in doors]
    customers = {case.customer.number for case in kept}
    shops = {
        key: replace(shop, customers=[c for c in shop.customers if c.number in customers])
        for key, shop in plan.shops.items()
    }
    return Plan(shops, kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--concurrency", type=int, default=6, help="cases in flight at once")
    parser.add_argument(
        "--doors",
        type=lambda names: frozenset(DOOR_NAMES[name] for name in names.split(",")),
        default=None,
        help=f"run only the plan's cases through these doors ({','.join(DOOR_NAMES)})",
    )
    args = parser.parse_args()
    print(f"{args.cases} cases, seed {args.seed}, {os.cpu_count()} cores, load {os.getloadavg()}")
    report = run(args.cases, args.seed, args.concurrency, args.doors)
    print_report(report)
    record("case_bench", report.figures())
    broken = [name for name, found in report.broken.items() if found]
    if broken:
        print(f"broken: {', '.join(broken)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
