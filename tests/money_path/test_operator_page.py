"""The operator page: sign in by posting a token, read the case file, approve with a form,
and see the provider's word."""

from __future__ import annotations

import html
import re

from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Staff, WorkerProcess, wait_for
from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.test import TestResponse

from app.cases.models import case_reference
from app.demo import APPROVER, SHOP_DOMAIN, LinenShop
from app.execution.models import Action
from app.shops.models import Shop, StaffMember, StaffRole
from app.words import WORDS

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def _form_token(client: FlaskClient, path: str) -> str:
    found = CSRF_FIELD.search(client.get(path).get_data(as_text=True))
    assert found, f"no form on {path}"
    return found.group(1)


def _sign_in(client: FlaskClient, token: str) -> TestResponse:
    form = _form_token(client, "/operator/login")
    return client.post("/operator/login", data={"token": token, "csrf_token": form})


def _press(client: FlaskClient, case_page: str, button: str) -> TestResponse:
    """Submit the form holding ``button`` on the page, as a browser would."""
    page = client.get(case_page).get_data(as_text=True)
    form = next(f for f in page.split("<form")[1:] if f">{button}</button>" in f)
    action = re.search(r'action="([^"]+)"', form)
    assert action is not None
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    return client.post(action.group(1), data=fields)


def test_pages_need_a_signed_in_person(client: FlaskClient, linen: LinenShop) -> None:
    assert client.get("/operator/").status_code == 401
    assert client.get(f"/operator/cases/{linen.case_id}").status_code == 401

    refused = _sign_in(client, "not-a-token")
    assert refused.status_code == 401
    assert "That token is not valid." in refused.get_data(as_text=True)


def test_the_token_is_posted_and_kept_out_of_addresses_and_pages(
    app: Flask, client: FlaskClient, linen: LinenShop
) -> None:
    token = Staff.issue_token(app, SHOP_DOMAIN, APPROVER)

    response = _sign_in(client, token)

    assert response.status_code == 303
    assert response.headers["Location"] == "/operator/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
    cases = client.get("/operator/").get_data(as_text=True)
    assert "One apron arrived torn (order #1001)" in cases
    case = client.get(f"/operator/cases/{linen.case_id}").get_data(as_text=True)
    for page in (cases, case):
        assert token not in page and token[5:] not in page
        assert "<script" not in page


def test_the_approve_button_posts_a_form_and_the_page_shows_what_stripe_reported(
    app: Flask,
    client: FlaskClient,
    linen: LinenShop,
    approver: Staff,
    worker: WorkerProcess,
) -> None:
    _sign_in(client, Staff.issue_token(app, SHOP_DOMAIN, APPROVER))
    case_page = f"/operator/cases/{linen.case_id}"

    page = client.get(case_page).get_data(as_text=True)
    assert "Approve $48.00" in page
    # Every check by what it asks, in the admin's words, never its code.
    for check in ("writes_enabled", "refundable_remaining", "not_duplicate", "line_items"):
        assert f"<td>{html.escape(WORDS['check'][check])}</td>" in page
        assert f"<td>{check}</td>" not in page
    assert "2 \u00d7 Linen apron, natural" in page

    pressed = _press(client, case_page, "Approve $48.00")

    assert pressed.status_code == 303
    assert pressed.headers["Location"] == case_page
    action = wait_for(
        lambda: (
            (a := approver.get(f"/api/cases/{linen.case_id}").get_json()["actions"])
            and a[0]["status"] == "succeeded"
            and a[0]
        ),
        what="the refund to succeed",
    )
    page = client.get(case_page).get_data(as_text=True)
    assert action["provider_ref"] in page
    assert "Approve $48.00" not in page


def test_the_operator_page_speaks_the_admins_words(
    app: Flask, client: FlaskClient, linen: LinenShop
) -> None:
    _sign_in(client, Staff.issue_token(app, SHOP_DOMAIN, APPROVER))

    cases = client.get("/operator/").get_data(as_text=True)
    case = client.get(f"/operator/cases/{linen.case_id}").get_data(as_text=True)

    # People by name, statuses in words, the case number, money as the locale writes it.
    assert "signed in as Sam Approver, approver" in cases
    assert "awaiting approval" in cases and ">awaiting_approval<" not in cases
    assert f"Case {case_reference(linen.case_id)}" in case
    assert "needs 1 approval" in case and "approval(s)" not in case
    body = case[case.index("<body>") :]
    for code in ("awaiting_approval", ">pass<", ">fail<", "case.opened", "proposal.created"):
        assert code not in body
    assert "Case opened" in case and "Action proposed and checked" in case
    assert "system:" not in body  # Caseward's processes and the providers by name
    # A reader of another language gets its money and dates; the words stay the catalogue's.
    german = client.get(
        f"/operator/cases/{linen.case_id}", headers={"Accept-Language": "de-DE"}
    ).get_data(as_text=True)
    assert '<html lang="de-DE">' in german and "48,00\xa0$" in german


def test_a_form_without_its_csrf_token_changes_nothing(
    app: Flask, client: FlaskClient, linen: LinenShop, session: Session
) -> None:
    _sign_in(client, Staff.issue_token(app, SHOP_DOMAIN, APPROVER))
    proposal = Staff(client, app, SHOP_DOMAIN, APPROVER).get(f"/api/cases/{linen.case_id}")
    first = proposal.get_json()["proposals"][0]

    forged = client.post(
        f"/operator/cases/{linen.case_id}/proposals/{first['id']}/approve",
        data={"digest": first["digest"]},
    )

    assert forged.status_code == 400
    assert session.scalars(select(Action)).all() == []


def test_a_demoted_approver_cannot_approve_on_the_next_request(
    app: Flask, client: FlaskClient, linen: LinenShop, owner: Staff, session: Session
) -> None:
    _sign_in(client, Staff.issue_token(app, SHOP_DOMAIN, APPROVER))
    case_page = f"/operator/cases/{linen.case_id}"
    assert "Approve $48.00" in client.get(case_page).get_data(as_text=True)

    assert owner.put(f"/api/staff/{APPROVER}", {"role": StaffRole.VIEWER}).status_code == 200
    pressed = _press(client, case_page, "Approve $48.00")

    assert pressed.status_code == 303
    page = client.get(case_page).get_data(as_text=True)
    assert "sam.approver is a viewer and may not approve actions" in page
    assert session.scalars(select(Action)).all() == []


def test_another_shops_staff_cannot_open_the_case(
    app: Flask, client: FlaskClient, linen: LinenShop, session: Session
) -> None:
    other = Shop(domain="other.myshopify.com", name="Other")
    session.add(other)
    session.flush()
    session.add(StaffMember(shop_id=other.id, user_id="eve", role=StaffRole.OWNER))
    session.commit()
    _sign_in(client, Staff.issue_token(app, "other.myshopify.com", "eve"))

    assert client.get(f"/operator/cases/{linen.case_id}").status_code == 404
    assert "One apron" not in client.get("/operator/").get_data(as_text=True)
