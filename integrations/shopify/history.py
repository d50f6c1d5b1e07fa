"""A Shopify shop's past money actions for the read-only audit, one query per page.

:class:`ShopifyHistoryReader` keeps the contract of :mod:`integrations.history` on the
Admin GraphQL client (:class:`~integrations.shopify.graphql.AdminClient`). It sends
queries only, never a mutation, and needs read access scopes only
(:data:`READ_SCOPES`):

* ``read_orders`` for refunds. Shopify lists only the orders of the last 60 days unless
  the app also holds ``read_all_orders``: without it, a refund made in the window on an
  older order is not seen, so a 90-day window needs ``read_all_orders``;
* ``read_customers`` and ``read_store_credit_account_transactions`` for store credits
  (``write_store_credit_account_transactions`` includes the latter);
* ``read_discounts`` for discount codes.

Every call of ``read_page`` sends exactly one query and answers the records it gave and
the cursor of the next call, so the scan that paces the calls paces the queries; a page
may hold no record while its cursor goes on. Cursors are compact JSON that only this
reader reads: where Shopify's list goes on (its own cursor), whether it is read to its
end, and a queue of reads the list's pages asked for and that come first. The streams:

* ``refunds``: orders updated in the window (``orders(query: "updated_at:>=...")``,
  sorted by that time, as Shopify advises for a filter), each with its customer, what it
  received, its disputes and its first refunds with their first transactions; a refund
  is kept when it was created in the window (a refund updates its order, so no order
  holding one is missed). An order with more refunds or transactions than a page reads
  goes to the queue and is read alone, whole (up to :data:`WHOLE_ORDER_REFUNDS` refunds
  of up to :data:`WHOLE_ORDER_TRANSACTIONS` transactions; Shopify lists an order's
  refunds without a cursor). A refund's status and amount follow the adapter's rules
  (:func:`~integrations.shopify._adapter_facts.refund_status`), and Caseward's own
  refunds are recognised by the marker the adapter writes at the end of their note.
* ``store_credits``: Shopify lists no store credit transactions across a shop, and
  filters a customer's by type, not by time. So customers are paged
  (``customers(sortKey: ID)``), each with its first store credit account and that
  account's newest credit transactions (``type:credit``, newest first); an account with
  more credits in the window, or a customer with more accounts (one per currency), goes
  to the queue and is read on (``storeCreditAccount(id:)``, ``customer(id:)``) until a
  credit older than the window ends it. Store credit keeps no text of ours, so no credit
  names a Caseward action.
* ``discounts``: code discounts created in the window
  (``discountNodes(query: "method:code created_at:>=...")``; ``codeDiscountNodes`` is
  deprecated for it): a percentage or an amount off, free shipping, buy X get Y or an
  app's; its code; and the customer it is restricted to when it names exactly one
  (``detail["buyers"]`` says ``everyone``, ``customers`` or ``segments``). Caseward's own
  codes carry its marker at the end of their title.

Pace: Shopify prices a query before running it (``requestedQueryCost``) and takes that
from the shop's bucket, which refills at its restore rate (100 points a second on the
standard plan, 1,000 on Plus); it gives back what the answer did not use
(``actualQueryCost``), so the bucket drains by what answers really cost. The reader's
``requests_per_second`` is the restore rate over what a page costs: before its first
answer, the worst case (the largest requested cost of its queries, priced by Shopify's
published rules as the sandbox prices them, see :func:`page_costs`); then the mean actual
cost of its last :data:`PACE_MEMORY` answers, at the restore rate the answers report. Most
orders hold no refund and most customers no store credit, so pages usually cost a fraction
of what they ask for, and the scan, which asks for the rate before every request, reads
several times faster than the worst case would let it. A page that costs more than the
mean lets the bucket sink; when it is too short for the next query's requested cost, the
client says so before sending (below), with the wait the refill needs.

A ``THROTTLED`` answer, a 429, or a bucket that this reader's last answer shows too
short for the next query (``asked`` false: nothing was sent) raises
:class:`~integrations.shopify.errors.ShopifyThrottled` (a
:class:`~integrations.provider.Throttled`) with the wait the bucket's numbers imply,
before anything of the page is returned; the client never waits or retries on its own
here, and the same cursor then reads the same page. Nothing here imports ``app``.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from integrations.history import HistoryPage, PastMoneyAction
from integrations.provider import ActionKind, ProviderStatus
from integrations.shopify.documents import (
    OPEN_OR_LOST_DISPUTES,
    Refund,
    Transaction,
)
from integrations.shopify.errors import ShopifyOutcomeUnknown
from integrations.shopify.graphql import AdminClient
from integrations.shopify.money import ShopifyMoneyError, amount_from_money_v2

from ._adapter_facts import action_id_in, refund_status

__all__ = [
    "DOCUMENTS",
    "READ_SCOPES",
    "STANDARD_RESTORE_RATE",
    "STREAMS",
    "ShopifyHistoryReader",
    "page_costs",
]

READ_SCOPES = (
    "read_orders",
    "read_customers",
    "read_discounts",
    "read_store_credit_account_transactions",
)
STREAMS = ("refunds", "store_credits", "discounts")
# Points a second a standard plan's bucket refills (Advanced 200, Plus 1,000).
STANDARD_RESTORE_RATE = 100.0

# Page sizes, each query's requested cost kept under Shopify's single-query maximum
# (1,000 points) and the items cheap: few refunds, accounts and credits per item, more
# read only for the items that have them.
ORDERS_PAGE = 36
REFUNDS_PER_ORDER = 2
TRANSACTIONS_PER_REFUND = 2
WHOLE_ORDER_REFUNDS = 25
WHOLE_ORDER_TRANSACTIONS = 10
CUSTOMERS_PAGE = 70
ACCOUNTS_PER_CUSTOMER = 1
CREDITS_PER_ACCOUNT = 2
MORE_ACCOUNTS = 10
MORE_CREDITS = 250
DISCOUNTS_PAGE = 49
# How many of the latest answers' costs the pace is reckoned on: enough to smooth one
# costly page, few enough to follow a stream whose pages cost more or less than the last.
PACE_MEMORY = 10

_SHOP_MONEY = "shopMoney { amount currencyCode }"

_ORDER_FIELDS = f"""
fragment HistoryOrder on Order {{
  id
  name
  customer {{ id }}
  totalReceivedSet {{ {_SHOP_MONEY} }}
  disputes {{ status }}
  refunds(first: $refunds) {{
    id
    createdAt
    processedAt
    note
    totalRefundedSet {{ {_SHOP_MONEY} }}
    transactions(first: $transactions) {{
      nodes {{ id kind status amountSet {{ {_SHOP_MONEY} }} }}
    }}
  }}
}}
"""

REFUNDS_PAGE_QUERY = (
    """
