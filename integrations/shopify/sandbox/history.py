"""A shop's past money actions, seeded in one call: for the read-only audit's tests and
its benchmark.

Caseward's audit reads a window of a shop's history (refunds on orders, store credits,
discount codes) and looks for problems in it. Its tests need histories with problems
planted at known places, and its benchmark a history of ten thousand records, made in
well under a minute; seeding through the Admin API one mutation at a time would take
longer than the scan it measures. :func:`seed_history` writes a whole history into the
shop's state under the store lock instead, exactly as the mutations would have left it
(refund transactions against the order's payment, store credit balances in time order,
the order's ``updatedAt`` moved by its refunds), at the times the caller gives.

A history is JSON (the control endpoint takes the same), times as Unix seconds or ISO
8601, amounts as integer minor units of the shop's currency unless a ``currency`` says::

    {
      "customers": [{"ref": "maya", "email": "maya@example.com", "first_name": "Maya"}],
      "orders": [{"ref": "o1", "customer": "maya", "created_at": 1767225600,
                  "total": 9600, "disputes": ["NEEDS_RESPONSE"],
                  "refunds": [{"ref": "r1", "created_at": 1767312000, "amount": 4800,
                               "note": "...", "status": "SUCCESS"}]}],
      "store_credits": [{"ref": "s1", "customer": "maya", "amount": 500,
                         "created_at": 1767312000, "expires_at": null}],
      "discounts": [{"ref": "d1", "code": "SORRY50", "created_at": 1767312000,
                     "percentage": 0.5, "customers": ["maya"]}],
      "generate": {"records": 10000, "start": 1759536000, "end": 1767312000, "seed": 7}
    }

A ``customer`` is a ``ref`` given in the same history or an existing customer's gid. An
order's ``total`` is one line (or give ``lines`` as :meth:`seed_order` takes them); an
order given by its ``id`` (an existing order's gid) gets the ``refunds`` and
``disputes`` given, later ones moving its ``updatedAt`` as they would at Shopify. A
refund's ``status`` is its transaction's (``SUCCESS``, ``PENDING``, ``FAILURE``). A
discount is a ``percentage`` (0 < p <= 1, Shopify's scale), an ``amount`` off, or
``free_shipping``; ``customers`` restricts it (absent: every buyer). ``generate`` adds a
clean history of that many records spread over ``[start, end)``
(:func:`generated_history`). What comes back names every record given a ``ref`` by its
gid, and counts what was made.

Shopify lists only the orders of the last 60 days to an app without ``read_all_orders``
(so does the sandbox): a longer window needs a shop created with that scope.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .state import (
    Customer,
    Discount,
    Dispute,
    LineItem,
    Order,
    Refund,
    Shop,
    Store,
    StoreCreditAccount,
    StoreCreditTransaction,
    Transaction,
    gid,
    parse_gid,
    parse_iso,
)

JSON = dict[str, Any]

REFUND_STATUSES = ("SUCCESS", "PENDING", "FAILURE")
DISPUTE_STATUSES = ("ACCEPTED", "LOST", "NEEDS_RESPONSE", "PREVENTED", "UNDER_REVIEW", "WON")
# What a generated history is made of, out of every four records.
_GENERATED_REFUNDS, _GENERATED_CREDITS = 2, 1


class HistoryError(ValueError):
    """A history that cannot be seeded as given (nothing of it is kept)."""


@dataclass
class SeededHistory:
    """The gids of the records given a ``ref``, and how many of each kind were made."""

    refs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("customers", "orders", "refunds", "store_credits", "discounts"), 0
        )
    )

    def to_json(self) -> JSON:
        return {"refs": dict(self.refs), "counts": dict(self.counts)}


def moment(value: object, what: str) -> float:
    """Unix seconds from seconds, an ISO 8601 string or a datetime."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_iso(value)
        except ValueError:
            pass
    raise HistoryError(f"{what} must be a time (Unix seconds or ISO 8601), not {value!r}")


