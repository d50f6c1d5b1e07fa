"""The Shopify adapter: the only code in Caseward that moves money through a Shopify shop.

It implements :class:`integrations.provider.ProviderAdapter` for one shop on the Admin
GraphQL client (:class:`~integrations.shopify.graphql.AdminClient`) and the documents in
:mod:`integrations.shopify.documents`, and nothing else. The executor's sequence with it:

1. ``facts(kind, target)``: a refund's target is an order gid, read whole in one query
   (an order too large for one read is refused, never half-counted) and given back as
   the payment with the order's lines (``PaymentFacts.order``); credits and discounts
   target a customer gid, read with its store credit.
2. The checks run on those facts; then ``submit(request)`` sends one mutation:
   ``refundCreate`` under ``@idempotent(key: request.idempotency_key)`` against the
   order's settled sale or capture, chosen from the order as ``facts`` read it for this
   job (one read per refund; see ``ShopifyAdapter``); ``storeCreditAccountCredit``; or
   ``discountCodeBasicCreate`` with a code derived from the action id.
3. An unclear outcome raises :class:`~integrations.provider.OutcomeUnknown` (the
   client's :class:`~integrations.shopify.errors.ShopifyOutcomeUnknown`); the executor
   later calls ``find(request)``, which reads the order, the customer or the code and
   recognises our write by our action id; only when it finds nothing does the executor
   send again, with the same key.

Why these markers: Shopify has no metadata on refunds, store credit or discounts. A
refund keeps its ``note`` as written, so the note ends with ``caseward_action_id=<id>``;
a discount keeps its code and title, so the code is derived from the action id and the
title carries the marker. Store credit keeps neither text nor key (no ``@idempotent``
in 2026-04): an unclear credit is settled only by a look-up matching amount, currency
and time, which is why the executor must always call ``find`` before any resend of a
credit (see :mod:`integrations.shopify._adapter_writes`).

Shopify errors already subclass the contract's (``NotSent``, ``Throttled``,
``OutcomeUnknown``, ``ProviderRejected``) and pass through as they are; ``userErrors``
become :class:`~integrations.provider.ProviderRejected` with Shopify's message and field.
Subscriptions are not a Shopify matter here: those kinds are refused. The access token
is never logged nor shown by ``repr``.

The work is split by concern: ``_adapter_facts`` (reads, markers) and
``_adapter_writes`` (submit and find).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import httpx

from integrations.provider import (
    ActionKind,
    ActionRequest,
    OrderFacts,
    PaymentFacts,
    ProviderAnswer,
    ProviderRejected,
    TargetFacts,
    Targets,
)
from integrations.shopify.documents import OrderForRefund
from integrations.shopify.graphql import AdminClient

from ._adapter_facts import (
    CUSTOMER_GID,
    ORDER_GID,
    IncompleteOrder,
    customer_facts,
    customer_orders,
    order_facts,
    payment_facts,
    read_order,
)
from ._adapter_writes import (
    CREDIT_LOOKUP_WINDOW,
    LINE_ITEM_GID_PREFIX,
    UNSUPPORTED_SUBSCRIPTIONS,
    Writer,
    discount_code,
)

__all__ = ["CREDIT_LOOKUP_WINDOW", "TARGETS", "IncompleteOrder", "ShopifyAdapter", "discount_code"]

# Refunds name the order; credits and discounts the customer; subscriptions are Stripe's.
TARGETS = Targets(
    ids={
        ActionKind.REFUND: ORDER_GID,
        ActionKind.CUSTOMER_CREDIT: CUSTOMER_GID,
        ActionKind.DISCOUNT: CUSTOMER_GID,
    },
    examples={
        ActionKind.REFUND: "a Shopify order 'gid://shopify/Order/...'",
        ActionKind.CUSTOMER_CREDIT: "a Shopify customer 'gid://shopify/Customer/...'",
        ActionKind.DISCOUNT: "a Shopify customer 'gid://shopify/Customer/...'",
    },
    line_item_id=re.compile(rf"{re.escape(LINE_ITEM_GID_PREFIX)}[1-9][0-9]{{0,19}}"),
    line_item_quantity=True,
    # An explicit shipping refund (minor units, part of the amount); Shopify's own
    # notice to the customer, only when asked for.
    extra_params={
        ActionKind.REFUND: frozenset({"shipping", "notify"}),
        ActionKind.CUSTOMER_CREDIT: frozenset({"notify"}),
    },
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ShopifyAdapter:
    """Facts, one write per action, and look-ups, against one Shopify shop.

    ``access_token`` is a usable offline token (the caller refreshes it); ``http_client``
    is the shared client (``ShopifyAuth.http_client``), which routes to the sandbox when
    configured so. ``clock`` and ``sleep`` pace the cost bucket (monotonic seconds);
    ``now`` is the wall clock, for a discount's start and the credit look-up window.

    An adapter serves one job (``app.connections.adapters`` makes one per use): the order
    a refund's ``facts`` read is kept and the refund's ``submit`` is built on it, once,
    instead of reading the order again. Our earlier write of the action was looked for
    in that read (by the executor's re-check), and Shopify's own bound refuses a refund
    the order no longer holds, so a read a moment older cannot move more money.
    """

    name = "shopify"
    targets = TARGETS

    def __init__(
        self,
        shop: str,
        access_token: str,
        *,
        http_client: httpx.Client,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.shop = shop
        self._client = AdminClient(shop, access_token, http_client, clock=clock, sleep=sleep)
        self._writer = Writer(self._client, now)
        self._orders_read: dict[str, OrderForRefund] = {}

    def __repr__(self) -> str:
        return f"ShopifyAdapter(shop={self.shop!r})"

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        """Fresh facts about what an action of ``kind`` touches.

        Refunds: the order ``gid://shopify/Order/<n>`` as a :class:`PaymentFacts` (amount
        = order total, captured = settled sales and captures, refunds with our action id
        from their notes, ``disputed`` from the order's disputes, see
        ``_adapter_facts.payment_facts``), with the order's lines as :meth:`order` gives
        them. Credits and discounts: the customer ``gid://shopify/Customer/<n>`` with its
        store credit. An unknown target comes back
        with ``exists=False``; an order that cannot be read whole raises
        :class:`IncompleteOrder` (a ProviderError).
        """
        kind = ActionKind(kind)  # a stored "refund" string must not fall through
        if kind is ActionKind.REFUND:
            order = read_order(self._client, target)
            if order is None:
                return PaymentFacts(id=target, exists=False)
            facts = payment_facts(order)
            self._orders_read[target] = order
            return facts
        if kind in (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT):
            return customer_facts(self._client, target)
        raise ProviderRejected(UNSUPPORTED_SUBSCRIPTIONS, code="unsupported")

    def order(self, target: str) -> OrderFacts | None:
        """The order's lines (paid and refunded per line, minor units), fulfilment and
        delivery times, and ``payment_id``: the Stripe payment intent or charge behind it
        when it was paid through the Stripe gateway. None when Shopify has no such order."""
        found = read_order(self._client, target)
        return None if found is None else order_facts(found)

    def customer_orders(self, customer: str, limit: int = 10) -> tuple[OrderFacts, ...]:
        """The customer's newest ``limit`` orders (at most 50), newest first, each as
        :meth:`order` reads it."""
        return customer_orders(self._client, customer, min(max(limit, 1), 50))

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        """Send the action's one mutation; see the module docstring for what is raised.

        A store credit has no idempotency key at Shopify: an unclear outcome can only be
        settled by :meth:`find`, never by sending again blindly.
        """
        return self._writer.submit(
            _normalised(request), order_read=self._orders_read.pop(request.target, None)
        )

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The write's effect as Shopify shows it now, recognised by our action id (for
        store credit: by amount, currency and time); ``None`` when there is none. Never
        writes, so it also serves to refresh a pending refund's status."""
        return self._writer.find(_normalised(request))


def _normalised(request: ActionRequest) -> ActionRequest:
    """The request with its kind as an :class:`ActionKind`, so dispatch by identity is exact."""
    return replace(request, kind=ActionKind(request.kind))
