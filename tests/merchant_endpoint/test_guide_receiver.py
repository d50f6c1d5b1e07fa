"""The minimal receiving example of docs/merchant-endpoint.md, run as it is written, with
Caseward's adapter: it verifies the signature, answers facts, does an action once, replays
it for a resend, refuses the key with another body, finds it by key, finds customers by
email, and keeps working for a merchant still on the old secret during a rotation."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from threaded_server import serving
from werkzeug.serving import make_server

from integrations.merchant_endpoint.adapter import MerchantEndpointAdapter, merchant_http_client
from integrations.merchant_endpoint.signing import SigningSecrets, new_secret
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ActionRequest,
    CredentialsRefused,
    IdempotencyConflict,
    PaymentFacts,
    ProviderStatus,
)

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "merchant-endpoint.md"


@dataclass
class Merchant:
    """The example served over HTTP, with the merchant's own code beside it."""

    url: str
    secret: str
    payments: dict[str, dict[str, Any]]


def _example() -> str:
    blocks: list[str] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    return next(block for block in blocks if '@app.post("/caseward/actions")' in block)


@pytest.fixture
def merchant(monkeypatch: pytest.MonkeyPatch) -> Iterator[Merchant]:
    secret = new_secret()
    monkeypatch.setenv("CASEWARD_SECRETS", secret)
    payments: dict[str, dict[str, Any]] = {
        "pay_1": {
            "id": "pay_1",
            "currency": "usd",
            "amount": 9600,
            "captured": 9600,
            "disputed": False,
            "customer": "cust_1",
            "created": 1_700_000_000,
            "refunds": [],
        }
    }

    # The merchant's own code the example calls.
    def read_payment(payment_id: str) -> dict[str, Any] | None:
        return payments.get(payment_id)

    def read_customer(customer_id: str) -> dict[str, Any] | None:
        return None

    def customers_with_email(email: str) -> list[dict[str, str]]:
        known = {"cust_1": "maya@example.com"}
        return [{"id": i, "email": e} for i, e in known.items() if e.lower() == email.lower()]

    def refund_or_credit(action: dict[str, Any]) -> dict[str, Any]:
        refunds = payments[action["target"]]["refunds"]
        refund = {
            "id": f"rf_{len(refunds) + 1}",
            "amount": action["amount"],
            "currency": action["currency"],
            "status": "succeeded",
            "created": 1_700_000_100,
            "metadata": action["metadata"],
        }
        refunds.append(refund)
        return {"id": refund["id"], "status": "succeeded"}

    namespace: dict[str, Any] = {"__name__": "readme_receiver"}
    exec(_example(), namespace)  # the guide's own code
    namespace.update(
        read_payment=read_payment,
        read_customer=read_customer,
        customers_with_email=customers_with_email,
        refund_or_credit=refund_or_credit,
    )
    server = make_server("127.0.0.1", 0, namespace["app"], threaded=True)
    with serving(server):
        yield Merchant(f"http://127.0.0.1:{server.server_port}/caseward", secret, payments)


def _refund(amount: int = 4800, key: str | None = None) -> ActionRequest:
    action_id = str(uuid.uuid4())
    return ActionRequest(
        action_id=action_id,
        kind=ActionKind.REFUND,
        target="pay_1",
        idempotency_key=key or f"caseward-action-{action_id}",
        amount=amount,
        currency="usd",
        metadata={ACTION_ID_METADATA_KEY: action_id},
    )


def test_the_guide_receiver_does_each_action_once(merchant: Merchant) -> None:
    with merchant_http_client(5.0) as http:
        adapter = MerchantEndpointAdapter(
            merchant.url, SigningSecrets(merchant.secret), http_client=http
        )
        facts = adapter.facts(ActionKind.REFUND, "pay_1")
        assert isinstance(facts, PaymentFacts) and facts.exists and facts.customer_id == "cust_1"
        assert not adapter.facts(ActionKind.REFUND, "pay_2").exists
        [customer] = adapter.customers_with_email("Maya@example.com")
        assert (customer.id, customer.email) == ("cust_1", "maya@example.com")
        assert adapter.customers_with_email("sam@example.com") == ()

        request = _refund()
        first, again = adapter.submit(request), adapter.submit(request)
        assert first.status == ProviderStatus.SUCCEEDED and not first.replayed
        assert again.reference == first.reference and again.replayed
        assert len(merchant.payments["pay_1"]["refunds"]) == 1

        found = adapter.find(request)
        assert found is not None and found.reference == first.reference
        assert adapter.find(_refund()) is None
        with pytest.raises(IdempotencyConflict):
            adapter.submit(_refund(amount=100, key=request.idempotency_key))

        stranger = MerchantEndpointAdapter(
            merchant.url, SigningSecrets(new_secret()), http_client=http
        )
        with pytest.raises(CredentialsRefused):
            stranger.submit(_refund())

        # Rotated in Caseward, the merchant not yet switched: both secrets sign meanwhile.
        rotated = SigningSecrets(merchant.secret).rotated(new_secret(), datetime.now(UTC))
        assert rotated.previous_until is not None
        assert rotated.previous_until - datetime.now(UTC) > timedelta(hours=23)
        switching = MerchantEndpointAdapter(merchant.url, rotated, http_client=http)
        assert switching.submit(_refund(amount=1000)).status == ProviderStatus.SUCCEEDED
    assert [r["amount"] for r in merchant.payments["pay_1"]["refunds"]] == [4800, 1000]
