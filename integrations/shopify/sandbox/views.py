"""The read side: each GraphQL object the sandbox serves, as a view over the state.

One small class per GraphQL type. A field ``fooBar`` is the view's ``foo_bar``: an
attribute or property for fields without arguments, a method (arguments in snake_case)
for fields with them; :func:`resolve_field` makes that mapping for graphql-core, and a
plain ``dict`` (``MoneyBag``, ``PageInfo``, payloads) is read by key. Views render
amounts with the order's currency and times on the sandbox clock, compute derived
figures from the state at read time, and check the token's scopes at the root fields
as Shopify does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from graphql import GraphQLAbstractType, GraphQLResolveInfo

from .context import Call, Page, connection, limited, money_bag, money_v2, sorted_connection
from .money import graphql_amount
from .refunds import RESTOCKING, Suggestion, refundable_money, suggest
from .search import Field, TimeField, WordField, matcher
from .state import (
    Customer,
    Discount,
    Fulfillment,
    LineItem,
    Order,
    Refund,
    StoreCreditAccount,
    StoreCreditTransaction,
    Transaction,
    gid,
    iso,
    parse_gid,
)

JSON = dict[str, Any]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    """``totalPriceSet`` -> ``total_price_set``."""
    return _CAMEL.sub("_", name).lower()


def resolve_field(source: Any, info: GraphQLResolveInfo, **args: Any) -> Any:
    """graphql-core's field resolver for views and plain dicts."""
    if isinstance(source, Mapping):
        return source.get(info.field_name)
    value = getattr(source, snake(info.field_name))
    if callable(value):
        return value(**{snake(name): arg for name, arg in args.items()})
    return value


def resolve_type(value: Any, _info: GraphQLResolveInfo, _abstract: GraphQLAbstractType) -> str:
    """The concrete type of a union or interface member."""
    if isinstance(value, Mapping):
        return str(value["__typename"])
    return str(value.typename)


def _optional_iso(ts: float | None) -> str | None:
    return iso(ts) if ts is not None else None


# Without ``read_all_orders`` Shopify lists only the orders of the last 60 days.
RECENT_ORDERS = 60 * 24 * 3600.0

_ORDER_SORT: dict[str, Callable[[Order], float]] = {
    "CREATED_AT": lambda o: o.created_at,
    "PROCESSED_AT": lambda o: o.created_at,
    "UPDATED_AT": lambda o: o.updated_at,
    "ID": lambda o: o.id,
    "ORDER_NUMBER": lambda o: o.number,
    "TOTAL_PRICE": lambda o: o.total,
}
_ORDER_FILTERS: dict[str, Field[Order]] = {
    "created_at": TimeField(lambda o: o.created_at),
    "processed_at": TimeField(lambda o: o.created_at),
    "updated_at": TimeField(lambda o: o.updated_at),
}
_CUSTOMER_SORT: dict[str, Callable[[Customer], float]] = {
    "CREATED_AT": lambda c: c.created_at,
    "UPDATED_AT": lambda c: c.updated_at,
    "ID": lambda c: c.id,
}
_CUSTOMER_FILTERS: dict[str, Field[Customer]] = {
    "customer_date": TimeField(lambda c: c.created_at),
    "updated_at": TimeField(lambda c: c.updated_at),
}
_DISCOUNT_SORT: dict[str, Callable[[Discount], float]] = {
    "CREATED_AT": lambda d: d.created_at,
    "ID": lambda d: d.id,
}
# Every discount the sandbox holds is a code discount.
_DISCOUNT_FILTERS: dict[str, Field[Discount]] = {
    "created_at": TimeField(lambda d: d.created_at),
    "updated_at": TimeField(lambda d: d.created_at),
    "starts_at": TimeField(lambda d: d.starts_at),
    "method": WordField(lambda d: ("code",)),
}
# Every store credit transaction the sandbox holds is a credit.
_CREDIT_FILTERS: dict[str, Field[StoreCreditTransaction]] = {
    "type": WordField(lambda t: ("credit",)),
}


