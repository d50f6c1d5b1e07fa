"""Which keys the adapter agrees to hold, and that a key never leaks into text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from stripe_adapter_support import ADAPTER_PERMISSIONS

from integrations.provider import ActionKind, CredentialsRefused, PaymentFacts
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import StripeSandbox

BODY = "51AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize("key", [f"sk_test_{BODY}", f"sk_live_{BODY}"])
def test_secret_keys_are_refused_with_instructions(key: str) -> None:
    with pytest.raises(CredentialsRefused) as refused:
        StripeAdapter(key, livemode=key.startswith("sk_live_"))
    message = str(refused.value)
    assert "restricted key" in message
    assert "rk_" in message
    for permission in ("Charges", "PaymentIntents", "Disputes", "Refunds", "Coupons"):
        assert permission in message
    assert "Promotion codes" in message
    assert "balance transactions" in message
    assert BODY not in message
    assert message.count(key[-4:]) == 1  # masked: prefix and last four only


def test_a_test_key_is_refused_in_live_mode() -> None:
    with pytest.raises(CredentialsRefused, match="test-mode key but the shop is in live mode"):
        StripeAdapter(f"rk_test_{BODY}", livemode=True)


def test_a_live_key_is_refused_in_test_mode() -> None:
    with pytest.raises(CredentialsRefused, match="live-mode key but the shop is in test mode"):
        StripeAdapter(f"rk_live_{BODY}", livemode=False)


@pytest.mark.parametrize("key", [f"pk_test_{BODY}", BODY, "", f"whsec_{BODY}", "rk_other_x"])
def test_anything_but_a_restricted_key_is_refused(key: str) -> None:
    with pytest.raises(CredentialsRefused) as refused:
        StripeAdapter(key, livemode=False)
    if key:
        assert key not in str(refused.value)
        assert BODY not in str(refused.value)


def test_repr_masks_the_key() -> None:
    adapter = StripeAdapter(f"rk_test_{BODY}", livemode=False)
    assert repr(adapter) == "StripeAdapter(rk_test_...6789, test)"
    assert adapter.name == "stripe"


def test_a_live_restricted_key_works_in_live_mode(
    sandbox: StripeSandbox, make_adapter: Callable[..., StripeAdapter]
) -> None:
    keys = sandbox.create_account(
        live=True, restricted_keys=[{"permissions": ADAPTER_PERMISSIONS, "livemode": True}]
    )
    adapter = make_adapter(keys.restricted_keys[0].key, livemode=True)
    facts = adapter.facts(ActionKind.REFUND, "pi_missing")
    assert facts == PaymentFacts(id="pi_missing", exists=False)
