"""Past money actions written straight into an account, at the times they happened.

The read-only audit reads months of a shop's history; its tests and its benchmark need
such a history in seconds, with problems planted where they say. Made through the API it
would take minutes (a refund needs a customer, a payment and the refund) and every object
would carry the sandbox's present time. :func:`seed_history` instead writes the objects
Stripe would hold afterwards, built by the same :mod:`..shapes` builders the endpoints use
(so every answer about them has Stripe's shape), stamped with the times given.

The sequence: check every record (nothing is written when one is wrong); take them
oldest first (Stripe lists newest first by creation, and the sandbox's lists follow the
order objects were written); write each with what it needs (its customer, its payment,
its plan) made on first use; answer the ids, by the caller's labels and per record in the
order given. Nothing is announced: the past sends no webhooks and has no events, except
the ``customer.subscription.updated`` event a subscription change is known by (Stripe
keeps no other record of a change).

A record is a JSON object:

* every kind: ``kind``, ``created`` (Unix seconds: when the action happened), optional
  ``customer`` (a label: records with the same label share one new customer; a record
  without one gets a customer of its own), ``currency`` (default ``usd``), ``metadata``;
* ``refund``: ``amount``; ``payment`` (a label shared by the refunds of one payment;
  default: a payment of its own, paid an hour before its first refund),
  ``payment_amount`` (what it captured; default: the sum of its refunds), ``disputed``
  (the payment is disputed an hour after this refund), ``status`` (``succeeded``,
  ``pending`` or ``failed``), ``reason``;
* ``customer_credit``: ``amount``: what the customer was given (positive);
* ``discount``: ``percent_off``, or ``amount_off`` (with ``currency``); ``code`` (the
  promotion code's text; default generated) or ``promotion_code: false`` for a coupon
  alone; ``customer`` restricts the code to that customer; ``duration``
  (``once``, ``forever``, or ``repeating`` with ``duration_in_months``);
* ``subscription_cancel``: ``amount`` (the plan's monthly price; default 1000), ``quantity``,
  ``started`` (default 60 days before ``created``); canceled at ``created``;
* ``subscription_change``: ``amount`` and ``new_amount`` (monthly prices), ``quantity``
  and ``new_quantity`` (at least one of them differs), ``started``; changed at
  ``created`` by a request. Stripe lists the events of the last 30 days only, so a change
  seeded further back is there but out of the API's reach, as on Stripe.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import shapes
from .context import Ctx, diff, render
from .ids import new_code, new_id
from .money import SUPPORTED
from .resources.payments import paid_at

JSON = dict[str, Any]

KINDS = ("refund", "customer_credit", "discount", "subscription_cancel", "subscription_change")
DAY = 86400
# A payment made for a refund is paid this long before it; a dispute comes this long after.
_PAYMENT_LEAD = 3600
_DISPUTE_DELAY = 3600
_REFUND_STATUSES = ("succeeded", "pending", "failed")
_DURATIONS = ("once", "forever", "repeating")
_FIELDS: Mapping[str, frozenset[str]] = {
    "refund": frozenset({"amount", "payment", "payment_amount", "disputed", "status", "reason"}),
    "customer_credit": frozenset({"amount"}),
    "discount": frozenset(
        {"percent_off", "amount_off", "code", "promotion_code", "duration", "duration_in_months"}
    ),
    "subscription_cancel": frozenset({"amount", "quantity", "started"}),
    "subscription_change": frozenset(
        {"amount", "new_amount", "quantity", "new_quantity", "started"}
    ),
}
_COMMON = frozenset({"kind", "created", "customer", "currency", "metadata"})


def seed_history(ctx: Ctx, records: list[JSON]) -> JSON:
    """Write ``records`` (see the module's docstring) into ``ctx``'s account and mode.

    Answers ``{"customers": {label: id}, "payments": {label: {"payment_intent", "charge"}},
    "records": [{"kind", "id", ...}]}``: per record, in the order given, the id the
    provider reports it under (a refund's, a balance transaction's, a promotion code's or
    a lone coupon's, a canceled subscription's, a change's event), with the objects around
    it. Raises ``ValueError`` naming the first record that is wrong, before writing
    anything."""
    if not isinstance(records, list):
        raise ValueError("records must be a list")
    checked = [_checked(index, record) for index, record in enumerate(records)]
    writer = _Writer(ctx, _payment_amounts(checked))
    answers: list[JSON] = [{} for _ in checked]
    for index in sorted(range(len(checked)), key=lambda i: checked[i]["created"]):
        answers[index] = writer.write(checked[index])
    ctx.core.store.dirty = True
    return {
        "customers": dict(writer.customers),
        "payments": {
            label: {"payment_intent": pi["id"], "charge": ch["id"]}
            for label, (pi, ch) in writer.payments.items()
        },
        "records": answers,
    }


# -- checking --------------------------------------------------------------------------------


def _checked(index: int, record: object) -> JSON:
    """``record`` with its defaults, or ``ValueError`` saying what is wrong with it."""
    where = f"record {index}"
    if not isinstance(record, dict):
        raise ValueError(f"{where} must be an object")
    kind = record.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}")
    unknown = set(record) - _COMMON - _FIELDS[kind]
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)} for a {kind}")
    out = dict(record)
    out["created"] = _whole(record, "created", where, minimum=1)
    currency = str(record.get("currency") or "usd").lower()
    if currency not in SUPPORTED:
        raise ValueError(f"{where}: currency {currency!r} is not one Stripe supports")
    out["currency"] = currency
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise ValueError(f"{where}: metadata must map strings to strings")
    out["metadata"] = dict(metadata)
    for label in ("customer", "payment"):
        if label in record and not (isinstance(record[label], str) and record[label]):
            raise ValueError(f"{where}: {label} must be a non-empty label")
    if kind == "refund":
        _check_refund(out, record, where)
    elif kind == "customer_credit":
        out["amount"] = _whole(record, "amount", where, minimum=1)
    elif kind == "discount":
        _check_discount(out, record, where)
    else:
        _check_subscription(out, record, where)
    return out


def _check_refund(out: JSON, record: JSON, where: str) -> None:
    out["amount"] = _whole(record, "amount", where, minimum=1)
    if "payment_amount" in record:
        out["payment_amount"] = _whole(record, "payment_amount", where, minimum=1)
    status = record.get("status", "succeeded")
    if status not in _REFUND_STATUSES:
        raise ValueError(f"{where}: status must be one of {_REFUND_STATUSES}")
    out["status"] = status
    reason = record.get("reason")
    if reason not in (None, "duplicate", "fraudulent", "requested_by_customer"):
        raise ValueError(f"{where}: reason {reason!r} is not one of Stripe's")
    out["disputed"] = _flag(record, "disputed", where, default=False)


def _check_discount(out: JSON, record: JSON, where: str) -> None:
    percent = record.get("percent_off")
    if ("percent_off" in record) == ("amount_off" in record):
        raise ValueError(f"{where}: give exactly one of percent_off and amount_off")
    if "percent_off" in record:
        if isinstance(percent, bool) or not isinstance(percent, int | float):
            raise ValueError(f"{where}: percent_off must be a number")
        if not 0 < percent <= 100:
            raise ValueError(f"{where}: percent_off must be above 0 and at most 100")
        out["percent_off"] = float(percent)
    else:
        out["amount_off"] = _whole(record, "amount_off", where, minimum=1)
    out["promotion_code"] = _flag(record, "promotion_code", where, default=True)
    code = record.get("code")
    if code is not None:
        if not out["promotion_code"]:
            raise ValueError(f"{where}: a coupon alone has no code")
        if not (isinstance(code, str) and code.isascii() and code.replace("-", "").isalnum()):
            raise ValueError(f"{where}: code takes letters, digits and dashes only")
    if "customer" in record and not out["promotion_code"]:
        raise ValueError(f"{where}: only a promotion code is restricted to a customer")
    duration = record.get("duration", "once")
    if duration not in _DURATIONS:
        raise ValueError(f"{where}: duration must be one of {_DURATIONS}")
    out["duration"] = duration
    if duration == "repeating":
        out["duration_in_months"] = _whole(record, "duration_in_months", where, minimum=1)
    elif "duration_in_months" in record:
        raise ValueError(f"{where}: duration_in_months goes with a repeating duration")


def _check_subscription(out: JSON, record: JSON, where: str) -> None:
    out["started"] = (
        _whole(record, "started", where, minimum=1)
        if "started" in record
        else out["created"] - 60 * DAY
    )
    if out["started"] > out["created"]:
        raise ValueError(f"{where}: a subscription starts before it is canceled or changed")
    out["amount"] = _whole(record, "amount", where, minimum=0) if "amount" in record else 1000
    out["quantity"] = _whole(record, "quantity", where, minimum=1) if "quantity" in record else 1
    if record["kind"] == "subscription_change":
        out["new_amount"] = (
            _whole(record, "new_amount", where, minimum=0)
            if "new_amount" in record
            else out["amount"]
        )
        out["new_quantity"] = (
            _whole(record, "new_quantity", where, minimum=1)
            if "new_quantity" in record
            else out["quantity"]
        )
        if (out["new_amount"], out["new_quantity"]) == (out["amount"], out["quantity"]):
            raise ValueError(f"{where}: a change changes the price or the quantity")


def _whole(record: JSON, name: str, where: str, *, minimum: int) -> int:
    value = record.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{where}: {name} must be a whole number of at least {minimum}")
    return value


def _flag(record: JSON, name: str, where: str, *, default: bool) -> bool:
    value = record.get(name, default)
    if not isinstance(value, bool):
        raise ValueError(f"{where}: {name} must be true or false")
    return value


def _payment_amounts(records: list[JSON]) -> dict[str, int]:
    """What each labelled payment captured (as given, else the sum of its refunds), once
    the records are known to fit together: one currency per payment and per customer's
    balance, and no payment refunded beyond what it captured."""
    given: dict[str, int] = {}
    total: dict[str, int] = defaultdict(int)
    counted: dict[str, int] = defaultdict(int)
    currencies: dict[str, str] = {}
    for record in records:
        kind, currency = record["kind"], record["currency"]
        shared = {"refund": "payment", "customer_credit": "customer"}.get(kind)
        label = record.get(shared) if shared else None
        if shared is None or label is None:
            continue
        known = currencies.setdefault(f"{shared} {label!r}", currency)
        if known != currency:
            raise ValueError(f"{shared} {label!r} is in {known}, not {currency}")
        if kind != "refund":
            continue
        total[label] += record["amount"]
        if record["status"] != "failed":
            counted[label] += record["amount"]
        amount = record.get("payment_amount")
        if amount is not None and given.setdefault(label, amount) != amount:
            raise ValueError(f"payment {label!r} is given two different amounts")
    for label, amount in given.items():
        if counted[label] > amount:
            raise ValueError(f"refunds of payment {label!r} add up to more than it captured")
    return {label: given.get(label, refunds) for label, refunds in total.items()}


# -- writing ---------------------------------------------------------------------------------


@dataclass
class _Writer:
    """Writes checked records oldest first, making customers, payments and plans once."""

    ctx: Ctx
    payment_amounts: dict[str, int]
    customers: dict[str, str] = field(default_factory=dict)
    payments: dict[str, tuple[JSON, JSON]] = field(default_factory=dict)
    # What the counted refunds of each charge add up to, so no write scans all refunds.
    refunded: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    prices: dict[tuple[int, str], JSON] = field(default_factory=dict)
    product: JSON | None = None

    def write(self, record: JSON) -> JSON:
        kind = record["kind"]
        if kind == "refund":
            return self._refund(record)
        if kind == "customer_credit":
            return self._credit(record)
        if kind == "discount":
            return self._discount(record)
        if kind == "subscription_cancel":
            return self._cancellation(record)
        return self._change(record)

    def _customer(self, record: JSON, since: int) -> str:
        """The record's customer, made (as of ``since``) when its label is new."""
        label = record.get("customer")
        if label is not None and label in self.customers:
            return self.customers[label]
        customer = shapes.customer(
            created=since,
            livemode=self.ctx.livemode,
            email=None,
            name=None,
            description=None,
            phone=None,
            metadata={},
        )
        self.ctx.space.put("customers", customer)
        if label is not None:
            self.customers[label] = customer["id"]
        return str(customer["id"])

    def _refund(self, record: JSON) -> JSON:
        ctx, created, amount = self.ctx, record["created"], record["amount"]
        label = record.get("payment")
        if label is not None and label in self.payments:
            pi, ch = self.payments[label]
        else:
            captured = self.payment_amounts[label] if label is not None else amount
            pi, ch = paid_at(
                ctx,
                created=created - _PAYMENT_LEAD,
                amount=captured,
                currency=record["currency"],
                customer_id=self._customer(record, created - _PAYMENT_LEAD),
            )
            if label is not None:
                self.payments[label] = (pi, ch)
        refund = shapes.refund(
            created=created,
            charge_obj=ch,
            amount=amount,
            reason=record.get("reason"),
            metadata=record["metadata"],
            status=record["status"],
        )
        if record["status"] == "pending":
            refund["pending_reason"] = "processing"
        elif record["status"] == "failed":
            refund["failure_reason"] = "expired_or_canceled_card"
            refund["failure_balance_transaction"] = new_id("txn")
        ctx.space.put("refunds", refund)
        if record["status"] != "failed":
            self.refunded[ch["id"]] += amount
            ch["amount_refunded"] = self.refunded[ch["id"]]
            ch["refunded"] = ch["amount_refunded"] >= ch["amount_captured"]
        if record["disputed"] and not ch["disputed"]:
            disputed_at = created + _DISPUTE_DELAY
            dispute = shapes.dispute(
                created=disputed_at,
                livemode=ctx.livemode,
                charge_obj=ch,
                reason="fraudulent",
                due_by=disputed_at + 7 * DAY,
            )
            ctx.space.put("disputes", dispute)
            ch["disputed"] = True
        return {
            "kind": "refund",
            "id": refund["id"],
            "payment_intent": pi["id"],
            "charge": ch["id"],
            "customer": ch["customer"],
        }

    def _credit(self, record: JSON) -> JSON:
        customer_id = self._customer(record, record["created"])
        customer = self.ctx.space.get("customers", customer_id)
        assert customer is not None
        customer["currency"] = record["currency"]
        customer["balance"] = int(customer["balance"]) - record["amount"]
        transaction = shapes.customer_balance_transaction(
            created=record["created"],
            livemode=self.ctx.livemode,
            customer_id=customer_id,
            amount=-record["amount"],
            currency=record["currency"],
            ending_balance=customer["balance"],
            description=None,
            metadata=record["metadata"],
        )
        self.ctx.space.put("customer_balance_transactions", transaction)
        return {"kind": "customer_credit", "id": transaction["id"], "customer": customer_id}

    def _discount(self, record: JSON) -> JSON:
        ctx, created = self.ctx, record["created"]
        amount_off = record.get("amount_off")
        coupon = shapes.coupon(
            coupon_id=new_code(8),
            created=created,
            livemode=ctx.livemode,
            percent_off=record.get("percent_off"),
            amount_off=amount_off,
            currency=record["currency"] if amount_off is not None else None,
            duration=record["duration"],
            duration_in_months=record.get("duration_in_months"),
            max_redemptions=None,
            redeem_by=None,
            name=None,
            metadata=record["metadata"],
        )
        ctx.space.put("coupons", coupon)
        if not record["promotion_code"]:
            return {"kind": "discount", "id": coupon["id"], "coupon": coupon["id"]}
        customer_id = self._customer(record, created) if "customer" in record else None
        code = shapes.promotion_code(
            created=created,
            livemode=ctx.livemode,
            code=record.get("code") or new_code(8),
            coupon_id=coupon["id"],
            customer_id=customer_id,
            active=True,
            expires_at=None,
            max_redemptions=None,
            metadata=record["metadata"],
            restrictions={
                "first_time_transaction": False,
                "minimum_amount": None,
                "minimum_amount_currency": None,
            },
        )
        ctx.space.put("promotion_codes", code)
        return {
            "kind": "discount",
            "id": code["id"],
            "coupon": coupon["id"],
            "customer": customer_id,
        }

    def _cancellation(self, record: JSON) -> JSON:
        created = record["created"]
        subscription = self._subscription(record, record["amount"], at=created)
        subscription.update(
            status="canceled",
            canceled_at=created,
            ended_at=created,
            cancellation_details={
                "comment": None,
                "feedback": None,
                "reason": "cancellation_requested",
            },
        )
        self.ctx.space.put("subscriptions", subscription)
        return {
            "kind": "subscription_cancel",
            "id": subscription["id"],
            "customer": subscription["customer"],
        }

    def _change(self, record: JSON) -> JSON:
        ctx, created = self.ctx, record["created"]
        subscription = self._subscription(record, record["amount"], at=created)
        before = render(ctx, subscription)
        item = subscription["items"]["data"][0]
        price = render(ctx, self._price(record["new_amount"], record["currency"], record))
        item.update(price=price, plan=shapes.plan_from_price(price))
        item["quantity"] = record["new_quantity"]
        event = ctx.event(
            "customer.subscription.updated",
            subscription,
            diff(before, render(ctx, subscription)),
            created=created,
        )
        # Made by a request (the merchant's), as a change through the API or dashboard is.
        event["request"] = {"id": new_id("req"), "idempotency_key": None}
        # It is still running: its period is today's, so the clock has nothing to roll.
        start, end = _period_around(record["started"], ctx.now())
        item.update(current_period_start=start, current_period_end=end)
        ctx.space.put("subscriptions", subscription)
        ctx.space.put("events", event)
        return {
            "kind": "subscription_change",
            "id": event["id"],
            "subscription": subscription["id"],
            "customer": subscription["customer"],
        }

    def _subscription(self, record: JSON, amount: int, *, at: int) -> JSON:
        """A monthly subscription started at ``record["started"]``, in its period around
        ``at`` (not yet stored)."""
        subscription_id = new_id("sub")
        price = render(self.ctx, self._price(amount, record["currency"], record))
        item = shapes.subscription_item(
            created=record["started"],
            subscription_id=subscription_id,
            price_obj=price,
            quantity=record["quantity"],
            period=_period_around(record["started"], at),
        )
        return shapes.subscription(
            subscription_id=subscription_id,
            created=record["started"],
            livemode=self.ctx.livemode,
            customer_id=self._customer(record, record["started"]),
            currency=record["currency"],
            items=[item],
            status="active",
            trial=None,
            cancel_at_period_end=False,
            description=None,
            metadata=copy.deepcopy(record["metadata"]),
        )

    def _price(self, amount: int, currency: str, record: JSON) -> JSON:
        """The monthly price of ``amount``, made once (with its product) on first use."""
        known = self.prices.get((amount, currency))
        if known is not None:
            return known
        if self.product is None:
            self.product = shapes.product(
                created=record["started"], livemode=self.ctx.livemode, name="Plan", metadata={}
            )
            self.ctx.space.put("products", self.product)
        price = shapes.price(
            created=record["started"],
            livemode=self.ctx.livemode,
            product_id=self.product["id"],
            currency=currency,
            unit_amount=amount,
            interval="month",
            interval_count=1,
            metadata={},
        )
        self.ctx.space.put("prices", price)
        self.prices[(amount, currency)] = price
        return price


def _period_around(started: int, moment: int) -> tuple[int, int]:
    """The monthly billing period, counted from ``started``, that holds ``moment``."""
    start, end = started, shapes.add_interval(started, "month", 1)
    while end <= moment:
        start, end = end, shapes.add_interval(end, "month", 1)
    return start, end