def _amount(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise HistoryError(f"{what} must be a positive amount in minor units, not {value!r}")
    return value


def _one_of(value: object, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise HistoryError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")
    assert isinstance(value, str)
    return value


class _Seeder:
    """Writes one history into one shop; every check is made before anything is kept."""

    def __init__(self, store: Store, shop: Shop, now: float) -> None:
        self.store = store
        self.shop = shop
        self.now = now
        self.done = SeededHistory()
        self.customers: dict[str, int] = {}
        self.codes = {d.code.lower() for d in shop.discounts.values()}
        self.names: set[str] = set()
        # Generated records are counted but not named in what comes back.
        self.reporting = True
        # Records are built first and kept together at the end, so a refused history
        # leaves the shop as it was.
        self.new_customers: list[Customer] = []
        self.new_orders: list[Order] = []
        # Existing orders are changed on copies that replace them when kept.
        self.changed_orders: dict[int, Order] = {}
        self.new_credits: list[tuple[int, str, StoreCreditTransaction]] = []
        self.new_discounts: list[Discount] = []

    def keep_ref(self, item: Mapping[str, Any], value: str) -> None:
        ref = item.get("ref")
        if ref is None:
            return
        if not isinstance(ref, str) or ref in self.names:
            raise HistoryError(f"ref {ref!r} is not a new name")
        self.names.add(ref)
        if self.reporting:
            self.done.refs[ref] = value

    def customer(self, named: object, what: str) -> int:
        if isinstance(named, str) and named in self.customers:
            return self.customers[named]
        number = parse_gid(named, "Customer")
        if number is not None and number in self.shop.customers:
            return number
        raise HistoryError(f"{what}: no customer {named!r} in {self.shop.domain}")

    # -- records ---------------------------------------------------------------------------

    def add_customer(self, item: Mapping[str, Any]) -> None:
        created = moment(item.get("created_at", self.now), "a customer's created_at")
        customer = Customer(
            id=self.store.next_id(),
            email=item.get("email"),
            first_name=item.get("first_name"),
            last_name=item.get("last_name"),
            phone=None,
            created_at=created,
            updated_at=created,
        )
        ref = item.get("ref")
        if isinstance(ref, str):
            self.customers[ref] = customer.id
        self.keep_ref(item, gid("Customer", customer.id))
        self.new_customers.append(customer)
        self.done.counts["customers"] += 1

    def add_order(self, item: Mapping[str, Any]) -> None:
        if "id" in item:
            self._change_order(item)
            return
        created = moment(item.get("created_at"), "an order's created_at")
        customer = item.get("customer")
        customer_id = None if customer is None else self.customer(customer, "an order")
        lines = item.get("lines") or [{"title": "Item", "quantity": 1, "price": item.get("total")}]
        order = Order(
            id=self.store.next_id(),
            number=0,  # numbered when kept, in the shop's sequence
            customer_id=customer_id,
            currency=self.shop.currency,
            email=None,
            created_at=created,
            updated_at=created,
            lines=[self._line(line) for line in lines],
            shipping=int(item.get("shipping") or 0),
        )
        gateway = str(item.get("gateway") or "shopify_payments")
        reference = item.get("payment_reference")
        sale = Transaction(
            id=self.store.next_id(),
            kind="SALE",
            status="SUCCESS",
            gateway=gateway,
            amount=order.total,
            created_at=created,
            payment_id=reference or f"c{order.id}.1",
            receipt={"payment_id": reference} if reference else {},
        )
        order.transactions.append(sale)
        self._disputes_and_refunds(order, sale, item)
        self.keep_ref(item, gid("Order", order.id))
        self.new_orders.append(order)
        self.done.counts["orders"] += 1

    def _change_order(self, item: Mapping[str, Any]) -> None:
        number = parse_gid(item["id"], "Order")
        kept = self.shop.orders.get(number) if number is not None else None
        if number is None or kept is None:
            raise HistoryError(f"no order {item['id']!r} in {self.shop.domain}")
        order = self.changed_orders.get(number) or copy.deepcopy(kept)
        payments = order.refundable_payments()
        if item.get("refunds") and not payments:
            raise HistoryError(f"order {item['id']} has nothing left to refund")
        self._disputes_and_refunds(order, payments[0] if payments else None, item)
        self.changed_orders[number] = order

    def _disputes_and_refunds(
        self, order: Order, sale: Transaction | None, item: Mapping[str, Any]
    ) -> None:
        for status in item.get("disputes") or ():
            order.disputes.append(
                Dispute(self.store.next_id(), _one_of(status, DISPUTE_STATUSES, "a dispute"))
            )
        for refund in item.get("refunds") or ():
            assert sale is not None
            self._refund(order, sale, refund)

    def _line(self, line: Mapping[str, Any]) -> LineItem:
        return LineItem(
            id=self.store.next_id(),
            title=str(line.get("title") or "Item"),
            quantity=_amount(line.get("quantity"), "a line's quantity"),
            price=_amount(line.get("price"), "a line's price (or an order's total)"),
        )

    def _refund(self, order: Order, sale: Transaction, item: Mapping[str, Any]) -> None:
        created = moment(item.get("created_at"), "a refund's created_at")
        if created < order.created_at:
            raise HistoryError("a refund cannot come before its order")
        amount = _amount(item.get("amount"), "a refund's amount")
        status = _one_of(item.get("status", "SUCCESS"), REFUND_STATUSES, "a refund's status")
        if status != "FAILURE" and amount > order.parent_remaining(sale):
            raise HistoryError(
                f"a refund of {amount} is more than the {order.parent_remaining(sale)} left "
                "to refund on its order"
            )
        money = Transaction(
            id=self.store.next_id(),
            kind="REFUND",
            status=status,
            gateway=sale.gateway,
            amount=amount,
            created_at=created,
            parent_id=sale.id,
            payment_id=sale.payment_id,
        )
        order.transactions.append(money)
        note = item.get("note")
        refund = Refund(
            id=self.store.next_id(),
            created_at=created,
            processed_at=created,
            note=str(note) if note is not None else None,
            lines=[],
            transaction_ids=[money.id],
            shipping=0,
        )
        order.refunds.append(refund)
        order.updated_at = max(order.updated_at, created)
        self.keep_ref(item, gid("Refund", refund.id))
        self.done.counts["refunds"] += 1

    def add_credit(self, item: Mapping[str, Any]) -> None:
        customer_id = self.customer(item.get("customer"), "a store credit")
        currency = str(item.get("currency") or self.shop.currency)
        expires = item.get("expires_at")
        credit = StoreCreditTransaction(
            id=self.store.next_id(),
            amount=_amount(item.get("amount"), "a store credit's amount"),
            balance_after=0,  # set when kept, in time order
            created_at=moment(item.get("created_at"), "a store credit's created_at"),
            expires_at=None if expires is None else moment(expires, "expires_at"),
        )
        self.keep_ref(item, gid("StoreCreditAccountCreditTransaction", credit.id))
        self.new_credits.append((customer_id, currency, credit))
        self.done.counts["store_credits"] += 1

    def add_discount(self, item: Mapping[str, Any]) -> None:
        code = str(item.get("code") or "").strip()
        if not code or code.lower() in self.codes:
            raise HistoryError(f"a discount needs a code of its own, not {code!r}")
        self.codes.add(code.lower())
        created = moment(item.get("created_at"), "a discount's created_at")
        percentage, amount, kind = self._value(item)
        customers = item.get("customers")
        ends = item.get("ends_at")
        discount = Discount(
            id=self.store.next_id(),
            code_id=self.store.next_id(),
            title=str(item.get("title") or code),
            code=code,
            starts_at=moment(item.get("starts_at", created), "starts_at"),
            ends_at=None if ends is None else moment(ends, "ends_at"),
            created_at=created,
            percentage=percentage,
            amount=amount,
            applies_on_each_item=bool(item.get("applies_on_each_item")),
            customer_ids=(
                None
                if customers is None
                else [self.customer(c, "a discount's customers") for c in customers]
            ),
            combines_with={},
            minimum_quantity=None,
            minimum_subtotal=None,
            usage_limit=item.get("usage_limit"),
            applies_once_per_customer=bool(item.get("applies_once_per_customer")),
            tags=[],
            kind=kind,
        )
        self.keep_ref(item, gid("DiscountCodeNode", discount.id))
        self.new_discounts.append(discount)
        self.done.counts["discounts"] += 1

    @staticmethod
    def _value(item: Mapping[str, Any]) -> tuple[float | None, int | None, str]:
        percentage, amount = item.get("percentage"), item.get("amount")
        if item.get("free_shipping"):
            return None, None, "DiscountCodeFreeShipping"
        if (percentage is None) == (amount is None):
            raise HistoryError("a discount is a percentage, an amount or free_shipping")
        if percentage is not None:
            if isinstance(percentage, bool) or not isinstance(percentage, int | float):
                raise HistoryError(f"a percentage is a number, not {percentage!r}")
            if not 0 < percentage <= 1:
                raise HistoryError("a percentage is more than 0 and at most 1")
            return float(percentage), None, "DiscountCodeBasic"
        return None, _amount(amount, "a discount's amount"), "DiscountCodeBasic"

    # -- keeping ---------------------------------------------------------------------------

    def keep(self) -> None:
        shop = self.shop
        for customer in self.new_customers:
            shop.customers[customer.id] = customer
        for order in sorted(self.new_orders, key=lambda o: (o.created_at, o.id)):
            order.number = shop.next_order_number
            shop.next_order_number += 1
            shop.orders[order.id] = order
        shop.orders.update(self.changed_orders)
        accounts = {(a.customer_id, a.currency): a for a in shop.credit_accounts.values()}
        touched: dict[int, StoreCreditAccount] = {}
        for customer_id, currency, credit in self.new_credits:
            account = accounts.get((customer_id, currency))
            if account is None:
                account = StoreCreditAccount(self.store.next_id(), customer_id, currency)
                shop.credit_accounts[account.id] = account
                accounts[(customer_id, currency)] = account
            account.transactions.append(credit)
            touched[account.id] = account
        for account in touched.values():
            _rebalance(account)
        for discount in self.new_discounts:
            shop.discounts[discount.id] = discount


def _rebalance(account: StoreCreditAccount) -> None:
    """Credits in time order, each with the balance after it (the sandbox has no debits)."""
    account.transactions.sort(key=lambda t: (t.created_at, t.id))
    balance = 0
    for transaction in account.transactions:
        balance += transaction.amount
        transaction.balance_after = balance


def seed_history(
    store: Store, shop_domain: str, history: Mapping[str, Any], now: float
) -> SeededHistory:
    """Write ``history`` (see the module docstring) into the shop, all of it or, when any
    part is refused (:class:`HistoryError`), none of it."""
    with store.lock:
        shop = store.shop(shop_domain)
        seeder = _Seeder(store, shop, now)
        _add_all(seeder, history)
        generate = history.get("generate")
        if generate is not None:
            if not isinstance(generate, Mapping):
                raise HistoryError("generate is an object: records, start, end, seed")
            seeder.reporting = False
            try:
                generated = generated_history(**generate)
            except TypeError as exc:
                raise HistoryError(
                    f"generate takes records, start, end, seed, prefix: {exc}"
                ) from None
            _add_all(seeder, generated)
        seeder.keep()
        return seeder.done


def _add_all(seeder: _Seeder, history: Mapping[str, Any]) -> None:
    steps: list[tuple[str, Callable[[Mapping[str, Any]], None]]] = [
        ("customers", seeder.add_customer),
        ("orders", seeder.add_order),
        ("store_credits", seeder.add_credit),
        ("discounts", seeder.add_discount),
    ]
    for kind, add in steps:
        for item in history.get(kind) or ():
            if not isinstance(item, Mapping):
                raise HistoryError(f"each of {kind} is an object, not {item!r}")
            add(item)


def generated_history(
    records: int, start: object, end: object, seed: int = 0, prefix: str = "gen"
) -> JSON:
    """A clean history of ``records`` records spread over ``[start, end)``: half refunds,
    a quarter store credits, a quarter discount codes, in a history's JSON form.

    Clean means nothing in it looks like a problem under any sensible policy: every
    refund and every credit goes to a customer of its own (so no repeats, no duplicates),
    a refund gives back at most half of an order paid in full and never disputed, made
    within three days of the order, and a discount is 5 to 15 percent or 5 to 15 units
    off for every buyer. The same ``seed`` gives the same history; ``prefix`` keeps the
    customers' emails and the codes of two histories in one shop apart.
    """
    if isinstance(records, bool) or not isinstance(records, int) or records < 0:
        raise HistoryError(f"records must be a whole number, not {records!r}")
    first, last = moment(start, "start"), moment(end, "end")
    if last <= first:
        raise HistoryError("end must come after start")
    rng = random.Random(seed)  # noqa: S311 (reproducible test data, not a secret)
    refunds = records * _GENERATED_REFUNDS // 4
    credits = records * _GENERATED_CREDITS // 4
    discounts = records - refunds - credits
    customers: list[JSON] = []
    orders: list[JSON] = []
    store_credits: list[JSON] = []

    def when() -> int:
        return rng.randrange(math.ceil(first), math.ceil(last))

    for n in range(refunds):
        ref = f"{prefix}-buyer-{n}"
        customers.append({"ref": ref, "email": f"{ref}@example.com"})
        refunded_at = when()
        total = rng.randrange(20, 200) * 100
        orders.append(
            {
                "customer": ref,
                "created_at": max(first, refunded_at - rng.randrange(3600, 3 * 86400)),
                "total": total,
                "refunds": [
                    {"created_at": refunded_at, "amount": rng.randrange(1, total // 200 + 1) * 100}
                ],
            }
        )
    for n in range(credits):
        ref = f"{prefix}-credited-{n}"
        customers.append({"ref": ref, "email": f"{ref}@example.com"})
        store_credits.append(
            {"customer": ref, "amount": rng.randrange(5, 50) * 100, "created_at": when()}
        )
    codes = [
        (
            {"percentage": rng.randrange(5, 16) / 100}
            if rng.random() < 0.5
            else {"amount": rng.randrange(5, 16) * 100}
        )
        | {"code": f"{prefix.upper()}-{n:06d}", "created_at": when()}
        for n in range(discounts)
    ]
    rng.shuffle(customers)  # a shop's customers come in no particular order
    return {
        "customers": customers,
        "orders": orders,
        "store_credits": store_credits,
        "discounts": codes,
    }
