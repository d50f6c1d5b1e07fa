"""Money: integer minor units plus an ISO 4217 currency. Never floats.

Exponents follow ISO 4217 (USD 2, JPY 0, KWD 3), from the one table in
:mod:`integrations.currency`; an unknown code is refused rather than guessed.

Money shown to people is formatted here only, by Babel for a locale, always with
the currency's ISO digits (CLDR's differ for a few, such as IQD and HUF, and a
shown amount must say exactly what moves).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from babel import Locale
from babel.numbers import NumberPattern

from integrations.currency import (
    CurrencyError,
    decimal_string,
    exponent_or_none,
    to_minor_units,
)

# Until shops and customers carry their own locale, everything is shown as in the US.
DEFAULT_LOCALE = "en_US"


class MoneyError(ValueError):
    """An amount or currency that cannot be money; the message says why."""


def normalise_currency(code: str) -> str:
    lowered = code.strip().lower()
    if exponent_or_none(lowered) is None:
        raise MoneyError(f"unknown currency {code!r}: expected an ISO 4217 code such as 'usd'")
    return lowered


def exponent(currency: str) -> int:
    """Digits after the decimal point in the currency's minor unit."""
    value = exponent_or_none(normalise_currency(currency))
    assert value is not None
    return value


@dataclass(frozen=True, order=True)
class Money:
    """An amount in minor units of one currency (4800 usd is $48.00)."""

    amount: int
    currency: str

    def __post_init__(self) -> None:
        if isinstance(self.amount, bool) or not isinstance(self.amount, int):
            raise MoneyError(f"amount must be an integer of minor units, got {self.amount!r}")
        object.__setattr__(self, "currency", normalise_currency(self.currency))

    @classmethod
    def parse(cls, text: str, currency: str) -> Money:
        """``Money.parse("48.00", "usd")`` is 4800 usd; more decimals than the currency has fail."""
        try:
            return cls(to_minor_units(text, normalise_currency(currency)), currency)
        except CurrencyError as exc:
            raise MoneyError(str(exc)) from None

    def _same_currency(self, other: Money) -> None:
        if other.currency != self.currency:
            raise MoneyError(f"cannot combine {self.currency} with {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.amount - other.amount, self.currency)

    def decimal_string(self) -> str:
        """Plain decimal form: 4800 usd '48.00', 500 jpy '500', 1250 kwd '1.250'."""
        return decimal_string(self.amount, self.currency)

    def format(self, locale: str = DEFAULT_LOCALE) -> str:
        """Human form for staff and customers: '$48.00', '¥2,400', '48,00 €' in fr_FR."""
        digits = exponent(self.currency)
        pattern, parsed = _currency_pattern(locale, digits)
        return str(
            pattern.apply(
                Decimal(self.amount).scaleb(-digits),
                parsed,
                currency=self.currency.upper(),
                currency_digits=False,  # the pattern already carries the ISO digits
            )
        )

    def __str__(self) -> str:
        return self.format()


def display(amount: int | None, currency: str | None, locale: str = DEFAULT_LOCALE) -> str:
    """What a page shows for a possibly absent amount (templates call it as ``money``)."""
    if amount is None or not currency:
        return "-"
    return Money(amount, currency).format(locale)


@cache
def _currency_pattern(locale: str, digits: int) -> tuple[NumberPattern, Locale]:
    """The locale's standard currency pattern with exactly ``digits`` decimals, and the
    parsed locale (parsing it on every call would triple the cost of a format)."""
    parsed = Locale.parse(locale)
    pattern: NumberPattern = copy.copy(parsed.currency_formats["standard"])
    pattern.frac_prec = (digits, digits)
    return pattern, parsed