def _money_bag(minor: Callable[[Any], int]) -> Any:
    """A ``MoneyBag`` field of a view over an order: ``minor(view)`` in the order's
    currency, computed at read time."""
    return property(lambda view: money_bag(minor(view), view.order.currency))


class RootView:
    """``QueryRoot``."""

    def __init__(self, call: Call) -> None:
        self.call = call

    @property
    def shop(self) -> ShopView:
        return ShopView(self.call)

    def customer(self, id: str) -> CustomerView | None:
        self.call.require_scope("customer", "read_customers")
        number = parse_gid(id, "Customer")
        found = self.call.shop.customers.get(number) if number is not None else None
        return CustomerView(self.call, found) if found is not None else None

    def order(self, id: str) -> OrderView | None:
        self.call.require_scope("order", "read_orders")
        number = parse_gid(id, "Order")
        found = self.call.shop.orders.get(number) if number is not None else None
        return OrderView(self.call, found) if found is not None else None

    def code_discount_node_by_code(self, code: str) -> DiscountNodeView | None:
        self.call.require_scope("codeDiscountNodeByCode", "read_discounts")
        wanted = code.strip().lower()
        found = next(
            (d for d in self.call.shop.discounts.values() if d.code.lower() == wanted), None
        )
        return DiscountNodeView(self.call, found) if found is not None else None

    def orders(self, sort_key: str = "PROCESSED_AT", query: str | None = None, **page: Any) -> JSON:
        """The shop's orders, filtered by ``query`` and sorted by ``sort_key``; without
        ``read_all_orders``, only those created in the last 60 days, as at Shopify."""
        self.call.require_scope("orders", "read_orders")
        wanted = matcher(query, _ORDER_FILTERS)
        oldest = self.call.now - RECENT_ORDERS
        every = "read_all_orders" in self.call.scopes
        found = [
            o
            for o in self.call.shop.orders.values()
            if (every or o.created_at >= oldest) and wanted(o)
        ]
        sort = _ORDER_SORT[sort_key]
        return sorted_connection(
            found,
            Page(**page),
            key=lambda o: (sort(o), o.id),
            node=lambda o: OrderView(self.call, o),
        )

    def customers(self, sort_key: str = "ID", query: str | None = None, **page: Any) -> JSON:
        self.call.require_scope("customers", "read_customers")
        wanted = matcher(query, _CUSTOMER_FILTERS)
        found = [c for c in self.call.shop.customers.values() if wanted(c)]
        sort = _CUSTOMER_SORT[sort_key]
        return sorted_connection(
            found,
            Page(**page),
            key=lambda c: (sort(c), c.id),
            node=lambda c: CustomerView(self.call, c),
        )

    def discount_nodes(self, sort_key: str = "ID", query: str | None = None, **page: Any) -> JSON:
        self.call.require_scope("discountNodes", "read_discounts")
        wanted = matcher(query, _DISCOUNT_FILTERS)
        found = [d for d in self.call.shop.discounts.values() if wanted(d)]
        sort = _DISCOUNT_SORT[sort_key]
        return sorted_connection(
            found,
            Page(**page),
            key=lambda d: (sort(d), d.id),
            node=lambda d: ListedDiscountView(self.call, d),
        )

    def store_credit_account(self, id: str) -> StoreCreditAccountView | None:
        number = parse_gid(id, "StoreCreditAccount")
        found = self.call.shop.credit_accounts.get(number) if number is not None else None
        return StoreCreditAccountView(self.call, found) if found is not None else None


class ShopView:
    def __init__(self, call: Call) -> None:
        shop = call.shop
        self.id = gid("Shop", shop.id)
        self.name = shop.name
        self.email = shop.email
        self.contact_email = shop.email
        self.currency_code = shop.currency
        self.myshopify_domain = shop.domain
        self.iana_timezone = shop.timezone
        self.created_at = iso(shop.created_at)


