"""Taking out of customer text what a drafting model must never see.

Card numbers (13 to 19 digits, however separated or disguised with invisible or
fullwidth characters, that pass the Luhn check or are written in groups of four), emails
and street addresses are replaced with a label before any text leaves for the model:
identity is Caseward's to establish, and a reply never needs them.
"""

from __future__ import annotations

import re
import unicodedata

# Digits with at most two separators between them (spaces of any kind, dots, dashes,
# slashes): "4242 4242 4242 4242", "4242.4242.4242.4242", "4242 - 4242 - ...".
_SEPARATOR = r"[\s.\-/]{0,2}"
_CARD = re.compile(rf"(?<!\d)(?:\d{_SEPARATOR}){{12,18}}\d(?!\d)")
_GROUPS_OF_FOUR = re.compile(rf"^\d{{4}}(?:{_SEPARATOR}\d{{4}}){{2,3}}(?:{_SEPARATOR}\d{{1,3}})?$")
# Characters that show nothing, which would otherwise split a number unseen.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_ADDRESS = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][A-Za-z'-]*\.?\s+){1,4}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Square|Sq|Close|Crescent|Highway|Hwy)\b\.?"
)

CARD_LABEL = "[card number removed]"
EMAIL_LABEL = "[email removed]"
ADDRESS_LABEL = "[address removed]"


def redacted(text: str) -> str:
    # Fullwidth and other compatibility digits become plain digits first (NFKC).
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    text = _CARD.sub(_card_or_not, text)
    text = _EMAIL.sub(EMAIL_LABEL, text)
    return _ADDRESS.sub(ADDRESS_LABEL, text)


def _card_or_not(match: re.Match[str]) -> str:
    written = match.group(0)
    digits = re.sub(r"\D", "", written)
    if _luhn(digits) or _GROUPS_OF_FOUR.match(written):
        return CARD_LABEL
    return written


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0
