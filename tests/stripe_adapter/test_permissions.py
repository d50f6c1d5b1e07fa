"""Testing a restricted key before it is saved: which permissions it holds, found
without changing anything at Stripe (the sandbox over HTTP).

Every key here is checked the way a merchant's would be; afterwards the sandbox's log
of requests must show no write it accepted, whatever the key could do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from stripe_adapter_support import ADAPTER_PERMISSIONS

from app.connections.service import permission_advice
from integrations.provider import CredentialsRefused
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import AccountKeys, StripeSandbox

# What Caseward needs, in the order the report lists it.
NEEDED = (
    "rak_charge_read",
    "rak_payment_intent_read",
    "rak_customer_read",
    "rak_subscription_read",
    "rak_dispute_read",
    "rak_refund_write",
    "rak_customer_write",
    "rak_coupon_write",
    "rak_promotion_code_write",
    "rak_subscription_write",
    "rak_webhook_write",
)


def _accepted_writes(sandbox: StripeSandbox, account: AccountKeys) -> list[str]:
    """Every write the sandbox accepted for the account (answered 2xx)."""
    return [
        f"{r.method} {r.path} -> {r.status}"
        for r in sandbox.received_requests(account.id)
        if r.method != "GET" and r.status is not None and 200 <= r.status < 300
    ]


def _wait_until_answered(sandbox: StripeSandbox, account: AccountKeys) -> None:
    """Poll (with a deadline) until the sandbox has answered every request it received."""
    deadline = time.monotonic() + 20
    while any(r.status is None and not r.dropped for r in sandbox.received_requests(account.id)):
        assert time.monotonic() < deadline, "a request was never answered"
        time.sleep(0.05)


def test_a_key_with_every_permission_is_ok_and_nothing_is_written(
    adapter: StripeAdapter, sandbox: StripeSandbox, account: AccountKeys
) -> None:
    report = adapter.check_permissions()

    assert report.ok
    assert (report.granted, report.missing, report.unknown) == (NEEDED, (), ())
    assert str(permission_advice(report)) == "The key has every permission Caseward needs."
    writes = [r for r in sandbox.received_requests(account.id) if r.method == "POST"]
    assert len(writes) == 6  # every write probe reached Stripe...
    assert _accepted_writes(sandbox, account) == []  # ...and none was accepted


@pytest.mark.parametrize(
    ("resource", "level", "missing", "dashboard"),
    [
        ("charges", "none", ("rak_charge_read",), "Charges: Read"),
        ("payment_intents", "none", ("rak_payment_intent_read",), "PaymentIntents: Read"),
        ("customers", "read", ("rak_customer_write",), "Customers: Write"),
        ("customers", "none", ("rak_customer_read", "rak_customer_write"), "Customers: Write"),
        ("subscriptions", "read", ("rak_subscription_write",), "Subscriptions: Write"),
        (
            "subscriptions",
            "none",
            ("rak_subscription_read", "rak_subscription_write"),
            "Subscriptions: Write",
        ),
        ("disputes", "none", ("rak_dispute_read",), "Disputes: Read"),
        ("refunds", "read", ("rak_refund_write",), "Refunds: Write"),
        ("coupons", "read", ("rak_coupon_write",), "Coupons: Write"),
        ("promotion_codes", "read", ("rak_promotion_code_write",), "Promotion codes: Write"),
        ("webhook_endpoints", "read", ("rak_webhook_write",), "Webhook endpoints: Write"),
    ],
)
def test_a_key_lacking_a_permission_is_told_which_and_nothing_is_written(
    sandbox: StripeSandbox,
    account: AccountKeys,
    make_adapter: Callable[..., StripeAdapter],
    resource: str,
    level: str,
    missing: tuple[str, ...],
    dashboard: str,
) -> None:
    key = sandbox.add_restricted_key(account.id, {**ADAPTER_PERMISSIONS, resource: level})

    report = make_adapter(key.key).check_permissions()

    assert not report.ok
    assert report.missing == missing
    assert report.granted == tuple(name for name in NEEDED if name not in missing)
    assert report.unknown == ()
    advice = str(permission_advice(report))
    assert advice.startswith("In the Stripe dashboard, edit this restricted key and set ")
    assert dashboard in advice and advice.count(":") == 1  # one setting, at the level needed
    assert _accepted_writes(sandbox, account) == []


def test_a_probe_that_times_out_is_unknown_not_missing(
    sandbox: StripeSandbox,
    account: AccountKeys,
    restricted_key: str,
    make_adapter: Callable[..., StripeAdapter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    hold = sandbox.arm_fault("hold", method="POST", path="/v1/refunds")
    try:
        with caplog.at_level(logging.DEBUG):
            report = make_adapter(restricted_key, timeout_seconds=2.0).check_permissions()
    finally:
        sandbox.release_hold(hold.id)

    assert (report.unknown, report.missing) == (("rak_refund_write",), ())
    assert report.granted == tuple(name for name in NEEDED if name != "rak_refund_write")
    assert not report.ok
    assert str(permission_advice(report)) == (
        "Stripe did not answer for Refunds: Write, so test the key again in a moment."
    )
    assert "rak_refund_write" in caplog.text
    assert restricted_key not in caplog.text and restricted_key[-8:] not in caplog.text
    # Once let go, the held probe is refused like the others: nothing was created.
    _wait_until_answered(sandbox, account)
    assert _accepted_writes(sandbox, account) == []


def test_a_server_error_is_unknown_beside_a_missing_permission(
    sandbox: StripeSandbox, account: AccountKeys, make_adapter: Callable[..., StripeAdapter]
) -> None:
    key = sandbox.add_restricted_key(account.id, {**ADAPTER_PERMISSIONS, "coupons": "read"})
    sandbox.arm_fault("error_500_before_commit", method="GET", path="/v1/disputes")

    report = make_adapter(key.key).check_permissions()

    assert (report.missing, report.unknown) == (("rak_coupon_write",), ("rak_dispute_read",))
    assert str(permission_advice(report)) == (
        "In the Stripe dashboard, edit this restricted key and set Coupons: Write; "
        "Stripe did not answer for Disputes: Read, so test the key again in a moment."
    )


def test_a_key_stripe_does_not_know_is_refused_without_showing_it(
    make_adapter: Callable[..., StripeAdapter],
) -> None:
    unknown_key = "rk_test_51" + "Q" * 60 + "wxyz"

    with pytest.raises(CredentialsRefused) as refused:
        make_adapter(unknown_key).check_permissions()

    assert "rk_test_...wxyz" in str(refused.value)
    assert unknown_key not in str(refused.value)