class CustomerView:
    def __init__(self, call: Call, customer: Customer) -> None:
        self.call = call
        self.customer = customer
        self.id = gid("Customer", customer.id)
        self.legacy_resource_id = customer.id
        self.email = customer.email
        self.first_name = customer.first_name
        self.last_name = customer.last_name
        self.display_name = customer.display_name
        self.state = customer.state
        self.created_at = iso(customer.created_at)
        self.updated_at = iso(customer.updated_at)

    def _orders(self) -> list[Order]:
        return [o for o in self.call.shop.orders.values() if o.customer_id == self.customer.id]

    @property
    def default_email_address(self) -> JSON | None:
        return {"emailAddress": self.customer.email} if self.customer.email else None

    @property
    def number_of_orders(self) -> int:
        return len(self._orders())

    @property
    def amount_spent(self) -> JSON:
        spent = sum(o.received - o.refunded for o in self._orders())
        return money_v2(spent, self.call.shop.currency)

    def orders(self, sort_key: str = "ID", **page: Any) -> JSON:
        self.call.require_scope("orders", "read_orders")
        keys = {
            "CREATED_AT": lambda o: (o.created_at, o.id),
            "PROCESSED_AT": lambda o: (o.created_at, o.id),
            "UPDATED_AT": lambda o: (o.updated_at, o.id),
            "ORDER_NUMBER": lambda o: (o.number, o.id),
            "TOTAL_PRICE": lambda o: (o.total, o.id),
        }
        ordered = sorted(self._orders(), key=keys.get(sort_key, lambda o: (o.id, o.id)))
        return connection(
            ordered, Page(**page), number=lambda o: o.id, node=lambda o: OrderView(self.call, o)
        )

    def store_credit_accounts(self, **page: Any) -> JSON:
        accounts = [
            a for a in self.call.shop.credit_accounts.values() if a.customer_id == self.customer.id
        ]
        return connection(
            accounts,
            Page(**page),
            number=lambda a: a.id,
            node=lambda a: StoreCreditAccountView(self.call, a),
        )


class OrderView:
    def __init__(self, call: Call, order: Order) -> None:
        self.call = call
        self.order = order
        self.id = gid("Order", order.id)
        self.legacy_resource_id = order.id
        self.name = order.name
        self.number = order.number
        self.email = order.email
        self.test = order.test
        self.currency_code = order.currency
        self.presentment_currency_code = order.currency
        self.created_at = iso(order.created_at)
        self.processed_at = iso(order.created_at)
        self.updated_at = iso(order.updated_at)
        self.cancelled_at = iso(order.cancelled_at) if order.cancelled_at is not None else None

    @property
    def customer(self) -> CustomerView | None:
        found = self.call.shop.customers.get(self.order.customer_id or 0)
        return CustomerView(self.call, found) if found is not None else None

    @property
    def display_financial_status(self) -> str:
        return self.order.financial_status

    @property
    def display_fulfillment_status(self) -> str:
        shipped = sum(f.quantity for f in self.order.fulfillments if f.status == "SUCCESS")
        wanted = sum(line.quantity for line in self.order.lines)
        if shipped == 0:
            return "UNFULFILLED"
        return "FULFILLED" if shipped >= wanted else "PARTIALLY_FULFILLED"

    @property
    def payment_gateway_names(self) -> list[str]:
        return list(dict.fromkeys(t.gateway for t in self.order.transactions if t.kind != "REFUND"))

    @property
    def refundable(self) -> bool:
        return refundable_money(self.order) > 0

    subtotal_price_set = _money_bag(lambda v: v.order.subtotal)
    total_price_set = _money_bag(lambda v: v.order.total)
    total_shipping_price_set = _money_bag(lambda v: v.order.shipping)
    total_received_set = _money_bag(lambda v: v.order.received)
    total_refunded_set = _money_bag(lambda v: v.order.refunded)
    total_refunded_shipping_set = _money_bag(lambda v: v.order.refunded_shipping)
    net_payment_set = _money_bag(lambda v: v.order.received - v.order.refunded)
    total_outstanding_set = _money_bag(lambda v: max(v.order.total - v.order.received, 0))
    current_total_price_set = _money_bag(
        lambda v: v.order.total - v.order.refunded_lines_value - v.order.refunded_shipping
    )

    def line_items(self, **page: Any) -> JSON:
        return connection(
            self.order.lines,
            Page(**page),
            number=lambda line: line.id,
            node=lambda line: LineItemView(self.call, self.order, line),
        )

    def transactions(self, first: int | None = None) -> list[TransactionView]:
        return [
            TransactionView(self.call, self.order, t)
            for t in limited(self.order.transactions, first)
        ]

    def refunds(self, first: int | None = None) -> list[RefundView]:
        return [RefundView(self.call, self.order, r) for r in limited(self.order.refunds, first)]

    @property
    def disputes(self) -> list[JSON]:
        return [
            {
                "id": gid("OrderDisputeSummary", d.id),
                "initiatedAs": d.initiated_as,
                "status": d.status,
            }
            for d in self.order.disputes
        ]

    def fulfillments(self, first: int | None = None) -> list[FulfillmentView]:
        return [FulfillmentView(self.order, f) for f in limited(self.order.fulfillments, first)]

    def suggested_refund(
        self,
        shipping_amount: str | None = None,
        refund_shipping: bool | None = None,
        refund_line_items: Sequence[Mapping[str, Any]] | None = None,
        suggest_full_refund: bool = False,
    ) -> SuggestedRefundView:
        suggestion = suggest(
            self.order,
            refund_line_items=refund_line_items,
            refund_shipping=refund_shipping,
            shipping_amount=shipping_amount,
            suggest_full_refund=suggest_full_refund,
        )
        return SuggestedRefundView(self.call, self.order, suggestion)


