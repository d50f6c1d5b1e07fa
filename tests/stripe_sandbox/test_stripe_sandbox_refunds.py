"""Refunds: amounts, refusals, statuses that change later, cancel, lists."""

from __future__ import annotations

import pytest
import stripe
from stripe_sandbox_support import event_types, pay, raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys, StripeSandbox


def test_partial_refunds_add_up_and_over_refund_is_refused(client: stripe.StripeClient) -> None:
    pi = pay(client, 1000)
    first = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 300})
    second = client.v1.refunds.create(params={"charge": pi.latest_charge, "amount": 500})
    assert (first.status, second.status) == ("succeeded", "succeeded")
    assert first.charge == second.charge == pi.latest_charge
    assert first.payment_intent == pi.id

    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 201})
    err = refused.value
    assert err.http_status == 400
    assert err.code == "amount_too_large"
    assert err.param == "amount"
    assert err.user_message == (
        "Refund amount ($2.01) is greater than unrefunded amount on charge ($2.00)"
    )

    rest = client.v1.refunds.create(params={"payment_intent": pi.id})
    assert rest.amount == 200
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.amount_refunded, charge.refunded) == (1000, True)
    assert [r.id for r in charge.refunds.data] == [rest.id, second.id, first.id]


def test_fully_refunded_charge_is_already_refunded(client: stripe.StripeClient) -> None:
    pi = pay(client, 1500)
    client.v1.refunds.create(params={"payment_intent": pi.id})
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 1})
    assert refused.value.code == "charge_already_refunded"
    assert refused.value.user_message == f"Charge {pi.latest_charge} has already been refunded."


def test_refund_events_and_charge_update(client: stripe.StripeClient) -> None:
    pi = pay(client, 1000)
    refund = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 400})
    events = client.v1.events.list(params={"type": "charge.refunded"}).data
    assert len(events) == 1
    assert events[0].data.object.amount_refunded == 400
    assert events[0].data.previous_attributes.amount_refunded == 0
    created = client.v1.events.list(params={"type": "refund.created"}).data
    assert created[0].data.object.id == refund.id


def test_reason_and_parameter_validation(client: stripe.StripeClient) -> None:
    pi = pay(client)
    with pytest.raises(stripe.InvalidRequestError) as bad_reason:
        client.v1.refunds.create(params={"payment_intent": pi.id, "reason": "changed_mind"})
    assert bad_reason.value.param == "reason"
    assert "duplicate, fraudulent, or requested_by_customer" in str(bad_reason.value.user_message)
    with pytest.raises(stripe.InvalidRequestError) as zero:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 0})
    assert zero.value.param == "amount"
    with pytest.raises(stripe.InvalidRequestError) as neither:
        client.v1.refunds.create(params={"amount": 10})
    assert neither.value.code == "parameter_missing"
    with pytest.raises(stripe.InvalidRequestError) as missing:
        client.v1.refunds.create(params={"payment_intent": "pi_doesnotexist"})
    assert (missing.value.http_status, missing.value.code, missing.value.param) == (
        400,
        "resource_missing",
        "payment_intent",
    )
    ok = client.v1.refunds.create(
        params={"payment_intent": pi.id, "reason": "requested_by_customer"}
    )
    assert ok.reason == "requested_by_customer"


def test_disputed_charge_refuses_refunds(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client, 2000, payment_method="pm_card_createDispute")
    assert client.v1.charges.retrieve(pi.latest_charge).disputed is False
    sandbox.advance_clock(2)
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert charge.disputed is True
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.refunds.create(params={"payment_intent": pi.id})
    assert refused.value.code == "charge_disputed"
    assert refused.value.user_message == (
        f"Charge {pi.latest_charge} has been charged back; cannot issue a refund."
    )


