"""Money reaches only the case's customer, checked against Stripe itself.

Two shops may share one Stripe account (one merchant, two stores). Each shop's key
can then read every payment of the account, so only the case's customer, compared
with the payment's owner at Stripe, stops one shop's case from refunding the other
shop's payment. The proposals go through the staff API; the facts come from the
Stripe sandbox over HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Account, Staff
from sqlalchemy.orm import Session

from app.cases.models import Customer
from app.crypto import secret_box
from app.demo import PROPOSER, LinenShop, seed_linen_shop
from app.settings import Settings

OTHER_DOMAIN = "loom-outlet.myshopify.com"


def _customer_check(proposal: dict[str, object]) -> dict[str, object]:
    verdict = proposal["verdict"]
    assert isinstance(verdict, dict)
    return next(c for c in verdict["checks"] if c["name"] == "customer_matches")


@pytest.fixture
def other(session: Session, settings: Settings, account: Account, linen: LinenShop) -> LinenShop:
    """A second shop on the linen shop's Stripe account, with its own customer and case."""
    shop = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=account.secret_key,
        restricted_key=account.restricted_key,
        webhook_base_url=None,
        shop_domain=OTHER_DOMAIN,
    )
    session.commit()
    return shop


def _refund_in_other_shop(
    app: Flask, client: FlaskClient, other: LinenShop, target: str, **extra: object
) -> dict[str, Any]:
    response = Staff(client, app, OTHER_DOMAIN, PROPOSER).post(
        f"/api/cases/{other.case_id}/proposals",
        {"kind": "refund", "target": target, "amount": 4800, "currency": "usd", **extra},
    )
    assert response.status_code == 201, response.get_json()
    proposal: dict[str, Any] = response.get_json()["proposal"]
    return proposal


def test_a_case_cannot_refund_another_shops_payment_on_a_shared_stripe_account(
    app: Flask, client: FlaskClient, linen: LinenShop, other: LinenShop
) -> None:
    # The other shop's case is about its own customer; the payment is the linen shop's.
    proposal = _refund_in_other_shop(app, client, other, linen.payment_intent_id)

    assert proposal["status"] == "blocked"
    check = _customer_check(proposal)
    assert check["passed"] is False
    assert check["reason"] == (
        f"Payment {linen.payment_intent_id} belongs to customer {linen.customer_id}, "
        f"not to the case's customer {other.customer_id}."
    )
    # Bound to the case's customer whatever the target: the record says whom it may reach.
    assert proposal["customer_ref"] == other.customer_id


def test_naming_the_payments_owner_in_the_proposal_does_not_widen_the_case(
    app: Flask, client: FlaskClient, linen: LinenShop, other: LinenShop
) -> None:
    proposal = _refund_in_other_shop(
        app, client, other, linen.payment_intent_id, customer_ref=linen.customer_id
    )

    assert proposal["status"] == "blocked"
    assert _customer_check(proposal)["reason"] == (
        f"The proposal names customer {linen.customer_id}, but the case is about customer "
        f"{other.customer_id}; a proposal cannot reach beyond the case's customer."
    )


def test_the_other_shop_refunds_its_own_customers_payment(
    app: Flask, client: FlaskClient, other: LinenShop
) -> None:
    proposal = _refund_in_other_shop(app, client, other, other.payment_intent_id)

    assert proposal["status"] == "awaiting_approval"
    assert _customer_check(proposal)["passed"] is True


def test_a_case_whose_customer_has_no_stripe_link_moves_no_money(
    app: Flask, client: FlaskClient, session: Session, linen: LinenShop
) -> None:
    customer = session.query(Customer).filter_by(stripe_customer_id=linen.customer_id).one()
    customer.stripe_customer_id = None
    session.commit()
    proposer = Staff(client, app, "linen-and-loom.myshopify.com", PROPOSER)

    response = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 4800, "currency": "usd"},
    )

    proposal = response.get_json()["proposal"]
    assert proposal["status"] == "blocked"
    assert _customer_check(proposal)["reason"] == (
        "The case's customer has no Stripe customer linked, so nothing ties Payment "
        f"{linen.payment_intent_id} to them; link the customer's Stripe account to the case first."
    )