class LineItemView:
    def __init__(self, call: Call, order: Order, line: LineItem) -> None:
        self.order = order
        self.line = line
        self.id = gid("LineItem", line.id)
        self.title = line.title
        self.name = f"{line.title} - {line.variant_title}" if line.variant_title else line.title
        self.sku = line.sku
        self.variant_title = line.variant_title
        self.quantity = line.quantity
        self.requires_shipping = line.requires_shipping
        self.is_gift_card = False
        self.restockable = True
        self.taxable = True

    @property
    def refundable_quantity(self) -> int:
        return self.order.refundable_quantity(self.line)

    # Nothing is removed from an order in the sandbox but by refunds.
    current_quantity = refundable_quantity

    @property
    def unfulfilled_quantity(self) -> int:
        return 0 if any(f.status == "SUCCESS" for f in self.order.fulfillments) else self.quantity

    # The sandbox has no line discounts: discounted prices are the original ones.
    original_unit_price_set = _money_bag(lambda v: v.line.price)
    discounted_unit_price_set = original_unit_price_set
    discounted_unit_price_after_all_discounts_set = original_unit_price_set
    original_total_set = _money_bag(lambda v: v.line.price * v.line.quantity)
    discounted_total_set = original_total_set
    total_discount_set = _money_bag(lambda v: 0)


def _formatted_gateway(gateway: str) -> str:
    return gateway.replace("_", " ").title()


class TransactionView:
    def __init__(self, call: Call, order: Order, transaction: Transaction) -> None:
        self.call = call
        self.order_record = order
        self.transaction = transaction
        self.id = gid("OrderTransaction", transaction.id)
        self.kind = transaction.kind
        self.status = transaction.status
        self.gateway = transaction.gateway
        self.formatted_gateway = _formatted_gateway(transaction.gateway)
        self.payment_id = transaction.payment_id
        self.authorization_code = transaction.payment_id
        self.test = transaction.test
        self.manual_payment_gateway = False
        self.created_at = iso(transaction.created_at)
        self.processed_at = iso(transaction.created_at)
        self.amount_set = money_bag(transaction.amount, order.currency)

    @property
    def receipt_json(self) -> str:
        # Shopify hands the gateway's receipt over as a JSON document in a string.
        return json.dumps(self.transaction.receipt)

    @property
    def maximum_refundable_v2(self) -> JSON | None:
        if self.transaction.kind not in ("SALE", "CAPTURE") or self.transaction.status != "SUCCESS":
            return None
        remaining = self.order_record.parent_remaining(self.transaction)
        return money_v2(remaining, self.order_record.currency)

    @property
    def order(self) -> OrderView:
        return OrderView(self.call, self.order_record)

    @property
    def parent_transaction(self) -> TransactionView | None:
        if self.transaction.parent_id is None:
            return None
        parent = self.order_record.transaction(self.transaction.parent_id)
        return TransactionView(self.call, self.order_record, parent) if parent else None


