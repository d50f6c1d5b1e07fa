"""A Stripe account's past money actions for the read-only audit, one request per page.

:class:`StripeHistoryReader` keeps the contract of :mod:`integrations.history` on a
restricted key that needs nothing but read permissions (:data:`READ_PERMISSIONS`). Every
call of ``read_page`` sends exactly one GET request and answers the records it gave and
the cursor of the next call, so the scan that paces the calls paces the requests; a page
may hold no record (a step that lists what the next calls read) while its cursor goes on.
Cursors are compact JSON that only this reader reads; a 429 raises
:class:`~integrations.provider.Throttled` with Stripe's ``Retry-After`` and the same
cursor then asks again for the same page.

The streams, each read newest first as Stripe lists:

* ``refunds``: ``GET /v1/refunds`` created in the window with each refund's charge
  expanded, which gives the payment's captured amount, whether it is disputed and its
  customer in the same request. A succeeded refund with no balance transaction gave back
  an authorization, not money (Stripe refunds that way what a partial capture leaves):
  it is no money action and is left out.
* ``customer_credits``: Stripe lists no account's balance transactions, only a
  customer's. Customers are listed (``GET /v1/customers``, a page of up to 100 per call)
  and each one's balance transactions read (``GET /v1/customers/{id}/balance_transactions``,
  one call per page of them, stopping at the window's start). A customer whose
  ``currency`` is unset never had a balance transaction (the first one sets it) and is not
  asked. The cursor holds the customers of the page still to read, the last transaction
  read and where the next page of customers starts. A credit is a transaction that owes
  the customer money (a negative amount) and that someone gave: an ``adjustment``, a
  credit note or an ``initial`` balance; what invoices leave on a balance (overpaid,
  voided) is not.
* ``discounts``: promotion codes created in the window, each with its coupon expanded
  (``GET /v1/promotion_codes``): a code is the discount its coupon grants, to its
  customer if it is restricted to one. Then coupons created in the window
  (``GET /v1/coupons``), and for each, one call asking whether a promotion code grants it
  (``GET /v1/promotion_codes?coupon=...``): a coupon counts on its own only when none
  does (it was applied directly), so no discount is counted twice. The cursor holds the
  coupons of the page still to ask about.
* ``subscriptions``: cancellations, then changes. Stripe filters subscriptions by when
  they were created, not canceled, so every canceled subscription of the account is read
  (``GET /v1/subscriptions?status=canceled``) and those whose ``canceled_at`` falls in the
  window kept. Changes are ``customer.subscription.updated`` events in the window
  (``GET /v1/events``) that changed the items' prices or quantities, a scheduled
  cancellation, discounts, a pause or a trial (not a renewal, which moves the billing
  period only).

Beyond reach: changes older than 30 days (Stripe lists events that far back only);
credits of deleted customers (Stripe lists them no more); a cancellation scheduled for
the period's end is a change when asked for and a cancellation once it happens.

Nothing here writes to Stripe or imports ``app``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from integrations.history import HistoryPage, PastMoneyAction
from integrations.provider import ACTION_ID_METADATA_KEY, ActionKind, ProviderStatus

from ._client import stripe_client
from ._errors import Calls, check_key, mask_key
from ._facts import PAGE_SIZE, _int, _str, coupon_of, metadata_of, object_id, timestamp

__all__ = [
    "LIVE_READS_PER_SECOND",
    "READ_PERMISSIONS",
    "STREAMS",
    "TEST_READS_PER_SECOND",
    "StripeHistoryReader",
]

JSON = dict[str, Any]

STREAMS = ("refunds", "customer_credits", "discounts", "subscriptions")

# Stripe's documented limits on read requests per second for one account.
TEST_READS_PER_SECOND = 25.0
LIVE_READS_PER_SECOND = 100.0

READ_PERMISSIONS = (
    "Read: Refunds, Charges, Customers, Coupons, Promotion codes, Subscriptions, Events"
)

# Balance transactions that someone gave the customer (the rest follow from invoices).
_GIVEN_CREDITS = frozenset({"adjustment", "credit_note", "initial"})
# What a merchant changes on a subscription (a renewal moves only the periods);
# ``discount`` is the field before ``discounts`` replaced it.
_CHANGES = (
    "cancel_at_period_end",
    "cancel_at",
    "discounts",
    "discount",
    "pause_collection",
    "trial_end",
)

Cursor = dict[str, Any]


class StripeHistoryReader:
    """Past refunds, credits, discounts and subscription changes of one Stripe account and
    mode, read with a restricted key (a secret key or a key of the other mode is refused,
    as the adapter refuses them)."""

    provider: str = "stripe"
    streams: tuple[str, ...] = STREAMS
    requests_per_second: float

    def __init__(
        self,
        api_key: str,
        *,
        livemode: bool,
        api_base: str | None = None,
        timeout_seconds: float = 20.0,
    ) -> None:
        check_key(api_key, livemode=livemode)
        self.livemode = livemode
        self.requests_per_second = LIVE_READS_PER_SECOND if livemode else TEST_READS_PER_SECOND
        self._masked_key = mask_key(api_key)
        # Retries are the scan's to decide (after Retry-After), never the SDK's.
        self._client = stripe_client(api_key, api_base=api_base, timeout_seconds=timeout_seconds)
        self._calls = Calls(api_key)
        self._readers: Mapping[str, Callable[[int, Cursor], HistoryPage]] = {
            "refunds": self._refunds,
            "customer_credits": self._customer_credits,
            "discounts": self._discounts,
            "subscriptions": self._subscriptions,
        }

    def __repr__(self) -> str:
        mode = "live" if self.livemode else "test"
        return f"StripeHistoryReader({self._masked_key}, {mode})"

    def read_page(self, stream: str, *, since: datetime, cursor: str | None) -> HistoryPage:
        """The page of ``stream`` at ``cursor`` (``None``: its first) of what was created at
        or after ``since``, and the cursor after it (``None``: the stream is read).

        One GET request. Raises :class:`~integrations.provider.Throttled` on a 429,
        :class:`~integrations.provider.PermissionDenied` when the key may not read what the
        stream needs, another :class:`~integrations.provider.ProviderError` when Stripe
        could not answer, and ``ValueError`` for a stream or cursor that is not this
        reader's."""
        read = self._readers.get(stream)
        if read is None:
            raise ValueError(f"Stripe's history has no stream {stream!r}; it has {STREAMS}")
        if since.tzinfo is None:
            raise ValueError("since must be an aware datetime")
        # Stripe's times are whole seconds: created >= since is created >= ceil(since).
        return read(math.ceil(since.timestamp()), _position(cursor))

    # ------------------------------------------------------------ refunds

    def _refunds(self, since: int, at: Cursor) -> HistoryPage:
        params: JSON = {"limit": PAGE_SIZE, "created": {"gte": since}, "expand": ["data.charge"]}
        _starting_after(params, at.get("after"))
        rows, more = self._list("refund list", "/v1/refunds", params)
        records = tuple(record for record in map(_refund, rows) if record is not None)
        return HistoryPage(records, _cursor({"after": _last(rows)}) if more and rows else None)

    # ------------------------------------------------------------ customer credits

    def _customer_credits(self, since: int, at: Cursor) -> HistoryPage:
        if "waiting" not in at:
            return self._customers(at.get("customers_after"))
        waiting: list[str] = _nonempty_list(at, "waiting", str)
        customer, following = waiting[0], at.get("following")
        params: JSON = {"limit": PAGE_SIZE}
        _starting_after(params, at.get("after"))
        found = self._calls.read_or_missing(
            f"balance transaction list of {customer}",
            lambda: self._client.raw_request(
                "get", f"/v1/customers/{customer}/balance_transactions", **params
            ),
        )
        if found is None:  # deleted since it was listed: Stripe keeps no credits of it
            return HistoryPage((), _next_customer(waiting[1:], following))
        rows, more = _rows(found.data)
        in_window = [row for row in rows if _int(row, "created") >= since]
        records = tuple(record for record in map(_credit, in_window) if record is not None)
        if more and len(in_window) == len(rows):
            return HistoryPage(
                records,
                _cursor({"waiting": waiting, "after": _last(rows), "following": following}),
            )
        return HistoryPage(records, _next_customer(waiting[1:], following))

    def _customers(self, after: str | None) -> HistoryPage:
        """A page of customers: those who may have balance transactions are read next."""
        params: JSON = {"limit": PAGE_SIZE}
        _starting_after(params, after)
        rows, more = self._list("customer list", "/v1/customers", params)
        waiting = [_str(row, "id") for row in rows if row.get("currency")]
        return HistoryPage((), _next_customer(waiting, _last(rows) if more and rows else None))

    # ------------------------------------------------------------ discounts

    def _discounts(self, since: int, at: Cursor) -> HistoryPage:
        if "unasked" in at:
            return self._lone_coupon(_nonempty_list(at, "unasked", dict), at.get("following"))
        if "coupons_after" in at:
            return self._coupons(since, at["coupons_after"])
        params: JSON = {
            "limit": PAGE_SIZE,
            "created": {"gte": since},
            "expand": ["data.promotion.coupon"],
        }
        _starting_after(params, at.get("codes_after"))
        rows, more = self._list("promotion code list", "/v1/promotion_codes", params)
        following = {"codes_after": _last(rows)} if more and rows else {"coupons_after": None}
        return HistoryPage(tuple(map(_promotion_code, rows)), _cursor(following))

    def _coupons(self, since: int, after: str | None) -> HistoryPage:
        """A page of coupons: each is asked about next (see :meth:`_lone_coupon`)."""
        params: JSON = {"limit": PAGE_SIZE, "created": {"gte": since}}
        _starting_after(params, after)
        rows, more = self._list("coupon list", "/v1/coupons", params)
        unasked = [_coupon_summary(row) for row in rows]
        return HistoryPage((), _next_coupon(unasked, _last(rows) if more and rows else None))

    def _lone_coupon(self, unasked: list[JSON], following: str | None) -> HistoryPage:
        """The first coupon of ``unasked`` when no promotion code grants it (a code that
        does was read with the codes: all are created after their coupon, so in the
        window too)."""
        coupon = unasked[0]
        rows, _more = self._list(
            f"promotion code list of coupon {coupon['id']}",
            "/v1/promotion_codes",
            {"coupon": coupon["id"], "limit": 1},
        )
        records = () if rows else (_coupon(coupon),)
        return HistoryPage(records, _next_coupon(unasked[1:], following))

    # ------------------------------------------------------------ subscriptions

    def _subscriptions(self, since: int, at: Cursor) -> HistoryPage:
        if "events_after" in at:
            return self._changes(since, at["events_after"])
        params: JSON = {"limit": PAGE_SIZE, "status": "canceled"}
        _starting_after(params, at.get("canceled_after"))
        rows, more = self._list("canceled subscription list", "/v1/subscriptions", params)
        records = tuple(
            _cancellation(row)
            for row in rows
            if isinstance(row.get("canceled_at"), int) and row["canceled_at"] >= since
        )
        following = {"canceled_after": _last(rows)} if more and rows else {"events_after": None}
        return HistoryPage(records, _cursor(following))

    def _changes(self, since: int, after: str | None) -> HistoryPage:
        params: JSON = {
            "limit": PAGE_SIZE,
            "type": "customer.subscription.updated",
            "created": {"gte": since},
        }
        _starting_after(params, after)
        rows, more = self._list("subscription change list", "/v1/events", params)
        records = tuple(record for record in map(_change, rows) if record is not None)
        return HistoryPage(
            records, _cursor({"events_after": _last(rows)}) if more and rows else None
        )

    # ------------------------------------------------------------ requests

    def _list(self, what: str, path: str, params: JSON) -> tuple[list[JSON], bool]:
        """One GET of a Stripe list: its objects and whether there are more.

        The answer is taken as plain JSON: building the SDK's objects for a page of
        refunds with their charges would cost more than the request."""
        response = self._calls.read(what, lambda: self._client.raw_request("get", path, **params))
        return _rows(response.data)


