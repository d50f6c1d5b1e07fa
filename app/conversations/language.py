"""The shopper's language: which one the storefront chat speaks, and Caseward's words in it.

The sequence: the app embed block passes the storefront's locale (Shopify's
``request.locale.iso_code``: ``fr``, ``fr-CA``, ``pt-BR``) to the widget, which sends it
with every request through the app proxy; :func:`customer_locale` reads it as a Babel
locale identifier, which the conversation keeps (``Conversation.locale``); then whatever
Caseward says to that shopper, in the chat, by mail or as a status update a worker adds,
is said by :func:`for_customer` in the words of the locale's language and with money and
numbers as the locale writes them.

Seven languages have a catalogue (:data:`SUPPORTED`). A regional tag reads its language's
catalogue and keeps its region's money (``fr_CA``: French words, ``48,00 $ US``); a
language without a catalogue reads English, with its own locale's money when Babel knows
it (``pt_BR``); a tag Babel does not know reads English as written.

The shopper's words are a gettext domain of their own, ``customer``, under
``app/translations``, extracted only from the modules that speak to shoppers
(``app/translations/customer.cfg``), so translators see only what shoppers read. The
compiled ``customer.mo`` files are committed beside their ``.po`` for the reason
:mod:`app.web.admin_text` gives, and loaded here with Babel, with no Flask request: RQ
workers speak to shoppers too.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.support import Translations

from app.words import Sentence

ENGLISH = "en"
SUPPORTED = ("en", "fr", "de", "es", "it", "nl", "ja")
DOMAIN = "customer"
TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"
# Shopify's locales are BCP 47 tags such as ``pt-BR``; anything longer or odder is not one.
_LOCALE_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}")


@lru_cache(maxsize=512)  # bounded: the requested tag is the shopper's to choose
def customer_locale(requested: str | None) -> str:
    """``requested`` (``fr-CA``, ``de``, a stored ``fr_CA``) as a Babel locale identifier
    (``fr_CA``) when Babel knows it, else English."""
    if not requested or not _LOCALE_TAG.fullmatch(requested):
        return ENGLISH
    try:
        return str(Locale.parse(requested.replace("-", "_")))
    except (UnknownLocaleError, ValueError):
        return ENGLISH


def supported_language(locale: str | None) -> str | None:
    """The language of ``locale`` when the chat speaks it (``fr_CA`` → ``fr``), else None."""
    language = customer_locale(locale).split("_", 1)[0]
    return language if language in SUPPORTED else None


def customer_translations(locale: str | None) -> Translations:
    """The customer catalogue of ``locale``'s language; English for any other language."""
    return _catalogue(supported_language(locale) or ENGLISH)


@cache
def _catalogue(language: str) -> Translations:
    # Opened directly rather than through gettext's search: a supported language whose
    # catalogue is missing is a broken install, not a reason to answer in English.
    with (TRANSLATIONS / language / "LC_MESSAGES" / f"{DOMAIN}.mo").open("rb") as compiled:
        return Translations(compiled, domain=DOMAIN)


def for_customer(sentence: Sentence, locale: str | None) -> str:
    """``sentence`` in the customer's words, its money and numbers as ``locale`` writes
    them (``48,00 €`` in ``fr``, ``￥4,800`` in ``ja``)."""
    return sentence.in_locale(customer_translations(locale), customer_locale(locale))
