"""Error mapping: refused, not allowed, conflicting, and the unclear outcomes ``find`` settles."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import stripe
from stripe_adapter_support import customer, pay, request

from integrations.provider import (
    ActionKind,
    ActionRequest,
    CredentialsRefused,
    IdempotencyConflict,
    OutcomeUnknown,
    PaymentFacts,
    PermissionDenied,
    ProviderAnswer,
    ProviderRejected,
)
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import AccountKeys, StripeSandbox


def test_over_refund_is_rejected_with_stripes_code(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    adapter.submit(request(ActionKind.REFUND, intent.id, 800))
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.REFUND, intent.id, 201))
    assert (refused.value.code, refused.value.http_status) == ("amount_too_large", 400)
    assert "greater than unrefunded amount" in str(refused.value)


def test_refunding_a_disputed_charge_is_rejected(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000, payment_method="pm_card_createDispute")
    sandbox.advance_clock(5)
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.REFUND, intent.id, 100))
    assert refused.value.code == "charge_disputed"


def test_a_missing_subscription_is_rejected(adapter: StripeAdapter) -> None:
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.SUBSCRIPTION_CANCEL, "sub_gone", at_period_end=True))
    assert (refused.value.code, refused.value.http_status) == ("resource_missing", 404)


def test_a_key_without_refund_write_is_denied_and_told_which_permission(
    sandbox: StripeSandbox,
    account: AccountKeys,
    setup: stripe.StripeClient,
    make_adapter: Callable[..., StripeAdapter],
) -> None:
    permissions = {"charges": "read", "payment_intents": "read", "refunds": "read"}
    key = sandbox.add_restricted_key(account.id, permissions).key
    adapter = make_adapter(key)
    intent = pay(setup, 1000)
    facts = adapter.facts(ActionKind.REFUND, intent.id)  # reading is allowed
    assert isinstance(facts, PaymentFacts)
    with pytest.raises(PermissionDenied) as denied:
        adapter.submit(request(ActionKind.REFUND, intent.id, 100))
    message = str(denied.value)
    assert "'rak_refund_write'" in message
    assert denied.value.http_status == 403
    assert key not in message
    assert key[8:-4] not in message


def test_a_key_stripe_does_not_know_is_refused_at_a_read_and_a_write_without_echoing_it(
    make_adapter: Callable[..., StripeAdapter], setup: stripe.StripeClient
) -> None:
    """A revoked or rolled key (401): Stripe checked it before anything else, so nothing
    happened there, and nothing will until the shop connects Stripe again."""
    key = "rk_test_51UnknownKeyUnknownKeyUnknownKeyUnknownKey0000"
    adapter, payment = make_adapter(key), pay(setup).id
    for call in (
        lambda: adapter.facts(ActionKind.REFUND, payment),
        lambda: adapter.submit(request(ActionKind.REFUND, payment, 100)),
    ):
        with pytest.raises(CredentialsRefused) as refused:
            call()
        assert refused.value.reason == "unknown_key"
        assert "connect Stripe again" in str(refused.value)
        assert key not in str(refused.value)
        assert key not in repr(refused.value)


def test_dropped_connection_after_commit_is_unknown_then_found(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 600)
    sandbox.arm_fault("drop_after_commit", method="POST", path="/v1/refunds")
    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    found = adapter.find(action)
    assert found is not None
    assert found.raw["amount"] == 600
    resent = adapter.submit(action)  # what reconciliation may do: same key, same params
    assert (resent.replayed, resent.reference) == (True, found.reference)
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert facts.refunded == 600


def test_dropped_connection_before_commit_is_unknown_and_not_found(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 600)
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds")
    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    assert adapter.find(action) is None
    assert adapter.submit(action).replayed is False


def test_500_after_commit_is_unknown_and_replayed_as_such(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 250)
    sandbox.arm_fault("error_500_after_commit", method="POST", path="/v1/refunds")
    with pytest.raises(OutcomeUnknown, match="HTTP 500"):
        adapter.submit(action)
    with pytest.raises(OutcomeUnknown):  # Stripe saved the 500 under the key
        adapter.submit(action)
    found = adapter.find(action)
    assert found is not None
    assert found.raw["amount"] == 250


def test_timeout_is_unknown_then_found(
    make_adapter: Callable[..., StripeAdapter],
    restricted_key: str,
    setup: stripe.StripeClient,
    sandbox: StripeSandbox,
) -> None:
    adapter = make_adapter(restricted_key, timeout_seconds=0.3)
    owner = customer(setup)
    action = request(ActionKind.CUSTOMER_CREDIT, owner.id, 400)
    sandbox.arm_fault("delay", method="POST", path="/v1/customers/*", ms=1000, when="after")
    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    found = adapter.find(action)
    assert found is not None
    assert found.raw["amount"] == -400


def test_discount_interrupted_between_its_two_writes(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    owner = customer(setup)
    action = request(ActionKind.DISCOUNT, owner.id, 500)
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/promotion_codes")
    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    assert adapter.find(action) is None  # a coupon alone is not the discount
    answer = adapter.submit(action)
    assert answer.replayed is False
    (coupon,) = setup.v1.coupons.list().data  # the coupon was replayed, not made twice
    assert answer.raw["coupon_id"] == coupon.id


def test_same_key_with_another_amount_is_a_conflict(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    adapter.submit(request(ActionKind.REFUND, intent.id, 300, key="caseward:k1"))
    with pytest.raises(IdempotencyConflict):
        adapter.submit(request(ActionKind.REFUND, intent.id, 400, key="caseward:k1"))


def _first_request_in_flight(
    sandbox: StripeSandbox, adapter: StripeAdapter, action: ActionRequest, ms: int
) -> tuple[threading.Thread, list[ProviderAnswer]]:
    """Start a submit that Stripe holds for ``ms`` after claiming its key."""
    sandbox.arm_fault("delay", method="POST", path="/v1/refunds", ms=ms)
    answers: list[ProviderAnswer] = []
    thread = threading.Thread(target=lambda: answers.append(adapter.submit(action)), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not _key_in_use(sandbox, action.idempotency_key):
        assert time.monotonic() < deadline, "the first request never claimed its key"
        time.sleep(0.005)
    return thread, answers


def _key_in_use(sandbox: StripeSandbox, key: str) -> bool:
    """Whether a request under ``key`` is still running at the sandbox. The sandbox shows
    no public view of keys in use, so its store is read under the store's own lock."""
    store = sandbox.idempotency
    with store._lock:
        return any(k == key and not record.done for (_, _, k), record in store._records.items())


