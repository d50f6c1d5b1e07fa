"""What one GraphQL request's resolvers work with, and the helpers they share.

A :class:`Call` carries the shop the request addressed, the sandbox time it is served
at, the access scopes its token holds, the webhooks its mutations raise (delivered only
after the request committed) and the idempotency claims made for its mutations. The
helpers render money (``MoneyBag``/``MoneyV2``), page connections with Shopify's cursors
and limits, and refuse fields the token's scopes do not reach, all as Shopify answers.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from graphql import GraphQLError

from .money import graphql_amount
from .state import Shop, Store

if TYPE_CHECKING:
    from .idempotency import Claim

JSON = dict[str, Any]
T = TypeVar("T")

# Shopify's largest page.
MAX_PAGE = 250


@dataclass
class Call:
    """One GraphQL request being executed."""

    store: Store
    shop: Shop
    now: float
    scopes: frozenset[str]
    claims: dict[str, Claim] = field(default_factory=dict)
    webhooks: list[tuple[str, JSON]] = field(default_factory=list)

    def require_scope(self, field_name: str, scope: str) -> None:
        """Refuse ``field_name`` unless the token holds ``scope`` (a ``write_`` scope
        includes its ``read_`` one), with Shopify's ``ACCESS_DENIED`` error."""
        granted = scope in self.scopes or scope.replace("read_", "write_", 1) in self.scopes
        if not granted:
            raise GraphQLError(
                f"Access denied for {field_name} field. Required access: `{scope}` access scope.",
                extensions={
                    "code": "ACCESS_DENIED",
                    "documentation": "https://shopify.dev/api/usage/access-scopes",
                    "requiredAccess": f"`{scope}` access scope.",
                },
            )


def money_v2(minor: int, currency: str) -> JSON:
    """A ``MoneyV2``: Shopify's decimal amount and currency code."""
    return {"amount": graphql_amount(minor, currency), "currencyCode": currency}


def money_bag(minor: int, currency: str) -> JSON:
    """A ``MoneyBag``; shop and presentment currency are the same in the sandbox."""
    money = money_v2(minor, currency)
    return {"shopMoney": money, "presentmentMoney": dict(money)}


def _cursor(number: int) -> str:
    raw = json.dumps({"last_id": number, "last_value": str(number)}, separators=(",", ":"))
    return base64.b64encode(raw.encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        return int(json.loads(base64.b64decode(cursor.encode(), validate=True))["last_id"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise GraphQLError("Invalid cursor for current pagination sort.") from None


def page_size(first: int | None, last: int | None) -> int:
    """Check a connection's ``first``/``last`` as Shopify does and return the size."""
    if first is None and last is None:
        raise GraphQLError("you must provide one of first or last")
    if first is not None and last is not None:
        raise GraphQLError("providing both first and last is not supported")
    size = first if first is not None else last
    assert size is not None
    if size < 0 or size > MAX_PAGE:
        raise GraphQLError(
            f"The {'first' if first is not None else 'last'} argument must be between 0 and "
            f"{MAX_PAGE}."
        )
    return size


@dataclass(frozen=True)
class Page:
    """A connection field's paging arguments, as its resolver receives them."""

    first: int | None = None
    after: str | None = None
    last: int | None = None
    before: str | None = None
    reverse: bool = False


def connection(
    items: Sequence[T],
    page: Page,
    *,
    number: Callable[[T], int],
    node: Callable[[T], Any],
) -> JSON:
    """One ``page`` of ``items`` (already in the connection's order) as a Relay
    connection with Shopify's base64 JSON cursors."""
    size = page_size(page.first, page.last)
    ordered = list(reversed(items)) if page.reverse else list(items)
    positions = {number(item): index for index, item in enumerate(ordered)}
    start, stop = 0, len(ordered)
    if page.after is not None:
        start = positions.get(_decode_cursor(page.after), len(ordered) - 1) + 1
    if page.before is not None:
        stop = positions.get(_decode_cursor(page.before), 0)
    if page.first is not None:
        low, high = start, min(stop, start + size)
    else:
        low, high = max(start, stop - size), stop
    edges = [{"cursor": _cursor(number(item)), "node": node(item)} for item in ordered[low:high]]
    return {
        "edges": edges,
        "nodes": [edge["node"] for edge in edges],
        "pageInfo": {
            "hasNextPage": high < len(ordered),
            "hasPreviousPage": low > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


def limited(items: Sequence[T], first: int | None) -> list[T]:
    """A plain list field with an optional ``first`` (``refunds(first:)``)."""
    if first is None:
        return list(items)
    if first < 0 or first > MAX_PAGE:
        raise GraphQLError(f"The first argument must be between 0 and {MAX_PAGE}.")
    return list(items)[:first]


def _sorted_cursor(key: tuple[float, int]) -> str:
    value, number = key
    raw = json.dumps({"last_id": number, "last_value": repr(value)}, separators=(",", ":"))
    return base64.b64encode(raw.encode()).decode()


def _decode_sorted_cursor(cursor: str) -> tuple[float, int]:
    try:
        decoded = json.loads(base64.b64decode(cursor.encode(), validate=True))
        return float(decoded["last_value"]), int(decoded["last_id"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise GraphQLError("Invalid cursor for current pagination sort.") from None


def sorted_connection(
    items: Sequence[T],
    page: Page,
    *,
    key: Callable[[T], tuple[float, int]],
    node: Callable[[T], Any],
) -> JSON:
    """One ``page`` of ``items`` sorted by ``key`` (the sort value, then the id), as a
    Relay connection whose cursors carry both, as Shopify's do: a page after a cursor
    starts at the first item sorting after it, so an item whose sort value changed
    while a client paged (an order updated) moves, and nothing else is skipped."""
    size = page_size(page.first, page.last)
    ordered = sorted(items, key=key, reverse=page.reverse)
    keys = [key(item) for item in ordered]

    def precedes(first: tuple[float, int], second: tuple[float, int]) -> bool:
        return first > second if page.reverse else first < second

    start, stop = 0, len(ordered)
    if page.after is not None:
        mark = _decode_sorted_cursor(page.after)
        start = sum(1 for k in keys if not precedes(mark, k))
    if page.before is not None:
        mark = _decode_sorted_cursor(page.before)
        stop = max(start, sum(1 for k in keys if precedes(k, mark)))
    if page.first is not None:
        low, high = start, min(stop, start + size)
    else:
        low, high = max(start, stop - size), stop
    edges = [
        {"cursor": _sorted_cursor(keys[i]), "node": node(ordered[i])} for i in range(low, high)
    ]
    return {
        "edges": edges,
        "nodes": [edge["node"] for edge in edges],
        "pageInfo": {
            "hasNextPage": high < len(ordered),
            "hasPreviousPage": low > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }
