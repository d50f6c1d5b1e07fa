"""Text as the checks read it: one normal form, cut into sentences.

Both checks on words (what a customer writes to steer the assistant,
:mod:`app.drafting.steering`; what a drafter may say to a customer,
:mod:`app.conversations.free_text`) read the same form, so a trick that hides a word
from one hides it from neither:

- NFKC, so fullwidth letters and digits read as plain ones;
- characters that show nothing (zero-width spaces and joiners, soft hyphens, the
  direction marks and overrides) removed, so ``re\\u200bfund`` reads ``refund``;
- letters that look Latin in Cyrillic or Greek read as the Latin ones they look like
  ("approved" spelt with a Cyrillic a), since nobody writes those words in those scripts;
- case folded.

Other readings of the normal form undo what hides a word from a list of words:
:func:`squeezed` (letters kept apart), :func:`unaccented`, :func:`unleet`.

Sentences end at ``.``, ``!``, ``?`` or ``;`` and a space, at the Japanese and fullwidth
stops and at line breaks; a stop inside a figure (``48.00``) or a word (``e.g.``,
``i.g.n.o.r.e``) ends nothing.
"""

from __future__ import annotations

import re
import unicodedata

# Zero-width characters, soft hyphen, word joiners, and the bidirectional marks,
# embeddings, overrides and isolates: none shows a glyph of its own.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
# Cyrillic and Greek letters drawn like Latin ones.
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁӏԛԝАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdlqwabekmhopctxijsabeiknoptuxabezhikmnoptyx",
)
# Letters kept apart inside a word ("re-fund", "r.e.f.u.n.d", "r e f u n d").
_SQUEEZE = re.compile(r"(?<=\w)[-_.*'·•/]+(?=\w)")
_SPACED = re.compile(r"\b\w(?:[\s.\-_*]+\w\b){2,}")
# Digits and signs written for the letters they look like ("1gn0r3", "r3fund").
_LEET = str.maketrans("013457@$", "oieastas")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[\u3002\uff01\uff1f\uff1b\u2026])|\n+")


def normal(text: str) -> str:
    """``text`` in the one form the checks read (see the module docstring)."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return text.translate(_LOOKALIKES).casefold()


def squeezed(plain: str) -> str:
    """``plain`` (the normal form) with letters kept apart joined again."""
    joined = _SQUEEZE.sub("", plain)
    # Two spaces or more part words whose letters are spaced out ("r e f u n d  i s").
    return " ".join(
        _SPACED.sub(lambda match: re.sub(r"[\s.\-_*]+", "", match.group(0)), part)
        for part in re.split(r"\s{2,}", joined)
    )


def unaccented(plain: str) -> str:
    """``plain`` without its accents ("règle" reads "regle"), for words written without."""
    return "".join(
        char for char in unicodedata.normalize("NFKD", plain) if not unicodedata.combining(char)
    )


def unleet(plain: str) -> str:
    """``plain`` with digits and signs read as the letters they stand for."""
    return plain.translate(_LEET)


def sentences(text: str) -> list[str]:
    """``text`` cut into its sentences, as written, without empty ones."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]