def test_key_in_use_is_retried_with_the_same_key(
    make_adapter: Callable[..., StripeAdapter],
    restricted_key: str,
    setup: stripe.StripeClient,
    sandbox: StripeSandbox,
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 300)
    # Held 3 s: the second request arrives within it even on a loaded machine.
    thread, first = _first_request_in_flight(sandbox, make_adapter(restricted_key), action, 3000)
    waited: list[float] = []

    def pause(seconds: float) -> None:
        waited.append(seconds)
        thread.join(30)

    second = make_adapter(restricted_key, sleep=pause).submit(action)
    assert waited == [0.2]
    assert second.replayed is True
    assert [answer.reference for answer in first] == [second.reference]


def test_key_still_in_use_after_the_retries_is_unknown(
    make_adapter: Callable[..., StripeAdapter],
    restricted_key: str,
    setup: stripe.StripeClient,
    sandbox: StripeSandbox,
    pauses: list[float],
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 300)
    # Held 5 s: all three sends (the pauses between them are not slept) arrive within it.
    thread, _ = _first_request_in_flight(sandbox, make_adapter(restricted_key), action, 5000)
    with pytest.raises(OutcomeUnknown, match="HTTP 409"):
        make_adapter(restricted_key).submit(action)
    assert pauses == [0.2, 0.5]
    thread.join(30)
