"""The Admin GraphQL documents Caseward sends (API 2026-04), and readers for their answers.

Each document is a module constant with one named operation, checked in the test suite
against Shopify's published 2026-04 schema. Each reader turns ``GraphQLAnswer.data`` (or
a mutation payload from :func:`integrations.shopify.graphql.data_or_user_errors`) into
frozen dataclasses; an answer whose shape is not the document's raises
:class:`ShopifyOutcomeUnknown` (a write may have happened all the same), and money
becomes :class:`Amount` (integer minor units, lower-case currency) through
:mod:`integrations.shopify.money`, never a float.

Choices the schema forced:

* Every amount is the ``MoneyBag``'s ``shopMoney`` (the shop's currency, the order's
  ``currencyCode``). An order paid in another presentment currency says so in
  ``OrderForRefund.presentment_currency``; refunds there must be sent in that currency.
* The processor's payment id is ``OrderTransaction.paymentId`` (``authorizationCode`` is
  deprecated "Use paymentId instead"; ``receiptJson`` is gateway-specific and "not a
  stable contract"). For a Stripe-paid order it carries the payment intent or charge id.
* Only ``refundCreate`` supports ``@idempotent`` (required from 2026-04; the directive is
  declared ``on FIELD`` and goes after the field's arguments). ``storeCreditAccountCredit``
  and ``discountCodeBasicCreate`` do not document idempotency support, so after an unclear
  outcome their effect is found by look-up: a discount by its code
  (:data:`DISCOUNT_BY_CODE`), a credit among the customer's store credit transactions
  (:data:`CUSTOMER_STORE_CREDIT`).
* Page sizes keep each query's requested cost under Shopify's single-query maximum
  (1,000 points): an order is read with up to 30 lines, 20 transactions, 5 refunds of up
  to 10 lines and 5 transactions each, and 10 fulfillments with up to 5 tracking numbers
  each; ``OrderForRefund.complete`` is False when any of those lists but the tracking
  numbers (which bound nothing) may have been cut, and such an order must not be used to
  bound a refund. :data:`CUSTOMER_STORE_CREDIT` takes ``$transactions`` up to 50.
* A fulfillment's carrier, tracking number and link are its ``trackingInfo`` (a plain
  list, not a connection: ``first`` truncates it); where it stands is ``displayStatus``
  (``IN_TRANSIT``, ``DELIVERED``, ...), with ``inTransitAt``, ``estimatedDeliveryAt`` and
  ``deliveredAt`` as the carrier reported them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from integrations.shopify.errors import ShopifyOutcomeUnknown
from integrations.shopify.money import (
    Amount,
    ShopifyMoneyError,
    amount_from_money_v2,
    to_decimal_string,
)

# Dispute statuses that mean the money is contested or already gone (``WON`` and
# ``PREVENTED`` leave it with the merchant).
OPEN_OR_LOST_DISPUTES = frozenset({"NEEDS_RESPONSE", "UNDER_REVIEW", "ACCEPTED", "LOST"})

LINE_ITEMS_PAGE = 30
TRANSACTIONS_PAGE = 20
REFUNDS_PAGE = 5
REFUND_LINES_PAGE = 10
REFUND_TRANSACTIONS_PAGE = 5
FULFILLMENTS_PAGE = 10
TRACKING_PAGE = 5

_SHOP_AMOUNT = """
fragment ShopAmount on MoneyBag {
  shopMoney { amount currencyCode }
}
"""

_TRANSACTION_FIELDS = """
fragment TransactionFields on OrderTransaction {
  id
  kind
  status
  gateway
  paymentId
  processedAt
  createdAt
  parentTransaction { id }
  amountSet { ...ShopAmount }
}
"""

_REFUND_FIELDS = f"""
fragment RefundFields on Refund {{
  id
  createdAt
  note
  totalRefundedSet {{ ...ShopAmount }}
  refundLineItems(first: {REFUND_LINES_PAGE}) {{
    nodes {{
      lineItem {{ id }}
      quantity
      subtotalSet {{ ...ShopAmount }}
    }}
    pageInfo {{ hasNextPage }}
  }}
  transactions(first: {REFUND_TRANSACTIONS_PAGE}) {{
    nodes {{ ...TransactionFields }}
    pageInfo {{ hasNextPage }}
  }}
}}
"""

_CODE_DISCOUNT_FIELDS = """
fragment CodeDiscountFields on DiscountCodeNode {
  id
  codeDiscount {
    __typename
    ... on DiscountCodeBasic {
      title
      status
      startsAt
      endsAt
      createdAt
      usageLimit
      appliesOncePerCustomer
      codes(first: 1) { nodes { code } }
      customerGets {
        value {
          __typename
          ... on DiscountAmount { amount { amount currencyCode } appliesOnEachItem }
          ... on DiscountPercentage { percentage }
        }
      }
    }
  }
}
"""

SHOP = """
query Shop {
  shop {
    id
    name
    myshopifyDomain
    currencyCode
    email
    ianaTimezone
  }
}
"""

CUSTOMER_WITH_ORDERS = (
    """