class RefundView:
    def __init__(self, call: Call, order: Order, refund: Refund) -> None:
        self.call = call
        self.order_record = order
        self.refund = refund
        self.id = gid("Refund", refund.id)
        self.legacy_resource_id = refund.id
        self.note = refund.note
        self.created_at = iso(refund.created_at)
        self.updated_at = iso(refund.created_at)
        self.processed_at = iso(refund.processed_at)

    def _transactions(self) -> list[Transaction]:
        wanted = set(self.refund.transaction_ids)
        return [t for t in self.order_record.transactions if t.id in wanted]

    @property
    def order(self) -> OrderView:
        return OrderView(self.call, self.order_record)

    @property
    def total_refunded_set(self) -> JSON:
        settled = sum(t.amount for t in self._transactions() if t.status == "SUCCESS")
        return money_bag(settled, self.order_record.currency)

    def refund_line_items(self, **page: Any) -> JSON:
        order = self.order_record

        def view(refund_line: Any) -> RefundLineView:
            line = order.line(refund_line.line_item_id)
            assert line is not None
            return RefundLineView(
                self.call,
                order,
                line,
                quantity=refund_line.quantity,
                subtotal=refund_line.subtotal,
                restock_type=refund_line.restock_type,
                refund_line_id=refund_line.id,
            )

        return connection(self.refund.lines, Page(**page), number=lambda rl: rl.id, node=view)

    def transactions(self, **page: Any) -> JSON:
        return connection(
            self._transactions(),
            Page(**page),
            number=lambda t: t.id,
            node=lambda t: TransactionView(self.call, self.order_record, t),
        )


class RefundLineView:
    """A line refunded (or, inside a suggestion, suggested: then ``id`` is null)."""

    def __init__(
        self,
        call: Call,
        order: Order,
        line: LineItem,
        *,
        quantity: int,
        subtotal: int,
        restock_type: str,
        refund_line_id: int | None,
    ) -> None:
        self.id = gid("RefundLineItem", refund_line_id) if refund_line_id is not None else None
        self.line_item = LineItemView(call, order, line)
        self.quantity = quantity
        self.restock_type = restock_type
        self.restocked = restock_type in RESTOCKING
        self.price_set = money_bag(line.price, order.currency)
        self.subtotal_set = money_bag(subtotal, order.currency)
        self.total_tax_set = money_bag(0, order.currency)


class FulfillmentView:
    def __init__(self, order: Order, fulfillment: Fulfillment) -> None:
        self.id = gid("Fulfillment", fulfillment.id)
        self.legacy_resource_id = fulfillment.id
        self.name = fulfillment.name
        self.status = fulfillment.status
        self.total_quantity = fulfillment.quantity
        self.requires_shipping = True
        self.created_at = iso(fulfillment.created_at)
        self.delivered_at = _optional_iso(fulfillment.delivered_at)
        self.in_transit_at = _optional_iso(fulfillment.in_transit_at)
        self.estimated_delivery_at = _optional_iso(fulfillment.estimated_delivery_at)
        reported = (fulfillment.delivered_at, fulfillment.in_transit_at, fulfillment.created_at)
        self.updated_at = iso(max(moment for moment in reported if moment is not None))
        self.display_status = fulfillment.display_status
        # The sandbox keeps one tracking number per fulfillment, or none.
        f = fulfillment
        tracked = f.carrier or f.tracking_number or f.tracking_url
        self._tracking: list[JSON] = (
            [{"company": f.carrier, "number": f.tracking_number, "url": f.tracking_url}]
            if tracked
            else []
        )

    def tracking_info(self, first: int | None = None) -> list[JSON]:
        return limited(self._tracking, first)