def test_uncaptured_payment_partial_refund_refused_full_refund_releases(
    client: stripe.StripeClient,
) -> None:
    pi = pay(client, 5000, capture_method="manual")
    assert pi.status == "requires_capture"
    with pytest.raises(stripe.InvalidRequestError) as partial:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    assert "cannot partially refund an uncaptured charge" in str(partial.value.user_message)
    refund = client.v1.refunds.create(params={"payment_intent": pi.id})
    assert (refund.amount, refund.status) == (5000, "succeeded")
    assert client.v1.payment_intents.retrieve(pi.id).status == "canceled"
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.captured, charge.amount_captured, charge.refunded) == (False, 0, True)
    with pytest.raises(stripe.InvalidRequestError) as again:
        client.v1.refunds.create(params={"payment_intent": pi.id})
    assert "does not have a successful charge to refund" in str(again.value.user_message)


def test_insufficient_balance_keeps_refunds_pending_until_restored(
    client: stripe.StripeClient, sandbox: StripeSandbox, account: AccountKeys
) -> None:
    pi = pay(client, 1000)
    sandbox.set_balance(account.id, sufficient=False)
    refund = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 600})
    assert refund.status == "pending"
    assert refund.pending_reason == "insufficient_funds"
    # Pending refunds hold the money: no over-refund while it waits.
    assert client.v1.charges.retrieve(pi.latest_charge).amount_refunded == 600
    with pytest.raises(stripe.InvalidRequestError):
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 500})
    sandbox.advance_clock(3 * 86400)
    assert client.v1.refunds.retrieve(refund.id).status == "pending"

    sandbox.set_balance(account.id, sufficient=True)
    settled = client.v1.refunds.retrieve(refund.id)
    assert settled.status == "succeeded"
    assert "pending_reason" not in settled
    updated = client.v1.events.list(params={"type": "refund.updated"}).data[0]
    assert updated.data.object.status == "succeeded"
    assert updated.data.previous_attributes.status == "pending"


def test_refund_fail_card_turns_failed_later_and_gives_amount_back(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client, 1000, payment_method="pm_card_refundFail")
    refund = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 1000})
    assert refund.status == "succeeded"
    assert client.v1.charges.retrieve(pi.latest_charge).refunded is True

    sandbox.advance_clock(59)
    assert client.v1.refunds.retrieve(refund.id).status == "succeeded"
    sandbox.advance_clock(2 * 86400)
    failed = client.v1.refunds.retrieve(refund.id)
    assert failed.status == "failed"
    assert failed.failure_reason == "expired_or_canceled_card"
    assert failed.failure_balance_transaction.startswith("txn_")
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.amount_refunded, charge.refunded) == (0, False)
    types = event_types(client)
    assert types[-3:] == ["refund.updated", "refund.failed", "charge.updated"]
    update = client.v1.events.list(params={"type": "refund.updated"}).data[0]
    assert update.data.previous_attributes.status == "succeeded"
    # The money is refundable again once the refund failed.
    assert client.v1.refunds.create(params={"payment_intent": pi.id}).amount == 1000


def test_cancel_only_requires_action_refunds(
    client: stripe.StripeClient, sandbox: StripeSandbox, account: AccountKeys
) -> None:
    pi = pay(client, 1000)
    done = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.refunds.cancel(done.id)
    assert refused.value.http_status == 400
    assert "status of succeeded" in str(refused.value.user_message)
    assert "requires_action" in str(refused.value.user_message)

    sandbox.set_refund_mode(account.id, "requires_action")
    waiting = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 200})
    assert waiting.status == "requires_action"
    assert waiting.next_action.type == "display_details"
    canceled = client.v1.refunds.cancel(waiting.id)
    assert canceled.status == "canceled"
    assert "next_action" not in canceled
    assert client.v1.charges.retrieve(pi.latest_charge).amount_refunded == 100


