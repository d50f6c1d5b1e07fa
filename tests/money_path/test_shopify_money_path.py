"""Refunds of Shopify orders on the money path, and one order's money refunded through
both Shopify and Stripe.

The linen shop of the other money-path tests, with the app also installed in its Shopify
store (a real token exchange against the Shopify sandbox over HTTP). Its Shopify order
for the two aprons was paid through Stripe by the case's payment intent: the same $96.00,
seen from two providers. Proposals go through the staff API, the executor runs in-process
with the adapters the worker builds, and the evidence is what each sandbox holds.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from fault_support import (
    action_json,
    approve,
    assert_unclear_at_once,
    case_json,
    refunds_of_action,
    reset_sandbox_switches,
    wait_for_status,
)
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Account, Staff, WorkerProcess, closed_port, wait_for
from redis import Redis
from rq import Queue
from shopify_support import deliver_webhook, serving_sandbox
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.cases.jobs import refresh_orders_of
from app.cases.models import Case, Customer
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.crypto import secret_box
from app.demo import LinenShop
from app.execution.executor import ExecutionContext, execute_action, reconcile_action
from app.execution.models import Action
from app.jobs.connection import connect_redis
from app.settings import Settings
from app.shopify.install import record_install
from integrations.shopify.auth import AdminVerified, ShopifyAuth
from integrations.shopify.sandbox import Fault, ShopifySandbox
from integrations.shopify.sandbox.state import parse_gid
from integrations.stripe.sandbox import StripeSandbox

CLIENT_ID = "caseward-money-path-client-id"
APP_SECRET = "shpss_money_path_app_secret_0123456789"
SHOP_OWNER = 1001
APRON = 4800
CAPTURED = 2 * APRON
SETTLED = ("succeeded", "failed", "rejected", "halted", "cannot_run", "needs_decision", "unknown")


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return replace(
        settings,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        shopify_api_base=shopify.url,
        # Patient, where the money path's tests wait 2 s: no fault here delays an answer
        # (a dropped one ends at once), one test holds a read inside Stripe, and a loaded
        # machine has taken longer than 2 s to answer a read.
        provider_timeout_seconds=30.0,
    )


@pytest.fixture(autouse=True)
def _clean_stripe(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


@dataclass(frozen=True)
class Store:
    """The linen shop's Shopify side: its domain, the aprons order and its line."""

    domain: str
    order: str
    apron_line: str
    customer: str


@pytest.fixture
def store(linen: LinenShop, shopify: ShopifySandbox, settings: Settings, session: Session) -> Store:
    """The app installed in the linen shop's store, whose order the case's payment paid."""
    from app.demo import SHOP_DOMAIN  # noqa: PLC0415

    shop = shopify.create_shop(SHOP_DOMAIN, owner_user_id=SHOP_OWNER)
    customer = shopify.seed_customer(
        shop.domain, email="maya@example.com", first_name="Maya", last_name="Lin"
    )
    two_days_ago = time.time() - 2 * 86400
    order = shopify.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Linen apron, natural", "quantity": 2, "price": APRON}],
        gateway="stripe",
        payment_reference=linen.payment_intent_id,
        fulfilled_at=two_days_ago,
        delivered_at=two_days_ago,
    )
    auth = ShopifyAuth(CLIENT_ID, APP_SECRET, api_base=shopify.url)
    try:
        verified = auth.verify_admin_request(
            "GET",
            "https://caseward.example.com/app",
            {
                "Authorization": "Bearer "
                + shopify.session_token(shop.domain, user_id=SHOP_OWNER, issued_at=time.time())
            },
            b"",
            patch_id_token_path="/app/patch-id-token",
        )
        assert isinstance(verified, AdminVerified), verified
        token = auth.exchange_offline_token(verified)
    finally:
        auth.close()
    record_install(
        session,
        domain=shop.domain,
        token=token,
        currency="usd",
        installer=staff(str(SHOP_OWNER), Surface.SHOPIFY_ADMIN),
        installer_is_account_owner=True,
        installer_email=None,
        box=secret_box(settings),
        now=utcnow(),
    )
    case = session.get(Case, linen.case_id)
    assert case is not None and case.customer_id is not None
    customer_row = session.get(Customer, case.customer_id)
    assert customer_row is not None
    customer_row.shopify_customer_id = customer
    session.commit()
    number = parse_gid(order, "Order")
    assert number is not None
    with shopify.store.lock:
        line = shopify.store.shop(shop.domain).orders[number].lines[0]
    return Store(shop.domain, order, f"gid://shopify/LineItem/{line.id}", customer)


