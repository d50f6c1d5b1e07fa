"""Currencies as Stripe treats them: amounts are integers in the currency's minor unit.

Zero-decimal currencies (``jpy``: 500 means ¥500) and three-decimal ones (``kwd``: 1500
means 1.500 KWD) are where an adapter that assumes cents goes wrong, so the sandbox
formats them correctly in error messages and applies per-currency minimum charges.
"""

from __future__ import annotations

from .errors import validation

ZERO_DECIMAL = frozenset("bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split())
THREE_DECIMAL = frozenset("bhd jod kwd omr tnd".split())

SUPPORTED = (
    frozenset(
        (
            "usd aed aud bgn brl cad chf czk dkk eur gbp hkd huf idr ils inr mxn myr nok nzd "
            "php pln ron sek sgd thb try zar"
        ).split()
    )
    | ZERO_DECIMAL
    | THREE_DECIMAL
)

_SYMBOLS = {"usd": "$", "eur": "€", "gbp": "£", "jpy": "¥", "cad": "$", "aud": "$"}

# Smallest chargeable amount in minor units (Stripe's published minimums, approximated
# as "about 50 US cents" for currencies it does not list).
_MINIMUM_CHARGE = {
    "usd": 50,
    "eur": 50,
    "gbp": 30,
    "cad": 50,
    "aud": 50,
    "chf": 50,
    "jpy": 50,
    "krw": 700,
    "kwd": 200,
    "bhd": 200,
    "jod": 400,
    "omr": 200,
    "tnd": 2000,
}


def decimals(currency: str) -> int:
    """Digits after the decimal point for ``currency``'s minor unit."""
    if currency in ZERO_DECIMAL:
        return 0
    if currency in THREE_DECIMAL:
        return 3
    return 2


def format_amount(amount: int, currency: str) -> str:
    """Human amount the way Stripe writes it in messages: ``$10.00``, ``¥500``, ``1.500 KWD``."""
    places = decimals(currency)
    value = amount / (10**places)
    text = f"{value:,.{places}f}"
    symbol = _SYMBOLS.get(currency)
    if symbol:
        return f"{symbol}{text}"
    return f"{text} {currency.upper()}"


def minimum_charge(currency: str) -> int:
    """Minimum PaymentIntent amount in minor units."""
    return _MINIMUM_CHARGE.get(
        currency, 50 if decimals(currency) == 2 else 50 * 10 ** decimals(currency) // 100
    )


def check_currency(value: str, *, param: str = "currency") -> str:
    """Normalise a currency parameter, refusing ones Stripe does not support."""
    code = value.lower()
    if code not in SUPPORTED:
        raise validation(
            f"Invalid currency: {value}. Stripe currently supports these currencies: "
            + ", ".join(sorted(SUPPORTED)),
            param=param,
        )
    return code