def test_pending_processing_refunds_settle_on_the_clock(
    client: stripe.StripeClient, sandbox: StripeSandbox, account: AccountKeys
) -> None:
    sandbox.set_refund_mode(account.id, "pending_processing", settle_after=3600)
    pi = pay(client)
    refund = client.v1.refunds.create(params={"payment_intent": pi.id})
    assert (refund.status, refund.pending_reason) == ("pending", "processing")
    sandbox.advance_clock(3600)
    assert client.v1.refunds.retrieve(refund.id).status == "succeeded"


def test_update_metadata_only_and_list_filters(client: stripe.StripeClient) -> None:
    a, b = pay(client, 1000), pay(client, 1000)
    ra = [
        client.v1.refunds.create(params={"payment_intent": a.id, "amount": 100}) for _ in range(3)
    ]
    client.v1.refunds.create(params={"payment_intent": b.id, "amount": 100})
    by_pi = client.v1.refunds.list(params={"payment_intent": a.id})
    assert [r.id for r in by_pi.data] == [r.id for r in reversed(ra)]
    by_charge = client.v1.refunds.list(params={"charge": a.latest_charge, "limit": 2})
    assert by_charge.has_more is True
    assert len(by_charge.data) == 2
    nxt = client.v1.refunds.list(
        params={"charge": a.latest_charge, "starting_after": by_charge.data[-1].id}
    )
    assert [r.id for r in nxt.data] == [ra[0].id]

    updated = client.v1.refunds.update(ra[0].id, params={"metadata": {"case": "c_1"}})
    assert updated.metadata["case"] == "c_1"
    with pytest.raises(stripe.InvalidRequestError) as only_metadata:
        client.v1.refunds.update(ra[0].id, params={"amount": 5})
    assert only_metadata.value.code == "parameter_unknown"
    with pytest.raises(stripe.InvalidRequestError) as missing:
        client.v1.refunds.retrieve("re_missing")
    assert (missing.value.http_status, missing.value.code) == (404, "resource_missing")
    assert missing.value.user_message == "No such refund: 're_missing'"


@pytest.mark.parametrize(
    ("currency", "amount", "over", "message"),
    [
        (
            "usd",
            1000,
            1001,
            "Refund amount ($10.01) is greater than unrefunded amount on charge ($10.00)",
        ),
        (
            "jpy",
            500,
            501,
            "Refund amount (¥501) is greater than unrefunded amount on charge (¥500)",
        ),
        (
            "kwd",
            1500,
            1501,
            "Refund amount (1.501 KWD) is greater than unrefunded amount on charge (1.500 KWD)",
        ),
    ],
)
def test_currencies_use_minor_units(
    client: stripe.StripeClient, currency: str, amount: int, over: int, message: str
) -> None:
    pi = pay(client, amount, currency)
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.amount, charge.currency) == (amount, currency)
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": over})
    assert refused.value.user_message == message
    refund = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": amount})
    assert (refund.amount, refund.currency) == (amount, currency)


def test_refund_objects_match_stripe_schema(
    client: stripe.StripeClient, sandbox: StripeSandbox, account: AccountKeys, url: str
) -> None:
    require_specs()
    pi = pay(client, 1000, payment_method="pm_card_refundFail")
    ids = [client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}).id]
    sandbox.set_balance(account.id, sufficient=False)
    ids.append(client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}).id)
    sandbox.set_balance(account.id, sufficient=True)
    sandbox.set_refund_mode(account.id, "requires_action")
    ids.append(client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}).id)
    seen = {raw(url, "GET", f"/v1/refunds/{i}", account.secret_key).json()["status"] for i in ids}
    assert seen == {"succeeded", "requires_action"}
    sandbox.advance_clock(3600)
    for refund_id in ids:
        assert_stripe_object(raw(url, "GET", f"/v1/refunds/{refund_id}", account.secret_key).json())
    assert_stripe_object(raw(url, "GET", "/v1/refunds", account.secret_key).json())
    charge = raw(url, "GET", f"/v1/charges/{pi.latest_charge}", account.secret_key).json()
    assert_stripe_object(charge)
    assert {r["status"] for r in charge["refunds"]["data"]} == {"failed", "requires_action"}