class SuggestedRefundView:
    def __init__(self, call: Call, order: Order, suggestion: Suggestion) -> None:
        currency = order.currency
        self.amount_set = money_bag(suggestion.amount, currency)
        self.maximum_refundable_set = money_bag(suggestion.maximum, currency)
        self.subtotal_set = money_bag(suggestion.subtotal, currency)
        self.discounted_subtotal_set = money_bag(suggestion.subtotal, currency)
        self.total_tax_set = money_bag(0, currency)
        self.total_cart_discount_amount_set = money_bag(0, currency)
        self.total_duties_set = money_bag(0, currency)
        self.shipping = {
            "amountSet": money_bag(suggestion.shipping, currency),
            "maximumRefundableSet": money_bag(suggestion.shipping_maximum, currency),
            "taxSet": money_bag(0, currency),
        }
        self.refund_line_items = []
        for suggested in suggestion.lines:
            line = order.line(suggested.line_id)
            assert line is not None
            self.refund_line_items.append(
                RefundLineView(
                    call,
                    order,
                    line,
                    quantity=suggested.quantity,
                    subtotal=suggested.subtotal,
                    restock_type="NO_RESTOCK",
                    refund_line_id=None,
                )
            )
        self.suggested_transactions = [
            {
                "kind": "SUGGESTED_REFUND",
                "gateway": t.parent.gateway,
                "formattedGateway": _formatted_gateway(t.parent.gateway),
                "amountSet": money_bag(t.amount, currency),
                "maximumRefundableSet": money_bag(t.maximum, currency),
                "parentTransaction": TransactionView(call, order, t.parent),
            }
            for t in suggestion.transactions
        ]


class StoreCreditAccountView:
    def __init__(self, call: Call, account: StoreCreditAccount) -> None:
        self.call = call
        self.account = account
        self.id = gid("StoreCreditAccount", account.id)
        self.balance = money_v2(account.balance, account.currency)

    def transactions(
        self, sort_key: str = "CREATED_AT", query: str | None = None, **page: Any
    ) -> JSON:
        self.call.require_scope("transactions", "read_store_credit_account_transactions")
        wanted = matcher(query, _CREDIT_FILTERS)
        found = [t for t in self.account.transactions if wanted(t)]

        def key(t: StoreCreditTransaction) -> tuple[float, int]:
            if sort_key == "EXPIRES_AT":  # credits that never expire come last
                return (t.expires_at if t.expires_at is not None else float("inf"), t.id)
            return (t.created_at, t.id)

        return sorted_connection(
            found,
            Page(**page),
            key=key,
            node=lambda t: StoreCreditTransactionView(self.call, self.account, t),
        )


class StoreCreditTransactionView:
    typename: ClassVar[str] = "StoreCreditAccountCreditTransaction"

    def __init__(
        self, call: Call, account: StoreCreditAccount, transaction: StoreCreditTransaction
    ) -> None:
        self.account = StoreCreditAccountView(call, account)
        self.id = gid("StoreCreditAccountCreditTransaction", transaction.id)
        self.amount = money_v2(transaction.amount, account.currency)
        self.remaining_amount = money_v2(transaction.amount, account.currency)
        self.balance_after_transaction = money_v2(transaction.balance_after, account.currency)
        self.created_at = iso(transaction.created_at)
        expires = transaction.expires_at
        self.expires_at = iso(expires) if expires is not None else None
        self.event = "ADJUSTMENT"


def discount_view(call: Call, discount: Discount) -> CodeDiscountView:
    """The ``DiscountCode`` union member that ``discount`` is."""
    if discount.kind == DiscountCodeFreeShippingView.typename:
        return DiscountCodeFreeShippingView(call, discount)
    return DiscountCodeBasicView(call, discount)


