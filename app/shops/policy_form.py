"""The shop's policy as an owner fills it in, read into the rules the checks apply.

Money is written in one currency as people write it ("200.00"), windows in days, discounts
in percent; a blank amount or window turns that rule off. The form opens in the currency the
policy already names, else the store's own (:func:`policy_currency`). Each field that cannot
be read is refused by its own name, before anything is saved, so the form can say which one.
What the form does not show (allowed reasons, the identity each kind needs, and amounts set
in other currencies) is kept as the current version has it.

The abuse signals' thresholds (:class:`app.guard.SignalRules`) are whole numbers and one
amount, blank for off; ``history_needed`` blank is 0 (the signals start at once). A signal
field left out of the request keeps the current version's value, so a client written before
the signals does not turn them off by not knowing them.

The fields, all text as a form sends them, except ``enabled_kinds`` (a list) and
``replacement_discount`` (true or false):

``currency``, ``enabled_kinds``, ``auto_approve_ceiling``, ``two_person_threshold``,
``refund_ceiling``, ``customer_credit_ceiling``, ``discount_ceiling`` (the most one action
of the kind may move), ``per_customer_cap`` and ``per_customer_cap_days``, ``per_shop_cap``
and ``per_shop_cap_days``, ``duplicate_window_days``, ``refund_window_days``,
``max_percent_off``, ``store_credit_bonus_percent``, ``replacement_discount``,
``handover_owner``; the signals' ``history_needed``, ``repeat_claims``,
``repeat_claims_percent``, ``old_delivery_days``, ``delivered_but_not_received`` (true or
false), ``new_customer_amount``, ``new_customer_days`` and ``shared_email_customers``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from app.errors import InvalidInput
from app.guard import MONEY_KINDS, CapRule, PolicyRules, SignalRules
from app.guard.policy import MAX_COUNT
from app.money import Money, MoneyError
from app.validation import boolean, currency_code, integer, text
from app.words import said
from integrations.provider import ActionKind

DAY = timedelta(days=1)
# Windows a person sets in days: at most a year and a day, as the rules allow.
MAX_DAYS = 366
# Each money kind's ceiling for one action, by its field.
CEILING_FIELDS = {kind: f"{kind.value}_ceiling" for kind in sorted(MONEY_KINDS)}
# The abuse signals' fields, named as the policy stores them.
SIGNAL_FIELDS = (
    "history_needed",
    "repeat_claims",
    "repeat_claims_percent",
    "old_delivery_days",
    "delivered_but_not_received",
    "new_customer_amount",
    "new_customer_days",
    "shared_email_customers",
)
FIELDS = (
    "currency",
    "enabled_kinds",
    "auto_approve_ceiling",
    "two_person_threshold",
    *CEILING_FIELDS.values(),
    "per_customer_cap",
    "per_customer_cap_days",
    "per_shop_cap",
    "per_shop_cap_days",
    "duplicate_window_days",
    "refund_window_days",
    "max_percent_off",
    "store_credit_bonus_percent",
    "replacement_discount",
    "handover_owner",
    *SIGNAL_FIELDS,
)


def policy_currency(policy: PolicyRules, shop_currency: str | None) -> str:
    """The currency the policy's amounts are written in: the first the policy sets an
    amount in, else the store's (``Shop.currency``), else dollars. The owner may change
    it on the form."""
    named = [
        *(cap.limit.currency for cap in (policy.per_customer_cap, policy.per_shop_cap) if cap),
        *sorted(policy.two_person_threshold),
        *sorted(policy.auto_approve_ceiling),
        *(
            currency
            for kind in CEILING_FIELDS
            for currency in sorted(policy.kind_ceilings.get(kind, {}))
        ),
        *sorted(policy.signals.new_customer_amount),
    ]
    return named[0] if named else shop_currency or "usd"


def amount_example(currency: str) -> str:
    """An amount as the form reads it in ``currency``: ``48.00``, or ``4800`` in yen."""
    return Money(4800, currency).decimal_string()


def form_fields(policy: PolicyRules, currency: str) -> dict[str, Any]:
    """The form filled in from ``policy``, amounts in ``currency``."""

    def amount(minor: int | None) -> str:
        return "" if minor is None else Money(minor, currency).decimal_string()

    def cap(rule: CapRule | None) -> tuple[str, str]:
        if rule is None or rule.limit.currency != currency:
            return "", ""
        return amount(rule.limit.amount), str(rule.period // DAY)

    per_customer, per_customer_days = cap(policy.per_customer_cap)
    per_shop, per_shop_days = cap(policy.per_shop_cap)
    signals = policy.signals
    return {
        "currency": currency,
        "enabled_kinds": sorted(policy.enabled_kinds),
        "auto_approve_ceiling": amount(policy.auto_approve_ceiling.get(currency)),
        "two_person_threshold": amount(policy.two_person_threshold.get(currency)),
        **{
            name: amount(policy.kind_ceilings.get(kind, {}).get(currency))
            for kind, name in CEILING_FIELDS.items()
        },
        "per_customer_cap": per_customer,
        "per_customer_cap_days": per_customer_days,
        "per_shop_cap": per_shop,
        "per_shop_cap_days": per_shop_days,
        "duplicate_window_days": str(policy.duplicate_window // DAY),
        "refund_window_days": _text_of(policy.refund_window_days),
        "max_percent_off": str(policy.max_percent_off),
        "store_credit_bonus_percent": _text_of(policy.store_credit_bonus_percent),
        "replacement_discount": policy.replacement_discount,
        "handover_owner": policy.handover_owner or "",
        "history_needed": str(signals.history_needed),
        "repeat_claims": _text_of(signals.repeat_claims),
        "repeat_claims_percent": _text_of(signals.repeat_claims_percent),
        "old_delivery_days": _text_of(signals.old_delivery_days),
        "delivered_but_not_received": signals.delivered_but_not_received,
        "new_customer_amount": amount(signals.new_customer_amount.get(currency)),
        "new_customer_days": _text_of(signals.new_customer_days),
        "shared_email_customers": _text_of(signals.shared_email_customers),
    }


def rules_from_form(fields: Mapping[str, object], current: PolicyRules) -> dict[str, Any]:
    """The rules ``fields`` set, on top of ``current``; :class:`InvalidInput` naming the
    first field that cannot be read."""
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise InvalidInput(
            said("%(field)s is not a field of the policy", field=unknown[0]), field=unknown[0]
        )
    currency = currency_code(fields.get("currency"), "currency")
    rules = current.to_dict()
    del rules["version"]
    ceiling = _amount(fields, "auto_approve_ceiling", currency)
    threshold = _amount(fields, "two_person_threshold", currency)
    kind_ceilings = {
        kind.value: _per_currency(
            current.kind_ceilings.get(kind, {}), currency, _amount(fields, name, currency)
        )
        for kind, name in CEILING_FIELDS.items()
    }
    owner = (text(fields.get("handover_owner"), "handover_owner") or "").strip()
    rules.update(
        enabled_kinds=_kinds(fields.get("enabled_kinds")),
        auto_approve_ceiling=_per_currency(current.auto_approve_ceiling, currency, ceiling),
        two_person_threshold=_per_currency(current.two_person_threshold, currency, threshold),
        kind_ceilings=kind_ceilings,
        per_customer_cap=_cap(fields, "per_customer_cap", currency),
        per_shop_cap=_cap(fields, "per_shop_cap", currency),
        duplicate_window_seconds=_required(fields, "duplicate_window_days", _days) * 86400,
        refund_window_days=_days(fields, "refund_window_days"),
        max_percent_off=_required(fields, "max_percent_off", _percent),
        store_credit_bonus_percent=_percent(fields, "store_credit_bonus_percent"),
        replacement_discount=boolean(
            fields.get("replacement_discount", False), "replacement_discount"
        ),
        handover_owner=owner or None,
        signals=_signals(fields, current.signals, currency),
    )
    return rules


def _signals(fields: Mapping[str, object], current: SignalRules, currency: str) -> dict[str, Any]:
    """The signals' thresholds ``fields`` set on top of ``current``: one left out keeps its
    value, a blank one turns its signal off."""
    readers: dict[str, Callable[[str], object]] = {
        "history_needed": lambda name: _whole(fields, name, minimum=0, maximum=MAX_COUNT) or 0,
        "repeat_claims": lambda name: _whole(fields, name, minimum=1, maximum=MAX_COUNT),
        "repeat_claims_percent": lambda name: _whole(fields, name, minimum=1, maximum=100),
        "old_delivery_days": lambda name: _days(fields, name),
        "delivered_but_not_received": lambda name: boolean(fields[name], name),
        "new_customer_amount": lambda name: _per_currency(
            current.new_customer_amount, currency, _amount(fields, name, currency)
        ),
        "new_customer_days": lambda name: _days(fields, name),
        "shared_email_customers": lambda name: _whole(fields, name, minimum=1, maximum=MAX_COUNT),
    }
    return current.to_dict() | {
        name: read(name) for name, read in readers.items() if name in fields
    }


def _kinds(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(kind, str) for kind in value):
        raise InvalidInput(said("enabled_kinds is a list of action kinds"), field="enabled_kinds")
    unknown = sorted(set(value) - set(ActionKind))
    if unknown:
        raise InvalidInput(
            said("%(value)s is not an action kind", value=unknown[0]), field="enabled_kinds"
        )
    return sorted(set(value))


def _amount(fields: Mapping[str, object], name: str, currency: str) -> int | None:
    written = (text(fields.get(name), name) or "").strip()
    if not written:
        return None
    try:
        minor = Money.parse(written, currency).amount
    except MoneyError:
        raise InvalidInput(
            said(
                "%(field)s is an amount in %(currency)s, such as %(example)s",
                field=name,
                currency=currency.upper(),
                example=amount_example(currency),
            ),
            field=name,
        ) from None
    return integer(minor, name, minimum=1)


def _per_currency(current: Mapping[str, int], currency: str, minor: int | None) -> dict[str, int]:
    """``current`` with ``currency``'s amount set to ``minor``, or left out when blank."""
    kept = {code: amount for code, amount in current.items() if code != currency}
    return kept if minor is None else {**kept, currency: minor}


