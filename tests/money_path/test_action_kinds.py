"""Credit, discount and subscription actions go through the same path as refunds:
proposed, checked, approved, executed once by a worker, recorded from Stripe's answer."""

from __future__ import annotations

from typing import Any

import pytest
from fault_support import napkin_subscription
from money_path_harness import Account, Staff, WorkerProcess, wait_for

from app.demo import LinenShop


def _propose_approve_execute(
    linen: LinenShop, proposer: Staff, approver: Staff, draft: dict[str, Any]
) -> dict[str, Any]:
    response = proposer.post(f"/api/cases/{linen.case_id}/proposals", draft)
    assert response.status_code == 201, response.get_json()
    proposal = response.get_json()["proposal"]
    assert proposal["status"] == "awaiting_approval", proposal["verdict"]
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert approved.status_code == 200, approved.get_json()
    action_id = approved.get_json()["action"]["id"]
    return wait_for(
        lambda: (
            (a := approver.get(f"/api/actions/{action_id}").get_json())["status"]
            not in ("queued", "submitting")
            and a
        ),
        what=f"the {draft['kind']} to be executed",
    )


def test_a_store_credit_lands_once_on_the_customer_balance(
    linen: LinenShop, proposer: Staff, approver: Staff, account: Account, worker: WorkerProcess
) -> None:
    action = _propose_approve_execute(
        linen,
        proposer,
        approver,
        {
            "kind": "customer_credit",
            "target": linen.customer_id,
            "amount": 1500,
            "currency": "usd",
            "params": {"description": "Sorry about the torn apron"},
        },
    )

    assert action["status"] == "succeeded"
    customer = account.stripe.v1.customers.retrieve(linen.customer_id)
    assert customer.balance == -1500
    transactions = account.stripe.v1.customers.balance_transactions.list(linen.customer_id).data
    assert [(t.amount, t.metadata["caseward_action_id"]) for t in transactions] == [
        (-1500, action["id"])
    ]


def test_a_percent_discount_becomes_one_single_use_code_for_the_customer(
    linen: LinenShop, proposer: Staff, approver: Staff, account: Account, worker: WorkerProcess
) -> None:
    action = _propose_approve_execute(
        linen,
        proposer,
        approver,
        {
            "kind": "discount",
            "target": linen.customer_id,
            "amount": 960,
            "currency": "usd",
            "params": {"percent_off": 10, "duration": "once"},
        },
    )

    assert action["status"] == "succeeded"
    codes = account.stripe.v1.promotion_codes.list(params={"customer": linen.customer_id}).data
    assert len(codes) == 1
    assert codes[0].id == action["provider_ref"]
    assert codes[0].max_redemptions == 1


@pytest.fixture
def subscription(account: Account, linen: LinenShop) -> tuple[str, str, str]:
    """A monthly linen-napkin subscription, and a second price to change it to."""
    return napkin_subscription(account, linen.customer_id)


def test_cancel_at_period_end_is_explicit_and_executed(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    subscription: tuple[str, str, str],
    worker: WorkerProcess,
) -> None:
    sub_id, _, _ = subscription
    unclear = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "subscription_cancel", "target": sub_id},
    )
    assert unclear.status_code == 400
    assert unclear.get_json()["error"]["field"] == "params.at_period_end"

    action = _propose_approve_execute(
        linen,
        proposer,
        approver,
        {"kind": "subscription_cancel", "target": sub_id, "params": {"at_period_end": True}},
    )

    assert action["status"] == "succeeded"
    sub = account.stripe.v1.subscriptions.retrieve(sub_id)
    assert (sub.status, sub.cancel_at_period_end) == ("active", True)


def test_cancel_now_ends_the_subscription(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    subscription: tuple[str, str, str],
    worker: WorkerProcess,
) -> None:
    sub_id, _, _ = subscription
    action = _propose_approve_execute(
        linen,
        proposer,
        approver,
        {"kind": "subscription_cancel", "target": sub_id, "params": {"at_period_end": False}},
    )

    assert action["status"] == "succeeded"
    assert account.stripe.v1.subscriptions.retrieve(sub_id).status == "canceled"


def test_a_subscription_change_sets_exactly_the_items_reviewed(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    subscription: tuple[str, str, str],
    worker: WorkerProcess,
) -> None:
    sub_id, basic, deluxe = subscription
    same = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {
            "kind": "subscription_change",
            "target": sub_id,
            "params": {"items": [{"price": basic, "quantity": 1}]},
        },
    ).get_json()["proposal"]
    assert same["status"] == "blocked"

    action = _propose_approve_execute(
        linen,
        proposer,
        approver,
        {
            "kind": "subscription_change",
            "target": sub_id,
            "params": {"items": [{"price": deluxe, "quantity": 2}]},
        },
    )

    assert action["status"] == "succeeded"
    items = account.stripe.v1.subscriptions.retrieve(sub_id)["items"].data
    assert [(i.price.id, i.quantity) for i in items] == [(deluxe, 2)]