def _propose(staff_: Staff, case_id: uuid.UUID, body: dict[str, Any]) -> dict[str, Any]:
    response = staff_.post(f"/api/cases/{case_id}/proposals", body)
    assert response.status_code == 201, response.get_json()
    proposal: dict[str, Any] = response.get_json()["proposal"]
    return proposal


def _shopify_refund(store: Store, amount: int, *, quantity: int = 1) -> dict[str, Any]:
    return {
        "kind": "refund",
        "target": store.order,
        "amount": amount,
        "currency": "usd",
        "line_items": [{"line_id": store.apron_line, "amount": amount, "quantity": quantity}],
        "reason": "One apron arrived torn.",
    }


def _refunds_at_shopify(shopify: ShopifySandbox, store: Store) -> list[tuple[int, str]]:
    """(amount, note) of every refund the sandbox holds on the order."""
    number = parse_gid(store.order, "Order")
    assert number is not None
    with shopify.store.lock:
        order = shopify.store.shop(store.domain).orders[number]
        amounts = {t.id: t.amount for t in order.transactions}
        return [
            (sum(amounts[t] for t in refund.transaction_ids), refund.note or "")
            for refund in order.refunds
        ]


def _lines_refunded_at_shopify(shopify: ShopifySandbox, store: Store) -> list[tuple[str, int]]:
    """(line item gid, quantity) of every refunded line on the order."""
    number = parse_gid(store.order, "Order")
    assert number is not None
    with shopify.store.lock:
        order = shopify.store.shop(store.domain).orders[number]
        return [
            (f"gid://shopify/LineItem/{line.line_item_id}", line.quantity)
            for refund in order.refunds
            for line in refund.lines
        ]


def _failing_checks(proposal: dict[str, Any]) -> list[str]:
    return [c["reason"] for c in proposal["verdict"]["checks"] if not c["passed"]]


def test_a_shopify_order_is_refunded_once_through_shopify_after_a_persons_approval(
    store: Store,
    shopify: ShopifySandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
) -> None:
    proposal = _propose(proposer, linen.case_id, _shopify_refund(store, APRON))

    assert (proposal["provider"], proposal["status"]) == ("shopify", "awaiting_approval")
    assert proposal["money_ref"] == linen.payment_intent_id
    assert _failing_checks(proposal) == []
    action_id = approve(approver, proposal)
    before = len(shopify.received_requests(store.domain))
    assert execute_action(ctx, uuid.UUID(action_id)) == "succeeded"

    # One read of the order (the re-check's facts and lines, the write's payment) and
    # one write: a refund costs Shopify no more calls than a direct refund needs.
    sent = shopify.received_requests(store.domain)[before:]
    assert [r.operation for r in sent] == ["OrderForRefund", "RefundCreate"]
    [(amount, note)] = _refunds_at_shopify(shopify, store)
    assert amount == APRON
    assert note.endswith(f"caseward_action_id={action_id}")
    # The line refunded is the one reviewed, with its quantity.
    assert _lines_refunded_at_shopify(shopify, store) == [(store.apron_line, 1)]
    action = action_json(approver, action_id)
    assert action["provider_ref"] and action["provider_ref"].startswith("gid://shopify/Refund/")
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "answered")]
    assert refunds_of_action(account, action_id) == []  # Stripe was not asked


