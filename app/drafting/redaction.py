"""Taking out of customer text what a drafting model must never see.

Card numbers (13 to 19 digits, however separated or disguised with invisible or
fullwidth characters, that pass the Luhn check or are written in groups of four), emails
and street addresses are replaced with a label before any text leaves for the model:
identity is Caseward's to establish, and a reply never needs them.
"""

from __future__ import annotations

import re
import unicodedata

from app.card_numbers import SEPARATOR, masked_as

# 13 to 19 digits, separated as a card may be; whether they are one is is_card_number's call.
_CARD = re.compile(rf"(?<!\d)(?:\d{SEPARATOR}){{12,18}}\d(?!\d)")
# Characters that show nothing, which would otherwise split a number unseen.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_ADDRESS = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][A-Za-z'-]*\.?\s+){1,4}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Square|Sq|Close|Crescent|Highway|Hwy)\b\.?"
)

CARD_LABEL = "[card number removed]"
_MASK_CARD = masked_as(CARD_LABEL)
EMAIL_LABEL = "[email removed]"
ADDRESS_LABEL = "[address removed]"


def redacted(text: str) -> str:
    # Fullwidth and other compatibility digits become plain digits first (NFKC).
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    text = _CARD.sub(_MASK_CARD, text)
    text = _EMAIL.sub(EMAIL_LABEL, text)
    return _ADDRESS.sub(ADDRESS_LABEL, text)
