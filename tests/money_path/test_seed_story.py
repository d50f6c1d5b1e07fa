"""The seed article's cases, end to end through the API, a worker process and the sandbox."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.models import Customer, Order
from app.demo import APRON_LINE, LinenShop
from integrations.stripe import seeding


def _case(staff: Staff, linen: LinenShop) -> dict[str, Any]:
    response = staff.get(f"/api/cases/{linen.case_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _refunds(account: Account, payment_intent: str) -> list[Any]:
    return list(account.stripe.v1.refunds.list(params={"payment_intent": payment_intent}).data)


def test_approved_48_dollar_refund_becomes_exactly_one_48_dollar_refund(
    linen: LinenShop, approver: Staff, account: Account, worker: WorkerProcess
) -> None:
    proposal = _case(approver, linen)["proposals"][0]
    assert proposal["status"] == "awaiting_approval"
    assert proposal["amount"] == {"amount": 4800, "currency": "usd", "display": "$48.00"}
    assert all(check["passed"] for check in proposal["verdict"]["checks"])

    response = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert response.status_code == 200, response.get_json()
    action_id = response.get_json()["action"]["id"]

    action = wait_for(
        lambda: (
            (a := approver.get(f"/api/actions/{action_id}").get_json())["status"] == "succeeded"
            and a
        ),
        what="the refund to succeed",
    )
    refunds = _refunds(account, linen.payment_intent_id)
    assert [(r.amount, r.currency, r.status) for r in refunds] == [(4800, "usd", "succeeded")]
    assert action["provider_ref"] == refunds[0].id
    assert refunds[0].metadata["caseward_action_id"] == action_id
    assert [a["purpose"] for a in action["attempts"]] == ["submit"]
    assert action["attempts"][0]["idempotency_key"] == action["idempotency_key"]
    case = _case(approver, linen)
    assert case["status"] == "resolved"
    kinds = [
        e["kind"] for e in approver.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    ]
    assert kinds[-7:] == [
        "proposal.approved",
        "proposal.status_changed",  # approved: its action now owns execution
        "case.status_changed",  # executing
        "action.queued",
        "action.submit",
        "action.provider_status",
        "case.status_changed",  # resolved
    ]


def test_an_already_handled_request_is_blocked_as_a_duplicate(
    linen: LinenShop, approver: Staff, proposer: Staff, account: Account, worker: WorkerProcess
) -> None:
    proposal = _case(approver, linen)["proposals"][0]
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    action_id = approved.get_json()["action"]["id"]
    wait_for(
        lambda: approver.get(f"/api/actions/{action_id}").get_json()["status"] == "succeeded",
        what="the first refund",
    )

    again = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {
            "kind": "refund",
            "target": linen.payment_intent_id,
            "amount": 4800,
            "currency": "usd",
            "line_items": [{"line_id": APRON_LINE, "amount": 4800}],
        },
    )

    assert again.status_code == 201
    second = again.get_json()["proposal"]
    assert second["status"] == "blocked"
    failing = {c["name"]: c["reason"] for c in second["verdict"]["checks"] if not c["passed"]}
    assert any("duplicate" in name for name in failing), failing
    assert len(_refunds(account, linen.payment_intent_id)) == 1


def test_two_orders_of_one_customer_the_named_one_is_refunded_and_none_is_guessed(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    session: Session,
    worker: WorkerProcess,
) -> None:
    second = _second_order(linen, account, session, amount=3200, name="#1002")
    case = _case(approver, linen)
    assert [o["name"] for o in case["orders"]] == ["#1001", "#1002"]

    missing_target = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "amount": 3200, "currency": "usd"},
    )
    assert missing_target.status_code == 400
    assert missing_target.get_json()["error"]["field"] == "target"

    proposed = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": second, "amount": 3200, "currency": "usd"},
    ).get_json()["proposal"]
    approved = approver.post(
        f"/api/proposals/{proposed['id']}/approve", {"digest": proposed["digest"]}
    ).get_json()
    action_id = approved["action"]["id"]
    wait_for(
        lambda: approver.get(f"/api/actions/{action_id}").get_json()["status"] == "succeeded",
        what="the refund of the second order",
    )

    assert [r.amount for r in _refunds(account, second)] == [3200]
    assert _refunds(account, linen.payment_intent_id) == []


def test_an_amount_changed_after_approval_needs_review_and_sends_nothing(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    start_worker: Callable[[], WorkerProcess],
    queue: Queue,
) -> None:
    proposal = _case(approver, linen)["proposals"][0]
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    ).get_json()
    action_id = approved["action"]["id"]

    edited = proposer.put(
        f"/api/proposals/{proposal['id']}",
        {
            "kind": "refund",
            "target": linen.payment_intent_id,
            "amount": 9600,
            "currency": "usd",
            "line_items": [{"line_id": APRON_LINE, "amount": 9600}],
        },
    )
    assert edited.status_code == 200, edited.get_json()
    revised = edited.get_json()["proposal"]
    assert revised["revision"] == 2
    assert revised["digest"] != proposal["digest"]
    assert revised["status"] == "awaiting_approval"

    stale = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert stale.status_code == 409
    assert stale.get_json()["error"]["code"] == "stale_digest"

    start_worker()
    # The edit halted the action but its job is still queued: nothing may be judged sent or
    # unsent until the worker has run that job to its end.
    wait_for(
        lambda: (
            (job := queue.fetch_job(action_id)) is not None and (job.is_finished or job.is_failed)
        ),
        what="the worker to be done with the halted action's job",
    )
    halted = approver.get(f"/api/actions/{action_id}").get_json()
    assert halted["status"] == "halted"
    assert halted["attempts"] == []
    assert "edited after approval" in halted["status_reason"]
    approvals = _case(approver, linen)["proposals"][0]["approvals"]
    assert approvals[0]["consumed_by_action"] == action_id
    assert _refunds(account, linen.payment_intent_id) == []
    events = account.stripe.v1.events.list(params={"type": "refund.created"}).data
    assert events == []


def _second_order(
    linen: LinenShop, account: Account, session: Session, *, amount: int, name: str
) -> str:
    checkout = seeding.paid_checkout(
        account.stripe,
        email="maya@example.com",
        name="Maya Lin",
        amount=amount,
        currency="usd",
        customer_id=linen.customer_id,
    )
    customer = session.scalars(
        select(Customer).where(Customer.stripe_customer_id == linen.customer_id)
    ).one()
    session.add(
        Order(
            shop_id=linen.shop_id,
            customer_id=customer.id,
            name=name,
            currency="usd",
            total=amount,
            payment_provider="stripe",
            payment_id=checkout.payment_intent_id,
            lines=[{"id": "napkins", "title": "Linen napkins", "quantity": 4, "paid": amount}],
        )
    )
    session.commit()
    return checkout.payment_intent_id
