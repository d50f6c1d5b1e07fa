"""Writes and their lookups: one logical write per action, and how to recognise it later.

Every write goes out under the caller's idempotency key with our action id in the
created object's metadata, so that a resend after an unclear outcome is replayed by
Stripe rather than executed twice, and :class:`Writer.find` can recognise the effect
without writing anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import stripe

from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ActionRequest,
    InvalidRequest,
    ProviderAnswer,
    ProviderError,
    ProviderRejected,
    ProviderStatus,
    SubscriptionItem,
    SubscriptionStatus,
)

from ._client import Answer, json_request, path
from ._errors import Calls
from ._facts import (
    JSON,
    Reader,
    coupon_of,
    metadata_of,
    payment_param,
    refund_status,
    timestamp,
)

RefundReason = Literal["duplicate", "fraudulent", "requested_by_customer"]
_REFUND_REASONS: dict[str, RefundReason] = {
    "duplicate": "duplicate",
    "fraudulent": "fraudulent",
    "requested_by_customer": "requested_by_customer",
}
Proration = Literal["always_invoice", "create_prorations", "none"]
_PRORATIONS: dict[str, Proration] = {
    "always_invoice": "always_invoice",
    "create_prorations": "create_prorations",
    "none": "none",
}
Duration = Literal["once", "repeating", "forever"]
_DURATIONS: dict[str, Duration] = {"once": "once", "repeating": "repeating", "forever": "forever"}
# Stripe's limit on a metadata value; a free-text reason is cut to fit.
METADATA_VALUE_MAX = 500


class Writer:
    """Submits one action and looks for its effect afterwards."""

    def __init__(self, client: stripe.StripeClient, calls: Calls, reader: Reader):
        self._client = client
        self._calls = calls
        self._reader = reader

    def write(
        self,
        what: str,
        idempotency_key: str,
        method: Literal["post", "delete"],
        url: str,
        params: Mapping[str, Any] | None = None,
    ) -> Answer:
        """One write to Stripe under ``idempotency_key``, answered as JSON."""
        return self._calls.write(
            what,
            idempotency_key,
            lambda options: json_request(self._client, method, url, params, options),
        )

    # ------------------------------------------------------------ submit

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        """Send the action's one logical write and report what Stripe answered."""
        metadata = _metadata(request)
        if request.kind is ActionKind.REFUND:
            return self._refund(request, metadata)
        if request.kind is ActionKind.CUSTOMER_CREDIT:
            return self._credit(request, metadata)
        if request.kind is ActionKind.DISCOUNT:
            return self._discount(request, metadata)
        if request.kind is ActionKind.SUBSCRIPTION_CANCEL:
            return self._cancel(request, metadata)
        return self._change(request, metadata)

    def _refund(self, request: ActionRequest, metadata: dict[str, str]) -> ProviderAnswer:
        reason = request.params.get("reason")
        if isinstance(reason, str) and reason and reason not in _REFUND_REASONS:
            # Stripe takes only its three reasons; ours travels with the refund anyway.
            metadata["caseward_reason"] = reason[:METADATA_VALUE_MAX]
        params: stripe.params.RefundCreateParams = {
            "amount": _amount(request),
            "metadata": metadata,
        }
        if payment_param(request.target) == "payment_intent":
            params["payment_intent"] = request.target
        else:
            params["charge"] = request.target
        if isinstance(reason, str) and reason in _REFUND_REASONS:
            params["reason"] = _REFUND_REASONS[reason]
        refund = self.write(
            f"refund on {request.target}", request.idempotency_key, "post", path("refunds"), params
        )
        return refund_answer(refund.data, replayed=refund.replayed)

    def _credit(self, request: ActionRequest, metadata: dict[str, str]) -> ProviderAnswer:
        description = request.params.get("description")
        params: stripe.params.CustomerBalanceTransactionCreateParams = {
            # A negative balance is money the customer can spend on future invoices.
            "amount": -_amount(request),
            "currency": _currency(request),
            "description": description if isinstance(description, str) else "Caseward credit",
            "metadata": metadata,
        }
        transaction = self.write(
            f"balance credit for {request.target}",
            request.idempotency_key,
            "post",
            path("customers", request.target, "balance_transactions"),
            params,
        )
        return credit_answer(transaction.data, replayed=transaction.replayed)

    def _discount(self, request: ActionRequest, metadata: dict[str, str]) -> ProviderAnswer:
        coupon_params: stripe.params.CouponCreateParams = {
            "duration": _duration(request.params),
            "max_redemptions": 1,
            "metadata": metadata,
        }
        percent_off = request.params.get("percent_off")
        if percent_off is not None:
            if not isinstance(percent_off, int | float) or not 0 < percent_off <= 100:
                raise InvalidRequest(f"percent_off must be in (0, 100], not {percent_off!r}")
            coupon_params["percent_off"] = float(percent_off)
        else:
            coupon_params["amount_off"] = _amount(request)
            coupon_params["currency"] = _currency(request)
        if coupon_params["duration"] == "repeating":
            months = request.params.get("duration_in_months")
            if not isinstance(months, int) or months < 1:
                raise InvalidRequest("a repeating discount needs duration_in_months >= 1")
            coupon_params["duration_in_months"] = months
        # Two writes, each idempotent under its own derived key: a resend after an
        # unclear outcome replays the coupon and creates (or replays) the code.
        coupon = self.write(
            f"coupon for {request.target}",
            f"{request.idempotency_key}:coupon",
            "post",
            path("coupons"),
            coupon_params,
        )
        code_params: stripe.params.PromotionCodeCreateParams = {
            "promotion": {"type": "coupon", "coupon": coupon.data["id"]},
            "customer": request.target,
            "max_redemptions": 1,
            "metadata": metadata,
        }
        code = request.params.get("code")
        if isinstance(code, str) and code:
            code_params["code"] = code
        promotion_code = self.write(
            f"promotion code for {request.target}",
            f"{request.idempotency_key}:promotion_code",
            "post",
            path("promotion_codes"),
            code_params,
        )
        return discount_answer(promotion_code.data, coupon.data, replayed=promotion_code.replayed)

    def _cancel(self, request: ActionRequest, metadata: dict[str, str]) -> ProviderAnswer:
        what = f"cancellation of {request.target}"
        if _at_period_end(request.params):
            update: stripe.params.SubscriptionUpdateParams = {
                "cancel_at_period_end": True,
                "metadata": metadata,
            }
            subscription = self.write(
                what, request.idempotency_key, "post", path("subscriptions", request.target), update
            )
            data = subscription.data
            done = (
                bool(data.get("cancel_at_period_end"))
                or data.get("status") == SubscriptionStatus.CANCELED
            )
        else:
            # Immediate and final. Stripe ignores idempotency keys on DELETE; a resend
            # after an unclear outcome is safe only because ``find`` runs first.
            try:
                subscription = self.write(
                    what, request.idempotency_key, "delete", path("subscriptions", request.target)
                )
            except ProviderRejected as refused:
                clearer = self._already_canceled(request.target, refused)
                if clearer is None:
                    raise
                raise clearer from refused
            data = subscription.data
            done = data.get("status") == SubscriptionStatus.CANCELED
        return subscription_answer(
            data,
            ProviderStatus.SUCCEEDED if done else ProviderStatus.PENDING,
            replayed=subscription.replayed,
        )

    def _already_canceled(self, target: str, refused: ProviderRejected) -> ProviderRejected | None:
        """Stripe answers a DELETE of a canceled subscription "No such subscription"; say
        what it means when a read shows the subscription there and canceled."""
        if refused.code != "resource_missing":
            return None
        try:
            data = self._reader.subscription_json(target)
        except ProviderError:
            return None
        if data is None or data.get("status") != SubscriptionStatus.CANCELED:
            return None
        ended = data.get("canceled_at")
        when = f" at {timestamp(ended).isoformat()}" if isinstance(ended, int) else ""
        return ProviderRejected(
            f"Stripe refused the cancellation of {target}: it was already canceled{when}. "
            f"({refused})",
            code=refused.code,
            http_status=refused.http_status,
        )

    def _change(self, request: ActionRequest, metadata: dict[str, str]) -> ProviderAnswer:
        params: stripe.params.SubscriptionUpdateParams = {"metadata": metadata}
        if request.params.get("items") is not None:
            wanted = _wanted_items(request.params["items"])
            current = self._reader.subscription(request.target)
            params["items"] = _item_changes(wanted, current.items)
        if isinstance(request.params.get("cancel_at_period_end"), bool):
            params["cancel_at_period_end"] = bool(request.params["cancel_at_period_end"])
        proration = request.params.get("proration_behavior")
        if proration is not None:
            if not isinstance(proration, str) or proration not in _PRORATIONS:
                raise InvalidRequest(f"unknown proration_behavior {proration!r}")
            params["proration_behavior"] = _PRORATIONS[proration]
        subscription = self.write(
            f"change of {request.target}",
            request.idempotency_key,
            "post",
            path("subscriptions", request.target),
            params,
        )
        data = subscription.data
        return subscription_answer(data, _change_status(data), replayed=subscription.replayed)

    # ------------------------------------------------------------ find

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The action's effect as Stripe shows it now, or ``None``; never writes."""
        action_id = request.action_id
        if request.kind is ActionKind.REFUND:
            refund = _first_ours(self._reader.refunds(request.target), action_id)
            return None if refund is None else refund_answer(refund, replayed=False)
        if request.kind is ActionKind.CUSTOMER_CREDIT:
            credit = _first_ours(self._reader.balance_transactions(request.target), action_id)
            return None if credit is None else credit_answer(credit, replayed=False)
        if request.kind is ActionKind.DISCOUNT:
            code = _first_ours(self._reader.promotion_codes(request.target), action_id)
            return None if code is None else discount_answer(code, coupon_of(code), replayed=False)
        data = self._reader.subscription_json(request.target)
        return None if data is None else _subscription_effect(request, data)


