"""A case's verified customer is linked to their account at the merchant's own endpoint
when a proposal for the endpoint is made: by the one thing both sides hold, their email.

Exactly one of the endpoint's customers with that email (whatever its case): the id is
stored, audited without the email, and the proposal goes on to approval bound to it. None
or several: nothing is stored and the refusal says why. A case whose customer is not
verified (below ``medium``) asks nothing: the receiver's own request log shows no look-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from merchant_support import MerchantShop, Receiver, Staff, seed_merchant_shop
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.cases.models import Case, Customer
from app.crypto import secret_box
from app.demo import PROPOSER
from app.settings import Settings

APRON = 4800
LOOKUP = "/customers/find"


@pytest.fixture
def unlinked(
    session: Session, settings: Settings, receiver: Receiver
) -> Callable[..., MerchantShop]:
    """A shop whose case's customer (maya@example.com) has no id at the endpoint yet."""
    return lambda identity_level="strong": seed_merchant_shop(
        session,
        receiver=receiver,
        box=secret_box(settings),
        merchant_customer=False,
        identity_level=identity_level,
    )


def _proposer(client: FlaskClient, app: Flask, shop: MerchantShop) -> Staff:
    return Staff(client, app, shop.domain, PROPOSER)


def _propose_refund(proposer: Staff, shop: MerchantShop) -> dict[str, Any]:
    answer = proposer.post(
        f"/api/cases/{shop.case_id}/proposals",
        {
            "provider": "merchant",
            "kind": "refund",
            "target": shop.payment,
            "amount": APRON,
            "currency": "usd",
            "params": {"reason": "damaged"},
        },
    )
    assert answer.status_code == 201, answer.get_json()
    proposal: dict[str, Any] = answer.get_json()["proposal"]
    return proposal


def _customer_check(proposal: dict[str, Any]) -> dict[str, Any]:
    checks: list[dict[str, Any]] = proposal["verdict"]["checks"]
    [check] = [c for c in checks if c["name"] == "customer_matches"]
    return check


def _linked_id(session: Session, shop: MerchantShop) -> str | None:
    session.expire_all()
    case = session.get(Case, shop.case_id)
    assert case is not None and case.customer_id is not None
    customer = session.get(Customer, case.customer_id)
    assert customer is not None
    return customer.merchant_customer_id


def _events(session: Session, shop: MerchantShop) -> list[AuditEvent]:
    return list(
        session.scalars(
            select(AuditEvent).where(AuditEvent.shop_id == shop.shop_id).order_by(AuditEvent.seq)
        )
    )


def _lookups(receiver: Receiver) -> list[dict[str, Any]]:
    return [r for r in receiver.received() if r["path"] == LOOKUP]


def test_the_one_customer_with_the_email_is_linked_and_the_refund_goes_to_approval(
    unlinked: Callable[..., MerchantShop],
    receiver: Receiver,
    session: Session,
    client: FlaskClient,
    app: Flask,
) -> None:
    shop = unlinked()
    # The endpoint writes the email its own way: the same address all the same.
    receiver.seed_customer(shop.customer, email="Maya@Example.COM", currency="usd")
    receiver.seed_customer("cust_other", email="sam@example.com")
    proposer = _proposer(client, app, shop)

    proposal = _propose_refund(proposer, shop)

    assert proposal["status"] == "awaiting_approval", proposal["verdict"]
    assert proposal["customer_ref"] == shop.customer
    assert _customer_check(proposal)["passed"] is True
    assert _linked_id(session, shop) == shop.customer
    [linked] = [e for e in _events(session, shop) if e.kind == "customer.linked"]
    assert linked.case_id == shop.case_id and linked.actor == PROPOSER
    assert (linked.data["provider"], linked.data["provider_customer_id"]) == (
        "merchant",
        shop.customer,
    )
    assert "example.com" not in json.dumps([e.data for e in _events(session, shop)]).lower()
    [lookup] = _lookups(receiver)
    assert lookup["verified"] is True and lookup["type"] == "customers.find"

    # Linked once: the next proposal asks nothing.
    _propose_refund(proposer, shop)
    assert len(_lookups(receiver)) == 1
    assert len([e for e in _events(session, shop) if e.kind == "customer.linked"]) == 1


@pytest.mark.parametrize(
    ("theirs", "twin", "found", "why"),
    [
        (
            "maya.lin@example.net",
            None,
            0,
            "No customer at your endpoint has the email of the case's customer",
        ),
        (
            "maya@example.com",
            "MAYA@example.com",
            2,
            "2 customers at your endpoint have the email of the case's customer",
        ),
    ],
    ids=["none", "several"],
)
def test_no_single_customer_with_the_email_links_nothing_and_the_refusal_says_why(
    unlinked: Callable[..., MerchantShop],
    receiver: Receiver,
    session: Session,
    client: FlaskClient,
    app: Flask,
    theirs: str,
    twin: str | None,
    found: int,
    why: str,
) -> None:
    shop = unlinked()
    receiver.seed_customer(shop.customer, email=theirs, currency="usd")
    if twin is not None:
        receiver.seed_customer("cust_twin", email=twin)

    proposal = _propose_refund(_proposer(client, app, shop), shop)

    assert proposal["status"] == "blocked"
    check = _customer_check(proposal)
    assert check["passed"] is False
    assert "has no Merchant customer linked" in check["reason"]
    assert why in check["reason"]
    assert check["facts"]["customers_with_email"] == found
    assert _linked_id(session, shop) is None
    assert not [e for e in _events(session, shop) if e.kind == "customer.linked"]
    assert len(_lookups(receiver)) == 1


def test_an_unverified_case_asks_the_endpoint_nothing(
    unlinked: Callable[..., MerchantShop],
    receiver: Receiver,
    session: Session,
    client: FlaskClient,
    app: Flask,
) -> None:
    shop = unlinked(identity_level="claim")

    proposal = _propose_refund(_proposer(client, app, shop), shop)

    assert proposal["status"] == "blocked"
    check = _customer_check(proposal)
    assert check["passed"] is False
    # The refusal says how the link is made, since no person can make it by hand.
    assert check["reason"].endswith(
        "Caseward links the customer's account by their email once the case's customer is "
        "verified (a code sent to their email, or the shopper signed in); verify them, then "
        "edit the proposal."
    )
    assert _linked_id(session, shop) is None
    assert _lookups(receiver) == []
    # The proposal itself did reach the endpoint: it read the payment's facts.
    assert [r["path"] for r in receiver.received()] == ["/facts"]


def test_an_endpoint_that_does_not_answer_the_look_up_links_nothing(
    unlinked: Callable[..., MerchantShop],
    receiver: Receiver,
    session: Session,
    client: FlaskClient,
    app: Flask,
) -> None:
    shop = unlinked()
    receiver.refuse_next(503, "unavailable")

    proposal = _propose_refund(_proposer(client, app, shop), shop)

    assert proposal["status"] == "blocked"
    assert "did not answer the look-up" in _customer_check(proposal)["reason"]
    assert _linked_id(session, shop) is None
