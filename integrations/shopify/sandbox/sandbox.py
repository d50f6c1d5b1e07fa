"""The sandbox as an object: shops, tokens, GraphQL, webhooks, time, faults and controls.

:class:`ShopifySandbox` owns everything; serving over HTTP, time, faults, holds, latency,
the request log and the webhook switches come from the shared kit's
:class:`~integrations.sandbox_kit.SandboxBase` (``start`` returns a
:class:`~integrations.sandbox_kit.SandboxHandle`). Requests find their shop exactly as at
Shopify, by the ``Host: {name}.myshopify.com`` header; every request is logged as it
arrives and again with its answer. Every control the ``/_sandbox/`` endpoints offer is a
method here too, so in-process tests steer the sandbox without HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from graphql import GraphQLEnumType

from integrations.sandbox_kit import (
    Clock,
    Dispatch,
    DueWork,
    Fault,
    Response,
    SandboxBase,
    Schedule,
)

from . import payloads
from .control import shopify_control_router
from .cost import Buckets
from .graphql_api import GraphQLEndpoint, describe, internal_error
from .history import SeededHistory, seed_history
from .idempotency import IdempotencyKeys
from .oauth import TokenEndpoint, mint_session_token
from .operations import OperationLog, ReceivedOperation
from .schema import build
from .standin import ADMIN_PATHS as STANDIN_ADMIN_PATHS
from .standin import PREFIX as STANDIN_PREFIX
from .standin import AdminStandIn
from .state import (
    Customer,
    Dispute,
    Fulfillment,
    LineItem,
    Order,
    Shop,
    Staff,
    Store,
    Transaction,
    gid,
    parse_gid,
)
from .storefront import Storefront
from .webhooks import DELIVERY_TIMEOUT, RETRY_DELAYS, Event, Subscription, WebhookDispatcher

JSON = dict[str, Any]

DEMO_API_KEY = "caseward-demo-client-id"
# Fixed, public demo credentials: the offline demo is configured with them.
DEMO_API_SECRET = "caseward-demo-shopify-app-secret-for-the-offline-sandbox"  # noqa: S105
# What the app asks for in shopify.app.toml.
DEFAULT_SCOPES = (
    "read_customers",
    "read_orders",
    "read_all_orders",
    "write_orders",
    "write_store_credit_account_transactions",
    "read_discounts",
    "write_discounts",
)
# Shopify asks the app to erase a shop's data 48 hours after it was uninstalled.
SHOP_REDACT_DELAY = 48 * 3600.0
REFUND_STATUSES = ("SUCCESS", "PENDING", "FAILURE")
_CURRENCY_ENUM = build().type_map["CurrencyCode"]
assert isinstance(_CURRENCY_ENUM, GraphQLEnumType)
_CURRENCIES = frozenset(_CURRENCY_ENUM.values)

# What the sandbox does later, on its clock.
WORK: DueWork[ShopifySandbox] = DueWork()


@dataclass(frozen=True)
class SandboxShop:
    """A shop created in the sandbox."""

    domain: str
    id: str
    name: str
    currency: str
    owner_user_id: int

    def to_json(self) -> JSON:
        return asdict(self)


def _timestamp(value: float | datetime | None, default: float) -> float:
    if value is None:
        return default
    return value.timestamp() if isinstance(value, datetime) else float(value)


class ShopifySandbox(SandboxBase):
    """An in-memory Shopify Admin API for one app, that ``shopifyapp`` can talk to."""

    serving_name = "shopify-sandbox"

    def __init__(
        self,
        *,
        api_key: str = DEMO_API_KEY,
        api_secret: str = DEMO_API_SECRET,
        clock: Clock | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        control_token: str | None = None,
        webhook_retry_delays: Sequence[float] = RETRY_DELAYS,
        webhook_timeout: float = DELIVERY_TIMEOUT,
        background_interval: float = 0.25,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self.api_key = api_key
        self.api_secret = api_secret
        self.scopes = tuple(scopes)
        self.store = Store()
        self.schedule = Schedule()
        self.buckets = Buckets()
        self.keys = IdempotencyKeys()
        self.webhooks = WebhookDispatcher(
            api_secret=api_secret,
            clock=self.clock,
            retry_delays=webhook_retry_delays,
            timeout=webhook_timeout,
        )
        self.tokens = TokenEndpoint(self.store, self.clock, api_key, api_secret)
        self.operations = OperationLog()
        self.graphql = GraphQLEndpoint(
            store=self.store,
            clock=self.clock,
            faults=self.faults,
            keys=self.keys,
            buckets=self.buckets,
            webhooks=self._deliver_all,
            run_due=self.process_due,
        )
        # The admin around the embedded app (``standin.app_url`` says where the app is).
        self.standin = AdminStandIn(self)
        # The shops' storefronts and the app proxy (``storefront.app_proxy_url``).
        self.storefront = Storefront(self)

    # -- serving ---------------------------------------------------------------------------

    def _control(self) -> Dispatch:
        return shopify_control_router(self).handle

    def _failure(self) -> Response:
        return internal_error()

    @property
    def _deliveries(self) -> WebhookDispatcher:
        return self.webhooks

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one request to the Admin API, logged as it arrives and with its answer
        (the stand-in admin's and a shop's storefront pages are not the API: unlogged)."""
        path = target.partition("?")[0]
        if path.startswith((STANDIN_PREFIX, STANDIN_ADMIN_PATHS)):
            return self.standin.handle(method.upper(), target)
        domain = (headers.get("Host") or "").partition(":")[0].strip().lower()
        shop = self.store.shops.get(domain)
        if shop is not None and self.storefront.serves(path):
            return self.storefront.handle(shop.domain, method.upper(), target, headers, body)
        graphql = path.startswith("/admin/api/") and path.endswith("/graphql.json")
        key, operation = describe(body) if graphql else (None, None)
        entry = self.received.arrived(method, target, shop.domain if shop else None, key, operation)
        if graphql:
            self.operations.record(shop.domain if shop else None, body)
        response = self._route(method.upper(), path, shop, headers, body)
        self.received.answered(entry, response)
        return response

    def _route(
        self,
        method: str,
        path: str,
        shop: Shop | None,
        headers: Mapping[str, str],
        body: bytes,
    ) -> Response:
        not_found = Response(
            404, b'{"errors":"Not Found"}', {"Content-Type": "application/json; charset=utf-8"}
        )
        if shop is None or method != "POST":
            return not_found
        if path == "/admin/oauth/access_token":
            return self.tokens.handle(shop, headers, body)
        parts = path.split("/")
        if len(parts) == 5 and parts[:3] == ["", "admin", "api"] and parts[4] == "graphql.json":
            return self.graphql.handle(shop, parts[3], path, headers, body)
        return not_found

    # -- shops, staff, customers, orders ---------------------------------------------------

    def create_shop(
        self,
        name: str,
        *,
        currency: str = "USD",
        owner_user_id: int = 1001,
        shop_name: str | None = None,
        email: str | None = None,
        timezone: str = "America/New_York",
        scopes: Sequence[str] | None = None,
    ) -> SandboxShop:
        """A shop ``{name}.myshopify.com`` with the app installed and its owner as staff."""
        handle = name.removesuffix(".myshopify.com").lower()
        if not handle or not all(c.isalnum() or c == "-" for c in handle):
            raise ValueError(f"{name!r} is not a shop name")
        if currency not in _CURRENCIES:
            raise ValueError(f"unsupported currency {currency!r}")
        domain = f"{handle}.myshopify.com"
        with self.store.lock:
            if domain in self.store.shops:
                raise ValueError(f"shop {domain} already exists")
            shop = Shop(
                id=self.store.next_id(),
                name=shop_name or handle.replace("-", " ").title(),
                domain=domain,
                currency=currency,
                email=email or f"owner@{domain}",
                timezone=timezone,
                created_at=self.clock.now(),
                scopes=tuple(scopes if scopes is not None else self.scopes),
            )
            self.store.shops[domain] = shop
        self.add_staff(domain, user_id=owner_user_id, account_owner=True)
        return SandboxShop(domain, gid("Shop", shop.id), shop.name, currency, owner_user_id)

    def add_staff(
        self,
        shop_domain: str,
        *,
        user_id: int,
        account_owner: bool = False,
        first_name: str | None = None,
        last_name: str | None = None,
        email: str | None = None,
    ) -> None:
        """A staff member who can open the app (and so get session tokens)."""
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            shop.staff[user_id] = Staff(
                user_id=user_id,
                first_name=first_name or ("Owner" if account_owner else "Staff"),
                last_name=last_name or str(user_id),
                email=email or f"user{user_id}@{shop_domain}",
                account_owner=account_owner,
            )

    def session_token(
        self,
        shop_domain: str,
        *,
        user_id: int,
        exp_in: float = 60,
        issued_at: float | None = None,
    ) -> str:
        """The session token the admin would hand the app for this user: HS256 with the
        app secret, issued at sandbox time (or ``issued_at``), valid ``exp_in`` seconds."""
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            if not shop.installed:
                raise ValueError(f"the app is not installed in {shop_domain}")
            if user_id not in shop.staff:
                raise ValueError(f"user {user_id} is not staff of {shop_domain}")
        return mint_session_token(
            shop=shop_domain,
            user_id=user_id,
            api_key=self.api_key,
            api_secret=self.api_secret,
            now=issued_at if issued_at is not None else self.clock.now(),
            exp_in=exp_in,
        )

    def seed_customer(
        self,
        shop_domain: str,
        *,
        email: str | None,
        first_name: str | None = None,
        last_name: str | None = None,
        phone: str | None = None,
    ) -> str:
        """A customer; returns its gid (``gid://shopify/Customer/<n>``)."""
        now = self.clock.now()
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            customer = Customer(self.store.next_id(), email, first_name, last_name, phone, now, now)
            shop.customers[customer.id] = customer
        return gid("Customer", customer.id)

    def seed_order(
        self,
        shop_domain: str,
        *,
        customer_id: str | None,
        currency: str,
        lines: Sequence[Mapping[str, Any]],
        shipping: int = 0,
        gateway: str = "shopify_payments",
        payment_reference: str | None = None,
        fulfilled_at: float | datetime | None = None,
        delivered_at: float | datetime | None = None,
        created_at: float | datetime | None = None,
        authorize_then_capture: bool = False,
        test: bool = False,
        carrier: str | None = None,
        tracking_number: str | None = None,
        tracking_url: str | None = None,
        estimated_delivery_at: float | datetime | None = None,
    ) -> str:
        """A paid order; returns its gid. Amounts are minor units: ``lines`` items are
        ``{"title", "quantity", "price"}`` (unit price; ``sku``/``variant_title``
        optional). The payment is one SALE, or an AUTHORIZATION and its CAPTURE, through
        ``gateway``; ``payment_reference`` (a Stripe payment intent id for a Stripe-paid
        order) becomes the transaction's ``paymentId`` and is in its receipt.

        ``fulfilled_at`` ships every line in one fulfillment; with a ``carrier`` or a
        ``tracking_number`` it is in transit from then until ``delivered_at``."""
        now = self.clock.now()
        created = _timestamp(created_at, now)
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            if currency != shop.currency:
                raise ValueError("orders are in the shop's currency in the sandbox")
            if shipping < 0 or not lines:
                raise ValueError("an order needs lines and a non-negative shipping amount")
            number = parse_gid(customer_id, "Customer") if customer_id else None
            customer = shop.customers.get(number) if number is not None else None
            if customer_id and customer is None:
                raise KeyError(f"no customer {customer_id} in {shop_domain}")
            order = Order(
                id=self.store.next_id(),
                number=shop.next_order_number,
                customer_id=customer.id if customer else None,
                currency=currency,
                email=customer.email if customer else None,
                created_at=created,
                updated_at=created,
                lines=[self._line(item) for item in lines],
                shipping=shipping,
                test=test,
            )
            shop.next_order_number += 1
            self._pay(order, gateway, payment_reference, created, authorize_then_capture)
            if fulfilled_at is not None:
                shipped = _timestamp(fulfilled_at, created)
                tracked = carrier is not None or tracking_number is not None
                order.fulfillments.append(
                    Fulfillment(
                        id=self.store.next_id(),
                        name=f"{order.name}-F1",
                        created_at=shipped,
                        quantity=sum(line.quantity for line in order.lines),
                        delivered_at=_timestamp(delivered_at, shipped) if delivered_at else None,
                        carrier=carrier,
                        tracking_number=tracking_number,
                        tracking_url=tracking_url,
                        in_transit_at=shipped if tracked else None,
                        estimated_delivery_at=(
                            _timestamp(estimated_delivery_at, shipped)
                            if estimated_delivery_at is not None
                            else None
                        ),
                    )
                )
                order.updated_at = max(created, shipped, _timestamp(delivered_at, shipped))
            shop.orders[order.id] = order
        return gid("Order", order.id)

    def _line(self, item: Mapping[str, Any]) -> LineItem:
        quantity, price = int(item["quantity"]), int(item["price"])
        if quantity <= 0 or price < 0:
            raise ValueError("a line needs a positive quantity and a non-negative price")
        return LineItem(
            id=self.store.next_id(),
            title=str(item["title"]),
            quantity=quantity,
            price=price,
            sku=item.get("sku"),
            variant_title=item.get("variant_title"),
        )

    def _pay(
        self,
        order: Order,
        gateway: str,
        reference: str | None,
        at: float,
        authorize_then_capture: bool,
    ) -> None:
        payment_id = reference or f"c{order.id}.1"
        receipt = {"payment_id": reference} if reference else {}
        first = Transaction(
            id=self.store.next_id(),
            kind="AUTHORIZATION" if authorize_then_capture else "SALE",
            status="SUCCESS",
            gateway=gateway,
            amount=order.total,
            created_at=at,
            payment_id=payment_id,
            receipt=receipt,
            test=order.test,
        )
        order.transactions.append(first)
        if authorize_then_capture:
            order.transactions.append(
                Transaction(
                    id=self.store.next_id(),
                    kind="CAPTURE",
                    status="SUCCESS",
                    gateway=gateway,
                    amount=order.total,
                    created_at=at,
                    parent_id=first.id,
                    payment_id=payment_id,
                    receipt=receipt,
                    test=order.test,
                )
            )

    def seed_history(self, shop_domain: str, history: Mapping[str, Any]) -> SeededHistory:
        """A shop's past refunds, disputes, store credits and discount codes at given
        times, planted and generated, in one call (:mod:`.history` describes the form);
        all of it is kept or, when any part is refused (``ValueError``), none of it."""
        return seed_history(self.store, shop_domain, history, self.clock.now())

    def line_items(self, order_id: str) -> list[str]:
        """The gids of an order's lines, in order (to name them in a refund)."""
        number = parse_gid(order_id, "Order")
        with self.store.lock:
            for shop in self.store.shops.values():
                order = shop.orders.get(number or 0)
                if order is not None:
                    return [gid("LineItem", line.id) for line in order.lines]
        raise KeyError(f"no order {order_id}")

    def open_dispute(
        self, order_id: str, *, status: str = "NEEDS_RESPONSE", initiated_as: str = "CHARGEBACK"
    ) -> str:
        """The customer's bank disputes the order's payment; returns the dispute's gid."""
        number = parse_gid(order_id, "Order")
        with self.store.lock:
            for shop in self.store.shops.values():
                order = shop.orders.get(number or 0)
                if order is not None:
                    dispute = Dispute(self.store.next_id(), status, initiated_as)
                    order.disputes.append(dispute)
                    return gid("OrderDisputeSummary", dispute.id)
        raise KeyError(f"no order {order_id}")

    # -- app lifecycle and compliance ------------------------------------------------------

    def uninstall(self, shop_domain: str) -> Event:
        """The merchant removes the app: tokens revoked at once, ``app/uninstalled`` sent,
        and ``shop/redact`` due 48 hours (sandbox time) later."""
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            shop.installed = False
            self.store.revoke(shop_domain)
            self.schedule.add(self.clock.now() + SHOP_REDACT_DELAY, "shop_redact", shop=shop_domain)
            payload = payloads.shop_payload(shop)
        return self.webhooks.emit(shop_domain, "app/uninstalled", payload)

    def install(self, shop_domain: str) -> None:
        """The merchant opens the app again: it is installed (managed installation)."""
        with self.store.lock:
            self.store.shop(shop_domain).installed = True
            self.schedule.items = [
                item for item in self.schedule.items if item.get("shop") != shop_domain
            ]

    def update_scopes(self, shop_domain: str, scopes: Sequence[str]) -> Event:
        """The merchant grants a new set of scopes: ``app/scopes_update``."""
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            previous, shop.scopes = list(shop.scopes), tuple(scopes)
            payload = payloads.scopes_update(shop, previous, list(scopes), self.clock.now())
        return self.webhooks.emit(shop_domain, "app/scopes_update", payload)

    def request_customer_data(self, shop_domain: str, customer_id: str) -> Event:
        """A customer asks the merchant for their data: ``customers/data_request``."""
        with self.store.lock:
            shop, customer = self._customer(shop_domain, customer_id)
            payload = payloads.customers_data_request(
                shop, customer, self._order_ids(shop, customer), self.store.next_id()
            )
        return self.webhooks.emit(shop_domain, "customers/data_request", payload)

    def redact_customer(self, shop_domain: str, customer_id: str) -> Event:
        """The merchant erases a customer: ``customers/redact``."""
        with self.store.lock:
            shop, customer = self._customer(shop_domain, customer_id)
            payload = payloads.customers_redact(shop, customer, self._order_ids(shop, customer))
        return self.webhooks.emit(shop_domain, "customers/redact", payload)

    def redact_shop(self, shop_domain: str) -> Event:
        """``shop/redact`` now (it also comes by itself 48 hours after an uninstall)."""
        with self.store.lock:
            payload = payloads.shop_redact(self.store.shop(shop_domain))
        return self.webhooks.emit(shop_domain, "shop/redact", payload)

    def _customer(self, shop_domain: str, customer_id: str) -> tuple[Shop, Customer]:
        shop = self.store.shop(shop_domain)
        customer = shop.customers.get(parse_gid(customer_id, "Customer") or 0)
        if customer is None:
            raise KeyError(f"no customer {customer_id} in {shop_domain}")
        return shop, customer

    @staticmethod
    def _order_ids(shop: Shop, customer: Customer) -> list[int]:
        return [o.id for o in shop.orders.values() if o.customer_id == customer.id]

    # -- what the shops received -----------------------------------------------------------

    def received_operations(self, shop_domain: str | None = None) -> list[ReceivedOperation]:
        """Every Admin GraphQL operation received (by one shop, when given), oldest first,
        each as the query or mutation it would run, whether or not it was run."""
        return self.operations.entries(shop_domain)

    def clear_received_requests(self) -> None:
        """Forget the requests, and the GraphQL operations, received so far."""
        super().clear_received_requests()
        self.operations.clear()

    # -- provider switches -----------------------------------------------------------------

    def set_refund_status(
        self, shop_domain: str, status: str, *, settle_after: float | None = None
    ) -> None:
        """New refund transactions report ``status`` (``SUCCESS``, ``PENDING``,
        ``FAILURE``); with ``PENDING`` and ``settle_after``, each settles as ``SUCCESS``
        that many sandbox seconds after it was made (``orders/updated`` follows)."""
        if status not in REFUND_STATUSES:
            raise ValueError(f"status must be one of {REFUND_STATUSES}")
        with self.store.lock:
            shop = self.store.shop(shop_domain)
            shop.refund_status = status
            shop.refund_settle_after = settle_after if status == "PENDING" else None

    def cost_usage(self, shop_domain: str) -> dict[str, float]:
        """The points the shop's queries used (charged, less what was given back), how
        many the bucket refused (``THROTTLED``), and its refill a second."""
        self.store.shop(shop_domain)
        return self.buckets.usage(shop_domain)

    def set_available_cost(self, shop_domain: str, points: float) -> None:
        """Set what the shop's query-cost bucket holds now (refills at 100 points/s)."""
        self.store.shop(shop_domain)
        self.buckets.set_available(shop_domain, points, self.clock.now())

    # -- time ------------------------------------------------------------------------------

    def process_due(self) -> int:
        """Perform scheduled work that is due (pending refunds settling, ``shop/redact``)."""
        with self.store.lock:
            return WORK.run(self, self.schedule, self.clock.now())

    # -- faults ----------------------------------------------------------------------------

    def arm_fault(self, fault: Fault) -> Fault:
        """Arm ``fault`` for the next ``fault.count`` matching requests (``path`` and
        ``idempotency_key`` globs; ``account`` is a shop domain; ``operation`` a GraphQL
        operation or root field name such as ``refundCreate``)."""
        return self.faults.arm(fault)

    # -- webhooks --------------------------------------------------------------------------

    def subscribe(
        self, shop_domain: str | None = None, *, url: str, topics: Sequence[str]
    ) -> Subscription:
        """Deliver ``topics`` to ``url``: for one shop, or (no shop) for every shop, as
        ``shopify.app.toml`` subscriptions do."""
        if shop_domain is not None:
            self.store.shop(shop_domain)
        return self.webhooks.subscribe(url, topics, shop_domain)

    def unsubscribe(self, subscription_id: str) -> None:
        """Stop sending to a subscription (KeyError when unknown)."""
        self.webhooks.unsubscribe(subscription_id)

    def webhook_events(
        self, shop_domain: str | None = None, topic: str | None = None
    ) -> list[Event]:
        """Events raised so far, oldest first."""
        return self.webhooks.events(shop_domain, topic)

    def deliver_event(self, event_id: str, subscription_id: str | None = None) -> list[JSON]:
        """Deliver an event again now, same ids and bytes: a duplicate on purpose."""
        return self.webhooks.deliver(event_id, subscription_id)

    def _deliver_all(self, shop: Shop, raised: list[tuple[str, JSON]]) -> None:
        for topic, payload in raised:
            self.webhooks.emit(shop.domain, topic, payload)


@WORK.task("shop_redact")
def _shop_redact(sandbox: ShopifySandbox, item: JSON) -> None:
    """Two days after an uninstall, unless the app was installed again."""
    shop = sandbox.store.shops.get(str(item["shop"]))
    if shop is not None and not shop.installed:
        sandbox.redact_shop(shop.domain)


@WORK.sweep
def _settle_pending_refunds(sandbox: ShopifySandbox) -> None:
    """Pending refund transactions settle once their shop's settling time has passed."""
    now = sandbox.clock.now()
    for shop in sandbox.store.shops.values():
        if shop.refund_settle_after is None:
            continue
        for order in shop.orders.values():
            due = [
                t
                for t in order.transactions
                if t.kind == "REFUND"
                and t.status == "PENDING"
                and t.created_at + shop.refund_settle_after <= now
            ]
            for transaction in due:
                transaction.status = "SUCCESS"
            if due:
                order.updated_at = now
                sandbox.webhooks.emit(shop.domain, "orders/updated", payloads.order(shop, order))
