"""Reading untrusted values: every refusal is an :class:`InvalidInput` naming the field.

Bounds follow the columns the values land in, so the database never sees a value it
would refuse (PostgreSQL answers a NUL byte or an integer past 32 bits with an error,
which would otherwise surface as a 500). Nothing is coerced: a number is not text, and
text is not a number.

Refusals are catalogue sentences (:func:`app.words.said`). Field names and bounds are
values passed as text: a bound reads as the OpenAPI document writes it (2147483647), so
a program can match it in any language.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from datetime import date
from typing import Any

from app.errors import InvalidInput
from app.money import MoneyError, normalise_currency
from app.words import said

# ``Integer`` columns are 32-bit on PostgreSQL.
INT32_MAX = 2**31 - 1
# Sizes of the columns text lands in (``String(255)``; ``Text`` gets a sane bound).
SHORT_TEXT = 255
LONG_TEXT = 20_000
# A reason given for a decision (rejection, refund): a few sentences.
REASON_TEXT = 500
# A proposal digest: SHA-256 in hex.
DIGEST_LENGTH = 64
# Pages of listings: this many unless the caller asks for fewer (or up to the maximum).
PAGE_DEFAULT = 50
PAGE_MAXIMUM = 200

# C0 controls and DEL (NUL among them); long free text may keep tab, newline and return.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_LAYOUT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def text(
    value: object,
    field: str,
    *,
    max_length: int = SHORT_TEXT,
    required: bool = False,
    multiline: bool = False,
) -> str | None:
    """``value`` as text of at most ``max_length`` characters, or ``None`` when absent.

    ``required`` also refuses blank text. Only ``multiline`` text may hold tab and
    line breaks; no text may hold other control characters.
    """
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidInput(said("%(field)s is required text", field=field), field=field)
    if len(value) > max_length:
        raise InvalidInput(
            said("%(field)s is at most %(max)s characters", field=field, max=str(max_length)),
            field=field,
        )
    if multiline and _CONTROL_BUT_LAYOUT.search(value):
        raise InvalidInput(
            said(
                "%(field)s may not contain control characters (tab and line breaks are allowed)",
                field=field,
            ),
            field=field,
        )
    if not multiline and _CONTROL.search(value):
        raise InvalidInput(
            said("%(field)s may not contain control characters", field=field), field=field
        )
    return value


def integer(value: object, field: str, *, minimum: int, maximum: int = INT32_MAX) -> int:
    """A whole number (never a bool, float or string) within ``minimum..maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(said("%(field)s must be a whole number", field=field), field=field)
    if not minimum <= value <= maximum:
        raise InvalidInput(
            said(
                "%(field)s must be from %(minimum)s to %(maximum)s",
                field=field,
                minimum=str(minimum),
                maximum=str(maximum),
            ),
            field=field,
        )
    return value


def calendar_day(value: object, field: str) -> date | None:
    """A day written as ``YYYY-MM-DD`` (as a date field sends it), or ``None`` when absent
    or blank."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and _DAY.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass  # 2026-02-30: the shape of a day, not a day
    raise InvalidInput(
        said("%(field)s must be a day written as YYYY-MM-DD", field=field), field=field
    )


def boolean(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(said("%(field)s must be true or false", field=field), field=field)
    return value


def choice(value: object, field: str, choices: Iterable[str]) -> str:
    """One of ``choices``, exactly as written."""
    allowed = list(choices)
    if not isinstance(value, str) or value not in allowed:
        raise InvalidInput(
            said("%(field)s must be one of %(choices)s", field=field, choices=", ".join(allowed)),
            field=field,
        )
    return value


def currency_code(value: object, field: str) -> str:
    """An ISO 4217 code (``"usd"``, any case), as stored: lower case."""
    if not isinstance(value, str):
        raise InvalidInput(
            said("%(field)s must be an ISO 4217 code such as 'usd'", field=field), field=field
        )
    try:
        return normalise_currency(value)
    except MoneyError:
        raise InvalidInput(
            said(
                "unknown currency %(code)s: expected an ISO 4217 code such as 'usd'",
                code=repr(value),
            ),
            field=field,
        ) from None


def optional_uuid(value: object, field: str) -> uuid.UUID | None:
    """An id in its canonical form (``0b7c...-...``), or ``None`` when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or not _CANONICAL_UUID.fullmatch(value.lower()):
        raise InvalidInput(
            said("%(field)s must be an id like 3f2b6c1e-...-...", field=field), field=field
        )
    return uuid.UUID(value)


def json_object(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(said("%(field)s must be a JSON object", field=field), field=field)
    return value


def only_keys(body: dict[str, Any], allowed: Iterable[str], prefix: str = "") -> None:
    """Refuse a key the caller may not send: a misspelt field must not silently be no field."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidInput(
            said("%(field)s is not a known field", field=str(unknown[0])),
            field=prefix + str(unknown[0]),
        )
