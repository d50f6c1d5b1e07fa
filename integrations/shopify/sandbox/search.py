"""The ``query:`` argument of Shopify's list fields, in the part of its search syntax the
sandbox understands.

Shopify filters a connection with terms like ``updated_at:>='2025-01-01T00:00:00Z'
method:code``: whitespace (or ``AND``) joins terms, each ``field:value`` or
``field:<op>value`` with ``<``, ``<=``, ``>``, ``>=``, values optionally quoted with
``'`` or ``"``, and ``a,b`` meaning either value. A list field declares which fields it
filters on and how (:class:`TimeField` for times, :class:`WordField` for words); the
sandbox refuses anything else (``OR``, ``NOT``, parentheses, a field it does not filter
on) with an error naming the term, rather than ignoring it as Shopify does, so a test
never passes on a filter that was silently dropped.

A time value is an interval: a year (``2024``), a day (``2024-03-01``) or an instant to
the second (``2024-03-01T10:00:00Z``; without an offset it is UTC). ``>=v`` means at or
after its start, ``>v`` after its end, ``<v`` before its start, ``<=v`` before its end,
and ``:v`` within it, so ``created_at:<='2024'`` takes the whole year as Shopify does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from graphql import GraphQLError

T = TypeVar("T")

_TERM = re.compile(
    r"""(?P<field>[a-z_]+):(?P<op><=|>=|<|>)?(?P<value>'[^']*'|"[^"]*"|[^\s'"]+)""", re.ASCII
)
_YEAR = re.compile(r"^\d{4}$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class TimeField(Generic[T]):
    """A field compared as a time: ``read`` gives an item's Unix seconds."""

    read: Callable[[T], float]


@dataclass(frozen=True)
class WordField(Generic[T]):
    """A field compared as words, case-insensitively: ``read`` gives an item's words."""

    read: Callable[[T], Sequence[str]]


Field = TimeField[T] | WordField[T]


def _refused(query: str, why: str) -> GraphQLError:
    return GraphQLError(f"Invalid search query {query!r}: {why}")


def _interval(value: str, query: str) -> tuple[float, float]:
    """The seconds a time value covers, as ``[start, end)``."""
    if _YEAR.fullmatch(value):
        start = datetime(int(value), 1, 1, tzinfo=UTC)
        return start.timestamp(), datetime(int(value) + 1, 1, 1, tzinfo=UTC).timestamp()
    if _DAY.fullmatch(value):
        day = datetime.fromisoformat(value).replace(tzinfo=UTC)
        return day.timestamp(), (day + timedelta(days=1)).timestamp()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _refused(query, f"{value!r} is not a time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    instant = moment.timestamp()
    return instant, instant + 1.0


def _time_test(op: str | None, value: str, query: str) -> Callable[[float], bool]:
    start, end = _interval(value, query)
    tests: dict[str | None, Callable[[float], bool]] = {
        ">=": lambda t: t >= start,
        ">": lambda t: t >= end,
        "<": lambda t: t < start,
        "<=": lambda t: t < end,
        None: lambda t: start <= t < end,
    }
    return tests[op]


def matcher(query: str | None, fields: Mapping[str, Field[T]]) -> Callable[[T], bool]:
    """A test of an item against ``query`` (every term must hold); no query: all pass."""
    if query is None or not query.strip():
        return lambda _item: True
    tests: list[Callable[[T], bool]] = []
    position = 0
    text = query.strip()
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        if text.startswith("AND", position) and text[position + 3 : position + 4] in ("", " "):
            position += 3
            continue
        found = _TERM.match(text, position)
        if found is None:
            word = text[position:].split()[0]
            raise _refused(query, f"the sandbox does not understand {word!r}")
        tests.append(_term_test(found, fields, query))
        position = found.end()
    return lambda item: all(test(item) for test in tests)


def _term_test(
    found: re.Match[str], fields: Mapping[str, Field[T]], query: str
) -> Callable[[T], bool]:
    name, op, raw = found.group("field"), found.group("op"), found.group("value")
    field = fields.get(name)
    if field is None:
        known = ", ".join(sorted(fields)) or "nothing"
        raise _refused(query, f"the sandbox filters this list on {known}, not {name!r}")
    value = raw[1:-1] if raw[:1] in ("'", '"') else raw
    if isinstance(field, TimeField):
        test = _time_test(op, value, query)
        read_time = field.read
        return lambda item: test(read_time(item))
    if op is not None:
        raise _refused(query, f"{name} is compared as words, not with {op}")
    wanted = {word.strip().lower() for word in value.split(",") if word.strip()}
    read_words = field.read
    return lambda item: any(word.lower() in wanted for word in read_words(item))
