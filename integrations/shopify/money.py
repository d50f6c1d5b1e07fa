"""Shopify's decimal money strings as integer minor units, and back.

Shopify sends amounts as decimal strings in its own currency codes (``MoneyV2
{amount: "48.00", currencyCode: USD}``) and takes them the same way in mutation inputs.
Caseward counts money as an integer of the currency's minor unit with a lower-case ISO
4217 code (``4800 usd``), like every provider adapter. Both directions go through
:mod:`integrations.currency`: the ISO exponent (an unknown code is refused rather than
guessed, because a wrong exponent moves money by a factor of 10) and exact decimal
scaling that refuses an amount with more decimals than the currency has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from integrations.currency import CurrencyError, decimal_string, exponent, to_minor_units

# Shopify's name for the shared error, so callers here need not know where it lives.
ShopifyMoneyError = CurrencyError


@dataclass(frozen=True)
class Amount:
    """An amount in minor units of one currency: ``Amount(4800, "usd")`` is $48.00."""

    amount: int
    currency: str


def to_decimal_string(amount: int, currency: str) -> str:
    """The decimal string Shopify's inputs take: 4800 USD '48.00', 500 JPY '500'."""
    return decimal_string(amount, currency)


def amount_from_money_v2(money: Mapping[str, object]) -> Amount:
    """A ``MoneyV2`` object (``{"amount": "48.00", "currencyCode": "USD"}``) as an Amount."""
    text, code = money.get("amount"), money.get("currencyCode")
    if not isinstance(text, str) or not isinstance(code, str):
        raise ShopifyMoneyError(f"not a MoneyV2 object: {dict(money)!r}")
    return Amount(to_minor_units(text, code), code.lower())


__all__ = [
    "Amount",
    "ShopifyMoneyError",
    "amount_from_money_v2",
    "exponent",
    "to_decimal_string",
    "to_minor_units",
]