def _subscription_effect(request: ActionRequest, data: JSON) -> ProviderAnswer | None:
    """What a subscription shows of our change or cancellation, if anything."""
    ours = _is_ours(data, request.action_id)
    if request.kind is ActionKind.SUBSCRIPTION_CHANGE:
        return subscription_answer(data, _change_status(data), replayed=False) if ours else None
    if not _at_period_end(request.params):
        # A cancel-now carries no metadata (DELETE takes none): the status is the effect.
        if data.get("status") != SubscriptionStatus.CANCELED:
            return None
        return subscription_answer(data, ProviderStatus.SUCCEEDED, replayed=False)
    if not ours:
        return None
    # Our update is there; if the cancellation was withdrawn since, it is no longer in effect.
    in_effect = (
        bool(data.get("cancel_at_period_end")) or data.get("status") == SubscriptionStatus.CANCELED
    )
    status = ProviderStatus.SUCCEEDED if in_effect else ProviderStatus.CANCELED
    return subscription_answer(data, status, replayed=False)


# ---------------------------------------------------------------- answers


def refund_answer(refund: JSON, *, replayed: bool) -> ProviderAnswer:
    """A refund's status is Stripe's own: pending stays pending until Stripe says otherwise."""
    return ProviderAnswer(
        reference=str(refund["id"]),
        status=refund_status(refund.get("status")),
        raw=refund,
        replayed=replayed,
        failure_reason=refund.get("failure_reason"),
    )