query HistoryRefunds(
  $first: Int!, $after: String, $query: String!, $refunds: Int!, $transactions: Int!
) {
  orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) {
    nodes { ...HistoryOrder }
    pageInfo { hasNextPage endCursor }
  }
}
"""
    + _ORDER_FIELDS
)

WHOLE_ORDER_QUERY = (
    """
query HistoryOrderRefunds($id: ID!, $refunds: Int!, $transactions: Int!) {
  order(id: $id) { ...HistoryOrder }
}
"""
    + _ORDER_FIELDS
)

_ACCOUNT_FIELDS = """
fragment HistoryAccount on StoreCreditAccount {
  id
  transactions(
    first: $credits, after: $creditsAfter, query: "type:credit", sortKey: CREATED_AT,
    reverse: true
  ) {
    nodes {
      createdAt
      event
      amount { amount currencyCode }
      ... on StoreCreditAccountCreditTransaction { id expiresAt }
    }
    pageInfo { hasNextPage endCursor }
  }
}
"""

STORE_CREDITS_PAGE_QUERY = (
    """
query HistoryStoreCredits(
  $first: Int!, $after: String, $accounts: Int!, $credits: Int!, $creditsAfter: String
) {
  customers(first: $first, after: $after, sortKey: ID) {
    nodes {
      id
      storeCreditAccounts(first: $accounts) {
        nodes { ...HistoryAccount }
        pageInfo { hasNextPage endCursor }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
"""
    + _ACCOUNT_FIELDS
)

CUSTOMER_CREDIT_QUERY = (
    """
query HistoryCustomerCredit(
  $id: ID!, $accounts: Int!, $accountsAfter: String, $credits: Int!, $creditsAfter: String
) {
  customer(id: $id) {
    id
    storeCreditAccounts(first: $accounts, after: $accountsAfter) {
      nodes { ...HistoryAccount }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""
    + _ACCOUNT_FIELDS
)

ACCOUNT_CREDITS_QUERY = (
    """
query HistoryAccountCredits($id: ID!, $credits: Int!, $creditsAfter: String) {
  storeCreditAccount(id: $id) { ...HistoryAccount }
}
"""
    + _ACCOUNT_FIELDS
)

DISCOUNTS_PAGE_QUERY = """
query HistoryDiscounts($first: Int!, $after: String, $query: String!) {
  discountNodes(first: $first, after: $after, query: $query, sortKey: CREATED_AT) {
    nodes {
      id
      discount {
        __typename
        ... on DiscountCodeBasic {
          title
          status
          createdAt
          codes(first: 1) { nodes { code } }
          context {
            __typename
            ... on DiscountCustomers { customers { id } }
          }
          customerGets {
            value {
              __typename
              ... on DiscountPercentage { percentage }
              ... on DiscountAmount { amount { amount currencyCode } appliesOnEachItem }
            }
          }
        }
        ... on DiscountCodeBxgy { title status createdAt codes(first: 1) { nodes { code } } }
        ... on DiscountCodeFreeShipping {
          title
          status
          createdAt
          codes(first: 1) { nodes { code } }
        }
        ... on DiscountCodeApp { title status createdAt codes(first: 1) { nodes { code } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
"""

#: Every query with its operation name.
DOCUMENTS: Mapping[str, str] = {
    "HistoryRefunds": REFUNDS_PAGE_QUERY,
    "HistoryOrderRefunds": WHOLE_ORDER_QUERY,
    "HistoryStoreCredits": STORE_CREDITS_PAGE_QUERY,
    "HistoryCustomerCredit": CUSTOMER_CREDIT_QUERY,
    "HistoryAccountCredits": ACCOUNT_CREDITS_QUERY,
    "HistoryDiscounts": DISCOUNTS_PAGE_QUERY,
}

_T = TypeVar("_T")

# The buyers a code discount names, from its ``context``'s type.
_BUYERS = {
    "DiscountBuyerSelectionAll": "everyone",
    "DiscountCustomers": "customers",
    "DiscountCustomerSegments": "segments",
}
_DISCOUNT_TYPES = {
    "DiscountCodeBasic": "basic",
    "DiscountCodeBxgy": "buy_x_get_y",
    "DiscountCodeFreeShipping": "free_shipping",
    "DiscountCodeApp": "app",
}


def _connection(items: int, item: int, *, page_info: bool = True) -> int:
    """A connection of ``items`` items priced ``item`` each, counting each item's
    ``nodes`` entry and, when selected, ``pageInfo``."""
    return 2 + items * (item + 1 + (1 if page_info else 0))


def page_costs() -> dict[str, int]:
    """Each query's requested cost (points) at the page sizes this reader sends.

    An order: its customer (1), what it received (2), its disputes (1) and its refunds
    (1 plus, per refund, its total (2) and its transactions, a connection of items of
    one amount (2)). A customer: its accounts, each a connection of credits of one
    amount. A discount: the union (1), a basic code's codes (a connection of one), its
    buyers (2) and its value (3), each other type's codes.
    """
    money = 2  # a MoneyBag or MoneyV2 object and the money in it
    one_code = _connection(1, 0, page_info=False)

    def order(refunds: int, transactions: int) -> int:
        refund = money + _connection(transactions, money, page_info=False)
        return 1 + money + 1 + (1 + refunds * refund)

    def account(credits: int) -> int:
        return _connection(credits, 1)

    basic = one_code + 2 + 3
    discount = 1 + basic + 3 * one_code
    return {
        "HistoryRefunds": _connection(
            ORDERS_PAGE, order(REFUNDS_PER_ORDER, TRANSACTIONS_PER_REFUND)
        ),
        "HistoryOrderRefunds": 1 + order(WHOLE_ORDER_REFUNDS, WHOLE_ORDER_TRANSACTIONS),
        "HistoryStoreCredits": _connection(
            CUSTOMERS_PAGE, _connection(ACCOUNTS_PER_CUSTOMER, account(CREDITS_PER_ACCOUNT))
        ),
        "HistoryCustomerCredit": 1 + _connection(MORE_ACCOUNTS, account(CREDITS_PER_ACCOUNT)),
        "HistoryAccountCredits": 1 + account(MORE_CREDITS),
        "HistoryDiscounts": _connection(DISCOUNTS_PAGE, discount),
    }


@dataclass(frozen=True)
class _Position:
    """Where a stream stands: Shopify's cursor of its list, whether the list is read to
    its end, and the reads its pages asked for, which come first."""

    after: str | None = None
    listed: bool = False
    queue: tuple[tuple[str | None, ...], ...] = field(default=())

    @classmethod
    def decode(cls, cursor: str | None) -> _Position:
        if cursor is None:
            return cls()
        try:
            raw = json.loads(cursor)
            after, listed, queue = raw["after"], raw["listed"], raw["queue"]
            if not (after is None or isinstance(after, str)) or not isinstance(listed, bool):
                raise TypeError("after or listed")
            return cls(after, listed, tuple(tuple(item) for item in queue))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a cursor of this reader: {cursor!r}") from exc

    def encoded(self) -> str | None:
        """The cursor, or ``None`` when nothing is left to read."""
        if self.listed and not self.queue:
            return None
        raw = {"after": self.after, "listed": self.listed, "queue": [list(i) for i in self.queue]}
        return json.dumps(raw, separators=(",", ":"))

    def listed_on(
        self, page_info: Mapping[str, Any], queued: list[tuple[str | None, ...]]
    ) -> _Position:
        """After a page of the list: its end cursor, and the reads it asked for."""
        return _Position(
            after=page_info.get("endCursor") or self.after,
            listed=not page_info["hasNextPage"],
            queue=(*self.queue, *queued),
        )


# What a stream's read gives: its records, and where the stream stands after them.
_Read = tuple[list[PastMoneyAction], _Position]


class ShopifyHistoryReader:
    """The refunds, store credits and discount codes of one shop, read with its offline
    token (``access_token``) over the shared ``http_client`` (which routes to the sandbox
    when configured so). ``clock`` is the monotonic clock the cost bucket is reckoned
    on; ``restore_rate`` the shop's bucket refill (points a second)."""

    provider = "shopify"
    streams: tuple[str, ...] = STREAMS

    def __init__(
        self,
        shop: str,
        access_token: str,
        *,
        http_client: httpx.Client,
        clock: Callable[[], float] = time.monotonic,
        restore_rate: float = STANDARD_RESTORE_RATE,
    ) -> None:
        self.shop = shop
        # No wait and no retry inside the client: the scan waits, then asks again.
        self._client = AdminClient(
            shop,
            access_token,
            http_client,
            clock=clock,
            max_throttle_retries=0,
            max_throttle_wait=0.0,
        )
        self._restore_rate = restore_rate
        self._spent: deque[float] = deque(maxlen=PACE_MEMORY)
        self._readers: dict[str, Callable[[datetime, _Position], _Read]] = {
            "refunds": self._refunds,
            "store_credits": self._store_credits,
            "discounts": self._discounts,
        }

    def __repr__(self) -> str:
        return f"ShopifyHistoryReader(shop={self.shop!r})"

    @property
    def requests_per_second(self) -> float:
        """The bucket's refill over what a page costs: before any answer, the worst
        case (the largest requested cost); then what the last pages really used."""
        if not self._spent:
            return self._restore_rate / max(page_costs().values())
        return self._restore_rate / max(sum(self._spent) / len(self._spent), 1.0)

    def read_page(self, stream: str, *, since: datetime, cursor: str | None) -> HistoryPage:
        """The next page of ``stream`` created at or after ``since``; see the module
        docstring for what each stream reads and what may be raised."""
        read = self._readers.get(stream)
        if read is None:
            raise ValueError(f"Shopify's history has no stream {stream!r} (only {STREAMS})")
        if since.tzinfo is None:
            raise ValueError("since must be an aware datetime")
        records, position = read(since, _Position.decode(cursor))
        return HistoryPage(tuple(records), position.encoded())

    # ------------------------------------------------------------ querying

    def _query(self, document: str, variables: Mapping[str, Any], operation: str) -> Any:
        answer = self._client.execute(document, variables, operation_name=operation)
        if answer.cost is not None:
            # Shopify takes the requested cost up front and gives back what the answer
            # did not use: the bucket drains by the actual cost.
            cost = answer.cost
            self._spent.append(cost.requested if cost.actual is None else cost.actual)
            self._restore_rate = cost.restore_rate or self._restore_rate
        return answer.data

    # ------------------------------------------------------------ refunds

    def _refunds(self, since: datetime, at: _Position) -> _Read:
        if at.queue:
            (_kind, order_id), rest = at.queue[0], at.queue[1:]
            variables = {
                "id": order_id,
                "refunds": WHOLE_ORDER_REFUNDS,
                "transactions": WHOLE_ORDER_TRANSACTIONS,
            }
            data = self._query(WHOLE_ORDER_QUERY, variables, "HistoryOrderRefunds")
            order = _parsed(lambda: data["order"])
            records = [] if order is None else _parsed(lambda: list(_refunds_of(order, since)))
            return records, replace(at, queue=rest)
        variables = {
            "first": ORDERS_PAGE,
            "after": at.after,
            "query": f"updated_at:>='{_stamp(since)}'",
            "refunds": REFUNDS_PER_ORDER,
            "transactions": TRANSACTIONS_PER_REFUND,
        }
        data = self._query(REFUNDS_PAGE_QUERY, variables, "HistoryRefunds")
        return _parsed(lambda: _refunds_page(data["orders"], since, at))

    # ------------------------------------------------------------ store credits

    def _store_credits(self, since: datetime, at: _Position) -> _Read:
        if at.queue:
            item, rest = at.queue[0], at.queue[1:]
            if item[0] == "account":
                _kind, customer, account_id, after = item
                variables = {"id": account_id, "credits": MORE_CREDITS, "creditsAfter": after}
                data = self._query(ACCOUNT_CREDITS_QUERY, variables, "HistoryAccountCredits")
                account = _parsed(lambda: data["storeCreditAccount"])
                found, more = (
                    ([], [])
                    if account is None
                    else _parsed(lambda: _credits_of(customer, account, since))
                )
            else:
                _kind, customer, after = item
                variables = {
                    "id": customer,
                    "accounts": MORE_ACCOUNTS,
                    "accountsAfter": after,
                    "credits": CREDITS_PER_ACCOUNT,
                    "creditsAfter": None,
                }
                data = self._query(CUSTOMER_CREDIT_QUERY, variables, "HistoryCustomerCredit")
                node = _parsed(lambda: data["customer"])
                found, more = (
                    ([], []) if node is None else _parsed(lambda: _customer_credits(node, since))
                )
            return found, replace(at, queue=(*more, *rest))
        variables = {
            "first": CUSTOMERS_PAGE,
            "after": at.after,
            "accounts": ACCOUNTS_PER_CUSTOMER,
            "credits": CREDITS_PER_ACCOUNT,
            "creditsAfter": None,
        }
        data = self._query(STORE_CREDITS_PAGE_QUERY, variables, "HistoryStoreCredits")

        def page() -> _Read:
            customers = data["customers"]
            found: list[PastMoneyAction] = []
            queued: list[tuple[str | None, ...]] = []
            for node in customers["nodes"]:
                records, more = _customer_credits(node, since)
                found += records
                queued += more
            return found, at.listed_on(customers["pageInfo"], queued)

        return _parsed(page)

    # ------------------------------------------------------------ discounts

    def _discounts(self, since: datetime, at: _Position) -> _Read:
        variables = {
            "first": DISCOUNTS_PAGE,
            "after": at.after,
            "query": f"method:code created_at:>='{_stamp(since)}'",
        }
        data = self._query(DISCOUNTS_PAGE_QUERY, variables, "HistoryDiscounts")

        def page() -> _Read:
            nodes = data["discountNodes"]
            found = [
                record
                for node in nodes["nodes"]
                if (record := _discount(node)) is not None and record.created >= since
            ]
            return found, at.listed_on(nodes["pageInfo"], [])

        return _parsed(page)


# ---------------------------------------------------------------- answers to records


def _parsed(read: Callable[[], _T]) -> _T:
    """``read()``, or :class:`ShopifyOutcomeUnknown` when the answer is not the
    document's shape (an amount that is not exact money says so itself)."""
    try:
        return read()
    except ShopifyMoneyError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ShopifyOutcomeUnknown(
            f"Shopify's history answer has an unexpected shape ({type(exc).__name__}: {exc})"
        ) from exc


def _stamp(since: datetime) -> str:
    """``since`` to the second, as Shopify's search syntax takes a time (rounded down,
    so the filter never leaves out what the window holds)."""
    return since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _refunds_page(orders: Mapping[str, Any], since: datetime, at: _Position) -> _Read:
    found: list[PastMoneyAction] = []
    queued: list[tuple[str | None, ...]] = []
    for order in orders["nodes"]:
        if _cut(order):
            queued.append(("order", order["id"]))  # read whole, its refunds kept then
        else:
            found += _refunds_of(order, since)
    return found, at.listed_on(orders["pageInfo"], queued)


def _cut(order: Mapping[str, Any]) -> bool:
    """Whether the page may have left some of the order's refunds or transactions out."""
    refunds = order["refunds"]
    return len(refunds) >= REFUNDS_PER_ORDER or any(
        len(refund["transactions"]["nodes"]) >= TRANSACTIONS_PER_REFUND for refund in refunds
    )


def _refunds_of(order: Mapping[str, Any], since: datetime) -> Iterator[PastMoneyAction]:
    """The order's refunds created in the window, with the order as the payment."""
    received = amount_from_money_v2(order["totalReceivedSet"]["shopMoney"])
    disputed = any(d["status"] in OPEN_OR_LOST_DISPUTES for d in order["disputes"])
    customer = order.get("customer")
    for node in order["refunds"]:
        created = _moment(node.get("createdAt") or node["processedAt"])
        if created < since:
            continue
        refund = _refund(node, created)
        status, amount, _failure = refund_status(refund)
        yield PastMoneyAction(
            provider="shopify",
            kind=ActionKind.REFUND,
            id=refund.id,
            created=created,
            customer=customer["id"] if customer else None,
            amount=amount,
            currency=refund.total_refunded.currency,
            payment=order["id"],
            payment_amount=received.amount,
            payment_disputed=disputed,
            status=status.value,
            caseward_action_id=action_id_in(refund.note),
            detail={"order": order["name"]},
        )


def _refund(node: Mapping[str, Any], created: datetime) -> Refund:
    """The refund as the adapter's status rules read it."""
    return Refund(
        id=node["id"],
        created_at=created,
        note=node.get("note"),
        total_refunded=amount_from_money_v2(node["totalRefundedSet"]["shopMoney"]),
        lines=(),
        transactions=tuple(
            Transaction(
                id=t["id"],
                kind=t["kind"],
                status=t["status"],
                gateway=None,
                payment_id=None,
                parent_id=None,
                amount=amount_from_money_v2(t["amountSet"]["shopMoney"]),
                processed_at=None,
                created_at=None,
            )
            for t in node["transactions"]["nodes"]
        ),
        complete=True,
    )


def _customer_credits(
    node: Mapping[str, Any], since: datetime
) -> tuple[list[PastMoneyAction], list[tuple[str | None, ...]]]:
    """The credits in the window of the customer's accounts on this page, and the reads
    still owed: an account's older credits, the customer's further accounts."""
    customer = node["id"]
    found: list[PastMoneyAction] = []
    queued: list[tuple[str | None, ...]] = []
    accounts = node["storeCreditAccounts"]
    for account in accounts["nodes"]:
        records, more = _credits_of(customer, account, since)
        found += records
        queued += more
    if accounts["pageInfo"]["hasNextPage"]:
        queued.append(("customer", customer, accounts["pageInfo"]["endCursor"]))
    return found, queued


def _credits_of(
    customer: str | None, account: Mapping[str, Any], since: datetime
) -> tuple[list[PastMoneyAction], list[tuple[str | None, ...]]]:
    """An account's credits on this page (newest first) made in the window; the read of
    its next page when every one of them was."""
    transactions = account["transactions"]
    found: list[PastMoneyAction] = []
    for node in transactions["nodes"]:
        created = _moment(node["createdAt"])
        if created < since:
            return found, []  # newest first: the rest are older still
        money = amount_from_money_v2(node["amount"])
        detail = {"event": str(node["event"]).lower()}
        if node.get("expiresAt"):
            detail["expires_at"] = node["expiresAt"]
        found.append(
            PastMoneyAction(
                provider="shopify",
                kind=ActionKind.CUSTOMER_CREDIT,
                id=node["id"],
                created=created,
                customer=customer,
                amount=money.amount,
                currency=money.currency,
                status=ProviderStatus.SUCCEEDED.value,  # store credit is applied when made
                detail=detail,
            )
        )
    page_info = transactions["pageInfo"]
    if page_info["hasNextPage"]:
        return found, [("account", customer, account["id"], page_info["endCursor"])]
    return found, []


def _discount(node: Mapping[str, Any]) -> PastMoneyAction | None:
    """A code discount as a money action; a type this reader does not know is left out."""
    discount = node["discount"]
    kind = _DISCOUNT_TYPES.get(discount["__typename"])
    if kind is None:
        return None
    codes = discount["codes"]["nodes"]
    detail = {"type": kind, "code": codes[0]["code"] if codes else ""}
    customer, percent, amount, currency = None, None, None, None
    context = discount.get("context")
    if context is not None:
        detail["buyers"] = _BUYERS.get(context["__typename"], "others")
        named = context.get("customers") or []
        customer = named[0]["id"] if len(named) == 1 else None
    value = (discount.get("customerGets") or {}).get("value") or {}
    if value.get("__typename") == "DiscountPercentage":
        share = float(value["percentage"])
        percent = round(share * 100)
        detail["percentage"] = f"{share * 100:g}"
    elif value.get("__typename") == "DiscountAmount":
        money = amount_from_money_v2(value["amount"])
        amount, currency = money.amount, money.currency
        if value.get("appliesOnEachItem"):
            detail["per_item"] = "yes"
    return PastMoneyAction(
        provider="shopify",
        kind=ActionKind.DISCOUNT,
        id=node["id"],
        created=_moment(discount["createdAt"]),
        customer=customer,
        amount=amount,
        currency=currency,
        percent_off=percent,
        status=str(discount["status"]).lower(),
        caseward_action_id=action_id_in(discount.get("title")),
        detail=detail,
    )
