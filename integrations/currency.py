"""ISO 4217 minor units: the one table every part of Caseward converts money with.

Caseward keeps money as an integer count of the currency's minor unit; providers write
decimals on the wire ("48.00" USD, "500" JPY, "1.250" KWD). Converting needs the
currency's exponent, and a client that assumes two decimals everywhere is wrong by a
factor of 100 for yen and by 10 for dinars, so every conversion goes through here.
Currencies are lower-case codes, as Stripe and Caseward write them.
"""

from __future__ import annotations

import re
from decimal import Decimal

ZERO_DECIMAL = frozenset(
    "bif clp djf gnf isk jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split()
)
THREE_DECIMAL = frozenset("bhd iqd jod kwd lyd omr tnd".split())
TWO_DECIMAL = frozenset(
    """aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bmd bnd bob brl bsd bwp byn bzd
    cad cdf chf cny cop crc cve czk dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gtq gyd hkd
    hnl htg huf idr ils inr jmd kes kgs khr kyd kzt lak lbp lkr lrd lsl mad mdl mkd mmk mnt mop
    mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd pab pen pgk php pkr pln qar ron rsd rub sar
    sbd scr sek sgd shp sle sos srd std szl thb tjs top try ttd twd tzs uah usd uyu uzs wst xcd
    yer zar zmw""".split()
)
_DECIMAL_TEXT = re.compile(r"^-?\d+(\.\d+)?$")


class CurrencyError(ValueError):
    """An unknown currency, or an amount that is not exact in its currency."""


def exponent_or_none(currency: str) -> int | None:
    """Digits after the decimal point in ``currency``'s minor unit; None if unknown."""
    code = currency.strip().lower()
    if code in TWO_DECIMAL:
        return 2
    if code in ZERO_DECIMAL:
        return 0
    if code in THREE_DECIMAL:
        return 3
    return None


def exponent(currency: str) -> int:
    digits = exponent_or_none(currency)
    if digits is None:
        raise CurrencyError(f"unknown currency {currency!r}: expected an ISO 4217 code")
    return digits


def to_minor_units(text: str, currency: str) -> int:
    """``"48.00"`` USD is 4800, ``"500"`` JPY 500, ``"1.250"`` KWD 1250; more decimals than
    the currency has, or anything but a plain decimal, is refused."""
    digits = exponent(currency)
    cleaned = text.strip()
    if not _DECIMAL_TEXT.match(cleaned):
        raise CurrencyError(f"{text!r} is not a decimal amount")
    scaled = Decimal(cleaned).scaleb(digits)
    if scaled != scaled.to_integral_value():
        raise CurrencyError(f"{text!r} has more than {digits} decimals for {currency.upper()}")
    return int(scaled)


def decimal_string(amount: int, currency: str) -> str:
    """Plain decimal form: 4800 USD '48.00', 500 JPY '500', 1250 KWD '1.250'."""
    digits = exponent(currency)
    sign = "-" if amount < 0 else ""
    whole, fraction = divmod(abs(amount), 10**digits)
    if digits == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{fraction:0{digits}d}"
