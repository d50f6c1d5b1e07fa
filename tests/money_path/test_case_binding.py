"""Money reaches only the case's customer, checked against Stripe itself.

Two shops may share one Stripe account (one merchant, two stores). Each shop's key
can then read every payment of the account, so only the case's customer, compared
with the payment's owner at Stripe, stops one shop's case from refunding the other
shop's payment. A verified customer with no Stripe customer on file is linked, when a
Stripe proposal is made, to the one Stripe customer with their email; none or several:
nothing is linked and the refusal says why. The proposals go through the staff API; the
facts come from the Stripe sandbox over HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Account, Staff
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.cases.models import Case, Customer
from app.cases.proposals import Proposal
from app.crypto import secret_box
from app.demo import PROPOSER, LinenShop, seed_linen_shop
from app.settings import Settings
from integrations.provider import CredentialsRefused
from integrations.stripe.sandbox import StripeSandbox

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


def _unlink(session: Session, linen: LinenShop, *, identity_level: str = "strong") -> Customer:
    """The case's customer with no Stripe customer on file, the case verified as given."""
    customer = session.query(Customer).filter_by(stripe_customer_id=linen.customer_id).one()
    customer.stripe_customer_id = None
    session.get_one(Case, linen.case_id).identity_level = identity_level
    session.commit()
    return customer


def test_a_case_whose_customer_has_no_stripe_link_moves_no_money(
    app: Flask, client: FlaskClient, session: Session, linen: LinenShop
) -> None:
    # Not verified (a claim only), so nothing is looked up to link them either.
    _unlink(session, linen, identity_level="claim")
    proposer = Staff(client, app, "linen-and-loom.myshopify.com", PROPOSER)

    response = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 4800, "currency": "usd"},
    )

    proposal = response.get_json()["proposal"]
    assert proposal["status"] == "blocked"
    assert _customer_check(proposal)["reason"] == (
        "The case's customer has no Stripe customer linked, so nothing ties Payment "
        f"{linen.payment_intent_id} to them; link the customer's Stripe account to the case "
        "first. Caseward links the customer's account by their email once the case's "
        "customer is verified (a code sent to their email, or the shopper signed in); verify "
        "them, then edit the proposal."
    )


def test_a_verified_customer_is_linked_to_their_one_stripe_customer_by_email(
    app: Flask, client: FlaskClient, session: Session, linen: LinenShop
) -> None:
    customer = _unlink(session, linen)
    proposer = Staff(client, app, "linen-and-loom.myshopify.com", PROPOSER)

    proposal = _propose(proposer, linen)

    assert proposal["status"] == "awaiting_approval", proposal["verdict"]
    assert _customer_check(proposal)["passed"] is True
    session.expire_all()
    assert session.get_one(Customer, customer.id).stripe_customer_id == linen.customer_id
    [linked] = _linked_events(session, linen)
    assert (linked.data["provider"], linked.data["provider_customer_id"]) == (
        "stripe",
        linen.customer_id,
    )
    assert "example.com" not in str(linked.data)
    # Linked once: the next proposal finds the link and records no other.
    _propose(proposer, linen)
    assert len(_linked_events(session, linen)) == 1


def test_two_stripe_customers_with_the_email_link_neither_and_the_refusal_says_why(
    app: Flask, client: FlaskClient, session: Session, linen: LinenShop, account: Account
) -> None:
    customer = _unlink(session, linen)
    account.stripe.v1.customers.create(params={"email": "maya@example.com", "name": "Maya L."})
    proposer = Staff(client, app, "linen-and-loom.myshopify.com", PROPOSER)

    proposal = _propose(proposer, linen)

    assert proposal["status"] == "blocked"
    assert _customer_check(proposal)["reason"].endswith(
        "2 customers at Stripe have the email of the case's customer, so Caseward could not "
        "tell which one is theirs."
    )
    session.expire_all()
    assert session.get_one(Customer, customer.id).stripe_customer_id is None
    assert _linked_events(session, linen) == []


def _propose(proposer: Staff, linen: LinenShop) -> dict[str, Any]:
    response = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 4800, "currency": "usd"},
    )
    assert response.status_code == 201, response.get_json()
    proposal: dict[str, Any] = response.get_json()["proposal"]
    return proposal


def _linked_events(session: Session, linen: LinenShop) -> list[AuditEvent]:
    return list(
        session.query(AuditEvent).filter_by(shop_id=linen.shop_id, kind="customer.linked").all()
    )


def test_a_proposal_while_stripe_cannot_answer_is_refused_clearly_and_nothing_is_kept(
    app: Flask,
    client: FlaskClient,
    session: Session,
    linen: LinenShop,
    sandbox: StripeSandbox,
    account: Account,
) -> None:
    proposer = Staff(client, app, "linen-and-loom.myshopify.com", PROPOSER)
    before = session.query(Proposal).filter_by(case_id=linen.case_id).count()
    sandbox.arm_fault("error_500_before_commit", method="GET", account=account.id, count=5)
    try:
        response = proposer.post(
            f"/api/cases/{linen.case_id}/proposals",
            {
                "kind": "refund",
                "target": linen.payment_intent_id,
                "amount": 4800,
                "currency": "usd",
            },
        )
    finally:
        sandbox.clear_faults()

    assert response.status_code == 502, response.get_data(as_text=True)
    error = response.get_json()["error"]
    assert error["code"] == "provider_unavailable"
    assert "Stripe could not answer" in error["message"]
    session.expire_all()
    assert session.query(Proposal).filter_by(case_id=linen.case_id).count() == before


def test_a_shopper_is_told_no_providers_words_when_one_stops_their_request(app: Flask) -> None:
    refused = CredentialsRefused(
        "Stripe no longer accepts the key rk_test_...0000 for the lookup of pi_123",
        reason="unknown_key",
    )
    with app.test_request_context("/proxy/chat"):
        response = app.make_response(app.handle_user_exception(refused))

    assert response.status_code == 502
    error = response.get_json()["error"]
    assert error == {
        "code": "provider_credentials_refused",
        "message": "the shop could not reach its payment provider just now; try again soon",
    }
