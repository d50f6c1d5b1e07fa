"""The merchant endpoint adapter against the receiving server in its own process
(Caseward issue 11, points 5 and 6).

Facts are read as the merchant reports them; an action is sent once and a resend gets
the first answer; the status endpoint finds it by key; every kind of answer maps to the
provider contract's meaning (nothing sent, throttled, refused, conflict, unknown). The
receiver itself refuses whatever is not signed with a secret it holds. Every effect is
read from the receiver's own records.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from merchant_support import CAPTURED, Receiver, wait_for

from integrations.merchant_endpoint.adapter import MerchantEndpointAdapter, merchant_http_client
from integrations.merchant_endpoint.protocol import encode, facts_body
from integrations.merchant_endpoint.signing import SigningSecrets, new_secret, sign
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ActionRequest,
    CredentialsRefused,
    CustomerFacts,
    IdempotencyConflict,
    NotSent,
    OutcomeUnknown,
    PaymentFacts,
    PermissionDenied,
    ProviderError,
    ProviderRejected,
    ProviderStatus,
    Throttled,
)

CUSTOMER, PAYMENT = "cust_maya", "pay_1001"


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    client = merchant_http_client(2.0)
    yield client
    client.close()


@pytest.fixture
def secret(receiver: Receiver) -> str:
    made = new_secret()
    receiver.hold_secrets(made)
    receiver.seed_customer(CUSTOMER, email="maya@example.com", currency="usd")
    receiver.seed_payment(PAYMENT, CUSTOMER)
    return made


@pytest.fixture
def adapter(receiver: Receiver, secret: str, http: httpx.Client) -> MerchantEndpointAdapter:
    return MerchantEndpointAdapter(receiver.url, SigningSecrets(secret), http_client=http)


def _request(
    kind: ActionKind = ActionKind.REFUND,
    target: str = PAYMENT,
    amount: int = 4800,
    key: str | None = None,
) -> ActionRequest:
    action_id = str(uuid.uuid4())
    return ActionRequest(
        action_id=action_id,
        kind=kind,
        target=target,
        idempotency_key=key or f"caseward-action-{action_id}",
        amount=amount,
        currency="usd",
        params={"reason": "requested_by_customer"},
        metadata={ACTION_ID_METADATA_KEY: action_id},
    )


def _effects_of(receiver: Receiver, request: ActionRequest) -> list[dict[str, Any]]:
    return [e for e in receiver.effects() if e["idempotency_key"] == request.idempotency_key]


def test_facts_are_read_as_the_merchant_reports_them(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    payment = adapter.facts(ActionKind.REFUND, PAYMENT)
    assert isinstance(payment, PaymentFacts)
    assert (payment.exists, payment.currency, payment.amount, payment.captured) == (
        True,
        "usd",
        CAPTURED,
        CAPTURED,
    )
    assert payment.paid and not payment.disputed and payment.customer_id == CUSTOMER
    assert payment.refunds == ()

    refund, credit = _request(amount=3000), _request(ActionKind.CUSTOMER_CREDIT, CUSTOMER, 500)
    adapter.submit(refund)
    adapter.submit(credit)

    payment = adapter.facts(ActionKind.REFUND, PAYMENT)
    assert isinstance(payment, PaymentFacts)
    [seen] = payment.refunds
    assert (seen.amount, seen.currency, seen.status) == (3000, "usd", ProviderStatus.SUCCEEDED)
    assert seen.metadata[ACTION_ID_METADATA_KEY] == refund.action_id
    assert payment.refunded == 3000

    customer = adapter.facts(ActionKind.CUSTOMER_CREDIT, CUSTOMER)
    assert isinstance(customer, CustomerFacts)
    assert customer.exists and not customer.deleted
    assert (customer.email, customer.balance_currency) == ("maya@example.com", "usd")
    [given] = customer.credits
    # Money owed to the customer counts negative, as in the contract.
    assert (given.amount, given.currency) == (-500, "usd")
    assert given.metadata[ACTION_ID_METADATA_KEY] == credit.action_id

    assert adapter.facts(ActionKind.REFUND, "pay_nobody") == PaymentFacts("pay_nobody", False)
    assert adapter.facts(ActionKind.CUSTOMER_CREDIT, "cust_nobody") == CustomerFacts(
        "cust_nobody", False
    )


def test_customers_are_found_by_email_as_the_merchant_lists_them(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    receiver.seed_customer("cust_twin", email="MAYA@example.com")
    receiver.seed_customer("cust_gone", email="maya@example.com", deleted=True)
    receiver.seed_customer("cust_sam", email="sam@example.com")

    found = adapter.customers_with_email("maya@example.com")

    assert sorted((c.id, c.email) for c in found) == [
        (CUSTOMER, "maya@example.com"),
        ("cust_twin", "MAYA@example.com"),
    ]
    assert adapter.customers_with_email("nobody@example.com") == ()
    asked = [r for r in receiver.received() if r["path"] == "/customers/find"]
    assert [(r["verified"], r["type"], r["status"]) for r in asked] == [
        (True, "customers.find", 200)
    ] * 2

    # An endpoint without the look-up is an error, never "nobody has this email".
    receiver.refuse_next(404, "not_found")
    with pytest.raises(ProviderRejected):
        adapter.customers_with_email("maya@example.com")


def test_an_action_is_done_once_and_a_resend_gets_the_first_answer(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    request = _request()

    first = adapter.submit(request)
    again = adapter.submit(request)

    assert first.status == ProviderStatus.SUCCEEDED and not first.replayed
    assert again.reference == first.reference and again.replayed
    [effect] = _effects_of(receiver, request)
    assert (effect["id"], effect["amount"], effect["target"]) == (first.reference, 4800, PAYMENT)
    assert effect["metadata"] == {ACTION_ID_METADATA_KEY: request.action_id}
    sends = [r for r in receiver.received() if r["path"] == "/actions"]
    assert [(r["idempotency_key"], r["body_key"]) for r in sends] == [
        (request.idempotency_key, request.idempotency_key)
    ] * 2

    found = adapter.find(request)
    assert found is not None
    assert (found.reference, found.status) == (first.reference, ProviderStatus.SUCCEEDED)
    assert adapter.find(_request()) is None


def test_the_receiver_refuses_what_a_secret_it_holds_did_not_sign(
    receiver: Receiver, secret: str, http: httpx.Client
) -> None:
    body = encode(facts_body(ActionKind.REFUND, PAYMENT))
    now = datetime.now(UTC)

    def post(headers: dict[str, str], content: str = body) -> int:
        answer = http.post(f"{receiver.url}/facts", content=content, headers=headers)
        return answer.status_code

    signed = sign([secret], body, now=now)
    assert post(signed) == 200
    assert post({}) == 401
    assert post(signed, body.replace(PAYMENT, "pay_other")) == 401
    assert post(sign([secret], body, now=now - timedelta(minutes=6))) == 401
    assert post(sign([new_secret()], body, now=now)) == 401
    assert [r["verified"] for r in receiver.received()] == [True, False, False, False, False]
    stranger = MerchantEndpointAdapter(receiver.url, SigningSecrets(new_secret()), http_client=http)
    with pytest.raises(CredentialsRefused):
        stranger.submit(_request())
    assert receiver.effects() == []


def test_a_refused_connection_is_not_sent(receiver: Receiver, secret: str) -> None:
    with httpx.Client(timeout=2.0) as client:
        probe = MerchantEndpointAdapter(
            receiver.url.rsplit(":", 1)[0] + ":9", SigningSecrets(secret), http_client=client
        )
        with pytest.raises(NotSent):
            probe.submit(_request())
        with pytest.raises(NotSent):
            probe.facts(ActionKind.REFUND, PAYMENT)


def test_refusals_map_to_the_contract_and_nothing_happens(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    receiver.refuse_next(429, "rate_limited", retry_after=7)
    with pytest.raises(Throttled) as throttled:
        adapter.submit(_request())
    assert throttled.value.retry_after == 7.0

    receiver.refuse_next(403, "not_allowed")
    with pytest.raises(PermissionDenied):
        adapter.submit(_request())

    with pytest.raises(ProviderRejected) as too_much:
        adapter.submit(_request(amount=CAPTURED + 1))
    assert too_much.value.code == "amount_too_large" and too_much.value.http_status == 400

    with pytest.raises(ProviderRejected) as unsupported:
        adapter.submit(_request(ActionKind.DISCOUNT, CUSTOMER))
    assert unsupported.value.code == "unsupported"

    receiver.refuse_next(503, "maintenance")
    with pytest.raises(ProviderError) as unread:
        adapter.facts(ActionKind.REFUND, PAYMENT)
    assert not isinstance(unread.value, OutcomeUnknown)

    assert receiver.effects() == []
    # The discount never left: the protocol does not do it.
    assert len([r for r in receiver.received() if r["path"] == "/actions"]) == 3


def test_the_same_key_with_another_body_is_a_conflict(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    first = _request(amount=2000)
    adapter.submit(first)

    with pytest.raises(IdempotencyConflict):
        adapter.submit(_request(amount=2500, key=first.idempotency_key))
    assert [e["amount"] for e in _effects_of(receiver, first)] == [2000]


@pytest.mark.parametrize(
    ("fault", "committed"),
    [
        ("error_500_after_commit", True),
        ("drop_after_commit", True),
        ("error_500_before_commit", False),
        ("drop_before_commit", False),
    ],
)
def test_an_unclear_answer_is_unknown_and_the_status_endpoint_settles_it(
    adapter: MerchantEndpointAdapter, receiver: Receiver, fault: str, committed: bool
) -> None:
    request = _request()
    receiver.arm(fault, path="/actions")

    with pytest.raises(OutcomeUnknown):
        adapter.submit(request)

    found = adapter.find(request)
    assert (found is not None) is committed
    assert len(_effects_of(receiver, request)) == int(committed)


def test_an_answer_slower_than_the_timeout_is_unknown(receiver: Receiver, secret: str) -> None:
    request = _request()
    receiver.arm("delay", path="/actions", ms=3000, when="after")
    with httpx.Client(timeout=0.5) as impatient:
        adapter = MerchantEndpointAdapter(
            receiver.url, SigningSecrets(secret), http_client=impatient
        )
        with pytest.raises(OutcomeUnknown):
            adapter.submit(request)
        # Committed before the slow answer: the look-up finds it.
        found = adapter.find(request)
    assert found is not None and found.status == ProviderStatus.SUCCEEDED


def test_a_key_still_being_worked_on_is_unknown_not_refused(
    adapter: MerchantEndpointAdapter, receiver: Receiver
) -> None:
    request = _request()
    hold = receiver.arm("hold", path="/actions", ms=10_000)
    outcome: dict[str, Any] = {}
    first = threading.Thread(target=lambda: outcome.update(answer=adapter.submit(request)))
    first.start()
    wait_for(
        lambda: any(h["id"] == hold["id"] and h["waiting"] for h in receiver.holds()),
        what="the first send to be held inside the receiver",
    )

    with pytest.raises(OutcomeUnknown, match="idempotency_key_in_use"):
        adapter.submit(request)

    receiver.control("POST", "holds/release", {"id": hold["id"]})
    first.join(timeout=10)
    assert outcome["answer"].status == ProviderStatus.SUCCEEDED
    assert len(_effects_of(receiver, request)) == 1
