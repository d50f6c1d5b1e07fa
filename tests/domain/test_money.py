"""Money is integer minor units with the currency's real exponent."""

from __future__ import annotations

import pytest

from app.money import Money, MoneyError, exponent


@pytest.mark.parametrize(
    ("currency", "digits"), [("usd", 2), ("USD", 2), ("jpy", 0), ("kwd", 3), ("eur", 2)]
)
def test_exponents_follow_iso_4217(currency: str, digits: int) -> None:
    assert exponent(currency) == digits


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (4800, "usd", "$48.00"),
        (9600, "usd", "$96.00"),
        (5, "usd", "$0.05"),
        (-4800, "usd", "-$48.00"),
        (500, "jpy", "¥500"),
        (1250, "kwd", "1.250 KWD"),
        (100, "chf", "1.00 CHF"),
    ],
)
def test_formatting_uses_the_right_number_of_decimals(
    amount: int, currency: str, shown: str
) -> None:
    assert Money(amount, currency).format() == shown


@pytest.mark.parametrize(
    ("text", "currency", "minor"),
    [("48.00", "usd", 4800), ("48", "usd", 4800), ("500", "jpy", 500), ("1.25", "kwd", 1250)],
)
def test_parsing_decimal_text(text: str, currency: str, minor: int) -> None:
    assert Money.parse(text, currency) == Money(minor, currency)


@pytest.mark.parametrize(
    ("text", "currency"), [("48.001", "usd"), ("1.5", "jpy"), ("1.2345", "kwd"), ("4e2", "usd")]
)
def test_parsing_refuses_more_precision_than_the_currency_has(text: str, currency: str) -> None:
    with pytest.raises(MoneyError):
        Money.parse(text, currency)


def test_floats_and_unknown_currencies_are_refused() -> None:
    with pytest.raises(MoneyError, match="integer"):
        Money(48.0, "usd")  # type: ignore[arg-type]
    with pytest.raises(MoneyError, match="integer"):
        Money(True, "usd")
    with pytest.raises(MoneyError, match="unknown currency"):
        Money(100, "xyz")


def test_arithmetic_refuses_mixed_currencies() -> None:
    assert Money(4800, "usd") + Money(4800, "usd") == Money(9600, "usd")
    with pytest.raises(MoneyError, match="usd with eur"):
        Money(4800, "usd") - Money(100, "eur")