def credit_answer(transaction: JSON, *, replayed: bool) -> ProviderAnswer:
    """A balance transaction exists only once applied: it has no other status."""
    return ProviderAnswer(
        reference=str(transaction["id"]),
        status=ProviderStatus.SUCCEEDED,
        raw=transaction,
        replayed=replayed,
    )


def discount_answer(promotion_code: JSON, coupon: JSON, *, replayed: bool) -> ProviderAnswer:
    """The promotion code is what the customer uses; a deactivated one no longer grants anything."""
    active = bool(promotion_code.get("active"))
    return ProviderAnswer(
        reference=str(promotion_code["id"]),
        status=ProviderStatus.SUCCEEDED if active else ProviderStatus.CANCELED,
        raw={
            "coupon_id": coupon.get("id"),
            "code": promotion_code.get("code"),
            "promotion_code": promotion_code,
            "coupon": coupon,
        },
        replayed=replayed,
    )


def subscription_answer(
    subscription: JSON, status: ProviderStatus, *, replayed: bool
) -> ProviderAnswer:
    """A subscription write is referenced by the subscription itself."""
    return ProviderAnswer(
        reference=str(subscription["id"]),
        status=status,
        raw=subscription,
        replayed=replayed,
    )


def _change_status(subscription: JSON) -> ProviderStatus:
    """A change waiting on a payment sits in ``pending_update`` until the invoice is paid."""
    return (
        ProviderStatus.PENDING if subscription.get("pending_update") else ProviderStatus.SUCCEEDED
    )


