"""Helpers for the fault tests: staff calls, provider-side truth, the two money invariants.

Everything here reads the real systems (the staff API, the database, the sandbox over
HTTP with the account's secret key); nothing is mocked.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from money_path_harness import Account, Staff, wait_for
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.audit import AuditEvent
from app.background import sweep
from app.cases.models import Customer, Order
from app.clock import utcnow
from app.execution.executor import (
    ExecutionContext,
    execute_action,
    reconcile_action,
    refresh_action,
)
from app.execution.models import Action, ActionStatus
from app.settings import Settings
from integrations.stripe import seeding
from integrations.stripe.sandbox import RateLimits, StripeSandbox

ACTION_ID_KEY = "caseward_action_id"
# Stripe's statuses of a refund that holds money against the charge.
COUNTING = ("pending", "requires_action", "succeeded")
PROVIDER_REPORTED = ActionStatus.PROVIDER_REPORTED
NOT_SENT = ActionStatus.NOT_SENT


# ---------------------------------------------------------------- staff API


def case_json(staff: Staff, case_id: uuid.UUID | str) -> dict[str, Any]:
    response = staff.get(f"/api/cases/{case_id}")
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def case_audit_json(staff: Staff, case_id: uuid.UUID | str) -> list[dict[str, Any]]:
    """The case's audit events, oldest first, as the staff API shows them."""
    response = staff.get(f"/api/cases/{case_id}/audit")
    assert response.status_code == 200, response.get_json()
    events: list[dict[str, Any]] = response.get_json()["events"]
    return events


def action_json(staff: Staff, action_id: str) -> dict[str, Any]:
    response = staff.get(f"/api/actions/{action_id}")
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def propose_refund(
    staff: Staff, case_id: uuid.UUID | str, target: str, amount: int
) -> dict[str, Any]:
    response = staff.post(
        f"/api/cases/{case_id}/proposals",
        {"kind": "refund", "target": target, "amount": amount, "currency": "usd"},
    )
    assert response.status_code == 201, response.get_json()
    proposal: dict[str, Any] = response.get_json()["proposal"]
    return proposal


def approve(staff: Staff, proposal: dict[str, Any]) -> str:
    """Approve the exact digest; returns the new action's id."""
    response = staff.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert response.status_code == 200, response.get_json()
    action = response.get_json()["action"]
    assert action is not None, response.get_json()
    assert action["status"] == "queued"
    return str(action["id"])


def wait_for_status(
    staff: Staff,
    action_id: str,
    statuses: Iterable[str],
    *,
    tick: Callable[[], object] | None = None,
    timeout: float = 20.0,
) -> dict[str, Any]:
    """Poll the action until it is in ``statuses``, calling ``tick`` (a sweep) each time."""
    wanted = tuple(statuses)
    seen: list[dict[str, Any]] = []

    def reached() -> dict[str, Any] | None:
        if tick is not None:
            tick()
        seen[:] = [action_json(staff, action_id)]
        return seen[0] if seen[0]["status"] in wanted else None

    try:
        result: dict[str, Any] = wait_for(reached, timeout=timeout, what=f"action -> {wanted}")
    except AssertionError as timed_out:
        last = seen[0] if seen else {}
        raise AssertionError(
            f"{timed_out}; last seen: {last.get('status')} ({last.get('status_reason')}), "
            f"attempts {last.get('attempts')}"
        ) from timed_out
    return result


def sweeping(ctx: ExecutionContext, queue: Queue) -> Callable[[], object]:
    """What the sweeper process does every few seconds, as one call."""
    return lambda: sweep(ctx, queue)


def assert_unclear_at_once(
    factory: sessionmaker[Session], action_id: uuid.UUID, settings: Settings
) -> Action:
    """The send that just returned left its action ``unknown`` with its look-up set and
    audited, as the call gave up (``settings``' provider timeout), not ``submitting``
    until the stuck-submission sweep finds it."""
    with factory() as session:
        action = session.get(Action, action_id)
        assert action is not None
        assert action.status == ActionStatus.UNKNOWN, (action.status, action.status_reason)
        assert action.next_check_at is not None and action.next_check_at > action.updated_at
        [event] = session.scalars(
            select(AuditEvent).where(
                AuditEvent.action_id == action_id, AuditEvent.kind == "action.unknown"
            )
        ).all()
        assert event.actor == "system:worker"
        assert event.data["next_check_at"] == action.next_check_at.isoformat()
        assert action.first_sent_at is not None
        waited = (action.updated_at - action.first_sent_at).total_seconds()
        assert waited < settings.provider_timeout_seconds + 1.0, waited
        session.expunge(action)
        return action


# ---------------------------------------------------------------- provider truth


def all_refunds(account: Account) -> list[dict[str, Any]]:
    """Every refund on the test's own sandbox account, whoever made it."""
    listing = account.stripe.v1.refunds.list(params={"limit": 100})
    return [refund.to_dict() for refund in listing.auto_paging_iter()]


def refunds_of_action(account: Account, action_id: str) -> list[dict[str, Any]]:
    return [
        r for r in all_refunds(account) if (r.get("metadata") or {}).get(ACTION_ID_KEY) == action_id
    ]


def direct_refund(account: Account, payment_intent: str, amount: int) -> dict[str, Any]:
    """A refund made at the provider by someone else (the merchant's dashboard)."""
    refund = account.stripe.v1.refunds.create(
        params={"payment_intent": payment_intent, "amount": amount}
    )
    data: dict[str, Any] = refund.to_dict()
    return data


