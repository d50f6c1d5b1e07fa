"""Reads: fresh facts from Stripe, turned into the protocol's dataclasses.

Everything is read as the JSON Stripe answered (:func:`._client.json_request`) with checked
accessors, so a field of the wrong type fails loudly here instead of becoming a wrong
amount in a guardrail check. Lists are always paged to the end (or to the cutoff the
caller asks for): a refund on page two still counts against the capture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import stripe

from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    CustomerFacts,
    InvalidRequest,
    PaymentFacts,
    ProviderCredit,
    ProviderDiscount,
    ProviderRefund,
    ProviderStatus,
    SubscriptionFacts,
    SubscriptionItem,
)

from ._client import json_request, path
from ._errors import Calls

JSON = dict[str, Any]

PAGE_SIZE = 100
# Balance transactions older than this are history the checks do not need.
CREDIT_HISTORY = timedelta(days=90)


def payment_param(target: str) -> str:
    """Which refund parameter names ``target``: ``payment_intent`` or ``charge``."""
    if target.startswith("pi_"):
        return "payment_intent"
    if target.startswith("ch_"):
        return "charge"
    raise InvalidRequest(f"a Stripe refund target is a payment intent or a charge, not {target!r}")


class Reader:
    """The adapter's reads; shared by ``facts`` and ``find`` so both see the same data."""

    def __init__(self, client: stripe.StripeClient, calls: Calls, now: Callable[[], datetime]):
        self._client = client
        self._calls = calls
        self._now = now

    def _get(self, url: str, params: Mapping[str, Any] | None = None) -> JSON:
        return json_request(self._client, "get", url, params).data

    # ------------------------------------------------------------ payments

    def payment(self, target: str) -> PaymentFacts:
        """The payment intent or charge ``target``, with every refund made on it."""
        if payment_param(target) == "payment_intent":
            intent = self._calls.read_or_missing(
                f"lookup of {target}",
                lambda: self._get(
                    path("payment_intents", target), {"expand": ["latest_charge.refunds"]}
                ),
            )
            if intent is None:
                return PaymentFacts(id=target, exists=False)
            data, charge = intent, intent.get("latest_charge") or {}
        else:
            found = self._calls.read_or_missing(
                f"lookup of {target}",
                lambda: self._get(path("charges", target), {"expand": ["refunds"]}),
            )
            if found is None:
                return PaymentFacts(id=target, exists=False)
            data = charge = found
        return PaymentFacts(
            id=target,
            exists=True,
            currency=_str(data, "currency"),
            amount=_int(data, "amount"),
            captured=_int(charge, "amount_captured") if charge else 0,
            paid=bool(charge.get("paid")),
            disputed=bool(charge.get("disputed")),
            customer_id=object_id(data.get("customer")),
            created=timestamp(data["created"]),
            refunds=tuple(
                to_refund(r)
                for r in _capture_refunds(list(self._refunds_of(target, charge)), charge)
            ),
        )

    def _refunds_of(self, target: str, charge: JSON) -> Iterator[JSON]:
        """The refunds expanded on the charge (one call for the whole payment), then the
        rest by list when Stripe says there are more."""
        embedded = charge.get("refunds") if charge else None
        if not isinstance(embedded, dict):
            yield from self.refunds(target)
            return
        rows: list[JSON] = list(embedded.get("data") or [])
        yield from rows
        if embedded.get("has_more") and rows:
            yield from self.refunds(target, after=_str(rows[-1], "id"))

    def refunds(self, target: str, after: str | None = None) -> Iterator[JSON]:
        """Every refund on ``target`` (after the refund ``after``), newest first."""
        param = payment_param(target)

        def page(after: str | None) -> JSON:
            params: stripe.params.RefundListParams = {"limit": PAGE_SIZE}
            if param == "payment_intent":
                params["payment_intent"] = target
            else:
                params["charge"] = target
            if after:
                params["starting_after"] = after
            return self._get(path("refunds"), params)

        return self._pages(f"refund list of {target}", page, after)

    # ------------------------------------------------------------ customers

    def customer(self, target: str) -> CustomerFacts:
        """The customer ``target``, its recent balance transactions and its promotion codes."""
        data = self._calls.read_or_missing(
            f"lookup of {target}", lambda: self._get(path("customers", target))
        )
        if data is None:
            return CustomerFacts(id=target, exists=False)
        if data.get("deleted"):
            return CustomerFacts(id=target, exists=True, deleted=True)
        cutoff = self._now() - CREDIT_HISTORY
        credits = []
        for transaction in self.balance_transactions(target):
            credit = to_credit(transaction)
            if credit.created < cutoff:
                break
            credits.append(credit)
        return CustomerFacts(
            id=target,
            exists=True,
            email=data.get("email"),
            balance=_int(data, "balance"),
            balance_currency=data.get("currency"),
            credits=tuple(credits),
            discounts=tuple(to_discount(p) for p in self.promotion_codes(target)),
        )

    def customers_with_email(self, email: str) -> Iterator[JSON]:
        """The customers Stripe lists under ``email`` (its filter is exact, case and all)."""

        def page(after: str | None) -> JSON:
            params: stripe.params.CustomerListParams = {"email": email, "limit": PAGE_SIZE}
            if after:
                params["starting_after"] = after
            return self._get(path("customers"), params)

        return self._pages("customer look-up by email", page)

    def balance_transactions(self, customer: str) -> Iterator[JSON]:
        """The customer's balance transactions, newest first."""

        def page(after: str | None) -> JSON:
            params: stripe.params.CustomerBalanceTransactionListParams = {"limit": PAGE_SIZE}
            if after:
                params["starting_after"] = after
            return self._get(path("customers", customer, "balance_transactions"), params)

        return self._pages(f"balance transaction list of {customer}", page)

    def promotion_codes(self, customer: str) -> Iterator[JSON]:
        """The customer's promotion codes, each with its coupon expanded."""

        def page(after: str | None) -> JSON:
            params: stripe.params.PromotionCodeListParams = {
                "customer": customer,
                "limit": PAGE_SIZE,
                "expand": ["data.promotion.coupon"],
            }
            if after:
                params["starting_after"] = after
            return self._get(path("promotion_codes"), params)

        return self._pages(f"promotion code list of {customer}", page)

    # ------------------------------------------------------------ subscriptions

    def subscription(self, target: str) -> SubscriptionFacts:
        """The subscription ``target`` with all its items."""
        data = self.subscription_json(target)
        if data is None:
            return SubscriptionFacts(id=target, exists=False)
        items = self._subscription_items(data)
        ends = [timestamp(i["current_period_end"]) for i in items if i.get("current_period_end")]
        if not ends and data.get("current_period_end"):  # API versions before 2025-03-31
            ends = [timestamp(data["current_period_end"])]
        return SubscriptionFacts(
            id=target,
            exists=True,
            status=_str(data, "status"),
            customer_id=object_id(data.get("customer")),
            currency=_str(data, "currency"),
            cancel_at_period_end=bool(data.get("cancel_at_period_end")),
            current_period_end=min(ends) if ends else None,
            items=tuple(
                SubscriptionItem(
                    id=_str(i, "id"),
                    price_id=object_id(i.get("price")) or "",
                    quantity=int(i.get("quantity") or 0),
                )
                for i in items
            ),
            metadata=metadata_of(data),
        )

    def subscription_json(self, target: str) -> JSON | None:
        """The subscription as JSON, or ``None`` when Stripe has no such subscription."""
        return self._calls.read_or_missing(
            f"lookup of {target}", lambda: self._get(path("subscriptions", target))
        )

    def _subscription_items(self, subscription: JSON) -> list[JSON]:
        """All items: the embedded list holds the first page only."""
        embedded: JSON = subscription.get("items") or {}
        items: list[JSON] = list(embedded.get("data") or [])
        if not embedded.get("has_more"):
            return items
        target = _str(subscription, "id")

        def page(after: str | None) -> JSON:
            params: stripe.params.SubscriptionItemListParams = {
                "subscription": target,
                "limit": PAGE_SIZE,
            }
            if after:
                params["starting_after"] = after
            return self._get(path("subscription_items"), params)

        return list(self._pages(f"item list of {target}", page))

    # ------------------------------------------------------------ paging

    def _pages(
        self,
        what: str,
        fetch: Callable[[str | None], JSON],
        after: str | None = None,
    ) -> Iterator[JSON]:
        """Follow ``starting_after`` cursors until Stripe says there is no more."""
        while True:
            page = self._calls.read(what, partial(fetch, after))
            rows: list[JSON] = list(page.get("data") or [])
            yield from rows
            if not page.get("has_more") or not rows:
                return
            after = _str(rows[-1], "id")


