"""Everything :func:`~app.guard.evaluate` is asked with, as one value that survives JSON.

A proposal keeps the inputs its verdict was reached on, so its check can be run again
later exactly as it ran, under another policy (the policy what-if, :mod:`app.whatif`).
The switches are not among them: they are the shop's, not the proposal's.

The JSON is read off the dataclasses' type hints, so an input of plain fields (text,
whole numbers, true or false, times, enums, money, tuples and maps of them, other such
dataclasses) is kept without a line here: a new argument of ``evaluate`` is one more
field of :class:`GuardInputs`, with a default so that inputs kept before it still read.
A union of dataclasses (the target's facts) is kept under its class's name.

The facts hold ids, amounts, statuses, times and the provider's metadata: no card number
and no key. The one personal detail a provider reports, a customer's email, no check
reads, so it is not kept (an erasure need not look for it here).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Union, get_args, get_origin, get_type_hints

from app.guard.proposal import (
    CapSpending,
    CustomerRecord,
    InFlightAction,
    PastAction,
    ProposedAction,
)
from integrations.provider import CustomerFacts, OrderFacts, TargetFacts

# What a provider reports that no check reads and that names a person.
_NOT_KEPT: dict[type, frozenset[str]] = {CustomerFacts: frozenset({"email"})}
# The arguments ``evaluate`` takes by position; every other field it takes by keyword.
_POSITIONAL = ("proposal", "facts")


@dataclass(frozen=True)
class GuardInputs:
    """One call's inputs: ``evaluate(inputs.proposal, inputs.facts, policy=...,
    switches=..., **inputs.arguments())``."""

    proposal: ProposedAction
    facts: TargetFacts
    in_flight: tuple[InFlightAction, ...]
    history: tuple[PastAction, ...]
    order: OrderFacts | None
    spending: CapSpending | None
    now: datetime
    # What the abuse signals read of the customer; None: no signal ran.
    record: CustomerRecord | None = None

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``evaluate`` besides the policy and the switches."""
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if field.name not in _POSITIONAL
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: times in ISO 8601, enums by value, money in minor units."""
        dumped: dict[str, Any] = _dumper(_INPUTS)(self)
        return dumped

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GuardInputs:
        """Read :meth:`to_dict`'s output; a field it lacks takes its default."""
        loaded: GuardInputs = _loader(_INPUTS)(data)
        return loaded


Convert = Callable[[Any], Any]
# The inputs' own type, as the cached converters are keyed.
_INPUTS: Any = GuardInputs


# Each type's conversion is built once, from its hints, and kept: reading a proposal's
# inputs then walks the data only (resolving the hints every time took most of it).
@functools.cache
def _dumper(hint: Any) -> Convert:
    options = _options(hint)
    if options is not None:
        return _or_none(_union_dumper(hint, options))
    if get_origin(hint) is tuple:
        return _tuple_of(hint, _dumper, list)
    if get_origin(hint) in (Mapping, dict):
        return _mapping_of(hint, _dumper)
    if isinstance(hint, type) and is_dataclass(hint):
        left_out = _NOT_KEPT.get(hint, frozenset())
        kept = [
            (name, _dumper(field_hint))
            for name, field_hint in _fields_of(hint)
            if name not in left_out
        ]
        return lambda value: {name: dump(getattr(value, name)) for name, dump in kept}
    return _leaf(hint)[0]


@functools.cache
def _loader(hint: Any) -> Convert:
    options = _options(hint)
    if options is not None:
        return _or_none(_union_loader(options))
    if get_origin(hint) is tuple:
        return _tuple_of(hint, _loader, tuple)
    if get_origin(hint) in (Mapping, dict):
        return _mapping_of(hint, _loader)
    if isinstance(hint, type) and is_dataclass(hint):
        made: Any = hint
        loaders = [(name, _loader(field_hint)) for name, field_hint in _fields_of(hint)]
        return lambda data: made(
            **{name: load(data[name]) for name, load in loaders if name in data}
        )
    return _leaf(hint)[1]


def _union_dumper(hint: Any, options: tuple[Any, ...]) -> Convert:
    """One of several dataclasses, kept under its class's name; ``X | None`` as ``X``."""
    if len(options) == 1:
        return _dumper(options[0])
    tagged = [(option, option.__name__, _dumper(option)) for option in options]

    def dump_one_of(value: Any) -> Any:
        for option, name, dump in tagged:
            if isinstance(value, option):
                return {name: dump(value)}
        raise TypeError(f"{value!r} is none of {hint!r}")

    return dump_one_of


def _union_loader(options: tuple[Any, ...]) -> Convert:
    if len(options) == 1:
        return _loader(options[0])
    by_name = {option.__name__: _loader(option) for option in options}

    def load_one_of(data: Any) -> Any:
        [(name, inner)] = data.items()
        return by_name[name](inner)

    return load_one_of


def _leaf(hint: Any) -> tuple[Convert, Convert]:
    """How a value that holds no other is written, and read back."""
    if hint is datetime:
        return (lambda value: value.isoformat()), datetime.fromisoformat
    if isinstance(hint, type) and issubclass(hint, Enum):
        return (lambda value: value.value), hint
    if hint is object:
        return _plain, _as_it_is
    if hint in (str, int, bool):
        return _as_it_is, _as_it_is
    raise TypeError(f"the guard's inputs keep no {hint!r}")


def _fields_of(cls: type) -> tuple[tuple[str, Any], ...]:
    """A dataclass's fields set at construction, each with its resolved type hint."""
    hints = get_type_hints(cls)
    return tuple((field.name, hints[field.name]) for field in fields(cls) if field.init)


def _options(hint: Any) -> tuple[Any, ...] | None:
    """A union's members other than None; None when ``hint`` is no union."""
    if get_origin(hint) not in (Union, types.UnionType):
        return None
    return tuple(member for member in get_args(hint) if member is not type(None))


def _or_none(convert: Convert) -> Convert:
    return lambda value: None if value is None else convert(value)


def _mapping_of(hint: Any, converter: Callable[[Any], Convert]) -> Convert:
    convert_key, convert_value = (converter(argument) for argument in get_args(hint))
    return lambda values: {convert_key(key): convert_value(item) for key, item in values.items()}


def _tuple_of(
    hint: Any, converter: Callable[[Any], Convert], made: Callable[[Any], Any]
) -> Convert:
    """``tuple[X, ...]`` item by item, or ``tuple[X, Y]`` place by place."""
    arguments = get_args(hint)
    if len(arguments) == 2 and arguments[1] is Ellipsis:
        convert = converter(arguments[0])
        return lambda values: made(convert(value) for value in values)
    converts = [converter(argument) for argument in arguments]
    return lambda values: made(
        convert(value) for convert, value in zip(converts, values, strict=True)
    )


def _as_it_is(value: Any) -> Any:
    return value


def _plain(value: Any) -> Any:
    """A proposal's settings as JSON: tuples as lists, read-only maps as objects."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