def assert_money_invariants(
    account: Account, session_factory: sessionmaker[Session], shop_id: uuid.UUID
) -> list[dict[str, Any]]:
    """At most one provider refund per approved action; refunds never above the capture."""
    refunds = all_refunds(account)
    with session_factory() as session:
        action_ids = {
            str(a) for a in session.scalars(select(Action.id).where(Action.shop_id == shop_id))
        }
    per_action = Counter(
        (r.get("metadata") or {}).get(ACTION_ID_KEY)
        for r in refunds
        if (r.get("metadata") or {}).get(ACTION_ID_KEY)
    )
    duplicated = {a: n for a, n in per_action.items() if n > 1}
    assert not duplicated, f"more than one provider refund for one action: {duplicated}"
    strangers = set(per_action) - action_ids
    assert not strangers, f"refunds carry action ids Caseward never made: {strangers}"
    by_charge: dict[str, int] = Counter()
    for refund in refunds:
        if refund["status"] in COUNTING:
            by_charge[str(refund["charge"])] += int(refund["amount"])
    for charge_id, refunded in by_charge.items():
        charge = account.stripe.v1.charges.retrieve(charge_id)
        assert refunded <= charge.amount_captured, (charge_id, refunded, charge.amount_captured)
        assert charge.amount_refunded <= charge.amount_captured
    return refunds


# ---------------------------------------------------------------- setup


def paid_payment(
    account: Account,
    settings: Settings,
    *,
    customer_id: str,
    amount: int = 9600,
    payment_method: str = "pm_card_visa",
) -> seeding.PaidCheckout:
    client = seeding.client(account.secret_key, settings.stripe_api_base)
    return seeding.paid_checkout(
        client,
        email="maya@example.com",
        name="Maya Lin",
        amount=amount,
        currency="usd",
        payment_method=payment_method,
        customer_id=customer_id,
    )


def add_order(
    session_factory: sessionmaker[Session],
    *,
    shop_id: uuid.UUID,
    stripe_customer_id: str,
    payment_intent_id: str,
    name: str,
    amount: int = 9600,
) -> None:
    """The store order behind a second payment of the seed's customer."""
    now = utcnow()
    with session_factory() as session, session.begin():
        customer = session.scalars(
            select(Customer).where(
                Customer.shop_id == shop_id, Customer.stripe_customer_id == stripe_customer_id
            )
        ).one()
        session.add(
            Order(
                shop_id=shop_id,
                customer_id=customer.id,
                name=name,
                currency="usd",
                total=amount,
                payment_provider="stripe",
                payment_id=payment_intent_id,
                lines=[
                    {"id": "throw-oat", "title": "Linen throw, oat", "quantity": 1, "paid": amount}
                ],
                fulfilled_at=now - timedelta(days=4),
                delivered_at=now - timedelta(days=2),
                created_at=now - timedelta(days=5),
            )
        )


# The window of ``writes_used_up``: Stripe's Retry-After then says most of an hour.
WRITE_WINDOW_SECONDS = 3600


@contextmanager
def writes_used_up(sandbox: StripeSandbox, account: Account) -> Iterator[None]:
    """Within: the account may write once an hour, and someone else's write just used
    that up, so Stripe answers every write with a 429 and nothing runs."""
    sandbox.set_rate_limits(
        RateLimits(test_read=None, test_write=1, per_seconds=WRITE_WINDOW_SECONDS),
        account=account.id,
    )
    try:
        account.stripe.v1.customers.create(params={"email": "someone@example.com"})
        yield
    finally:
        sandbox.set_rate_limits(None, account=account.id)


def reset_sandbox_switches(sandbox: StripeSandbox) -> None:
    """The sandbox is shared by the session: leave no fault armed and no webhook held."""
    sandbox.clear_faults()
    sandbox.discard_webhooks()
    sandbox.resume_webhooks()


# ---------------------------------------------------------------- in-process worker

_RUNNERS: dict[str, Callable[[ExecutionContext, uuid.UUID], str]] = {
    "app.execution.jobs.execute": execute_action,
    "app.execution.jobs.reconcile": reconcile_action,
    "app.execution.jobs.refresh": refresh_action,
}


def run_queued_jobs(ctx: ExecutionContext, queue: Queue, *, limit: int | None = None) -> int:
    """Do what a worker would do with the queued jobs, in this process (oldest first)."""
    ran = 0
    while limit is None or ran < limit:
        job_ids = queue.get_job_ids()
        if not job_ids:
            break
        job = queue.fetch_job(job_ids[0])
        queue.remove(job_ids[0])
        if job is None:
            continue
        runner = _RUNNERS[job.func_name]
        action_id = uuid.UUID(str(job.args[0]))
        job.delete()
        runner(ctx, action_id)
        ran += 1
    return ran


def napkin_subscription(account: Account, customer: str) -> tuple[str, str, str]:
    """A monthly linen-napkin subscription of ``customer``: its id, its price, and a
    second price to change it to."""
    product = account.stripe.v1.products.create(params={"name": "Napkin club"}).id
    basic, deluxe = (
        account.stripe.v1.prices.create(
            params={
                "product": product,
                "currency": "usd",
                "unit_amount": amount,
                "recurring": {"interval": "month"},
            }
        ).id
        for amount in (1200, 2400)
    )
    sub = account.stripe.v1.subscriptions.create(
        params={"customer": customer, "items": [{"price": basic, "quantity": 1}]}
    )
    return sub.id, basic, deluxe
