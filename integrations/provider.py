"""The contract between the money path and a payment provider.

Every provider adapter answers three questions and nothing else in the product
talks to a provider about money:

* ``facts(target)``: fresh facts about the payment, customer or subscription an
  action touches;
* ``submit(request)``: send the one write, with the caller's idempotency key, and
  return what the provider answered, or raise :class:`OutcomeUnknown`; a request
  the adapter will not build raises :class:`InvalidRequest` before anything is sent;
* ``find(request)``: after an unclear outcome, look for the write's effect at the
  provider by the metadata we attached.

Amounts are integers in the currency's minor unit; currencies are lower-case
ISO 4217 codes as providers send them. This module imports nothing from ``app``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum, nonmember
from typing import Protocol, runtime_checkable


class ActionKind(StrEnum):
    REFUND = "refund"
    CUSTOMER_CREDIT = "customer_credit"
    DISCOUNT = "discount"
    SUBSCRIPTION_CANCEL = "subscription_cancel"
    SUBSCRIPTION_CHANGE = "subscription_change"


class ProviderStatus(StrEnum):
    """What the provider reports about a write. Only these end up on an action."""

    PENDING = "pending"
    REQUIRES_ACTION = "requires_action"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"

    # Ended without moving money: a failed or canceled write gave nothing and took nothing.
    MOVED_NOTHING = nonmember(frozenset({FAILED, CANCELED}))


# ---------------------------------------------------------------- facts


@dataclass(frozen=True)
class ProviderRefund:
    id: str
    amount: int
    currency: str
    status: ProviderStatus
    created: datetime
    metadata: Mapping[str, str] = field(default_factory=dict)
    failure_reason: str | None = None
    pending_reason: str | None = None

    @property
    def counts_against_capture(self) -> bool:
        """Failed and canceled refunds gave the money back to the balance."""
        return self.status not in ProviderStatus.MOVED_NOTHING


@dataclass(frozen=True)
class PaymentFacts:
    """A captured payment (Stripe payment intent and its charge)."""

    id: str
    exists: bool
    currency: str = ""
    amount: int = 0
    captured: int = 0
    paid: bool = False
    disputed: bool = False
    customer_id: str | None = None
    created: datetime | None = None
    refunds: tuple[ProviderRefund, ...] = ()
    # A store (Shopify) reads the order and its payment together: the order as read in
    # the same call, so a re-check need not read it again (see ``OrderSource``).
    order: OrderFacts | None = field(default=None, compare=False)

    @property
    def refunded(self) -> int:
        return sum(r.amount for r in self.refunds if r.counts_against_capture)


@dataclass(frozen=True)
class ProviderCredit:
    id: str
    amount: int  # negative: money owed to the customer, as Stripe's balance transactions
    currency: str
    created: datetime
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderDiscount:
    id: str  # the promotion code
    coupon_id: str
    code: str
    percent_off: int | None
    amount_off: int | None
    currency: str | None
    created: datetime
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CustomerFacts:
    id: str
    exists: bool
    deleted: bool = False
    email: str | None = None
    balance: int = 0
    balance_currency: str | None = None
    credits: tuple[ProviderCredit, ...] = ()
    discounts: tuple[ProviderDiscount, ...] = ()


@dataclass(frozen=True)
class SubscriptionItem:
    id: str
    price_id: str
    quantity: int


class SubscriptionStatus(StrEnum):
    """Where a subscription stands, in Stripe's words."""

    ACTIVE = "active"
    TRIALING = "trialing"
    PAST_DUE = "past_due"
    UNPAID = "unpaid"
    PAUSED = "paused"
    INCOMPLETE = "incomplete"
    INCOMPLETE_EXPIRED = "incomplete_expired"
    CANCELED = "canceled"

    # Over: nothing left to cancel.
    ENDED = nonmember((CANCELED, INCOMPLETE_EXPIRED))
    # Running: its items or renewal may be changed.
    CHANGEABLE = nonmember((ACTIVE, TRIALING))


@dataclass(frozen=True)
class SubscriptionFacts:
    id: str
    exists: bool
    status: str = ""
    customer_id: str | None = None
    currency: str = ""
    cancel_at_period_end: bool = False
    current_period_end: datetime | None = None
    items: tuple[SubscriptionItem, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)


TargetFacts = PaymentFacts | CustomerFacts | SubscriptionFacts


@dataclass(frozen=True)
class OrderLine:
    """One line of a store order: what the customer paid for it and what came back."""

    id: str
    title: str
    quantity: int
    paid: int
    refunded: int = 0


@dataclass(frozen=True)
class Shipment:
    """One parcel of a store order as the carrier reported it to the store.

    ``status`` is the store's word for where it stands, lower-case (``in_transit``,
    ``out_for_delivery``, ``delivered``, ``fulfilled`` when no carrier has reported yet,
    ...). ``shipped_at`` is when the store sent it, which orders several shipments."""

    status: str
    carrier: str | None = None
    tracking_number: str | None = None
    tracking_url: str | None = None
    estimated_delivery: datetime | None = None
    delivered_at: datetime | None = None
    shipped_at: datetime | None = None


@dataclass(frozen=True)
class OrderFacts:
    """The store's order behind a payment (Shopify), for line-item bounds and windows."""

    id: str
    name: str
    currency: str
    payment_id: str | None
    lines: tuple[OrderLine, ...] = ()
    fulfilled_at: datetime | None = None
    delivered_at: datetime | None = None
    # What the store shows of the order as a whole (minor units), and whose it is.
    total: int | None = None
    created_at: datetime | None = None
    customer_id: str | None = None
    # Where the goods are, oldest shipment first: read only, to answer the customer.
    shipments: tuple[Shipment, ...] = ()