# ---------------------------------------------------------------- cursors


def _cursor(position: Cursor) -> str:
    return json.dumps(position, separators=(",", ":"), sort_keys=True)


def _position(cursor: str | None) -> Cursor:
    if cursor is None:
        return {}
    try:
        position = json.loads(cursor)
    except ValueError:
        position = None
    if not isinstance(position, dict):
        raise ValueError("that is not a cursor of Stripe's history")
    return position


def _next_customer(waiting: list[str], following: str | None) -> str | None:
    """The cursor that reads the next waiting customer, else the next page of customers."""
    if waiting:
        return _cursor({"waiting": waiting, "following": following})
    return _cursor({"customers_after": following}) if following else None


def _next_coupon(unasked: list[JSON], following: str | None) -> str | None:
    """The cursor that asks about the next coupon, else reads the next page of coupons."""
    if unasked:
        return _cursor({"unasked": unasked, "following": following})
    return _cursor({"coupons_after": following}) if following else None


def _nonempty_list(at: Cursor, key: str, kind: type) -> list[Any]:
    found = at.get(key)
    if not (isinstance(found, list) and found and all(isinstance(x, kind) for x in found)):
        raise ValueError("that is not a cursor of Stripe's history")
    return found


def _starting_after(params: JSON, after: object) -> None:
    if after is not None:
        if not isinstance(after, str):
            raise ValueError("that is not a cursor of Stripe's history")
        params["starting_after"] = after


