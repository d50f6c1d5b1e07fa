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
    ],
)
def test_secrets_and_card_numbers_are_masked(text: str, kept: str) -> None:
    assert redact(text) == kept


def test_masking_reaches_nested_values() -> None:
    event = {"note": ["see rk_live_51AbCdEfGhIjKlMn"], "by": {"card": "5555555555554444"}}

    assert redact(event) == {
        "note": ["see rk_live_[redacted]"],
        "by": {"card": "[card number redacted]"},
    }