# ---------------------------------------------------------------- writes


@dataclass(frozen=True)
class ActionRequest:
    """Exactly one write, with everything needed to send it again unchanged.

    ``params`` holds kind-specific values (``reason``; ``percent_off`` and
    ``duration``; ``cancel_at_period_end``; ``items``). ``metadata`` carries our
    action id so that :meth:`ProviderAdapter.find` can recognise the effect.
    """

    action_id: str
    kind: ActionKind
    target: str
    idempotency_key: str
    amount: int | None = None
    currency: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderAnswer:
    """What the provider said about the write: its reference and status."""

    reference: str
    status: ProviderStatus
    raw: Mapping[str, object]
    replayed: bool = False
    failure_reason: str | None = None


# ---------------------------------------------------------------- errors


class ProviderError(Exception):
    """Base of every error an adapter raises."""


class OutcomeUnknown(ProviderError):
    """The write may or may not have happened (timeout, dropped connection, 5xx).

    Never retry blindly: look it up with :meth:`ProviderAdapter.find` first.
    """


class ProviderRejected(ProviderError):
    """The provider answered and refused the write; nothing happened there."""

    def __init__(self, message: str, *, code: str | None = None, http_status: int | None = None):
        super().__init__(message)
        self.code = code
        self.http_status = http_status


class PermissionDenied(ProviderRejected):
    """The credentials lack a permission (a restricted key without write access)."""


class NotSent(ProviderError):
    """The write never reached the provider (the connection was refused before any byte
    of the request left), so it may be sent again at once with the same key."""


class Throttled(ProviderError):
    """The provider answered 429: it did nothing and asks to be called again later.

    ``retry_after`` is the provider's own word on how long to wait, in seconds, when it
    gave one. Send again after it, with the same key and parameters. ``asked`` is false
    when the client held the request back itself, knowing from the provider's last answer
    that it would be refused (nothing was sent, so nothing counts against the provider).
    """

    retry_after: float | None
    asked: bool

    def __init__(self, message: str, *, retry_after: float | None = None, asked: bool = True):
        super().__init__(message)
        self.retry_after = retry_after
        self.asked = asked


class InvalidRequest(ProviderError):
    """The adapter would not build the request (no positive amount, no or an unknown
    currency, a parameter out of range, a target of another kind): nothing was sent, and
    the same request would be refused the same way, so it is never sent again."""


class IdempotencyConflict(ProviderError):
    """The provider saw this idempotency key with other parameters.

    The first request with the key may have taken effect, so this is never a
    refusal to retry around: a person decides.
    """


class CredentialsRefused(ProviderError):
    """The credentials are of a kind Caseward will not use (for example a Stripe ``sk_`` key),
    or the provider does not know them. ``reason`` names which, for callers that say it
    in their own words; ``key`` is the key as it may be shown (masked)."""

    def __init__(self, message: str, *, reason: str = "refused", key: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.key = key


@dataclass(frozen=True)
class Targets:
    """What an adapter's actions may name: per kind, the form of the target's id (a kind
    left out is one the provider does not do), and what a line item of a refund needs.

    Proposals are checked against these before anything is read from the provider, so
    a Stripe id never reaches Shopify and the reverse; ``described`` says it in words.
    """

    ids: Mapping[ActionKind, re.Pattern[str]]
    examples: Mapping[ActionKind, str]
    line_item_id: re.Pattern[str]
    # Shopify refunds a line by quantity; Stripe knows no lines and takes amounts alone.
    line_item_quantity: bool = False
    # Parameters beyond the common ones that this provider's actions of a kind take.
    extra_params: Mapping[ActionKind, frozenset[str]] = field(default_factory=dict)
    # Ids that may look like another provider's (a merchant's own): a proposal must name
    # this provider, it is never the one guessed from the target.
    named_only: bool = False

    def accepts(self, kind: ActionKind, target: str) -> bool:
        pattern = self.ids.get(kind)
        return pattern is not None and pattern.fullmatch(target) is not None

    def described(self, kind: ActionKind) -> str:
        return self.examples.get(kind, "nothing: this provider does not do that")


class ProviderAdapter(Protocol):
    name: str

    def facts(self, kind: ActionKind, target: str) -> TargetFacts: ...

    def submit(self, request: ActionRequest) -> ProviderAnswer: ...

    def find(self, request: ActionRequest) -> ProviderAnswer | None: ...


@runtime_checkable
class OrderSource(Protocol):
    """An adapter whose refunds target a store order it can read (Shopify): the order's
    lines and the payment behind it come fresh from the provider, not from our copy.
    Its ``facts`` for a refund carry the order they were read with (``PaymentFacts.order``)."""

    def order(self, target: str) -> OrderFacts | None: ...


@dataclass(frozen=True)
class ProviderCustomer:
    """One of a provider's customers, as a look-up by email answers it."""

    id: str
    email: str


@runtime_checkable
class CustomerDirectory(Protocol):
    """An adapter that can say which of its customers have an email: how a case's
    verified customer is linked to their own id there (:mod:`app.cases.customer_link`)."""

    def customers_with_email(self, email: str) -> tuple[ProviderCustomer, ...]: ...


# Every write carries our action id in the provider's metadata under this key.
ACTION_ID_METADATA_KEY = "caseward_action_id"
