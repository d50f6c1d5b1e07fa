"""Which written numbers are card numbers: 13 to 19 digits that pass the Luhn check, as
every issued card number does, or that fall into groups of four as cards are printed,
separated or not (so a mistyped one counts too). Shared by what the drafting model may see
(:mod:`app.drafting.redaction`) and what the audit trail keeps (:func:`app.audit.redact`);
each decides where to look for such a number.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Between a card's digits: at most two separators (spaces of any kind, dots, dashes,
# slashes): "4242 4242 4242 4242", "4242.4242.4242.4242", "4242 - 4242 - ...".
SEPARATOR = r"[\s.\-/]{0,2}"
_GROUPS_OF_FOUR = re.compile(rf"^\d{{4}}(?:{SEPARATOR}\d{{4}}){{2,3}}(?:{SEPARATOR}\d{{1,3}})?$")


def is_card_number(written: str) -> bool:
    """``written``, 13 to 19 digits with what separates them, reads as a card number."""
    digits = re.sub(r"\D", "", written)
    return _luhn(digits) or bool(_GROUPS_OF_FOUR.match(written))


def masked_as(label: str) -> Callable[[re.Match[str]], str]:
    """A replacement for ``re.sub``: ``label`` where the match is a card number, else the
    match as written."""

    def mask(match: re.Match[str]) -> str:
        written = match.group(0)
        return label if is_card_number(written) else written

    return mask


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0
