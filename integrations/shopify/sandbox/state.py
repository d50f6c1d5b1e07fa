"""The sandbox's shops and everything in them, in memory, behind one lock.

Every shop is a tenant: its staff, customers, orders (lines, transactions, refunds,
fulfillments), store credit accounts and discounts live in its :class:`Shop` and nowhere
else, which is what keeps one shop from ever seeing another's data. Amounts are integers
in the shop currency's minor unit; times are sandbox-clock Unix seconds. The derived
figures Shopify reports (received, refunded, refundable quantities, financial status)
are computed from the transactions and refunds every time they are read, so they can
never drift from the records they summarise.

One re-entrant lock (:attr:`Store.lock`) guards all of it: a mutation's checks and its
writes happen under it, like Shopify's own per-order locking.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]

# Kinds of transaction that bring money in, and the statuses that count.
PAYMENT_KINDS = ("SALE", "CAPTURE")
SETTLED = "SUCCESS"


def gid(kind: str, number: int) -> str:
    """Shopify's global id, ``gid://shopify/Order/10000000001``."""
    return f"gid://shopify/{kind}/{number}"


def parse_gid(value: object, kind: str) -> int | None:
    """The number in ``gid://shopify/<kind>/<n>``; ``None`` for anything else."""
    prefix = f"gid://shopify/{kind}/"
    if not isinstance(value, str) or not value.startswith(prefix):
        return None
    number = value.removeprefix(prefix)
    return int(number) if number.isdigit() else None


def iso(ts: float) -> str:
    """Sandbox time as Shopify's ``DateTime``: ``2023-11-14T22:13:20Z``."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: str) -> float:
    """A ``DateTime`` from the wire as Unix seconds (naive times are UTC)."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


@dataclass
class Staff:
    """A person who can open the app in the shop's admin."""

    user_id: int
    first_name: str
    last_name: str
    email: str
    account_owner: bool
    locale: str = "en"
    collaborator: bool = False
    email_verified: bool = True


@dataclass
class Customer:
    id: int
    email: str | None
    first_name: str | None
    last_name: str | None
    phone: str | None
    created_at: float
    updated_at: float
    state: str = "ENABLED"

    @property
    def display_name(self) -> str:
        """Shopify's ``displayName``: the full name, else the email."""
        name = " ".join(part for part in (self.first_name, self.last_name) if part)
        return name or self.email or ""


@dataclass
class LineItem:
    id: int
    title: str
    quantity: int
    price: int  # unit price
    sku: str | None = None
    variant_title: str | None = None
    requires_shipping: bool = True


@dataclass
class Transaction:
    id: int
    kind: str  # SALE, AUTHORIZATION, CAPTURE, REFUND
    status: str  # SUCCESS, PENDING, FAILURE
    gateway: str
    amount: int
    created_at: float
    parent_id: int | None = None
    payment_id: str | None = None
    receipt: JSON = field(default_factory=dict)
    test: bool = False


@dataclass
class RefundLine:
    id: int
    line_item_id: int
    quantity: int
    restock_type: str
    subtotal: int


@dataclass
class Refund:
    id: int
    created_at: float
    processed_at: float
    note: str | None
    lines: list[RefundLine]
    transaction_ids: list[int]
    shipping: int  # shipping refunded


@dataclass
class Fulfillment:
    """Goods that left the shop, with the carrier's tracking when the merchant gave it."""

    id: int
    name: str
    created_at: float
    quantity: int
    status: str = "SUCCESS"
    delivered_at: float | None = None
    carrier: str | None = None
    tracking_number: str | None = None
    tracking_url: str | None = None
    in_transit_at: float | None = None
    estimated_delivery_at: float | None = None

    @property
    def display_status(self) -> str:
        """``displayStatus``: the furthest the carrier has reported."""
        if self.delivered_at is not None:
            return "DELIVERED"
        return "IN_TRANSIT" if self.in_transit_at is not None else "FULFILLED"


@dataclass
class Dispute:
    """A chargeback or inquiry the customer's bank opened on the order's payment."""

    id: int
    status: str = "NEEDS_RESPONSE"
    initiated_as: str = "CHARGEBACK"


