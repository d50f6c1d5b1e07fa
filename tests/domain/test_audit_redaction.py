"""No card number or secret ever enters the audit trail, wherever it sits in an event."""

from __future__ import annotations

import pytest

from app.audit import redact


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("card 4242 4242 4242 4242 was used", "card [card number redacted] was used"),
        ("card 4000000000005126", "card [card number redacted]"),
        ("key rk_test_51AbCdEfGhIjKlMn", "key rk_test_[redacted]"),
        ("key sk_live_51AbCdEfGhIjKlMn", "key sk_live_[redacted]"),
        ("secret whsec_AbCdEfGh12345678", "secret whsec_[redacted]"),
        ("token cwst_Ab-cD_eF12345678xyz-_", "token cwst_[redacted]"),
        ("order #1001 for $48.00", "order #1001 for $48.00"),
        ("card-4111111111111111", "card-[card number redacted]"),
    ],
)
def test_secrets_and_card_numbers_are_masked(text: str, kept: str) -> None:
    assert redact(text) == kept


@pytest.mark.parametrize(
    "evidence",
    [
        # UUIDs whose digit groups alone would read as a 16-digit number.
        "17867537-9146-4123-a0ca-a0cacdd0f9e2",
        "12345678-1234-4123-8123-123456789012",
        # A Shopify order's gid: its number is 13 digits long.
        "gid://shopify/Order/5133891256506",
        "gid://shopify/LineItem/13851346321722",
    ],
)
def test_the_ids_an_event_names_are_kept_whole(evidence: str) -> None:
    assert redact({"action_id": evidence, "said": f"refund of {evidence}"}) == {
        "action_id": evidence,
        "said": f"refund of {evidence}",
    }


def test_a_card_number_beside_an_id_is_masked_and_the_id_kept() -> None:
    text = "scan 17867537-9146-4123-a0ca-a0cacdd0f9e2 saw 4242424242424242"

    assert redact(text) == "scan 17867537-9146-4123-a0ca-a0cacdd0f9e2 saw [card number redacted]"


def test_masking_reaches_nested_values() -> None:
    event = {"note": ["see rk_live_51AbCdEfGhIjKlMn"], "by": {"card": "5555555555554444"}}

    assert redact(event) == {
        "note": ["see rk_live_[redacted]"],
        "by": {"card": "[card number redacted]"},
    }
