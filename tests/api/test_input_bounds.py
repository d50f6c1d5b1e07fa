"""Hostile input gets a 4xx naming the field, never a 500, and writes nothing.

Each value is bounded by the column it lands in (PostgreSQL refuses a NUL byte and an
integer past 32 bits with an error of its own), ids are read strictly, policy windows
and amounts stay in sane ranges, bodies are capped before they are read, and a 405
says which methods the path takes.
"""

from __future__ import annotations

import http.client
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient
from money_path_harness import Staff
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.cases.models import Case
from app.cases.proposals import Proposal
from app.demo import LinenShop
from app.web.limits import APP_MAX_BYTES, SIGN_IN_MAX_BYTES, WEBHOOK_MAX_BYTES

INT32_OVER = 2**31


def _refund(linen: LinenShop, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": 4800,
        "currency": "usd",
        "reason": "torn apron",
    }
    return {**body, **changes}


def _counts(session: Session) -> tuple[int | None, ...]:
    session.expire_all()
    return tuple(
        session.scalar(select(func.count()).select_from(model))
        for model in (Case, Proposal, AuditEvent)
    )


def _refused(response: Any, field: str, status: int = 400) -> None:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    error = response.get_json()["error"]
    assert error["field"] == field, error
    assert error["message"]


BAD_DRAFTS: dict[str, tuple[dict[str, Any], str]] = {
    "an amount past 32 bits": ({"amount": INT32_OVER}, "amount"),
    "a huge amount": ({"amount": 10**30}, "amount"),
    "a line amount past 32 bits": (
        {"line_items": [{"line_id": "apron-natural", "amount": INT32_OVER}]},
        "line_items[0].amount",
    ),
    "a line id with NUL": (
        {"line_items": [{"line_id": "apron\x00", "amount": 100}]},
        "line_items[0].line_id",
    ),
    "a reason with NUL": ({"reason": "torn\x00apron"}, "reason"),
    "a reason longer than 500": ({"reason": "x" * 501}, "reason"),
    "a target with NUL": ({"target": "pi_\x00abc"}, "target"),
    "a target longer than its column": ({"target": "pi_" + "a" * 300}, "target"),
    "a customer_ref longer than its column": ({"customer_ref": "c" * 256}, "customer_ref"),
    "an unknown field": ({"amount_in_dollars": 48}, "amount_in_dollars"),
    "a params reason with a control character": (
        {"params": {"reason": "duplicate\x1b[2J"}},
        "params.reason",
    ),
}


@pytest.mark.parametrize("case_name", list(BAD_DRAFTS))
def test_a_hostile_draft_is_refused_naming_the_field(
    linen: LinenShop, proposer: Staff, session: Session, case_name: str
) -> None:
    changes, field = BAD_DRAFTS[case_name]
    before = _counts(session)

    response = proposer.post(f"/api/cases/{linen.case_id}/proposals", _refund(linen, **changes))

    _refused(response, field)
    assert _counts(session) == before


BAD_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "a subject longer than its column": ({"subject": "s" * 256}, "subject"),
    "a subject with NUL": ({"subject": "where\x00is it"}, "subject"),
    "a request with NUL": ({"subject": "ok", "request_text": "a\x00b"}, "request_text"),
    "a request with an escape sequence": (
        {"subject": "ok", "request_text": "a\x1b[31mb"},
        "request_text",
    ),
    "a customer id that is a number": ({"subject": "ok", "customer_id": 7}, "customer_id"),
    "a customer id in braces": (
        {"subject": "ok", "customer_id": "{12345678-1234-5678-1234-567812345678}"},
        "customer_id",
    ),
    "an identity level with NUL": (
        {"subject": "ok", "identity_level": "none\x00"},
        "identity_level",
    ),
    "an unknown field": ({"subject": "ok", "priority": "high"}, "priority"),
}


@pytest.mark.parametrize("case_name", list(BAD_CASES))
def test_a_hostile_case_is_refused_naming_the_field(
    linen: LinenShop, proposer: Staff, session: Session, case_name: str
) -> None:
    body, field = BAD_CASES[case_name]
    before = _counts(session)

    _refused(proposer.post("/api/cases", body), field)
    assert _counts(session) == before


def test_long_free_text_keeps_its_line_breaks(linen: LinenShop, proposer: Staff) -> None:
    request_text = "Hello,\r\n\tthe apron arrived torn.\nMaya"
    opened = proposer.post("/api/cases", {"subject": "Torn apron", "request_text": request_text})
    assert opened.status_code == 201
    case = proposer.get(f"/api/cases/{opened.get_json()['id']}").get_json()
    assert case["request_text"] == request_text


def test_an_approval_or_rejection_out_of_bounds_is_refused(
    linen: LinenShop, approver: Staff
) -> None:
    proposal = f"/api/proposals/{linen.proposal_id}"
    _refused(approver.post(f"{proposal}/approve", {"digest": "d" * 65}), "digest")
    _refused(approver.post(f"{proposal}/reject", {"reason": "no\x00"}), "reason")
    _refused(approver.post(f"{proposal}/reject", {"reason": "r" * 501}), "reason")