def _rows(body: object) -> tuple[list[JSON], bool]:
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise TypeError("Stripe answered a list request with something else than a list")
    return [row for row in body["data"] if isinstance(row, dict)], bool(body.get("has_more"))


def _last(rows: list[JSON]) -> str:
    return _str(rows[-1], "id")


# ---------------------------------------------------------------- records


def _action_id(*sources: JSON) -> str | None:
    """Caseward's action id in the metadata of the first of ``sources`` that has it."""
    for source in sources:
        found = metadata_of(source).get(ACTION_ID_METADATA_KEY)
        if found:
            return found
    return None


def _optional_int(data: JSON, key: str) -> int | None:
    return None if data.get(key) is None else _int(data, key)


def _refund(row: JSON) -> PastMoneyAction | None:
    if row.get("status") == ProviderStatus.SUCCEEDED and row.get("balance_transaction") is None:
        return None  # an authorization released, no money returned
    charge = row.get("charge")
    charge = charge if isinstance(charge, dict) else {}
    reason = row.get("reason")
    return PastMoneyAction(
        provider="stripe",
        kind=ActionKind.REFUND,
        id=_str(row, "id"),
        created=timestamp(row.get("created")),
        customer=object_id(row.get("customer")) or object_id(charge.get("customer")),
        amount=_int(row, "amount"),
        currency=_str(row, "currency"),
        payment=object_id(row.get("payment_intent")) or object_id(row.get("charge")),
        payment_amount=_int(charge, "amount_captured") if charge else None,
        payment_disputed=bool(charge.get("disputed")),
        status=_str(row, "status"),
        caseward_action_id=_action_id(row),
        detail={"reason": reason} if isinstance(reason, str) else {},
    )