@pytest.mark.slow
def test_a_worker_process_refunds_a_shopify_order_once(
    store: Store,
    shopify: ShopifySandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    action_id = approve(approver, _propose(proposer, linen.case_id, _shopify_refund(store, APRON)))

    start_worker()

    ended = wait_for_status(approver, action_id, SETTLED)
    assert ended["status"] == "succeeded", (ended["status"], ended["status_reason"])
    assert [amount for amount, _ in _refunds_at_shopify(shopify, store)] == [APRON]
    assert ended["provider_ref"].startswith("gid://shopify/Refund/")


def test_a_shopify_refund_whose_answer_is_lost_is_found_and_never_made_twice(
    store: Store,
    shopify: ShopifySandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    ctx: ExecutionContext,
) -> None:
    action_id = uuid.UUID(
        approve(approver, _propose(proposer, linen.case_id, _shopify_refund(store, APRON)))
    )
    shopify.arm_fault(Fault(kind="drop_after_commit", operation="refundCreate"))

    assert execute_action(ctx, action_id) == "unknown"
    assert reconcile_action(ctx, action_id) == "succeeded"

    assert [amount for amount, _ in _refunds_at_shopify(shopify, store)] == [APRON]
    attempts = action_json(approver, str(action_id))["attempts"]
    assert [(a["purpose"], a["outcome"]) for a in attempts] == [
        ("submit", "unknown"),
        ("find", "found"),
    ]


def test_a_shopify_refund_whose_answer_times_out_is_unclear_at_once_and_found_later(
    store: Store,
    shopify: ShopifySandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    settings: Settings,
    ctx: ExecutionContext,
) -> None:
    action_id = uuid.UUID(
        approve(approver, _propose(proposer, linen.case_id, _shopify_refund(store, APRON)))
    )
    # Shopify makes the refund, then answers 3 s later: this worker gives up at 1.5 s.
    shopify.arm_fault(Fault(kind="delay", operation="refundCreate", ms=3000, when="after"))
    hasty = replace(settings, provider_timeout_seconds=1.5)
    hasty_ctx = replace(ctx, adapters=connection_adapters(hasty, secret_box(hasty)), settings=hasty)

    assert execute_action(hasty_ctx, action_id) == "unknown"

    assert_unclear_at_once(ctx.session_factory, action_id, hasty)
    [attempt] = action_json(approver, str(action_id))["attempts"]
    assert (attempt["purpose"], attempt["outcome"]) == ("submit", "unknown")
    assert "timeout" in attempt["detail"].lower()
    assert reconcile_action(ctx, action_id) == "succeeded"
    assert [amount for amount, _ in _refunds_at_shopify(shopify, store)] == [APRON]


def test_a_shopify_refund_above_what_a_line_was_paid_is_refused_before_approval(
    store: Store, linen: LinenShop, proposer: Staff
) -> None:
    proposal = _propose(proposer, linen.case_id, _shopify_refund(store, CAPTURED + 100))

    assert proposal["status"] == "blocked"
    assert any("exceeds what is left" in reason for reason in _failing_checks(proposal))


def test_a_shopify_line_item_names_its_quantity(
    store: Store, linen: LinenShop, proposer: Staff
) -> None:
    body = _shopify_refund(store, APRON)
    del body["line_items"][0]["quantity"]

    response = proposer.post(f"/api/cases/{linen.case_id}/proposals", body)

    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "line_items[0].quantity"


def test_one_orders_money_refunded_through_stripe_then_shopify_never_exceeds_the_order(
    store: Store,
    shopify: ShopifySandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
) -> None:
    # One apron refunded through Stripe, by the case's own proposal.
    stripe_refund = case_json(approver, linen.case_id)["proposals"][0]
    assert stripe_refund["money_ref"] == linen.payment_intent_id
    through_stripe = approve(approver, stripe_refund)
    assert execute_action(ctx, uuid.UUID(through_stripe)) == "succeeded"

    # Shopify's order shows nothing refunded; Caseward knows the money went back.
    too_much = _propose(proposer, linen.case_id, _shopify_refund(store, APRON + 100, quantity=2))
    assert too_much["status"] == "blocked"
    assert any(
        "exceeds what is left to refund ($48.00 of $96.00 captured: $48.00 refunded" in reason
        for reason in _failing_checks(too_much)
    )
    the_rest = _propose(proposer, linen.case_id, _shopify_refund(store, APRON))
    assert _failing_checks(the_rest) == []
    through_shopify = approve(approver, the_rest)
    assert execute_action(ctx, uuid.UUID(through_shopify)) == "succeeded"

    [(amount, _)] = _refunds_at_shopify(shopify, store)
    [stripe_side] = refunds_of_action(account, through_stripe)
    assert amount + stripe_side["amount"] == CAPTURED


def test_a_refund_in_flight_through_stripe_holds_back_a_shopify_refund_of_the_same_money(
    store: Store,
    shopify: ShopifySandbox,
    sandbox: StripeSandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
) -> None:
    # Both proposed while nothing is in flight: each fits on its own.
    stripe_refund = case_json(approver, linen.case_id)["proposals"][0]
    shopify_refund = _propose(
        proposer, linen.case_id, _shopify_refund(store, APRON + 100, quantity=2)
    )
    assert _failing_checks(shopify_refund) == []
    through_stripe = uuid.UUID(approve(approver, stripe_refund))
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    assert execute_action(ctx, through_stripe) == "unknown"
    through_shopify = approve(approver, shopify_refund)

    # The Stripe refund may still land: the worker's check before sending counts it.
    assert execute_action(ctx, uuid.UUID(through_shopify)) == "halted"

    reason = action_json(approver, through_shopify)["status_reason"]
    assert "$48.00 in flight" in reason, reason
    assert _refunds_at_shopify(shopify, store) == []


def test_the_worker_counts_the_money_the_order_names_now_not_the_money_stored_at_approval(
    store: Store,
    shopify: ShopifySandbox,
    sandbox: StripeSandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    stripe_refund = case_json(approver, linen.case_id)["proposals"][0]
    shopify_refund = _propose(
        proposer, linen.case_id, _shopify_refund(store, APRON + 100, quantity=2)
    )
    through_stripe = uuid.UUID(approve(approver, stripe_refund))
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    assert execute_action(ctx, through_stripe) == "unknown"
    through_shopify = uuid.UUID(approve(approver, shopify_refund))
    # As if the order had named no Stripe payment when it was approved.
    session.execute(
        update(Action).where(Action.id == through_shopify).values(money_ref=store.order)
    )
    session.commit()

    # The order read before sending names the Stripe payment: its refund in flight counts.
    assert execute_action(ctx, through_shopify) == "halted"

    reason = action_json(approver, str(through_shopify))["status_reason"]
    assert "$48.00 in flight" in reason, reason
    assert _refunds_at_shopify(shopify, store) == []


def test_a_case_customer_without_a_shopify_identity_gets_no_shopify_refund(
    store: Store, linen: LinenShop, proposer: Staff, session: Session
) -> None:
    case = session.get(Case, linen.case_id)
    assert case is not None
    customer = session.get(Customer, case.customer_id)
    assert customer is not None
    customer.shopify_customer_id = None
    session.commit()

    proposal = _propose(proposer, linen.case_id, _shopify_refund(store, APRON))

    assert proposal["status"] == "blocked"
    assert any("customer" in reason for reason in _failing_checks(proposal)), proposal["verdict"]


# ------------------------------------------------------------------ our copy of the orders


def _case_customer(session: Session, linen: LinenShop) -> uuid.UUID:
    case = session.get(Case, linen.case_id)
    assert case is not None and case.customer_id is not None
    return case.customer_id


def test_the_case_shows_the_customers_shopify_orders_with_the_payment_that_paid_them(
    store: Store, linen: LinenShop, approver: Staff, ctx: ExecutionContext, session: Session
) -> None:
    customer = _case_customer(session, linen)

    first = refresh_orders_of(ctx.session_factory, ctx.adapters, customer, now=utcnow())
    again = refresh_orders_of(ctx.session_factory, ctx.adapters, customer, now=utcnow())

    # The demo's order #1001 is the same order: linked by its name, never copied twice.
    assert (first, again) == ("0 added, 1 updated", "0 added, 1 updated")
    [order] = [o for o in case_json(approver, linen.case_id)["orders"] if o["shopify_order_id"]]
    assert order["shopify_order_id"] == store.order
    assert (order["payment_provider"], order["payment_id"]) == ("stripe", linen.payment_intent_id)
    assert [(line["id"], line["quantity"]) for line in order["lines"]] == [(store.apron_line, 2)]
    assert order["total"]["amount"] == CAPTURED


def test_an_order_change_at_shopify_queues_a_refresh_of_that_customers_orders(
    store: Store,
    linen: LinenShop,
    client: FlaskClient,
    settings: Settings,
    session: Session,
) -> None:
    customer = _case_customer(session, linen)
    background = _background(settings)

    other = _order_updated(client, store, "gid://shopify/Customer/999")
    ours = _order_updated(client, store, store.customer)

    assert other.status_code == ours.status_code == 200
    assert other.get_json()["acted"] is None, "not our customer: nothing to refresh"
    assert ours.get_json()["acted"] == "orders_refresh_queued"
    assert background.job_ids == [f"orders-{customer}"]
    assert background.fetch_job(f"orders-{customer}").args == (str(customer),)


def test_an_order_change_whose_refresh_was_lost_is_refreshed_when_shopify_sends_it_again(
    store: Store,
    linen: LinenShop,
    client: FlaskClient,
    settings: Settings,
    session: Session,
) -> None:
    """The web process kept the change and died before queueing the refresh: Shopify had
    no answer and sends the event again, which queues it, once."""
    customer = _case_customer(session, linen)
    background = _background(settings)
    first = _order_updated(client, store, store.customer, event_id="ev-9")
    assert first.get_json()["acted"] == "orders_refresh_queued"
    background.empty()  # the refresh lost with the process

    again = [_order_updated(client, store, store.customer, event_id="ev-9") for _ in range(2)]

    assert [response.get_json()["duplicate"] for response in again] == [True, True]
    assert background.job_ids == [f"orders-{customer}"]


def _background(settings: Settings) -> Queue:
    """The background queue, emptied."""
    background = Queue(settings.background_queue_name, connection=connect_redis(settings))
    background.empty()
    return background


def _order_updated(
    client: FlaskClient, store: Store, customer_gid: str, *, event_id: str | None = None
) -> Any:
    """Shopify's ``orders/updated`` for an order of ``customer_gid``."""
    change = {"id": 2, "customer": {"admin_graphql_api_id": customer_gid}}
    return deliver_webhook(
        client, store.domain, "orders/updated", change, secret=APP_SECRET, event_id=event_id
    )


def test_a_case_opened_while_redis_refuses_its_refresh_is_answered_opened_once(
    store: Store, linen: LinenShop, app: Flask, proposer: Staff, session: Session
) -> None:
    """The case is committed before its customer's orders are queued for a refresh: Redis
    refusing that job after the commit answers the case opened, not an error that would
    have staff open it again."""
    customer = _case_customer(session, linen)
    app.extensions["caseward.redis"] = Redis(port=closed_port())
    opened = proposer.post("/api/cases", {"subject": "Torn seam", "customer_id": str(customer)})
    app.extensions["caseward.redis"] = None

    assert opened.status_code == 201, opened.get_json()
    subjects = session.scalars(select(Case.subject).where(Case.customer_id == customer)).all()
    assert subjects.count("Torn seam") == 1


def test_two_refunds_of_one_money_checked_at_once_are_checked_one_after_the_other(
    store: Store,
    shopify: ShopifySandbox,
    sandbox: StripeSandbox,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
) -> None:
    # $48.00 through Stripe and $49.00 through Shopify: each fits in the $96.00 paid, not
    # both. Proposed while nothing is in flight, both are approved.
    stripe_refund = case_json(approver, linen.case_id)["proposals"][0]
    shopify_refund = _propose(
        proposer, linen.case_id, _shopify_refund(store, APRON + 100, quantity=2)
    )
    through_stripe = uuid.UUID(approve(approver, stripe_refund))
    through_shopify = uuid.UUID(approve(approver, shopify_refund))
    # The Stripe refund's fresh read waits inside Stripe, its check under way.
    hold = sandbox.arm_fault("hold", method="GET", path="/v1/payment_intents/*", account=account.id)
    ended: dict[uuid.UUID, str] = {}

    def execute(action_id: uuid.UUID) -> None:
        ended[action_id] = execute_action(ctx, action_id)

    first = threading.Thread(target=execute, args=(through_stripe,))
    first.start()
    try:
        wait_for(
            lambda: any(h.id == hold.id and h.waiting for h in sandbox.holds()),
            what="the Stripe refund's read held",
        )
        second = threading.Thread(target=execute, args=(through_shopify,))
        second.start()
        # The Shopify refund waits for the same money's lock (or, were there none, would
        # finish its own check meanwhile).
        second.join(timeout=2.0)
    finally:
        sandbox.release_hold(hold.id)
    first.join(timeout=30)
    second.join(timeout=30)

    # The Stripe refund saw the Shopify one queued and stopped; the Shopify one, checked
    # after it, saw nothing else in flight and went out. Checked together, neither would.
    assert ended == {through_stripe: "halted", through_shopify: "succeeded"}
    assert [amount for amount, _ in _refunds_at_shopify(shopify, store)] == [APRON + 100]
    assert refunds_of_action(account, str(through_stripe)) == []
