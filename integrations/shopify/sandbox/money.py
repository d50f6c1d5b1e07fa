"""Amounts as Shopify writes them, from the integer minor units the sandbox keeps.

The sandbox stores every amount as an integer in the currency's minor unit, like the rest
of Caseward; only the wire is decimal. Shopify writes a GraphQL ``Decimal``/``Money`` the
way Ruby prints a BigDecimal: no trailing zeros beyond one decimal place (``"48.0"``,
``"48.5"``, ``"48.55"``), while REST webhook payloads carry the currency's full
precision (``"48.00"``). Clients must read both with the currency's exponent, so the
sandbox writes both faithfully: zero-decimal (``JPY``) and three-decimal (``KWD``)
currencies are where a client that assumes cents goes wrong.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from integrations.currency import exponent


class AmountError(ValueError):
    """A decimal amount that is not a valid amount of its currency."""


def graphql_amount(minor: int, currency: str) -> str:
    """``4800, "USD"`` -> ``"48.0"``: GraphQL ``Decimal``, trailing zeros trimmed to one."""
    value = Decimal(minor).scaleb(-exponent(currency))
    text = format(value.normalize(), "f")
    return text if "." in text else f"{text}.0"


def rest_amount(minor: int, currency: str) -> str:
    """``4800, "USD"`` -> ``"48.00"``: the currency's full precision (REST payloads)."""
    places = exponent(currency)
    return format(Decimal(minor).scaleb(-places), f".{places}f")


def to_minor(amount: object, currency: str) -> int:
    """A decimal amount from the wire (``"48.00"``, ``48``, ``48.5``) in minor units;
    refuses more decimal places than the currency has, and anything not a number."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        raise AmountError(f"{amount!r} is not a decimal amount") from None
    if not value.is_finite():
        raise AmountError(f"{amount!r} is not a decimal amount")
    scaled = value.scaleb(exponent(currency))
    if scaled != scaled.to_integral_value():
        raise AmountError(f"{amount} has more decimal places than {currency.upper()} allows")
    return int(scaled)