def _credit(row: JSON) -> PastMoneyAction | None:
    amount = _int(row, "amount")
    if amount >= 0 or row.get("type") not in _GIVEN_CREDITS:
        return None
    return PastMoneyAction(
        provider="stripe",
        kind=ActionKind.CUSTOMER_CREDIT,
        id=_str(row, "id"),
        created=timestamp(row.get("created")),
        customer=object_id(row.get("customer")),
        amount=-amount,
        currency=_str(row, "currency"),
        caseward_action_id=_action_id(row),
        detail={"type": _str(row, "type")},
    )


def _promotion_code(row: JSON) -> PastMoneyAction:
    coupon = coupon_of(row)
    return _discount(
        coupon,
        record_id=_str(row, "id"),
        created=row.get("created"),
        customer=object_id(row.get("customer")),
        status="active" if row.get("active") else "inactive",
        caseward_action_id=_action_id(row, coupon),
        detail={"code": _str(row, "code"), "coupon": _str(coupon, "id")},
    )


def _coupon_summary(coupon: JSON) -> JSON:
    """What a coupon's record needs, kept in the cursor until it is asked about."""
    summary = {
        key: coupon[key]
        for key in ("id", "created", "percent_off", "amount_off", "currency", "duration")
        if coupon.get(key) is not None
    }
    action_id = _action_id(coupon)
    if action_id:
        summary["metadata"] = {ACTION_ID_METADATA_KEY: action_id}
    return summary