class DiscountNodeView:
    """``DiscountCodeNode``: a code discount found by its code."""

    def __init__(self, call: Call, discount: Discount) -> None:
        self.id = gid("DiscountCodeNode", discount.id)
        self.code_discount = discount_view(call, discount)


class ListedDiscountView:
    """``DiscountNode``: a discount as ``discountNodes`` lists it (the same id)."""

    def __init__(self, call: Call, discount: Discount) -> None:
        self.id = gid("DiscountCodeNode", discount.id)
        self.discount = discount_view(call, discount)


class CodeDiscountView:
    """What every code discount type has: names, dates, limits, buyers and its code."""

    typename: ClassVar[str]

    def __init__(self, call: Call, discount: Discount) -> None:
        self.call = call
        self.discount = discount
        self.title = discount.title
        self.status = discount.status(call.now)
        self.starts_at = iso(discount.starts_at)
        self.ends_at = iso(discount.ends_at) if discount.ends_at is not None else None
        self.created_at = iso(discount.created_at)
        self.updated_at = iso(discount.created_at)
        self.usage_limit = discount.usage_limit
        self.applies_once_per_customer = discount.applies_once_per_customer
        self.async_usage_count = 0

    @property
    def context(self) -> JSON:
        ids = self.discount.customer_ids
        if ids is None:
            return {"__typename": "DiscountBuyerSelectionAll", "all": "ALL"}
        customers = [self.call.shop.customers[i] for i in ids if i in self.call.shop.customers]
        return {
            "__typename": "DiscountCustomers",
            "customers": [CustomerView(self.call, c) for c in customers],
        }

    def codes(self, **page: Any) -> JSON:
        code = {
            "id": gid("DiscountRedeemCode", self.discount.code_id),
            "code": self.discount.code,
            "asyncUsageCount": 0,
        }
        return connection(
            [code], Page(**page), number=lambda _c: self.discount.code_id, node=lambda c: c
        )


class DiscountCodeFreeShippingView(CodeDiscountView):
    typename: ClassVar[str] = "DiscountCodeFreeShipping"


class DiscountCodeBasicView(CodeDiscountView):
    typename: ClassVar[str] = "DiscountCodeBasic"

    def __init__(self, call: Call, discount: Discount) -> None:
        super().__init__(call, discount)
        currency = call.shop.currency
        self.tags = list(discount.tags)
        self.combines_with = {
            "orderDiscounts": discount.combines_with.get("orderDiscounts", False),
            "productDiscounts": discount.combines_with.get("productDiscounts", False),
            "shippingDiscounts": discount.combines_with.get("shippingDiscounts", False),
        }
        if discount.percentage is not None:
            value: JSON = {"__typename": "DiscountPercentage", "percentage": discount.percentage}
            off = f"{round(discount.percentage * 100, 2):g}% off"
        else:
            amount = discount.amount or 0
            value = {
                "__typename": "DiscountAmount",
                "amount": money_v2(amount, currency),
                "appliesOnEachItem": discount.applies_on_each_item,
            }
            off = f"{graphql_amount(amount, currency)} {currency} off"
        self.customer_gets = {
            "value": value,
            "items": {"__typename": "AllDiscountItems", "allItems": True},
            "appliesOnOneTimePurchase": True,
            "appliesOnSubscription": False,
        }
        self.short_summary = f"{off} entire order"
        self.summary = self.short_summary + (
            " • One use per customer" if discount.applies_once_per_customer else ""
        )
        self.minimum_requirement = _minimum(discount, currency)


def _minimum(discount: Discount, currency: str) -> JSON | None:
    if discount.minimum_quantity is not None:
        return {
            "__typename": "DiscountMinimumQuantity",
            "greaterThanOrEqualToQuantity": discount.minimum_quantity,
        }
    if discount.minimum_subtotal is not None:
        return {
            "__typename": "DiscountMinimumSubtotal",
            "greaterThanOrEqualToSubtotal": money_v2(discount.minimum_subtotal, currency),
        }
    return None