BAD_POLICIES: dict[str, tuple[dict[str, Any], str]] = {
    "a window past a year": (
        {"duplicate_window_seconds": 367 * 86400},
        "rules.duplicate_window_seconds",
    ),
    "a window past any clock": (
        {"duplicate_window_seconds": 10**20},
        "rules.duplicate_window_seconds",
    ),
    "a refund window of a million days": (
        {"refund_window_days": 10**6},
        "rules.refund_window_days",
    ),
    "a cap past 32 bits": (
        {"per_shop_cap": {"amount": INT32_OVER, "currency": "usd", "period_seconds": 86400}},
        "rules.per_shop_cap.amount",
    ),
    "a cap period past a year": (
        {"per_customer_cap": {"amount": 100, "currency": "usd", "period_seconds": 10**20}},
        "rules.per_customer_cap.period_seconds",
    ),
    "a ceiling past 32 bits": (
        {"auto_approve_ceiling": {"usd": INT32_OVER}},
        "rules.auto_approve_ceiling.USD",
    ),
    "a percent of 101": ({"max_percent_off": 101}, "rules.max_percent_off"),
    "a reason with NUL": ({"allowed_reasons": ["damaged\x00"]}, "rules.allowed_reasons"),
}


@pytest.mark.parametrize("case_name", list(BAD_POLICIES))
def test_a_policy_out_of_bounds_is_refused_naming_the_rule(
    linen: LinenShop, owner: Staff, session: Session, case_name: str
) -> None:
    rules, field = BAD_POLICIES[case_name]
    before = owner.get("/api/shop").get_json()["policy"]

    response = owner.put("/api/shop/policy", {"rules": rules})

    assert response.status_code == 400, response.get_data(as_text=True)[:500]
    assert response.get_json()["error"]["field"].lower() == field.lower()
    assert owner.get("/api/shop").get_json()["policy"] == before


def test_an_unknown_case_status_filter_is_refused(linen: LinenShop, proposer: Staff) -> None:
    _refused(proposer.get("/api/cases?status=everything"), "status")


def test_a_body_nested_past_the_parser_is_refused(
    linen: LinenShop, client: FlaskClient, proposer: Staff
) -> None:
    response = client.post(
        "/api/cases",
        data="[" * 100_000,
        content_type="application/json",
        headers=proposer._headers,
    )
    _refused(response, "body")


# ---------------------------------------------------------------- sizes and methods


def test_a_body_over_the_app_limit_is_refused_before_it_is_read(
    linen: LinenShop, client: FlaskClient, proposer: Staff, session: Session
) -> None:
    before = _counts(session)
    big = '{"subject": "' + "x" * APP_MAX_BYTES + '"}'

    response = client.post(
        "/api/cases", data=big, content_type="application/json", headers=proposer._headers
    )

    assert response.status_code == 413
    assert str(APP_MAX_BYTES) in response.get_json()["error"]["message"]
    assert _counts(session) == before


def test_a_webhook_over_its_limit_is_refused(linen: LinenShop, client: FlaskClient) -> None:
    response = client.post(
        f"/webhooks/stripe/{linen.connection_id}",
        data=b"{" + b" " * WEBHOOK_MAX_BYTES + b"}",
        content_type="application/json",
        headers={"Stripe-Signature": "t=1,v1=00"},
    )
    assert response.status_code == 413
    assert str(WEBHOOK_MAX_BYTES) in response.get_json()["error"]["message"]


def test_a_sign_in_over_its_limit_is_refused(client: FlaskClient) -> None:
    response = client.post("/operator/login", data={"token": "t" * SIGN_IN_MAX_BYTES})
    assert response.status_code == 413
    assert str(SIGN_IN_MAX_BYTES) in response.get_json()["error"]["message"]


def test_a_chunked_body_over_the_limit_is_cut_off_while_streaming(
    linen: LinenShop, web_url: str, proposer: Staff, session: Session
) -> None:
    """No Content-Length to check: the limit holds while the body is read."""
    before = _counts(session)
    address = urlsplit(web_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    chunk = b" " * 65536
    chunks = [b'{"subject": "'] + [chunk] * (APP_MAX_BYTES // len(chunk) + 1) + [b'"}']
    connection.request(
        "POST",
        "/api/cases",
        body=iter(chunks),
        headers={"Content-Type": "application/json", **proposer._headers},
        encode_chunked=True,
    )
    response = connection.getresponse()
    assert response.status == 413
    assert str(APP_MAX_BYTES).encode() in response.read()
    connection.close()
    assert _counts(session) == before


def test_a_wrong_method_says_which_methods_the_path_takes(
    linen: LinenShop, client: FlaskClient, proposer: Staff
) -> None:
    response = client.delete("/api/cases", headers=proposer._headers)
    assert response.status_code == 405
    assert response.is_json
    assert {"GET", "POST"} <= {m.strip() for m in response.headers["Allow"].split(",")}