def _capture_refunds(refunds: list[JSON], charge: JSON) -> list[JSON]:
    """The refunds made of what was captured (newest first).

    Capturing less than was authorized makes Stripe refund the rest at once: that refund
    is in the charge's list, but it gave back money never taken, so counted against the
    capture it would shrink what can still be refunded. It is the charge's first refund
    (nothing else can be refunded before the capture), for exactly the uncaptured amount.
    If the oldest refund does not look like that, nothing is dropped: counting too much
    only refuses more."""
    if not charge or not charge.get("captured") or not refunds:
        return refunds
    uncaptured = _int(charge, "amount") - _int(charge, "amount_captured")
    oldest = refunds[-1]
    if (
        uncaptured > 0
        and oldest.get("amount") == uncaptured
        and oldest.get("status") == ProviderStatus.SUCCEEDED
        and ACTION_ID_METADATA_KEY not in metadata_of(oldest)
    ):
        return refunds[:-1]
    return refunds


# ---------------------------------------------------------------- conversions

_STATUSES = {status.value: status for status in ProviderStatus}


def refund_status(value: object) -> ProviderStatus:
    """Stripe's refund status; anything unexpected reads as pending, never as succeeded."""
    return _STATUSES.get(str(value), ProviderStatus.PENDING)


def to_refund(data: JSON) -> ProviderRefund:
    """A refund object as the checks see it."""
    return ProviderRefund(
        id=_str(data, "id"),
        amount=_int(data, "amount"),
        currency=_str(data, "currency"),
        status=refund_status(data.get("status")),
        created=timestamp(data["created"]),
        metadata=metadata_of(data),
        failure_reason=data.get("failure_reason"),
        pending_reason=data.get("pending_reason"),
    )