query CustomerWithOrders($id: ID!, $first: Int!, $after: String) {
  customer(id: $id) {
    id
    firstName
    lastName
    displayName
    state
    defaultEmailAddress { emailAddress }
    orders(first: $first, after: $after, sortKey: CREATED_AT, reverse: true) {
      nodes {
        id
        name
        createdAt
        currencyCode
        displayFinancialStatus
        totalPriceSet { ...ShopAmount }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""
    + _SHOP_AMOUNT
)

ORDER_FOR_REFUND = (
    f"""
query OrderForRefund($id: ID!) {{
  order(id: $id) {{
    id
    name
    createdAt
    cancelledAt
    test
    currencyCode
    presentmentCurrencyCode
    displayFinancialStatus
    customer {{ id }}
    totalPriceSet {{ ...ShopAmount }}
    totalReceivedSet {{ ...ShopAmount }}
    totalRefundedSet {{ ...ShopAmount }}
    lineItems(first: {LINE_ITEMS_PAGE}) {{
      nodes {{
        id
        title
        quantity
        refundableQuantity
        originalUnitPriceSet {{ ...ShopAmount }}
        discountedUnitPriceAfterAllDiscountsSet {{ ...ShopAmount }}
      }}
      pageInfo {{ hasNextPage }}
    }}
    transactions(first: {TRANSACTIONS_PAGE}) {{ ...TransactionFields }}
    refunds(first: {REFUNDS_PAGE}) {{ ...RefundFields }}
    fulfillments(first: {FULFILLMENTS_PAGE}) {{
      id
      status
      displayStatus
      createdAt
      inTransitAt
      estimatedDeliveryAt
      deliveredAt
      trackingInfo(first: {TRACKING_PAGE}) {{ company number url }}
    }}
    disputes {{ id status }}
  }}
}}
"""
    + _SHOP_AMOUNT
    + _TRANSACTION_FIELDS
    + _REFUND_FIELDS
)

SUGGESTED_REFUND = (
    """
query SuggestedRefund(
  $id: ID!
  $refundLineItems: [RefundLineItemInput!]
  $refundShipping: Boolean
  $shippingAmount: Money
  $suggestFullRefund: Boolean
) {
  order(id: $id) {
    id
    suggestedRefund(
      refundLineItems: $refundLineItems
      refundShipping: $refundShipping
      shippingAmount: $shippingAmount
      suggestFullRefund: $suggestFullRefund
    ) {
      amountSet { ...ShopAmount }
      maximumRefundableSet { ...ShopAmount }
      subtotalSet { ...ShopAmount }
      totalTaxSet { ...ShopAmount }
      shipping {
        amountSet { ...ShopAmount }
        maximumRefundableSet { ...ShopAmount }
      }
      refundLineItems {
        lineItem { id }
        quantity
        subtotalSet { ...ShopAmount }
      }
      suggestedTransactions {
        gateway
        kind
        parentTransaction { id }
        amountSet { ...ShopAmount }
        maximumRefundableSet { ...ShopAmount }
      }
    }
  }
}
"""
    + _SHOP_AMOUNT
)

REFUND_CREATE = (
    """
mutation RefundCreate($input: RefundInput!, $key: String!) {
  refundCreate(input: $input) @idempotent(key: $key) {
    refund { ...RefundFields }
    userErrors { field message }
  }
}
"""
    + _SHOP_AMOUNT
    + _TRANSACTION_FIELDS
    + _REFUND_FIELDS
)

STORE_CREDIT_ACCOUNT_CREDIT = """
mutation StoreCreditAccountCredit($id: ID!, $creditInput: StoreCreditAccountCreditInput!) {
  storeCreditAccountCredit(id: $id, creditInput: $creditInput) {
    storeCreditAccountTransaction {
      id
      createdAt
      expiresAt
      amount { amount currencyCode }
      balanceAfterTransaction { amount currencyCode }
      account { id }
    }
    userErrors { field message code }
  }
}
"""

CUSTOMER_STORE_CREDIT = """
query CustomerStoreCredit($id: ID!, $transactions: Int!) {
  customer(id: $id) {
    id
    storeCreditAccounts(first: 3) {
      nodes {
        id
        balance { amount currencyCode }
        transactions(first: $transactions, sortKey: CREATED_AT, reverse: true) {
          nodes {
            __typename
            createdAt
            amount { amount currencyCode }
            balanceAfterTransaction { amount currencyCode }
            ... on StoreCreditAccountCreditTransaction { id expiresAt }
          }
        }
      }
    }
  }
}
"""

DISCOUNT_CODE_BASIC_CREATE = (
    """
mutation DiscountCodeBasicCreate($basicCodeDiscount: DiscountCodeBasicInput!) {
  discountCodeBasicCreate(basicCodeDiscount: $basicCodeDiscount) {
    codeDiscountNode { ...CodeDiscountFields }
    userErrors { field message code }
  }
}
"""
    + _CODE_DISCOUNT_FIELDS
)

DISCOUNT_BY_CODE = (
    """
query DiscountByCode($code: String!) {
  codeDiscountNodeByCode(code: $code) { ...CodeDiscountFields }
}
"""
    + _CODE_DISCOUNT_FIELDS
)

#: Every document with its operation name, for checks and for ``operation_name=``.
DOCUMENTS: Mapping[str, str] = {
    "Shop": SHOP,
    "CustomerWithOrders": CUSTOMER_WITH_ORDERS,
    "OrderForRefund": ORDER_FOR_REFUND,
    "SuggestedRefund": SUGGESTED_REFUND,
    "RefundCreate": REFUND_CREATE,
    "StoreCreditAccountCredit": STORE_CREDIT_ACCOUNT_CREDIT,
    "CustomerStoreCredit": CUSTOMER_STORE_CREDIT,
    "DiscountCodeBasicCreate": DISCOUNT_CODE_BASIC_CREATE,
    "DiscountByCode": DISCOUNT_BY_CODE,
}


# ---------------------------------------------------------------- what the answers say


@dataclass(frozen=True)
class ShopInfo:
    id: str
    name: str
    domain: str
    currency: str
    email: str
    timezone: str


@dataclass(frozen=True)
class OrderSummary:
    id: str
    name: str
    created_at: datetime
    currency: str
    financial_status: str | None
    total: Amount


@dataclass(frozen=True)
class CustomerWithOrders:
    """A customer and one page of their orders, newest first."""

    id: str
    email: str | None
    first_name: str | None
    last_name: str | None
    display_name: str
    state: str
    orders: tuple[OrderSummary, ...]
    has_more_orders: bool
    orders_cursor: str | None


@dataclass(frozen=True)
class LineItem:
    id: str
    title: str
    quantity: int
    refundable_quantity: int
    original_unit_price: Amount
    unit_price_paid: Amount  # after every discount, line and order level


@dataclass(frozen=True)
class Transaction:
    """An order transaction; ``payment_id`` is the processor's id for the payment."""

    id: str
    kind: str
    status: str
    gateway: str | None
    payment_id: str | None
    parent_id: str | None
    amount: Amount
    processed_at: datetime | None
    created_at: datetime | None


@dataclass(frozen=True)
class RefundLine:
    line_item_id: str
    quantity: int
    subtotal: Amount


@dataclass(frozen=True)
class Refund:
    id: str
    created_at: datetime | None
    note: str | None
    total_refunded: Amount
    lines: tuple[RefundLine, ...]
    transactions: tuple[Transaction, ...]
    complete: bool  # False when its lines or transactions were cut at the page size


@dataclass(frozen=True)
class TrackingInfo:
    """One parcel's tracking: the carrier (Shopify's ``company``), its number and link."""

    company: str | None
    number: str | None
    url: str | None


@dataclass(frozen=True)
class Fulfillment:
    id: str
    status: str  # FulfillmentStatus: SUCCESS, CANCELLED, ERROR, FAILURE (OPEN, PENDING legacy)
    display_status: str | None  # FulfillmentDisplayStatus: IN_TRANSIT, DELIVERED, ...
    created_at: datetime
    delivered_at: datetime | None
    in_transit_at: datetime | None = None
    estimated_delivery_at: datetime | None = None
    tracking: tuple[TrackingInfo, ...] = ()


@dataclass(frozen=True)
class OrderForRefund:
    id: str
    name: str
    created_at: datetime
    cancelled_at: datetime | None
    test: bool
    currency: str
    presentment_currency: str
    customer_id: str | None
    financial_status: str | None
    total: Amount
    total_received: Amount
    total_refunded: Amount
    lines: tuple[LineItem, ...]
    transactions: tuple[Transaction, ...]
    refunds: tuple[Refund, ...]
    fulfillments: tuple[Fulfillment, ...]
    # The statuses of the order's chargebacks and inquiries, as Shopify reports them.
    dispute_statuses: tuple[str, ...]
    complete: bool  # False when any list may have been cut at its page size

    @property
    def disputed(self) -> bool:
        """A dispute still open, or lost: money Caseward must not send back on top."""
        return any(status in OPEN_OR_LOST_DISPUTES for status in self.dispute_statuses)


@dataclass(frozen=True)
class SuggestedTransaction:
    parent_id: str | None
    gateway: str | None
    kind: str
    amount: Amount
    maximum_refundable: Amount | None


@dataclass(frozen=True)
class SuggestedRefund:
    order_id: str
    amount: Amount
    maximum_refundable: Amount
    subtotal: Amount
    total_tax: Amount
    shipping: Amount
    shipping_maximum_refundable: Amount
    lines: tuple[RefundLine, ...]
    transactions: tuple[SuggestedTransaction, ...]


@dataclass(frozen=True)
class StoreCreditTransaction:
    id: str | None
    amount: Amount
    balance_after: Amount
    created_at: datetime
    expires_at: datetime | None


@dataclass(frozen=True)
class StoreCreditAccount:
    id: str
    balance: Amount
    credits: tuple[StoreCreditTransaction, ...]  # newest first


@dataclass(frozen=True)
class CustomerStoreCredit:
    customer_id: str
    accounts: tuple[StoreCreditAccount, ...]


@dataclass(frozen=True)
class CodeDiscount:
    id: str
    kind: str  # the DiscountCode union member, e.g. "DiscountCodeBasic"
    title: str | None
    code: str | None
    status: str | None
    starts_at: datetime | None
    ends_at: datetime | None
    created_at: datetime | None
    usage_limit: int | None
    applies_once_per_customer: bool | None
    percentage: float | None
    amount: Amount | None


# ---------------------------------------------------------------- readers

P = ParamSpec("P")
R = TypeVar("R")


def _reader(read: Callable[P, R]) -> Callable[P, R]:
    """An answer that is not the document's shape cannot be trusted either way."""

    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return read(*args, **kwargs)
        except ShopifyMoneyError:
            raise  # an amount that cannot be exact money says so itself
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ShopifyOutcomeUnknown(
                f"{read.__name__}: unexpected answer shape ({type(exc).__name__}: {exc})"
            ) from exc

    return wrapper


@_reader
def read_shop(data: Mapping[str, Any]) -> ShopInfo:
    shop = data["shop"]
    return ShopInfo(
        id=shop["id"],
        name=shop["name"],
        domain=shop["myshopifyDomain"],
        currency=shop["currencyCode"].lower(),
        email=shop["email"],
        timezone=shop["ianaTimezone"],
    )


@_reader
def read_customer_with_orders(data: Mapping[str, Any]) -> CustomerWithOrders | None:
    """None when Shopify has no such customer (never existed, or deleted)."""
    customer = data["customer"]
    if customer is None:
        return None
    orders = customer["orders"]
    email = customer.get("defaultEmailAddress")
    return CustomerWithOrders(
        id=customer["id"],
        email=email["emailAddress"] if email else None,
        first_name=customer.get("firstName"),
        last_name=customer.get("lastName"),
        display_name=customer["displayName"],
        state=customer["state"],
        orders=tuple(
            OrderSummary(
                id=order["id"],
                name=order["name"],
                created_at=_moment(order["createdAt"]),
                currency=order["currencyCode"].lower(),
                financial_status=order.get("displayFinancialStatus"),
                total=_shop_amount(order["totalPriceSet"]),
            )
            for order in orders["nodes"]
        ),
        has_more_orders=bool(orders["pageInfo"]["hasNextPage"]),
        orders_cursor=orders["pageInfo"].get("endCursor"),
    )


@_reader
def read_order_for_refund(data: Mapping[str, Any]) -> OrderForRefund | None:
    """None when Shopify has no such order."""
    order = data["order"]
    if order is None:
        return None
    line_items = order["lineItems"]
    refunds = tuple(_refund(node) for node in order["refunds"])
    transactions = tuple(_transaction(node) for node in order["transactions"])
    fulfillments = tuple(
        Fulfillment(
            id=node["id"],
            status=node["status"],
            display_status=node.get("displayStatus"),
            created_at=_moment(node["createdAt"]),
            delivered_at=_optional_moment(node.get("deliveredAt")),
            in_transit_at=_optional_moment(node.get("inTransitAt")),
            estimated_delivery_at=_optional_moment(node.get("estimatedDeliveryAt")),
            tracking=tuple(
                TrackingInfo(
                    company=info.get("company"), number=info.get("number"), url=info.get("url")
                )
                for info in node.get("trackingInfo") or ()
            ),
        )
        for node in order["fulfillments"]
    )
    complete = not (
        line_items["pageInfo"]["hasNextPage"]
        or len(transactions) >= TRANSACTIONS_PAGE
        or len(refunds) >= REFUNDS_PAGE
        or len(fulfillments) >= FULFILLMENTS_PAGE
        or not all(refund.complete for refund in refunds)
    )
    customer = order.get("customer")
    return OrderForRefund(
        id=order["id"],
        name=order["name"],
        created_at=_moment(order["createdAt"]),
        cancelled_at=_optional_moment(order.get("cancelledAt")),
        test=bool(order["test"]),
        currency=order["currencyCode"].lower(),
        presentment_currency=order["presentmentCurrencyCode"].lower(),
        customer_id=customer["id"] if customer else None,
        financial_status=order.get("displayFinancialStatus"),
        total=_shop_amount(order["totalPriceSet"]),
        total_received=_shop_amount(order["totalReceivedSet"]),
        total_refunded=_shop_amount(order["totalRefundedSet"]),
        lines=tuple(
            LineItem(
                id=node["id"],
                title=node["title"],
                quantity=int(node["quantity"]),
                refundable_quantity=int(node["refundableQuantity"]),
                original_unit_price=_shop_amount(node["originalUnitPriceSet"]),
                unit_price_paid=_shop_amount(node["discountedUnitPriceAfterAllDiscountsSet"]),
            )
            for node in line_items["nodes"]
        ),
        transactions=transactions,
        refunds=refunds,
        fulfillments=fulfillments,
        dispute_statuses=tuple(str(d["status"]) for d in order.get("disputes") or ()),
        complete=complete,
    )


@_reader
def read_suggested_refund(data: Mapping[str, Any]) -> SuggestedRefund | None:
    """None when Shopify has no such order (or suggests nothing for it)."""
    order = data["order"]
    if order is None or order.get("suggestedRefund") is None:
        return None
    suggested = order["suggestedRefund"]
    return SuggestedRefund(
        order_id=order["id"],
        amount=_shop_amount(suggested["amountSet"]),
        maximum_refundable=_shop_amount(suggested["maximumRefundableSet"]),
        subtotal=_shop_amount(suggested["subtotalSet"]),
        total_tax=_shop_amount(suggested["totalTaxSet"]),
        shipping=_shop_amount(suggested["shipping"]["amountSet"]),
        shipping_maximum_refundable=_shop_amount(suggested["shipping"]["maximumRefundableSet"]),
        lines=tuple(_refund_line(node) for node in suggested["refundLineItems"]),
        transactions=tuple(
            SuggestedTransaction(
                parent_id=_id_of(node.get("parentTransaction")),
                gateway=node.get("gateway"),
                kind=node["kind"],
                amount=_shop_amount(node["amountSet"]),
                maximum_refundable=(
                    _shop_amount(node["maximumRefundableSet"])
                    if node.get("maximumRefundableSet")
                    else None
                ),
            )
            for node in suggested["suggestedTransactions"]
        ),
    )


@_reader
def read_refund_create(payload: Mapping[str, Any]) -> Refund:
    """The refund from a ``refundCreate`` payload that had no user errors."""
    return _refund(payload["refund"])


@_reader
def read_store_credit_credit(payload: Mapping[str, Any]) -> StoreCreditTransaction:
    """The credit from a ``storeCreditAccountCredit`` payload that had no user errors."""
    return _store_credit(payload["storeCreditAccountTransaction"])


@_reader
def read_customer_store_credit(data: Mapping[str, Any]) -> CustomerStoreCredit | None:
    """The customer's store credit accounts with their newest credits; None: no customer."""
    customer = data["customer"]
    if customer is None:
        return None
    return CustomerStoreCredit(
        customer_id=customer["id"],
        accounts=tuple(
            StoreCreditAccount(
                id=account["id"],
                balance=amount_from_money_v2(account["balance"]),
                credits=tuple(
                    _store_credit(node)
                    for node in account["transactions"]["nodes"]
                    if node["__typename"] == "StoreCreditAccountCreditTransaction"
                ),
            )
            for account in customer["storeCreditAccounts"]["nodes"]
        ),
    )


@_reader
def read_discount_code_basic_create(payload: Mapping[str, Any]) -> CodeDiscount:
    """The discount from a ``discountCodeBasicCreate`` payload that had no user errors."""
    return _code_discount(payload["codeDiscountNode"])


@_reader
def read_discount_by_code(data: Mapping[str, Any]) -> CodeDiscount | None:
    node = data["codeDiscountNodeByCode"]
    return None if node is None else _code_discount(node)


# ---------------------------------------------------------------- variables for the writes


def refund_create_variables(
    *,
    key: str,
    order_id: str,
    parent_transaction_id: str,
    gateway: str,
    amount: Amount,
    line_items: Sequence[tuple[str, int]] = (),
    note: str | None = None,
    notify: bool = False,
) -> dict[str, Any]:
    """Variables for :data:`REFUND_CREATE`: one refund transaction against its parent
    (the sale or capture), optional lines as ``(line_item_id, quantity)`` without
    restocking (the money is Caseward's business, the stock the merchant's)."""
    refund: dict[str, Any] = {
        "orderId": order_id,
        "notify": notify,
        "currency": amount.currency.upper(),
        "transactions": [
            {
                "orderId": order_id,
                "parentId": parent_transaction_id,
                "gateway": gateway,
                "kind": "REFUND",
                "amount": to_decimal_string(amount.amount, amount.currency),
            }
        ],
        "refundLineItems": [
            {"lineItemId": line_id, "quantity": quantity, "restockType": "NO_RESTOCK"}
            for line_id, quantity in line_items
        ],
    }
    if note is not None:
        refund["note"] = note
    return {"input": refund, "key": key}


def store_credit_variables(
    *, customer_id: str, amount: Amount, notify: bool = False
) -> dict[str, Any]:
    """Variables for :data:`STORE_CREDIT_ACCOUNT_CREDIT`, crediting the customer's account
    in ``amount``'s currency (Shopify opens the account if there is none)."""
    return {
        "id": customer_id,
        "creditInput": {
            "creditAmount": {
                "amount": to_decimal_string(amount.amount, amount.currency),
                "currencyCode": amount.currency.upper(),
            },
            "notify": notify,
        },
    }


def discount_code_variables(
    *,
    code: str,
    title: str,
    customer_id: str,
    starts_at: datetime,
    percentage: float | None = None,
    amount: Amount | None = None,
) -> dict[str, Any]:
    """Variables for :data:`DISCOUNT_CODE_BASIC_CREATE`: a single-use code for one
    customer, either ``percentage`` (0 < p <= 1, Shopify's scale) or a fixed ``amount``."""
    if (percentage is None) == (amount is None):
        raise ValueError("give exactly one of percentage and amount")
    value: dict[str, Any] = (
        {"percentage": percentage}
        if amount is None
        else {
            "discountAmount": {
                "amount": to_decimal_string(amount.amount, amount.currency),
                "appliesOnEachItem": False,
            }
        }
    )
    return {
        "basicCodeDiscount": {
            "title": title,
            "code": code,
            "startsAt": starts_at.astimezone(UTC).isoformat(),
            "usageLimit": 1,
            "appliesOncePerCustomer": True,
            "context": {"customers": {"add": [customer_id]}},
            "customerGets": {"value": value, "items": {"all": True}},
        }
    }


# ---------------------------------------------------------------- pieces


def _shop_amount(bag: Mapping[str, Any]) -> Amount:
    return amount_from_money_v2(bag["shopMoney"])


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _optional_moment(text: str | None) -> datetime | None:
    return _moment(text) if text else None


def _id_of(node: Mapping[str, Any] | None) -> str | None:
    return node["id"] if node else None


def _transaction(node: Mapping[str, Any]) -> Transaction:
    return Transaction(
        id=node["id"],
        kind=node["kind"],
        status=node["status"],
        gateway=node.get("gateway"),
        payment_id=node.get("paymentId"),
        parent_id=_id_of(node.get("parentTransaction")),
        amount=_shop_amount(node["amountSet"]),
        processed_at=_optional_moment(node.get("processedAt")),
        created_at=_optional_moment(node.get("createdAt")),
    )


def _refund_line(node: Mapping[str, Any]) -> RefundLine:
    return RefundLine(
        line_item_id=node["lineItem"]["id"],
        quantity=int(node["quantity"]),
        subtotal=_shop_amount(node["subtotalSet"]),
    )


def _refund(node: Mapping[str, Any]) -> Refund:
    lines, transactions = node["refundLineItems"], node["transactions"]
    return Refund(
        id=node["id"],
        created_at=_optional_moment(node.get("createdAt")),
        note=node.get("note"),
        total_refunded=_shop_amount(node["totalRefundedSet"]),
        lines=tuple(_refund_line(line) for line in lines["nodes"]),
        transactions=tuple(_transaction(entry) for entry in transactions["nodes"]),
        complete=not (lines["pageInfo"]["hasNextPage"] or transactions["pageInfo"]["hasNextPage"]),
    )


def _store_credit(node: Mapping[str, Any]) -> StoreCreditTransaction:
    return StoreCreditTransaction(
        id=node.get("id"),
        amount=amount_from_money_v2(node["amount"]),
        balance_after=amount_from_money_v2(node["balanceAfterTransaction"]),
        created_at=_moment(node["createdAt"]),
        expires_at=_optional_moment(node.get("expiresAt")),
    )


def _code_discount(node: Mapping[str, Any]) -> CodeDiscount:
    discount = node["codeDiscount"]
    codes = (discount.get("codes") or {}).get("nodes") or []
    value = (discount.get("customerGets") or {}).get("value") or {}
    money = value.get("amount")
    return CodeDiscount(
        id=node["id"],
        kind=discount["__typename"],
        title=discount.get("title"),
        code=codes[0]["code"] if codes else None,
        status=discount.get("status"),
        starts_at=_optional_moment(discount.get("startsAt")),
        ends_at=_optional_moment(discount.get("endsAt")),
        created_at=_optional_moment(discount.get("createdAt")),
        usage_limit=discount.get("usageLimit"),
        applies_once_per_customer=discount.get("appliesOncePerCustomer"),
        percentage=value.get("percentage"),
        amount=amount_from_money_v2(money) if money else None,
    )
