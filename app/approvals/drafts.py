"""Turning untrusted input (JSON from staff, a macro or an agent) into a :class:`Draft`.

Every refusal names the field and the reason; nothing is guessed or coerced
(an amount is an integer of minor units, never a float or a string), and every value
fits the column it is stored in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.errors import InvalidInput
from app.evaluation import Draft
from app.guard import ALLOWED_PARAMS, LineItemRef
from app.money import MoneyError, normalise_currency
from app.validation import (
    INT32_MAX,
    REASON_TEXT,
    SHORT_TEXT,
    boolean,
    choice,
    integer,
    only_keys,
    text,
)
from integrations.provider import ActionKind

_TARGET_PREFIXES: dict[ActionKind, tuple[str, ...]] = {
    ActionKind.REFUND: ("pi_", "ch_"),
    ActionKind.CUSTOMER_CREDIT: ("cus_",),
    ActionKind.DISCOUNT: ("cus_",),
    ActionKind.SUBSCRIPTION_CANCEL: ("sub_",),
    ActionKind.SUBSCRIPTION_CHANGE: ("sub_",),
}
_NEEDS_AMOUNT = (ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT)
MAX_TEXT = REASON_TEXT
FIELDS = ("kind", "target", "amount", "currency", "line_items", "params", "reason", "customer_ref")
# Provider object ids are short; Stripe's are well under this.
MAX_ID = SHORT_TEXT
_PROVIDER_ID = re.compile(rf"[A-Za-z0-9_]{{4,{MAX_ID}}}")
MAX_LINE_ITEMS = 100
# Stripe's coupon durations and subscription proration behaviours.
DURATIONS = ("once", "repeating", "forever")
PRORATIONS = ("create_prorations", "none", "always_invoice")


def parse_draft(payload: Mapping[str, Any], *, provider: str = "stripe") -> Draft:
    only_keys(dict(payload), FIELDS)
    kind = _kind(payload.get("kind"))
    target = payload.get("target")
    if (
        not isinstance(target, str)
        or not target.startswith(_TARGET_PREFIXES[kind])
        or not _PROVIDER_ID.fullmatch(target)
    ):
        expected = " or ".join(f"'{p}...'" for p in _TARGET_PREFIXES[kind])
        raise InvalidInput(
            f"a {kind.value} targets a {provider} id like {expected}"
            f" (letters, digits and _, at most {MAX_ID} characters)",
            field="target",
        )
    customer_ref = text(payload.get("customer_ref"), "customer_ref", max_length=MAX_ID)
    if kind in (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT):
        customer_ref = target
    amount, currency = _amount(payload, required=kind in _NEEDS_AMOUNT)
    params = payload.get("params") or {}
    if not isinstance(params, Mapping):
        raise InvalidInput("params must be an object", field="params")
    unknown = sorted(set(params) - ALLOWED_PARAMS[kind])
    if unknown:
        raise InvalidInput(
            f"{', '.join(unknown)} is not a parameter of a {kind.value}",
            field=f"params.{unknown[0]}",
        )
    params = dict(params)
    _check_params(kind, params)
    if kind == ActionKind.SUBSCRIPTION_CHANGE and "items" in params:
        params["items"] = _subscription_items(params["items"])
    line_items = _line_items(payload.get("line_items"), kind)
    return Draft(
        kind=kind,
        provider=provider,
        target=target,
        customer_ref=customer_ref,
        amount=amount,
        currency=currency,
        line_items=line_items,
        params=dict(params),
        reason=text(payload.get("reason"), "reason", max_length=MAX_TEXT, multiline=True),
    )


def _kind(value: object) -> ActionKind:
    try:
        return ActionKind(str(value))
    except ValueError:
        choices = ", ".join(k.value for k in ActionKind)
        raise InvalidInput(f"kind must be one of {choices}", field="kind") from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(payload: Mapping[str, Any], *, required: bool) -> tuple[int | None, str | None]:
    amount, currency = payload.get("amount"), payload.get("currency")
    if amount is None and currency is None and not required:
        return None, None
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= INT32_MAX:
        raise InvalidInput(
            "amount must be a positive integer in the currency's minor unit (4800 for $48.00)"
            f" of at most {INT32_MAX}",
            field="amount",
        )
    if not isinstance(currency, str):
        raise InvalidInput("currency must be an ISO 4217 code such as 'usd'", field="currency")
    try:
        return amount, normalise_currency(currency)
    except MoneyError as exc:
        raise InvalidInput(str(exc), field="currency") from exc


def _line_items(value: object, kind: ActionKind) -> tuple[LineItemRef, ...]:
    if value is None:
        return ()
    if kind != ActionKind.REFUND:
        raise InvalidInput("only refunds name line items", field="line_items")
    if not isinstance(value, list) or len(value) > MAX_LINE_ITEMS:
        raise InvalidInput(
            f"line_items must be a list of at most {MAX_LINE_ITEMS}", field="line_items"
        )
    items = []
    for index, item in enumerate(value):
        field = f"line_items[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("line_id"), str):
            raise InvalidInput("each line item needs a line_id", field=f"{field}.line_id")
        only_keys(dict(item), ("line_id", "amount"), prefix=f"{field}.")
        line_id = text(item["line_id"], f"{field}.line_id", max_length=MAX_ID, required=True)
        amount = integer(item.get("amount"), f"{field}.amount", minimum=1)
        items.append(LineItemRef(line_id=str(line_id), amount_minor=amount))
    return tuple(items)


def _subscription_items(value: object) -> list[list[object]]:
    """``[{"price", "quantity"}]``, the complete set wanted afterwards, as pairs."""
    if not isinstance(value, list) or not value or len(value) > MAX_LINE_ITEMS:
        raise InvalidInput(
            "items is the complete list of {price, quantity} wanted afterwards"
            f" (at most {MAX_LINE_ITEMS})",
            field="params.items",
        )
    pairs: list[list[object]] = []
    for index, item in enumerate(value):
        field = f"params.items[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("price"), str):
            raise InvalidInput("each item names a price id", field=f"{field}.price")
        only_keys(dict(item), ("price", "quantity"), prefix=f"{field}.")
        price = text(item["price"], f"{field}.price", max_length=MAX_ID, required=True)
        quantity = integer(item.get("quantity", 1), f"{field}.quantity", minimum=1)
        pairs.append([price, quantity])
    return pairs


def _check_params(kind: ActionKind, params: Mapping[str, Any]) -> None:
    if kind == ActionKind.SUBSCRIPTION_CANCEL and not isinstance(params.get("at_period_end"), bool):
        raise InvalidInput(
            "say explicitly whether to cancel now (false) or at the period end (true)",
            field="params.at_period_end",
        )
    if kind == ActionKind.DISCOUNT:
        percent = params.get("percent_off")
        if percent is not None and (not _is_int(percent) or not 1 <= percent <= 100):
            raise InvalidInput(
                "percent_off is a whole number from 1 to 100", field="params.percent_off"
            )
        if "amount_off" in params and percent is not None:
            raise InvalidInput(
                "give percent_off or amount_off, not both", field="params.amount_off"
            )
        if "amount_off" in params:
            integer(params["amount_off"], "params.amount_off", minimum=1)
    if "duration" in params:
        choice(params["duration"], "params.duration", DURATIONS)
    if "duration_in_months" in params:
        integer(params["duration_in_months"], "params.duration_in_months", minimum=1, maximum=120)
    if "cancel_at_period_end" in params:
        boolean(params["cancel_at_period_end"], "params.cancel_at_period_end")
    if "proration_behavior" in params:
        choice(params["proration_behavior"], "params.proration_behavior", PRORATIONS)
    for name in ("reason", "description"):
        if name in params:
            text(params[name], f"params.{name}", max_length=MAX_TEXT, required=True)
