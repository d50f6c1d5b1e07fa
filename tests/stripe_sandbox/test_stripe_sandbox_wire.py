"""Stripe's wire format: form encoding, list envelopes, pagination, errors, headers, expand."""

from __future__ import annotations

import pytest
import stripe
from stripe_sandbox_support import pay, raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys
from integrations.stripe.sandbox.errors import ValidationError
from integrations.stripe.sandbox.forms import Params, parse_form


def test_bracket_form_encoding() -> None:
    parsed = parse_form(
        "amount=100&metadata[order]=7&metadata[0]=zero&items[0][price]=p1&items[1][quantity]=2"
        "&expand[]=charge&expand[]=payment_intent&promotion[coupon]=C1&metadata[empty]="
    )
    params = Params(parsed)
    assert params.integer("amount") == 100
    assert params.metadata() == {"order": "7", "0": "zero", "empty": None}
    assert [c.string("price") for c in params.children("items")] == ["p1", None]
    assert params.array("expand") == ["charge", "payment_intent"]
    child = params.child("promotion")
    assert child is not None and child.string("coupon") == "C1"
    params.allow({"amount", "metadata", "items", "promotion"})  # expand is always accepted
    with pytest.raises(ValidationError) as unknown:
        params.allow({"amount", "metadata", "items"})
    assert (unknown.value.message, unknown.value.param) == (
        "Received unknown parameter: promotion",
        "promotion",
    )
    with pytest.raises(ValidationError) as nested:
        child.allow({"type"})
    assert nested.value.message == "Received unknown parameter: promotion[coupon]"
    indexed = Params(parse_form("expand[0]=a&expand[1]=b"))
    assert indexed.array("expand") == ["a", "b"]
    with pytest.raises(ValidationError) as bad_int:
        Params(parse_form("amount=ten")).integer("amount")
    assert bad_int.value.message == "Invalid integer: ten"


def test_list_envelope_and_pagination(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    created = [client.v1.customers.create(params={"name": f"c{i}"}) for i in range(5)]
    newest_first = [c.id for c in reversed(created)]
    body = raw(url, "GET", "/v1/customers", account.secret_key, {"limit": 2}).json()
    assert set(body) == {"object", "data", "has_more", "url"}
    assert (body["object"], body["url"], body["has_more"]) == ("list", "/v1/customers", True)
    assert [c["id"] for c in body["data"]] == newest_first[:2]
    page2 = client.v1.customers.list(params={"limit": 2, "starting_after": newest_first[1]})
    assert [c.id for c in page2.data] == newest_first[2:4]
    page3 = client.v1.customers.list(params={"limit": 2, "starting_after": newest_first[3]})
    assert ([c.id for c in page3.data], page3.has_more) == (newest_first[4:], False)
    before = client.v1.customers.list(params={"limit": 2, "ending_before": newest_first[4]})
    assert [c.id for c in before.data] == newest_first[2:4]
    assert before.has_more is True
    everything = [c.id for c in client.v1.customers.list(params={"limit": 2}).auto_paging_iter()]
    assert everything == newest_first
    assert len(client.v1.customers.list().data) == 5  # default limit 10


def test_list_limit_bounds(url: str, account: AccountKeys) -> None:
    for limit in (0, 101):
        response = raw(url, "GET", "/v1/customers", account.secret_key, {"limit": limit})
        assert response.status_code == 400
        assert response.json()["error"]["param"] == "limit"
    assert raw(url, "GET", "/v1/customers", account.secret_key, {"limit": 100}).status_code == 200
    gone = raw(url, "GET", "/v1/customers", account.secret_key, {"starting_after": "cus_nope"})
    assert gone.status_code == 400
    assert gone.json()["error"]["code"] == "resource_missing"


def test_error_envelope_and_headers(url: str, account: AccountKeys) -> None:
    response = raw(url, "GET", "/v1/refunds/re_123", account.secret_key)
    assert response.status_code == 404
    assert response.headers["Request-Id"].startswith("req_")
    assert response.headers["Stripe-Should-Retry"] == "false"
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "resource_missing"
    assert error["param"] == "id"
    assert error["message"] == "No such refund: 're_123'"
    assert error["doc_url"] == "https://stripe.com/docs/error-codes/resource-missing"
    assert error["request_log_url"].startswith("https://dashboard.stripe.com/test/logs/req_")
    ok = raw(url, "GET", "/v1/refunds", account.secret_key)
    assert ok.headers["Request-Id"] != response.headers["Request-Id"]
    assert "Stripe-Should-Retry" not in ok.headers


def test_unknown_url_and_unknown_parameter(url: str, account: AccountKeys) -> None:
    unknown_url = raw(url, "GET", "/v1/unicorns", account.secret_key)
    assert unknown_url.status_code == 404
    assert unknown_url.json()["error"]["message"].startswith(
        "Unrecognized request URL (GET: /v1/unicorns)"
    )
    unknown_param = raw(url, "POST", "/v1/customers", account.secret_key, {"nmae": "typo"})
    assert unknown_param.status_code == 400
    assert unknown_param.json()["error"] == {
        "code": "parameter_unknown",
        "doc_url": "https://stripe.com/docs/error-codes/parameter-unknown",
        "message": "Received unknown parameter: nmae",
        "param": "nmae",
        "request_log_url": unknown_param.json()["error"]["request_log_url"],
        "type": "invalid_request_error",
    }


def test_expand_latest_charge_and_refund_charge(client: stripe.StripeClient) -> None:
    pi = pay(client)
    expanded = client.v1.payment_intents.retrieve(pi.id, params={"expand": ["latest_charge"]})
    assert isinstance(expanded.latest_charge, stripe.Charge)
    assert expanded.latest_charge.amount_captured == 1000
    refund = client.v1.refunds.create(
        params={"payment_intent": pi.id, "amount": 5, "expand": ["charge"]}
    )
    assert isinstance(refund.charge, stripe.Charge)
    assert refund.charge.amount_refunded == 5
    listed = client.v1.refunds.list(params={"expand": ["data.charge"]})
    assert isinstance(listed.data[0].charge, stripe.Charge)
    with pytest.raises(stripe.InvalidRequestError) as bad:
        client.v1.refunds.retrieve(refund.id, params={"expand": ["amount"]})
    assert bad.value.param == "expand"


def test_payment_objects_match_stripe_schema(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    require_specs()
    customer = client.v1.customers.create(params={"email": "jenny@example.com"})
    pi = pay(client, customer=customer.id)
    for path in (
        f"/v1/customers/{customer.id}",
        f"/v1/payment_intents/{pi.id}",
        f"/v1/charges/{pi.latest_charge}",
        "/v1/payment_intents",
        "/v1/charges",
        "/v1/events",
    ):
        assert_stripe_object(raw(url, "GET", path, account.secret_key).json())
    assert_stripe_object(
        raw(url, "GET", f"/v1/payment_methods/{pi.payment_method}", account.secret_key).json()
    )