def _cap(fields: Mapping[str, object], name: str, currency: str) -> dict[str, Any] | None:
    limit = _amount(fields, name, currency)
    days = _days(fields, f"{name}_days")
    if limit is None and days is None:
        return None
    if limit is None or days is None:
        missing = name if limit is None else f"{name}_days"
        raise InvalidInput(
            said("%(field)s is needed with the other half of the cap", field=missing),
            field=missing,
        )
    return {"amount": limit, "currency": currency, "period_seconds": days * 86400}


def _days(fields: Mapping[str, object], name: str) -> int | None:
    return _whole(fields, name, minimum=1, maximum=MAX_DAYS)


def _percent(fields: Mapping[str, object], name: str) -> int | None:
    return _whole(fields, name, minimum=0, maximum=100)


def _required(
    fields: Mapping[str, object],
    name: str,
    read: Callable[[Mapping[str, object], str], int | None],
) -> int:
    value = read(fields, name)
    if value is None:
        raise InvalidInput(said("%(field)s is required", field=name), field=name)
    return value


def _whole(fields: Mapping[str, object], name: str, *, minimum: int, maximum: int) -> int | None:
    written = (text(fields.get(name), name) or "").strip()
    if not written:
        return None
    if not written.isascii() or not written.isdigit():
        raise InvalidInput(said("%(field)s must be a whole number", field=name), field=name)
    return integer(int(written), name, minimum=minimum, maximum=maximum)


def _text_of(value: int | None) -> str:
    return "" if value is None else str(value)