def _coupon(coupon: JSON) -> PastMoneyAction:
    return _discount(
        coupon,
        record_id=_str(coupon, "id"),
        created=coupon.get("created"),
        customer=None,
        status=None,
        caseward_action_id=_action_id(coupon),
        detail={"coupon": _str(coupon, "id")},
    )


def _discount(
    coupon: JSON,
    *,
    record_id: str,
    created: object,
    customer: str | None,
    status: str | None,
    caseward_action_id: str | None,
    detail: dict[str, str],
) -> PastMoneyAction:
    """A discount record with what ``coupon`` grants."""
    percent = coupon.get("percent_off")
    duration = coupon.get("duration")
    if isinstance(duration, str):
        detail["duration"] = duration
    return PastMoneyAction(
        provider="stripe",
        kind=ActionKind.DISCOUNT,
        id=record_id,
        created=timestamp(created),
        customer=customer,
        amount=_optional_int(coupon, "amount_off"),
        currency=coupon.get("currency") if isinstance(coupon.get("currency"), str) else None,
        # Whole percents, as the protocol holds them (Stripe allows two decimals).
        percent_off=None if percent is None else int(percent),
        status=status,
        caseward_action_id=caseward_action_id,
        detail=detail,
    )


def _plan(subscription: JSON) -> str:
    """The subscription's prices in words: their nicknames, else their ids."""
    items: JSON = subscription.get("items") or {}
    names = []
    for item in items.get("data") or []:
        price: JSON = item.get("price") or {}
        names.append(str(price.get("nickname") or price.get("id") or ""))
    return ", ".join(name for name in names if name)


def _cancellation(subscription: JSON) -> PastMoneyAction:
    details: JSON = subscription.get("cancellation_details") or {}
    detail = {"plan": _plan(subscription)}
    if isinstance(details.get("reason"), str):
        detail["reason"] = details["reason"]
    return PastMoneyAction(
        provider="stripe",
        kind=ActionKind.SUBSCRIPTION_CANCEL,
        id=_str(subscription, "id"),
        created=timestamp(subscription.get("canceled_at")),
        customer=object_id(subscription.get("customer")),
        amount=None,
        currency=_str(subscription, "currency"),
        status=_str(subscription, "status"),
        caseward_action_id=_action_id(subscription),
        detail=detail,
    )


def _change(event: JSON) -> PastMoneyAction | None:
    """The change an update event records, or ``None`` when it moved no money terms (a
    renewal moves the periods only; metadata, a description)."""
    data: JSON = event.get("data") or {}
    subscription: JSON = data.get("object") or {}
    previous: JSON = data.get("previous_attributes") or {}
    changed = [name for name in _CHANGES if name in previous]
    if "items" in previous and _lines(previous["items"]) != _lines(subscription.get("items")):
        changed.insert(0, "items")
    if not changed:
        return None
    # Our id counts only when this very change wrote it (metadata outlives a change).
    ours = ACTION_ID_METADATA_KEY in (previous.get("metadata") or {})
    return PastMoneyAction(
        provider="stripe",
        kind=ActionKind.SUBSCRIPTION_CHANGE,
        id=_str(event, "id"),
        created=timestamp(event.get("created")),
        customer=object_id(subscription.get("customer")),
        amount=None,
        currency=_str(subscription, "currency"),
        status=_str(subscription, "status"),
        caseward_action_id=_action_id(subscription) if ours else None,
        detail={"plan": _plan(subscription), "changed": ", ".join(changed)},
    )


def _lines(items: object) -> list[tuple[str | None, object]]:
    """A subscription's items as (price, quantity), which a change moves and a renewal
    does not."""
    data = items.get("data") if isinstance(items, dict) else None
    return [
        (object_id(item.get("price")), item.get("quantity"))
        for item in data or []
        if isinstance(item, dict)
    ]
