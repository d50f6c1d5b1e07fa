"""The operator page: sign in by posting a token, read the case file, see the provider's word."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Staff, WorkerProcess, wait_for
from sqlalchemy.orm import Session

from app.demo import APPROVER, SHOP_DOMAIN, LinenShop
from app.shops.models import Shop
from app.web.auth import staff_token


def _token(app: Flask, shop: str, user: str) -> str:
    with app.app_context():
        return staff_token().issue(shop, user)


def test_pages_need_a_signed_in_person(client: FlaskClient, linen: LinenShop) -> None:
    assert client.get("/operator/").status_code == 401
    assert client.get(f"/operator/cases/{linen.case_id}").status_code == 401

    refused = client.post("/operator/login", data={"token": "not-a-token"})
    assert refused.status_code == 401
    assert "That token is not valid." in refused.get_data(as_text=True)


def test_the_token_is_posted_and_kept_out_of_addresses(
    app: Flask, client: FlaskClient, linen: LinenShop
) -> None:
    token = _token(app, SHOP_DOMAIN, APPROVER)

    response = client.post("/operator/login", data={"token": token})

    assert response.status_code == 303
    assert response.headers["Location"] == "/operator/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    cases = client.get("/operator/").get_data(as_text=True)
    assert "One apron arrived torn (order #1001)" in cases


def test_the_case_page_shows_every_check_and_then_what_stripe_reported(
    app: Flask,
    client: FlaskClient,
    linen: LinenShop,
    approver: Staff,
    worker: WorkerProcess,
) -> None:
    client.post("/operator/login", data={"token": _token(app, SHOP_DOMAIN, APPROVER)})

    page = client.get(f"/operator/cases/{linen.case_id}").get_data(as_text=True)
    assert "Approve $48.00" in page
    for check in ("writes_enabled", "refundable_remaining", "not_duplicate", "line_items"):
        assert check in page
    assert "2 \u00d7 Linen apron, natural" in page

    proposal = approver.get(f"/api/cases/{linen.case_id}").get_json()["proposals"][0]
    approver.post(f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]})
    action = wait_for(
        lambda: (
            (a := approver.get(f"/api/cases/{linen.case_id}").get_json()["actions"])
            and a[0]["status"] == "succeeded"
            and a[0]
        ),
        what="the refund to succeed",
    )

    page = client.get(f"/operator/cases/{linen.case_id}").get_data(as_text=True)
    assert action["provider_ref"] in page
    assert "Approve $48.00" not in page


def test_another_shops_staff_cannot_open_the_case(
    app: Flask, client: FlaskClient, linen: LinenShop, session: Session
) -> None:
    session.add(Shop(domain="other.myshopify.com", name="Other"))
    session.commit()
    client.post("/operator/login", data={"token": _token(app, "other.myshopify.com", "eve")})

    assert client.get(f"/operator/cases/{linen.case_id}").status_code == 404
    assert "One apron" not in client.get("/operator/").get_data(as_text=True)
