"""Turning untrusted input (JSON from staff, a macro or an agent) into a :class:`Draft`.

Every refusal names the field and the reason; nothing is guessed or coerced
(an amount is an integer of minor units, never a float or a string), and every value
fits the column it is stored in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.connections.adapters import TARGETS
from app.errors import InvalidInput
from app.execution.evaluation import Draft
from app.guard import ALLOWED_PARAMS, LineItemRef
from app.money import Money
from app.validation import (
    INT32_MAX,
    REASON_TEXT,
    SHORT_TEXT,
    boolean,
    choice,
    currency_code,
    integer,
    only_keys,
    text,
)
from app.words import said
from integrations.provider import ActionKind, Targets

_NEEDS_AMOUNT = (ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT)
MAX_TEXT = REASON_TEXT
FIELDS = (
    "kind",
    "provider",
    "target",
    "amount",
    "currency",
    "line_items",
    "params",
    "reason",
    "customer_ref",
)
# Provider object ids are short; Stripe's and Shopify's are well under this.
MAX_ID = SHORT_TEXT
MAX_LINE_ITEMS = 100
# Stripe's coupon durations and subscription proration behaviours.
DURATIONS = ("once", "repeating", "forever")
PRORATIONS = ("create_prorations", "none", "always_invoice")


def parse_draft(payload: Mapping[str, Any], *, targets: Mapping[str, Targets] = TARGETS) -> Draft:
    """The draft ``payload`` describes. Its provider is the one named, or else the one
    whose ids the target has (Stripe's and Shopify's never look alike; a provider whose
    ids may look like anything, the merchant's own endpoint, must be named)."""
    only_keys(dict(payload), FIELDS)
    kind = _kind(payload.get("kind"))
    provider = _provider(payload, kind, targets)
    accepted = targets[provider]
    customer_ref = text(payload.get("customer_ref"), "customer_ref", max_length=MAX_ID)
    target = str(payload["target"])
    if kind in (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT):
        customer_ref = target
    amount, currency = _amount(payload, required=kind in _NEEDS_AMOUNT)
    params = payload.get("params") or {}
    if not isinstance(params, Mapping):
        raise InvalidInput(said("params must be an object"), field="params")
    allowed = (ALLOWED_PARAMS[kind] - _PROVIDER_PARAMS) | accepted.extra_params.get(
        kind, frozenset()
    )
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise InvalidInput(
            said(
                "%(params)s is not a parameter of a %(provider)s %(kind)s",
                params=", ".join(unknown),
                provider=provider,
                kind=kind.value,
            ),
            field=f"params.{unknown[0]}",
        )
    params = dict(params)
    _check_params(kind, params)
    _check_store_params(params, amount)
    if kind == ActionKind.SUBSCRIPTION_CHANGE and "items" in params:
        params["items"] = _subscription_items(params["items"])
    line_items = _line_items(payload.get("line_items"), kind, accepted)
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


# Parameters only some providers take; each provider's Targets lists those it does.
_PROVIDER_PARAMS = frozenset({"shipping", "notify"})


def _provider(payload: Mapping[str, Any], kind: ActionKind, targets: Mapping[str, Targets]) -> str:
    """The provider the draft is for, with its target checked against that provider's ids."""
    named = payload.get("provider")
    if named is not None:
        provider = str(choice(named, "provider", tuple(targets)))
        candidates = [provider]
    else:
        candidates = [
            name
            for name, accepted in targets.items()
            if kind in accepted.ids and not accepted.named_only
        ]
    target = payload.get("target")
    fits = [
        name
        for name in candidates
        if isinstance(target, str) and len(target) <= MAX_ID and targets[name].accepts(kind, target)
    ]
    if len(fits) == 1:
        return fits[0]
    # Each provider describes its own ids (its words, passed as they are).
    described = " or ".join(targets[name].described(kind) for name in candidates)
    expected = described or said("nothing: no connected provider does that")
    raise InvalidInput(
        said(
            "a %(kind)s targets %(expected)s (at most %(max)s characters)",
            kind=kind.value,
            expected=expected,
            max=str(MAX_ID),
        ),
        field="target",
    )


def _kind(value: object) -> ActionKind:
    try:
        return ActionKind(str(value))
    except ValueError:
        choices = ", ".join(k.value for k in ActionKind)
        raise InvalidInput(
            said("kind must be one of %(choices)s", choices=choices), field="kind"
        ) from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(payload: Mapping[str, Any], *, required: bool) -> tuple[int | None, str | None]:
    amount, currency = payload.get("amount"), payload.get("currency")
    if amount is None and currency is None and not required:
        return None, None
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= INT32_MAX:
        raise InvalidInput(
            said(
                "amount must be a positive integer in the currency's minor unit (4800 for "
                "%(example)s) of at most %(max)s",
                example=Money(4800, "usd"),
                max=str(INT32_MAX),
            ),
            field="amount",
        )
    return amount, currency_code(currency, "currency")


def _line_items(value: object, kind: ActionKind, accepted: Targets) -> tuple[LineItemRef, ...]:
    if value is None:
        return ()
    if kind != ActionKind.REFUND:
        raise InvalidInput(said("only refunds name line items"), field="line_items")
    if not isinstance(value, list) or len(value) > MAX_LINE_ITEMS:
        raise InvalidInput(
            said("line_items must be a list of at most %(max)s", max=str(MAX_LINE_ITEMS)),
            field="line_items",
        )
    keys = ("line_id", "amount") + (("quantity",) if accepted.line_item_quantity else ())
    items = []
    for index, item in enumerate(value):
        field = f"line_items[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("line_id"), str):
            raise InvalidInput(said("each line item needs a line_id"), field=f"{field}.line_id")
        only_keys(dict(item), keys, prefix=f"{field}.")
        line_id = str(text(item["line_id"], f"{field}.line_id", max_length=MAX_ID, required=True))
        if not accepted.line_item_id.fullmatch(line_id):
            raise InvalidInput(
                said("line_id is not an order line id of this provider"), field=f"{field}.line_id"
            )
        amount = integer(item.get("amount"), f"{field}.amount", minimum=1)
        quantity = (
            integer(item.get("quantity"), f"{field}.quantity", minimum=1, maximum=INT32_MAX)
            if accepted.line_item_quantity
            else None
        )
        items.append(LineItemRef(line_id=line_id, amount_minor=amount, quantity=quantity))
    return tuple(items)


def _subscription_items(value: object) -> list[list[object]]:
    """``[{"price", "quantity"}]``, the complete set wanted afterwards, as pairs."""
    if not isinstance(value, list) or not value or len(value) > MAX_LINE_ITEMS:
        raise InvalidInput(
            said(
                "items is the complete list of {price, quantity} wanted afterwards"
                " (at most %(max)s)",
                max=str(MAX_LINE_ITEMS),
            ),
            field="params.items",
        )
    pairs: list[list[object]] = []
    for index, item in enumerate(value):
        field = f"params.items[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("price"), str):
            raise InvalidInput(said("each item names a price id"), field=f"{field}.price")
        only_keys(dict(item), ("price", "quantity"), prefix=f"{field}.")
        price = text(item["price"], f"{field}.price", max_length=MAX_ID, required=True)
        quantity = integer(item.get("quantity", 1), f"{field}.quantity", minimum=1)
        pairs.append([price, quantity])
    return pairs


def _check_store_params(params: Mapping[str, Any], amount: int | None) -> None:
    """Shopify's: a shipping refund is part of the amount; notify is said outright."""
    if "shipping" in params:
        integer(params["shipping"], "params.shipping", minimum=1, maximum=amount or 1)
    if "notify" in params:
        boolean(params["notify"], "params.notify")


def _check_params(kind: ActionKind, params: Mapping[str, Any]) -> None:
    if kind == ActionKind.SUBSCRIPTION_CANCEL and not isinstance(params.get("at_period_end"), bool):
        raise InvalidInput(
            said("say explicitly whether to cancel now (false) or at the period end (true)"),
            field="params.at_period_end",
        )
    if kind == ActionKind.DISCOUNT:
        percent = params.get("percent_off")
        if percent is not None and (not _is_int(percent) or not 1 <= percent <= 100):
            raise InvalidInput(
                said("percent_off is a whole number from 1 to 100"), field="params.percent_off"
            )
        if "amount_off" in params and percent is not None:
            raise InvalidInput(
                said("give percent_off or amount_off, not both"), field="params.amount_off"
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