@dataclass
class Order:
    id: int
    number: int
    customer_id: int | None
    currency: str
    email: str | None
    created_at: float
    updated_at: float
    lines: list[LineItem]
    shipping: int
    transactions: list[Transaction] = field(default_factory=list)
    refunds: list[Refund] = field(default_factory=list)
    fulfillments: list[Fulfillment] = field(default_factory=list)
    disputes: list[Dispute] = field(default_factory=list)
    test: bool = False
    cancelled_at: float | None = None

    @property
    def name(self) -> str:
        """What the admin shows: ``#1001``."""
        return f"#{self.number}"

    @property
    def subtotal(self) -> int:
        return sum(line.price * line.quantity for line in self.lines)

    @property
    def total(self) -> int:
        return self.subtotal + self.shipping

    def transaction(self, transaction_id: int) -> Transaction | None:
        return next((t for t in self.transactions if t.id == transaction_id), None)

    def line(self, line_id: int) -> LineItem | None:
        return next((line for line in self.lines if line.id == line_id), None)

    @property
    def received(self) -> int:
        """Money captured: settled sales and captures."""
        return sum(
            t.amount for t in self.transactions if t.kind in PAYMENT_KINDS and t.status == SETTLED
        )

    @property
    def refunded(self) -> int:
        """Money returned: settled refund transactions."""
        return sum(
            t.amount for t in self.transactions if t.kind == "REFUND" and t.status == SETTLED
        )

    @property
    def authorized(self) -> int:
        return sum(
            t.amount for t in self.transactions if t.kind == "AUTHORIZATION" and t.status == SETTLED
        )

    def refunded_quantity(self, line_id: int) -> int:
        return sum(
            rl.quantity for r in self.refunds for rl in r.lines if rl.line_item_id == line_id
        )

    def refundable_quantity(self, line: LineItem) -> int:
        return line.quantity - self.refunded_quantity(line.id)

    @property
    def refunded_shipping(self) -> int:
        return sum(r.shipping for r in self.refunds)

    @property
    def refunded_lines_value(self) -> int:
        return sum(rl.subtotal for r in self.refunds for rl in r.lines)

    def parent_remaining(self, parent: Transaction) -> int:
        """What can still be refunded against a payment: its amount less the refunds
        made against it that succeeded or may still succeed."""
        taken = sum(
            t.amount
            for t in self.transactions
            if t.kind == "REFUND" and t.parent_id == parent.id and t.status in (SETTLED, "PENDING")
        )
        return parent.amount - taken

    def refundable_payments(self) -> list[Transaction]:
        """Settled payments with money left to refund, oldest first."""
        return [
            t
            for t in self.transactions
            if t.kind in PAYMENT_KINDS and t.status == SETTLED and self.parent_remaining(t) > 0
        ]

    @property
    def financial_status(self) -> str:
        """``displayFinancialStatus`` from the money that moved."""
        received, refunded = self.received, self.refunded
        if received == 0:
            return "AUTHORIZED" if self.authorized else "PENDING"
        if refunded >= received:
            return "REFUNDED"
        if refunded > 0:
            return "PARTIALLY_REFUNDED"
        return "PAID" if received >= self.total else "PARTIALLY_PAID"


@dataclass
class StoreCreditTransaction:
    id: int
    amount: int
    balance_after: int
    created_at: float
    expires_at: float | None = None


@dataclass
class StoreCreditAccount:
    id: int
    customer_id: int
    currency: str
    transactions: list[StoreCreditTransaction] = field(default_factory=list)

    @property
    def balance(self) -> int:
        return self.transactions[-1].balance_after if self.transactions else 0


@dataclass
class Discount:
    """A basic code discount (amount off or percentage off every item)."""

    id: int  # the DiscountCodeNode
    code_id: int  # the DiscountRedeemCode
    title: str
    code: str
    starts_at: float
    ends_at: float | None
    created_at: float
    percentage: float | None
    amount: int | None
    applies_on_each_item: bool
    customer_ids: list[int] | None  # None: every buyer
    combines_with: dict[str, bool]
    minimum_quantity: int | None
    minimum_subtotal: int | None
    usage_limit: int | None
    applies_once_per_customer: bool
    tags: list[str]
    # The ``DiscountCode`` union member it is: an amount or percentage off
    # (``DiscountCodeBasic``), or free shipping (``DiscountCodeFreeShipping``).
    kind: str = "DiscountCodeBasic"

    def status(self, now: float) -> str:
        if now < self.starts_at:
            return "SCHEDULED"
        if self.ends_at is not None and now >= self.ends_at:
            return "EXPIRED"
        return "ACTIVE"


@dataclass
class Shop:
    id: int
    name: str
    domain: str
    currency: str
    email: str
    timezone: str
    created_at: float
    scopes: tuple[str, ...]
    staff: dict[int, Staff] = field(default_factory=dict)
    customers: dict[int, Customer] = field(default_factory=dict)
    orders: dict[int, Order] = field(default_factory=dict)
    credit_accounts: dict[int, StoreCreditAccount] = field(default_factory=dict)
    discounts: dict[int, Discount] = field(default_factory=dict)
    installed: bool = True
    next_order_number: int = 1001
    # What refund transactions report: SUCCESS, or PENDING / FAILURE to stage a gateway
    # that has not settled, or refused; pending ones settle after so many seconds if set.
    refund_status: str = SETTLED
    refund_settle_after: float | None = None


@dataclass
class AccessToken:
    value: str
    shop: str
    mode: str  # offline / online
    user_id: int | None
    issued_at: float
    expires_at: float | None


@dataclass
class RefreshToken:
    value: str
    shop: str
    expires_at: float


class Store:
    """Every shop and token, behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.shops: dict[str, Shop] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        # Ids count up from the same start in every sandbox, so a seeded demo shop has
        # the same gids after every restart.
        self._ids = itertools.count(10_000_000_001)

    def next_id(self) -> int:
        """A fresh numeric id (the number in a gid)."""
        with self.lock:
            return next(self._ids)

    def shop(self, domain: str) -> Shop:
        """The shop with this ``*.myshopify.com`` domain (KeyError when unknown)."""
        shop = self.shops.get(domain)
        if shop is None:
            raise KeyError(f"no shop {domain}")
        return shop

    def revoke(self, domain: str) -> None:
        """Forget every access and refresh token of a shop (uninstall)."""
        with self.lock:
            self.access_tokens = {k: t for k, t in self.access_tokens.items() if t.shop != domain}
            self.refresh_tokens = {k: t for k, t in self.refresh_tokens.items() if t.shop != domain}
