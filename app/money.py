"""Money: integer minor units plus an ISO 4217 currency. Never floats.

Exponents follow ISO 4217 (USD 2, JPY 0, KWD 3). Stripe's "zero-decimal"
currencies are the ISO exponent-0 ones it supports; the list below is the union
Caseward may meet, and an unknown code is refused rather than guessed.

Money shown to people is formatted here only, by Babel for a locale, always with
the currency's ISO digits (CLDR's differ for a few, such as IQD and HUF, and a
shown amount must say exactly what moves).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache

from babel import Locale
from babel.numbers import NumberPattern

_ZERO_DECIMAL = frozenset(
    "bif clp djf gnf isk jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split()
)
_THREE_DECIMAL = frozenset("bhd iqd jod kwd lyd omr tnd".split())
_TWO_DECIMAL = frozenset(
    """aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bmd bnd bob brl bsd bwp byn bzd
    cad cdf chf cny cop crc cve czk dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gtq gyd hkd
    hnl htg huf idr ils inr jmd kes kgs khr kyd kzt lak lbp lkr lrd lsl mad mdl mkd mmk mnt mop
    mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd pab pen pgk php pkr pln qar ron rsd rub sar
    sbd scr sek sgd shp sle sos srd std szl thb tjs top try ttd twd tzs uah usd uyu uzs wst xcd
    yer zar zmw""".split()
)
_AMOUNT = re.compile(r"^-?\d+(\.\d+)?$")
# Until shops and customers carry their own locale, everything is shown as in the US.
DEFAULT_LOCALE = "en_US"


class MoneyError(ValueError):
    """An amount or currency that cannot be money; the message says why."""


def normalise_currency(code: str) -> str:
    lowered = code.strip().lower()
    if exponent_or_none(lowered) is None:
        raise MoneyError(f"unknown currency {code!r}: expected an ISO 4217 code such as 'usd'")
    return lowered


def exponent_or_none(currency: str) -> int | None:
    if currency in _TWO_DECIMAL:
        return 2
    if currency in _ZERO_DECIMAL:
        return 0
    if currency in _THREE_DECIMAL:
        return 3
    return None


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
        digits = exponent(currency)
        cleaned = text.strip()
        if not _AMOUNT.match(cleaned):
            raise MoneyError(f"{text!r} is not a decimal amount")
        try:
            value = Decimal(cleaned)
        except InvalidOperation as exc:  # pragma: no cover - the regex already refused it
            raise MoneyError(f"{text!r} is not a decimal amount") from exc
        scaled = value.scaleb(digits)
        if scaled != scaled.to_integral_value():
            raise MoneyError(f"{text!r} has more than {digits} decimals for {currency.upper()}")
        return cls(int(scaled), currency)

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
        digits = exponent(self.currency)
        sign = "-" if self.amount < 0 else ""
        whole, fraction = divmod(abs(self.amount), 10**digits)
        if digits == 0:
            return f"{sign}{whole}"
        return f"{sign}{whole}.{fraction:0{digits}d}"

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
