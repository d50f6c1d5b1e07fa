"""Money is integer minor units with the currency's real exponent."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import render_template_string

from app import create_app
from app.money import Money, MoneyError, display, exponent
from app.settings import Settings


@pytest.mark.parametrize(
    ("currency", "digits"), [("usd", 2), ("USD", 2), ("jpy", 0), ("kwd", 3), ("eur", 2)]
)
def test_exponents_follow_iso_4217(currency: str, digits: int) -> None:
    assert exponent(currency) == digits


@pytest.mark.parametrize(
    ("amount", "currency", "locale", "shown"),
    [
        (4800, "usd", "en_US", "$48.00"),
        (5, "usd", "en_US", "$0.05"),
        (-4800, "usd", "en_US", "-$48.00"),
        (2400, "jpy", "en_US", "¥2,400"),
        # Japanese writes the yen sign full-width.
        (2400, "jpy", "ja_JP", "\uffe52,400"),
        # Babel puts a no-break space before the euro sign in French.
        (4800, "eur", "fr_FR", "48,00\u00a0€"),
        (-4800, "eur", "fr_FR", "-48,00\u00a0€"),
        (1250, "kwd", "en_US", "KWD1.250"),
        (100, "chf", "en_US", "CHF1.00"),
        # CLDR gives the Iraqi dinar no decimals; ISO 4217 (and the amount stored) has three.
        (1250, "iqd", "en_US", "IQD1.250"),
        (123456, "jpy", "fr_FR", "123\u202f456\u00a0JPY"),
    ],
)
def test_money_is_shown_in_the_locale_with_the_currency_s_own_digits(
    amount: int, currency: str, locale: str, shown: str
) -> None:
    assert Money(amount, currency).format(locale=locale) == shown


def test_money_is_shown_as_in_the_us_unless_a_locale_is_given() -> None:
    money = Money(960000, "usd")

    assert money.format() == money.format(locale="en_US") == str(money) == "$9,600.00"


def test_pages_show_a_missing_amount_as_a_dash() -> None:
    assert display(4800, "usd") == "$48.00"
    assert display(4800, "eur", "fr_FR") == "48,00\u00a0€"
    assert display(None, "usd") == display(4800, None) == "-"


def test_templates_format_money_with_the_same_function(tmp_path: Path) -> None:
    app = create_app(Settings(instance_path=tmp_path, secret_key="k", testing=True))
    with app.app_context():
        page = render_template_string("{{ money(2400, 'jpy') }} / {{ money(None, None) }}")

    assert page == "¥2,400 / -"


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
