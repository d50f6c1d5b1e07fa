"""What the domain says to people, kept as a catalogue message and its values.

A check, a refusal or a stop says ``said("Refund of %(amount)s exceeds what is left.",
amount=Money(4800, "usd"))``. The :class:`Sentence` keeps the message (a msgid of the
one catalogue: Babel extracts every ``said`` and ``said_n`` call, see
``app/translations/babel.cfg``) and its values, so each reader gets it in their own
language: ``str(sentence)`` is the English that records, logs and the JSON API carry,
and :meth:`Sentence.in_locale` is what a page shows, with the page's catalogue and
money and numbers in the page's locale.

Values are text, whole numbers, :class:`~app.money.Money` (formatted with the
currency's ISO 4217 digits) or other sentences (a period such as "3 days"). They
survive JSON (:meth:`Sentence.to_dict`, :meth:`Sentence.from_dict`), so a verdict stored
today is shown tomorrow in whatever language its reader has.

Values that name things (payment ids, order names, a provider's own error text) are
passed as they are: only Caseward's own words are translated.
"""

from __future__ import annotations

import gettext as stdlib_gettext
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, Union

from babel.numbers import format_decimal

from app.money import DEFAULT_LOCALE, Money


class Translations(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...


# The English as written: what ``str(sentence)`` and the records use.
AS_WRITTEN: Translations = stdlib_gettext.NullTranslations()

Value = Union[str, int, Money, "Sentence"]


@dataclass(frozen=True)
class Sentence:
    """A catalogue message with ``%(name)s`` placeholders and the values that fill them.

    With ``plural``, the message is the singular and ``count`` (also the value ``count``)
    picks the form, as ``ngettext`` does.
    """

    message: str
    values: Mapping[str, Value] = field(default_factory=dict, hash=False)
    plural: str | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        values = dict(self.values)
        if self.plural is not None:
            if self.count is None:
                raise ValueError("a plural sentence needs its count")
            values["count"] = self.count
        object.__setattr__(self, "values", MappingProxyType(values))

    def __str__(self) -> str:
        return self.in_locale(AS_WRITTEN, DEFAULT_LOCALE)

    def in_locale(self, translations: Translations, locale: str) -> str:
        """The sentence in ``translations``' words, its values as ``locale`` writes them."""
        if self.plural is not None and self.count is not None:
            template = translations.ngettext(self.message, self.plural, self.count)
        else:
            template = translations.gettext(self.message)
        values = {name: _shown(value, translations, locale) for name, value in self.values.items()}
        return template % values if values else template

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message": self.message,
            "values": {name: _stored(value) for name, value in self.values.items()},
        }
        if self.plural is not None:
            data["plural"], data["count"] = self.plural, self.count
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sentence:
        plural = data.get("plural")
        values = {
            name: _restored(value)
            for name, value in dict(data.get("values", {})).items()
            if not (plural is not None and name == "count")
        }
        count = data.get("count")
        return cls(
            message=str(data["message"]),
            values=values,
            plural=str(plural) if plural is not None else None,
            count=int(count) if count is not None else None,
        )


def said(message: str, **values: Value) -> Sentence:
    """A sentence for people; ``message`` must be a literal, so Babel can extract it."""
    return Sentence(message, values)


def said_n(singular: str, plural: str, count: int, **values: Value) -> Sentence:
    """A sentence whose form depends on ``count`` (the value ``count`` in its message)."""
    return Sentence(singular, values, plural=plural, count=count)


def sentence_text(stored: Mapping[str, Any] | None, fallback: str) -> Sentence | str:
    """A stored sentence when there is one, else the stored English (records written
    before sentences were kept, or text from outside Caseward)."""
    return Sentence.from_dict(stored) if stored else fallback


def _shown(value: Value, translations: Translations, locale: str) -> str:
    if isinstance(value, Sentence):
        return value.in_locale(translations, locale)
    if isinstance(value, Money):
        return value.format(locale)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return format_decimal(value, locale=locale)
    return value


def _stored(value: Value) -> Any:
    if isinstance(value, Sentence):
        return {"sentence": value.to_dict()}
    if isinstance(value, Money):
        return {"money": {"amount": value.amount, "currency": value.currency}}
    return value


def _restored(value: Any) -> Value:
    if isinstance(value, Mapping):
        if "sentence" in value:
            return Sentence.from_dict(value["sentence"])
        if "money" in value:
            return Money(int(value["money"]["amount"]), str(value["money"]["currency"]))
        raise ValueError(f"not a stored sentence value: {value!r}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"not a stored sentence value: {value!r}")
    return value
