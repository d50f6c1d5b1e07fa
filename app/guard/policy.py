"""A shop's rules for money actions, and the shop-wide switches.

The policy is stored as JSON by the caller, who bumps ``version`` on every change
so that approvals and verdicts can name the rules they were made under. Anything
a policy does not allow is denied: a kind it does not list, a reason outside its
list, an amount in a currency its cap is not set in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

from app.guard.identity import IdentityLevel
from app.money import Money, MoneyError, normalise_currency
from app.words import Sentence, said, said_n
from integrations.provider import ActionKind

DEFAULT_DUPLICATE_WINDOW = timedelta(hours=72)
DEFAULT_MAX_PERCENT_OFF = 50
# Store credit offered instead of a refund is worth at most this much more.
MAX_CREDIT_BONUS_PERCENT = 50
MAX_OWNER_LENGTH = 255
# Below medium is a claim, and an unverified customer never gets an action proposed.
LOWEST_MIN_IDENTITY = IdentityLevel.MEDIUM
_SECOND = timedelta(seconds=1)
# Bounds that keep every rule meaningful and storable: no window beyond a year (a
# longer one is a typo, and would make every duplicate search scan years), amounts
# within the 32-bit integer columns money is stored in, reasons as short as a label.
MAX_PERIOD = timedelta(days=366)
MAX_DAYS = 366
MAX_AMOUNT = 2**31 - 1
MAX_REASONS = 100
MAX_REASON_LENGTH = 255

# The kinds that move money: the only ones with an amount, counted by caps and ceilings.
MONEY_KINDS = frozenset({ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT})
# The most a count in a signal's threshold may say (claims, customers, actions).
MAX_COUNT = 10_000

E = TypeVar("E", bound=StrEnum)


class PolicyError(ValueError):
    """A policy value that cannot be used; ``field`` names it (dotted for nested values).

    ``sentence`` says what is wrong with it, for the owner saving the policy in their own
    language; ``reason`` is its English.
    """

    def __init__(self, field: str, reason: Sentence) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = str(reason)
        self.sentence = reason


@dataclass(frozen=True)
class CapRule:
    """At most ``limit`` of our money actions within any trailing ``period``."""

    limit: Money
    period: timedelta


@dataclass(frozen=True)
class ShopSwitches:
    """Shop-wide switches. A new shop is read-only until a signed-in person turns writes on."""

    writes_enabled: bool = False
    kill_switch: bool = False


@dataclass(frozen=True)
class SignalRules:
    """The abuse signals' thresholds (:mod:`app.guard._signals`); None turns a signal off.

    ``history_needed``: the signals that read the shop's past (``repeat_claims``,
    ``new_customer_high_value``, ``shared_email``) start once the provider has reported at
    least this many of the shop's actions within the signals' 90 days; until then they pass,
    saying so (0: at once). Caseward's records begin when the shop starts using it, so before
    that every customer looks new and none has a past. The signals on the order at hand
    (``old_delivery``, ``delivered_but_not_received``) read no past and need none.

    ``repeat_claims``: this many earlier refunds and credits to the customer within 90 days;
    ``repeat_claims_percent``: money refunded and credited to them within 90 days above this
    percent of what they spent (their orders on record). ``old_delivery_days``: a claim more
    than this many days after delivery. ``new_customer_amount`` (currency -> minor units): a
    new customer asking for more than this; new is at most one order on record, or a first
    order younger than ``new_customer_days``. ``shared_email_customers``: this many other
    customers refunded within 90 days under the same email address.
    """

    history_needed: int = 30
    repeat_claims: int | None = 3
    repeat_claims_percent: int | None = 50
    old_delivery_days: int | None = 60
    delivered_but_not_received: bool = True
    new_customer_amount: Mapping[str, int] = field(default_factory=dict, hash=False)
    new_customer_days: int | None = 30
    shared_email_customers: int | None = 1

    def __post_init__(self) -> None:
        _require_int(self.history_needed, "signals.history_needed", minimum=0, maximum=MAX_COUNT)
        bounds = {
            "repeat_claims": MAX_COUNT,
            "repeat_claims_percent": 100,
            "old_delivery_days": MAX_DAYS,
            "new_customer_days": MAX_DAYS,
            "shared_email_customers": MAX_COUNT,
        }
        for name, maximum in bounds.items():
            value = getattr(self, name)
            if value is not None:
                _require_int(value, f"signals.{name}", minimum=1, maximum=maximum)
        if not isinstance(self.delivered_but_not_received, bool):
            raise PolicyError(
                "signals.delivered_but_not_received",
                said(
                    "must be true or false, got %(value)s",
                    value=repr(self.delivered_but_not_received),
                ),
            )
        object.__setattr__(
            self,
            "new_customer_amount",
            _currency_map(self.new_customer_amount, "signals.new_customer_amount"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "history_needed": self.history_needed,
            "repeat_claims": self.repeat_claims,
            "repeat_claims_percent": self.repeat_claims_percent,
            "old_delivery_days": self.old_delivery_days,
            "delivered_but_not_received": self.delivered_but_not_received,
            "new_customer_amount": dict(sorted(self.new_customer_amount.items())),
            "new_customer_days": self.new_customer_days,
            "shared_email_customers": self.shared_email_customers,
        }


def _default_min_identity() -> Mapping[ActionKind, IdentityLevel]:
    return {kind: LOWEST_MIN_IDENTITY for kind in ActionKind}


@dataclass(frozen=True)
class PolicyRules:
    """The shop's rules. The defaults allow every kind but let nothing through without a person.

    ``auto_approve_ceiling`` and ``two_person_threshold`` map a currency to minor
    units; a currency absent from the ceiling is never auto-approved, and one
    absent from the threshold never needs two people. ``kind_ceilings`` maps a
    money kind to a currency to the most one action of that kind may move; a kind or a
    currency it leaves out has no ceiling. ``refund_window_days`` counts from delivery,
    else fulfilment. ``min_identity`` may not go below medium; kinds it leaves out need
    medium. ``signals`` are the abuse signals' thresholds (:class:`SignalRules`).
    """

    version: int = 1
    enabled_kinds: frozenset[ActionKind] = frozenset(ActionKind)
    auto_approve_ceiling: Mapping[str, int] = field(default_factory=dict, hash=False)
    two_person_threshold: Mapping[str, int] = field(default_factory=dict, hash=False)
    kind_ceilings: Mapping[ActionKind, Mapping[str, int]] = field(default_factory=dict, hash=False)
    duplicate_window: timedelta = DEFAULT_DUPLICATE_WINDOW
    refund_window_days: int | None = None
    per_customer_cap: CapRule | None = None
    per_shop_cap: CapRule | None = None
    allowed_reasons: frozenset[str] | None = None
    min_identity: Mapping[ActionKind, IdentityLevel] = field(
        default_factory=_default_min_identity, hash=False
    )
    max_percent_off: int = DEFAULT_MAX_PERCENT_OFF
    # Offer a customer who asks for a refund store credit instead, worth the refund plus
    # this percent; None offers nothing but the refund.
    store_credit_bonus_percent: int | None = None
    # Offer a discount of the refund's value on a replacement, instead of the refund.
    replacement_discount: bool = False
    # The member of staff cases handed to a person go to (a Shopify user id or staff
    # name); None: the shop's owner.
    handover_owner: str | None = None
    signals: SignalRules = field(default_factory=SignalRules)

    def __post_init__(self) -> None:
        _require_int(self.version, "version", minimum=1, maximum=MAX_AMOUNT)
        for kind in self.enabled_kinds:
            if not isinstance(kind, ActionKind):
                raise PolicyError(
                    "enabled_kinds", said("%(value)s is not an action kind", value=repr(kind))
                )
        set_ = object.__setattr__
        set_(
            self,
            "auto_approve_ceiling",
            _currency_map(self.auto_approve_ceiling, "auto_approve_ceiling"),
        )
        set_(
            self,
            "two_person_threshold",
            _currency_map(self.two_person_threshold, "two_person_threshold"),
        )
        set_(self, "kind_ceilings", _kind_ceilings(self.kind_ceilings))
        _require_period(self.duplicate_window, "duplicate_window")
        if self.refund_window_days is not None:
            _require_int(self.refund_window_days, "refund_window_days", minimum=1, maximum=MAX_DAYS)
        for name in ("per_customer_cap", "per_shop_cap"):
            cap = getattr(self, name)
            if cap is not None:
                _require_int(cap.limit.amount, f"{name}.limit", minimum=1, maximum=MAX_AMOUNT)
                _require_period(cap.period, f"{name}.period")
        if self.allowed_reasons is not None:
            _require_reasons(self.allowed_reasons, "allowed_reasons")
        set_(self, "min_identity", _min_identity(self.min_identity))
        _require_int(self.max_percent_off, "max_percent_off", minimum=1, maximum=100)
        if self.store_credit_bonus_percent is not None:
            _require_int(
                self.store_credit_bonus_percent,
                "store_credit_bonus_percent",
                minimum=0,
                maximum=MAX_CREDIT_BONUS_PERCENT,
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: periods in whole seconds, amounts in minor units, lists sorted."""
        return {
            "version": self.version,
            "enabled_kinds": sorted(self.enabled_kinds),
            "auto_approve_ceiling": dict(sorted(self.auto_approve_ceiling.items())),
            "two_person_threshold": dict(sorted(self.two_person_threshold.items())),
            "kind_ceilings": {
                kind.value: dict(sorted(ceilings.items()))
                for kind, ceilings in sorted(self.kind_ceilings.items())
            },
            "duplicate_window_seconds": _seconds(self.duplicate_window),
            "refund_window_days": self.refund_window_days,
            "per_customer_cap": _cap_to_dict(self.per_customer_cap),
            "per_shop_cap": _cap_to_dict(self.per_shop_cap),
            "allowed_reasons": (
                None if self.allowed_reasons is None else sorted(self.allowed_reasons)
            ),
            "min_identity": {kind.value: level.value for kind, level in self.min_identity.items()},
            "max_percent_off": self.max_percent_off,
            "store_credit_bonus_percent": self.store_credit_bonus_percent,
            "replacement_discount": self.replacement_discount,
            "handover_owner": self.handover_owner,
            "signals": self.signals.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PolicyRules:
        """Read :meth:`to_dict` output. Missing keys take defaults; unknown keys are refused
        (a misspelt rule must not silently be no rule)."""
        if not isinstance(data, Mapping):
            raise PolicyError("policy", said("must be a JSON object"))
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise PolicyError(unknown[0], said("is not a policy setting"))
        values: dict[str, Any] = {}
        for key, (attribute, parse) in _PARSERS.items():
            if key in data:
                values[attribute] = parse(data[key], key)
        return cls(**values)


# ---------------------------------------------------------------- validation


# Numbers in these errors are shown as the owner wrote them (and as the settings take
# them), without a locale's grouping: 2147483647, not 2,147,483,647.


def _require_int(value: object, name: str, *, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(name, said("must be a whole number, got %(value)s", value=repr(value)))
    if value < minimum:
        raise PolicyError(
            name,
            said(
                "must be at least %(minimum)s, got %(value)s",
                minimum=str(minimum),
                value=str(value),
            ),
        )
    if maximum is not None and value > maximum:
        raise PolicyError(
            name,
            said(
                "must be at most %(maximum)s, got %(value)s",
                maximum=str(maximum),
                value=str(value),
            ),
        )
    return value


def _require_period(value: object, name: str) -> None:
    if not isinstance(value, timedelta) or value <= timedelta(0) or value % _SECOND:
        raise PolicyError(
            name,
            said("must be a positive whole number of seconds, got %(value)s", value=repr(value)),
        )
    if value > MAX_PERIOD:
        raise PolicyError(
            name,
            said(
                "must be at most %(seconds)s seconds (366 days)",
                seconds=str(_seconds(MAX_PERIOD)),
            ),
        )


def _require_reasons(values: Iterable[object], name: str) -> None:
    reasons = list(values)
    if len(reasons) > MAX_REASONS:
        raise PolicyError(
            name,
            said_n(
                "may list at most %(count)s reason",
                "may list at most %(count)s reasons",
                MAX_REASONS,
            ),
        )
    for reason in reasons:
        if (
            not isinstance(reason, str)
            or not reason.strip()
            or len(reason) > MAX_REASON_LENGTH
            or not reason.isprintable()
        ):
            raise PolicyError(
                name,
                said(
                    "%(value)s is not a reason (printable text of 1 to 255 characters)",
                    value=repr(reason),
                ),
            )


def _currency(code: object, name: str) -> str:
    if not isinstance(code, str):
        raise PolicyError(name, said("%(value)s is not a currency code", value=repr(code)))
    try:
        return normalise_currency(code)
    except MoneyError as exc:
        # The only currency error: a code ISO 4217 does not list.
        raise PolicyError(
            name,
            said(
                "unknown currency %(value)s: expected an ISO 4217 code such as 'usd'",
                value=repr(code),
            ),
        ) from exc


def _currency_map(values: Mapping[str, int], name: str) -> Mapping[str, int]:
    result: dict[str, int] = {}
    for code, amount in values.items():
        currency = _currency(code, name)
        result[currency] = _require_int(amount, f"{name}.{currency}", minimum=0, maximum=MAX_AMOUNT)
    return MappingProxyType(result)


def _kind_ceilings(
    values: Mapping[ActionKind, Mapping[str, int]],
) -> Mapping[ActionKind, Mapping[str, int]]:
    result: dict[ActionKind, Mapping[str, int]] = {}
    for kind, ceilings in values.items():
        if not isinstance(kind, ActionKind):
            raise PolicyError(
                "kind_ceilings", said("%(value)s is not an action kind", value=repr(kind))
            )
        name = f"kind_ceilings.{kind.value}"
        if kind not in MONEY_KINDS:
            raise PolicyError(name, said("moves no money, so it has no ceiling"))
        if not isinstance(ceilings, Mapping):
            raise PolicyError(name, said("must be an object, got %(value)s", value=repr(ceilings)))
        # A kind with no currency left has no ceiling: stored as none, not as an empty map.
        if amounts := _currency_map(ceilings, name):
            result[kind] = amounts
    return MappingProxyType(result)


def _min_identity(values: Mapping[ActionKind, IdentityLevel]) -> Mapping[ActionKind, IdentityLevel]:
    result = dict(_default_min_identity())
    for kind, level in values.items():
        if not isinstance(kind, ActionKind) or not isinstance(level, IdentityLevel):
            raise PolicyError(
                "min_identity",
                said(
                    "%(kind)s: %(level)s is not a kind and a level",
                    kind=repr(kind),
                    level=repr(level),
                ),
            )
        if level < LOWEST_MIN_IDENTITY:
            raise PolicyError(
                f"min_identity.{kind.value}",
                said(
                    "cannot be below %(lowest)s: %(level)s is not identity",
                    lowest=LOWEST_MIN_IDENTITY.value,
                    level=level.value,
                ),
            )
        result[kind] = level
    return MappingProxyType(result)


# ---------------------------------------------------------------- JSON


def _seconds(period: timedelta) -> int:
    return period // _SECOND


def _cap_to_dict(cap: CapRule | None) -> dict[str, Any] | None:
    if cap is None:
        return None
    return {
        "amount": cap.limit.amount,
        "currency": cap.limit.currency,
        "period_seconds": _seconds(cap.period),
    }


def _parse_list(value: object, name: str) -> list[object]:
    if not isinstance(value, list):
        raise PolicyError(name, said("must be a list, got %(value)s", value=repr(value)))
    return value


def _parse_enum(enum: type[E], value: object, name: str, what: Sentence) -> E:
    if isinstance(value, str) and value in enum._value2member_map_:
        return enum(value)
    raise PolicyError(name, said("%(value)s is not %(what)s", value=repr(value), what=what))


def _parse_kind(value: object, name: str) -> ActionKind:
    return _parse_enum(ActionKind, value, name, said("an action kind"))


def _parse_kinds(value: object, name: str) -> frozenset[ActionKind]:
    return frozenset(_parse_kind(item, name) for item in _parse_list(value, name))


def _parse_object(value: object, name: str) -> Mapping[object, object]:
    if not isinstance(value, Mapping):
        raise PolicyError(name, said("must be an object, got %(value)s", value=repr(value)))
    return value


def _parse_seconds(value: object, name: str) -> timedelta:
    # Bounded before building the timedelta: a huge number would overflow it.
    return timedelta(seconds=_require_int(value, name, minimum=1, maximum=_seconds(MAX_PERIOD)))


def _parse_optional_days(value: object, name: str) -> int | None:
    return None if value is None else _require_int(value, name, minimum=1, maximum=MAX_DAYS)


def _parse_cap(value: object, name: str) -> CapRule | None:
    if value is None:
        return None
    parsed = _parse_object(value, name)
    unknown = sorted(str(key) for key in set(parsed) - {"amount", "currency", "period_seconds"})
    if unknown:
        raise PolicyError(f"{name}.{unknown[0]}", said("is not a cap setting"))
    for key in ("amount", "currency", "period_seconds"):
        if key not in parsed:
            raise PolicyError(f"{name}.{key}", said("is required"))
    amount = _require_int(parsed["amount"], f"{name}.amount", minimum=1, maximum=MAX_AMOUNT)
    currency = _currency(parsed["currency"], f"{name}.currency")
    period = _parse_seconds(parsed["period_seconds"], f"{name}.period_seconds")
    return CapRule(Money(amount, currency), period)


def _parse_kind_ceilings(value: object, name: str) -> Mapping[ActionKind, Mapping[object, object]]:
    return {
        _parse_kind(kind, name): _parse_object(ceilings, f"{name}.{kind}")
        for kind, ceilings in _parse_object(value, name).items()
    }


def _parse_reasons(value: object, name: str) -> frozenset[str] | None:
    if value is None:
        return None
    reasons = _parse_list(value, name)
    _require_reasons(reasons, name)  # before hashing: a list item would not hash
    return frozenset(str(reason) for reason in reasons)


def _parse_min_identity(value: object, name: str) -> Mapping[ActionKind, IdentityLevel]:
    result: dict[ActionKind, IdentityLevel] = {}
    for kind, level in _parse_object(value, name).items():
        parsed_kind = _parse_kind(kind, name)
        result[parsed_kind] = _parse_enum(
            IdentityLevel, level, f"{name}.{kind}", said("an identity level")
        )
    return result


def _parse_version(value: object, name: str) -> int:
    return _require_int(value, name, minimum=1, maximum=MAX_AMOUNT)


def _parse_percent(value: object, name: str) -> int:
    return _require_int(value, name, minimum=1, maximum=100)


def _parse_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise PolicyError(name, said("must be true or false, got %(value)s", value=repr(value)))
    return value


def _parse_optional_owner(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_OWNER_LENGTH:
        raise PolicyError(
            name,
            said(
                "must name a member of staff in at most %(max)s characters",
                max=str(MAX_OWNER_LENGTH),
            ),
        )
    return value.strip()


def _parse_optional_bonus(value: object, name: str) -> int | None:
    if value is None:
        return None
    return _require_int(value, name, minimum=0, maximum=MAX_CREDIT_BONUS_PERCENT)


def _parse_signals(value: object, name: str) -> SignalRules:
    """Missing keys take the defaults, as a policy's do; each value is checked by
    :class:`SignalRules` itself."""
    parsed = _parse_object(value, name)
    keys = SignalRules().to_dict()
    unknown = sorted(str(key) for key in set(parsed) - set(keys))
    if unknown:
        raise PolicyError(f"{name}.{unknown[0]}", said("is not a signal setting"))
    values: dict[str, Any] = {str(key): item for key, item in parsed.items()}
    if "new_customer_amount" in values:
        values["new_customer_amount"] = _parse_object(
            values["new_customer_amount"], f"{name}.new_customer_amount"
        )
    return SignalRules(**values)


_Parser = Callable[[object, str], Any]
_PARSERS: dict[str, tuple[str, _Parser]] = {
    "version": ("version", _parse_version),
    "enabled_kinds": ("enabled_kinds", _parse_kinds),
    "auto_approve_ceiling": ("auto_approve_ceiling", _parse_object),
    "two_person_threshold": ("two_person_threshold", _parse_object),
    "kind_ceilings": ("kind_ceilings", _parse_kind_ceilings),
    "duplicate_window_seconds": ("duplicate_window", _parse_seconds),
    "refund_window_days": ("refund_window_days", _parse_optional_days),
    "per_customer_cap": ("per_customer_cap", _parse_cap),
    "per_shop_cap": ("per_shop_cap", _parse_cap),
    "allowed_reasons": ("allowed_reasons", _parse_reasons),
    "min_identity": ("min_identity", _parse_min_identity),
    "max_percent_off": ("max_percent_off", _parse_percent),
    "store_credit_bonus_percent": ("store_credit_bonus_percent", _parse_optional_bonus),
    "replacement_discount": ("replacement_discount", _parse_bool),
    "handover_owner": ("handover_owner", _parse_optional_owner),
    "signals": ("signals", _parse_signals),
}
_KEYS = frozenset(_PARSERS)
