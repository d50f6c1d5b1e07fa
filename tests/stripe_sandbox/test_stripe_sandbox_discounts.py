"""Coupons and promotion codes (the 2025+ ``promotion`` shape)."""

from __future__ import annotations

import time

import pytest
import stripe
from stripe_sandbox_support import raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys


def test_coupons_percent_and_amount(client: stripe.StripeClient) -> None:
    pct = client.v1.coupons.create(
        params={"percent_off": 15, "duration": "repeating", "duration_in_months": 3}
    )
    assert (pct.percent_off, pct.duration, pct.duration_in_months, pct.valid) == (
        15.0,
        "repeating",
        3,
        True,
    )
    amt = client.v1.coupons.create(
        params={
            "id": "SORRY10",
            "amount_off": 1000,
            "currency": "usd",
            "duration": "once",
            "max_redemptions": 1,
        }
    )
    assert (amt.id, amt.amount_off, amt.currency, amt.max_redemptions) == (
        "SORRY10",
        1000,
        "usd",
        1,
    )
    assert client.v1.coupons.retrieve("SORRY10").amount_off == 1000
    renamed = client.v1.coupons.update(
        "SORRY10", params={"name": "Apology", "metadata": {"case": "c9"}}
    )
    assert (renamed.name, renamed.metadata["case"]) == ("Apology", "c9")
    assert [c.id for c in client.v1.coupons.list().data] == ["SORRY10", pct.id]
    deleted = client.v1.coupons.delete("SORRY10")
    assert deleted.to_dict() == {"id": "SORRY10", "object": "coupon", "deleted": True}
    with pytest.raises(stripe.InvalidRequestError) as gone:
        client.v1.coupons.retrieve("SORRY10")
    assert gone.value.code == "resource_missing"


def test_coupon_validation(client: stripe.StripeClient) -> None:
    with pytest.raises(stripe.InvalidRequestError) as both:
        client.v1.coupons.create(params={"percent_off": 10, "amount_off": 100, "currency": "usd"})
    assert both.value.param == "percent_off"
    with pytest.raises(stripe.InvalidRequestError) as no_currency:
        client.v1.coupons.create(params={"amount_off": 100})
    assert no_currency.value.param == "currency"
    with pytest.raises(stripe.InvalidRequestError) as months:
        client.v1.coupons.create(params={"percent_off": 10, "duration": "repeating"})
    assert months.value.param == "duration_in_months"
    with pytest.raises(stripe.InvalidRequestError) as duration:
        client.v1.coupons.create(params={"percent_off": 10, "duration": "sometimes"})
    assert duration.value.param == "duration"
    client.v1.coupons.create(params={"id": "DUP", "percent_off": 5})
    with pytest.raises(stripe.InvalidRequestError) as duplicate:
        client.v1.coupons.create(params={"id": "DUP", "percent_off": 5})
    assert duplicate.value.code == "resource_already_exists"


def test_promotion_codes_reference_a_coupon(client: stripe.StripeClient) -> None:
    coupon = client.v1.coupons.create(params={"percent_off": 20})
    customer = client.v1.customers.create()
    code = client.v1.promotion_codes.create(
        params={
            "promotion": {"type": "coupon", "coupon": coupon.id},
            "code": "WELCOME20",
            "customer": customer.id,
            "max_redemptions": 1,
            "metadata": {"case": "c2"},
        }
    )
    assert code.id.startswith("promo_")
    assert (code.code, code.active, code.customer, code.times_redeemed) == (
        "WELCOME20",
        True,
        customer.id,
        0,
    )
    assert (code.promotion.type, code.promotion.coupon) == ("coupon", coupon.id)
    generated = client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}}
    )
    assert generated.code and generated.code.isupper()

    expanded = client.v1.promotion_codes.retrieve(code.id, params={"expand": ["promotion.coupon"]})
    assert expanded.promotion.coupon.percent_off == 20
    assert [p.id for p in client.v1.promotion_codes.list(params={"code": "WELCOME20"}).data] == [
        code.id
    ]
    assert [
        p.id for p in client.v1.promotion_codes.list(params={"customer": customer.id}).data
    ] == [code.id]
    assert len(client.v1.promotion_codes.list(params={"coupon": coupon.id}).data) == 2
    off = client.v1.promotion_codes.update(code.id, params={"active": False})
    assert off.active is False
    assert [p.id for p in client.v1.promotion_codes.list(params={"active": True}).data] == [
        generated.id
    ]


def test_promotion_code_refusals(
    url: str, account: AccountKeys, client: stripe.StripeClient
) -> None:
    coupon = client.v1.coupons.create(params={"percent_off": 20})
    old_style = raw(url, "POST", "/v1/promotion_codes", account.secret_key, {"coupon": coupon.id})
    assert old_style.status_code == 400
    assert old_style.json()["error"]["message"] == "Received unknown parameter: coupon"
    missing = raw(
        url,
        "POST",
        "/v1/promotion_codes",
        account.secret_key,
        {"promotion[type]": "coupon", "promotion[coupon]": "NOPE"},
    )
    assert missing.status_code == 400
    assert missing.json()["error"]["param"] == "promotion[coupon]"
    client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}, "code": "SAME"}
    )
    with pytest.raises(stripe.InvalidRequestError) as clash:
        client.v1.promotion_codes.create(
            params={"promotion": {"type": "coupon", "coupon": coupon.id}, "code": "same"}
        )
    assert clash.value.param == "code"


def test_a_promotion_code_cannot_outlive_its_coupon(client: stripe.StripeClient) -> None:
    redeem_by = int(time.time()) + 3600
    coupon = client.v1.coupons.create(params={"percent_off": 20, "redeem_by": redeem_by})
    promotion = {"type": "coupon", "coupon": coupon.id}

    with pytest.raises(stripe.InvalidRequestError) as later:
        client.v1.promotion_codes.create(
            params={"promotion": promotion, "expires_at": redeem_by + 1}
        )
    same = client.v1.promotion_codes.create(
        params={"promotion": promotion, "expires_at": redeem_by}
    )

    assert later.value.param == "expires_at"
    assert "redeem_by" in str(later.value.user_message)
    assert same.expires_at == redeem_by


def test_discount_objects_match_stripe_schema(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    require_specs()
    coupon = client.v1.coupons.create(
        params={"amount_off": 500, "currency": "eur", "duration": "forever"}
    )
    promo = client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}}
    )
    for path in (
        f"/v1/coupons/{coupon.id}",
        f"/v1/promotion_codes/{promo.id}",
        "/v1/coupons",
        "/v1/promotion_codes",
    ):
        assert_stripe_object(raw(url, "GET", path, account.secret_key).json())
    assert_stripe_object(raw(url, "DELETE", f"/v1/coupons/{coupon.id}", account.secret_key).json())
