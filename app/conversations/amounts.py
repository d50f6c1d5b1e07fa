"""Amounts of money written in text ("$48.00", "USD 500", "48 dollars", "BHD 1.500").

Both ends of a conversation use this: the customer's words, to link an order by an
amount they quote (:mod:`app.conversations.linking`), and a reply's words, to refuse an
amount nobody approved (:mod:`app.conversations.replies`). A mention knows the figure as
written and the currencies its symbol or word can mean ("$" is also Canada's); compared
with money in one currency, it matches only in a currency it can mean and only when the
figure is a whole number of that currency's minor units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from babel.numbers import list_currencies

from app.money import exponent

_DOLLARS = frozenset({"usd", "cad", "aud", "nzd", "sgd", "hkd"})
_NAMED: dict[str, frozenset[str]] = {
    "$": _DOLLARS,
    "dollar": _DOLLARS,
    "dollars": _DOLLARS,
    "€": frozenset({"eur"}),
    "euro": frozenset({"eur"}),
    "euros": frozenset({"eur"}),
    "£": frozenset({"gbp"}),
    "pound": frozenset({"gbp"}),
    "pounds": frozenset({"gbp"}),
    "¥": frozenset({"jpy", "cny"}),
    "yen": frozenset({"jpy"}),
}
_CODES = frozenset(code.lower() for code in list_currencies())
# "1,234.56" (thousands grouped) or "1234.56" / "12,50" (a decimal comma).
_FIGURE = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,3})?|\d+(?:[.,]\d{1,3})?"
_CODE = r"[A-Za-z]{3}"
# Before a figure only a code in capitals ("USD 500"): "for 500 dollars" must still be read.
_CODE_BEFORE = r"(?-i:[A-Z]{3})"
_WORD = r"dollars?|euros?|pounds?|yen"
_MENTION = re.compile(
    rf"(?P<symbol>[$€£¥])\s?(?P<a>{_FIGURE})"
    rf"|\b(?P<code_before>{_CODE_BEFORE})\s?(?P<b>{_FIGURE})\b"
    rf"|(?<![\w.,])(?P<c>{_FIGURE})\s?(?P<after>{_CODE}|{_WORD})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mention:
    text: str  # as written
    figure: Decimal
    currencies: frozenset[str]

    def minor_units_in(self, currency: str) -> int | None:
        """The amount in ``currency``'s minor units, if the mention can mean that currency
        and names a whole number of its minor units; else None."""
        currency = currency.lower()
        if currency not in self.currencies:
            return None
        minor = self.figure * 10 ** exponent(currency)
        return int(minor) if minor == minor.to_integral_value() else None


def mentions(text: str) -> list[Mention]:
    """Every amount of money ``text`` names, in order."""
    found = []
    for match in _MENTION.finditer(text):
        named = (
            match.group("symbol") or match.group("code_before") or match.group("after") or ""
        ).lower()
        currencies = _NAMED.get(named) or (frozenset({named}) if named in _CODES else None)
        if currencies is None:
            continue  # "abc 12", "12 pcs": not money
        written = match.group("a") or match.group("b") or match.group("c") or ""
        figure = _decimal(written)
        if figure is not None:
            found.append(Mention(match.group(0).strip(), figure, currencies))
    return found


def _decimal(written: str) -> Decimal | None:
    # A comma followed by exactly three digits groups thousands; otherwise it is a decimal comma.
    grouped = re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d{1,3})?", written)
    plain = written.replace(",", "") if grouped else written.replace(",", ".")
    try:
        return Decimal(plain)
    except InvalidOperation:
        return None