# ---------------------------------------------------------------- request checks


def _metadata(request: ActionRequest) -> dict[str, str]:
    """The request's metadata, always carrying our action id (the key ``find`` matches on)."""
    metadata = dict(request.metadata)
    carried = metadata.setdefault(ACTION_ID_METADATA_KEY, request.action_id)
    if carried != request.action_id:
        raise InvalidRequest(
            f"metadata names action {carried!r} but the request is action {request.action_id!r}"
        )
    return metadata


def _amount(request: ActionRequest) -> int:
    """A positive amount in minor units: money is never implied (no "refund everything")."""
    if not isinstance(request.amount, int) or request.amount <= 0:
        raise InvalidRequest(f"a {request.kind} needs a positive amount, not {request.amount!r}")
    return request.amount


def _currency(request: ActionRequest) -> str:
    if not request.currency:
        raise InvalidRequest(f"a {request.kind} needs a currency")
    return request.currency.lower()


def _duration(params: Mapping[str, object]) -> Duration:
    duration = params.get("duration", "once")
    if not isinstance(duration, str) or duration not in _DURATIONS:
        raise InvalidRequest(f"duration must be one of {sorted(_DURATIONS)}, not {duration!r}")
    return _DURATIONS[duration]


def _at_period_end(params: Mapping[str, object]) -> bool:
    """Cancel now or at period end: must be said explicitly, the two are very different."""
    value = params.get("at_period_end", params.get("cancel_at_period_end"))
    if not isinstance(value, bool):
        raise InvalidRequest("a subscription cancel must say at_period_end=True or False")
    return value


def _wanted_items(wanted: object) -> dict[str, int]:
    """The complete set of ``(price_id, quantity)`` pairs wanted afterwards, checked."""
    if not isinstance(wanted, list | tuple) or not wanted:
        raise InvalidRequest("a subscription change needs a non-empty list of items")
    quantities: dict[str, int] = {}
    for pair in wanted:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise InvalidRequest(f"a subscription item is a (price, quantity) pair, not {pair!r}")
        price, quantity = pair
        if not isinstance(price, str) or not price:
            raise InvalidRequest(f"item price must be a non-empty string, not {price!r}")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 1:
            raise InvalidRequest(
                f"item quantity must be a whole number of at least 1, not {quantity!r}"
            )
        quantities[price] = quantity
    return quantities


def _item_changes(
    wanted: dict[str, int], current: Iterable[SubscriptionItem]
) -> list[stripe.params.SubscriptionUpdateParamsItem]:
    """Stripe's ``items[]`` turning ``current`` into ``wanted``: keep an item whose price
    stays (with the new quantity), delete the others, add new prices."""
    current = list(current)
    kept = {item.price_id for item in current}
    # Additions first, deletions last: the subscription never passes through "no items".
    items: list[stripe.params.SubscriptionUpdateParamsItem] = [
        {"price": price, "quantity": quantity}
        for price, quantity in wanted.items()
        if price not in kept
    ]
    items += [
        {"id": item.id, "quantity": wanted[item.price_id]}
        for item in current
        if item.price_id in wanted
    ]
    items += [{"id": item.id, "deleted": True} for item in current if item.price_id not in wanted]
    return items


def _is_ours(data: JSON, action_id: str) -> bool:
    return metadata_of(data).get(ACTION_ID_METADATA_KEY) == action_id


def _first_ours(rows: Iterable[JSON], action_id: str) -> JSON | None:
    """The first object (Stripe lists newest first) carrying our action id."""
    return next((row for row in rows if _is_ours(row, action_id)), None)