def to_credit(data: JSON) -> ProviderCredit:
    """A customer balance transaction (negative amount: a credit to the customer)."""
    return ProviderCredit(
        id=_str(data, "id"),
        amount=_int(data, "amount"),
        currency=_str(data, "currency"),
        created=timestamp(data["created"]),
        metadata=metadata_of(data),
    )


def to_discount(promotion_code: JSON) -> ProviderDiscount:
    """A promotion code with its (expanded) coupon."""
    coupon = coupon_of(promotion_code)
    percent = coupon.get("percent_off")
    return ProviderDiscount(
        id=_str(promotion_code, "id"),
        coupon_id=_str(coupon, "id"),
        code=_str(promotion_code, "code"),
        # The protocol holds whole percents; Stripe allows two decimals (12.5 -> 12).
        percent_off=None if percent is None else int(percent),
        amount_off=coupon.get("amount_off"),
        currency=coupon.get("currency"),
        created=timestamp(promotion_code["created"]),
        metadata=metadata_of(promotion_code),
    )


def coupon_of(promotion_code: JSON) -> JSON:
    """The coupon a promotion code grants (``promotion.coupon``; ``coupon`` before 2025-09)."""
    promotion: JSON = promotion_code.get("promotion") or {}
    coupon = promotion.get("coupon") or promotion_code.get("coupon")
    if not isinstance(coupon, dict):
        raise TypeError(f"promotion code {promotion_code.get('id')} came without its coupon")
    return coupon


def timestamp(value: object) -> datetime:
    """A Stripe Unix timestamp as an aware UTC datetime."""
    if not isinstance(value, int):
        raise TypeError(f"expected a Unix timestamp, got {value!r}")
    return datetime.fromtimestamp(value, UTC)


def object_id(value: object) -> str | None:
    """The id of an expandable field, whether Stripe sent the id or the object."""
    if isinstance(value, dict):
        return _str(value, "id")
    return value if isinstance(value, str) else None


def metadata_of(data: JSON) -> dict[str, str]:
    """The object's metadata (Stripe sends ``null`` on some objects)."""
    return {str(k): str(v) for k, v in (data.get("metadata") or {}).items()}


def _str(data: JSON, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise TypeError(f"Stripe field {key!r} should be a string, got {value!r}")
    return value


def _int(data: JSON, key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Stripe field {key!r} should be an integer, got {value!r}")
    return value
