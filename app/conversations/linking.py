"""Which of the verified customer's orders a conversation is about. Nothing is guessed.

An order is picked only by an exact match: its name (``#1001``, ``order 1001``) or an
amount the customer quotes that equals the order's total or one line's paid amount, in
the order's currency. A customer with a single order needs no pick. Otherwise the
candidates stay open (the customer is asked which order), and what the customer quoted
that matches none of their orders stays visible to staff as a conflict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.cases.models import Order
from app.conversations.amounts import Mention, mentions

# "#1001", "order 1001", "order no. 1001", "order number 1001"
_ORDER_NAME = re.compile(
    r"(?:#|\border\s*(?:no\.?|number|num\.?|#)?\s*)(\d{3,12})\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Linking:
    picked: Order | None
    candidates: tuple[Order, ...]
    # What the customer quoted that matches none of their orders ("#2002", "$55.00").
    unmatched: tuple[str, ...]
    # How the order was picked: "named", "amount", "only_order", "chosen", or None.
    how: str | None

    @property
    def ambiguous(self) -> bool:
        return self.picked is None and len(self.candidates) > 1


def link_order(
    texts: Sequence[str], orders: Sequence[Order], chosen: Order | None = None
) -> Linking:
    """The order ``texts`` (the customer's messages) are about, among ``orders``.

    ``chosen`` is an order the customer already picked (by verifying with it, or by
    answering which order): it stands unless a later message names another exactly."""
    names = [f"#{number}" for text in texts for number in _ORDER_NAME.findall(text)]
    amounts = [mention for text in texts for mention in mentions(text)]
    by_name = {order.name: order for order in orders}
    named = _unique(by_name[name] for name in names if name in by_name)
    unmatched = [name for name in dict.fromkeys(names) if name not in by_name]
    by_amount: list[Order] = []
    for mention in amounts:
        hits = [order for order in orders if _quotes(mention, order)]
        if hits:
            by_amount.extend(hits)
        else:
            unmatched.append(mention.text)
    by_amount = _unique(by_amount)
    candidates = tuple(orders)
    if len(named) == 1:
        return Linking(named[0], candidates, tuple(unmatched), "named")
    if len(named) > 1:
        return Linking(None, tuple(named), tuple(unmatched), None)
    if chosen is not None and chosen in orders:
        return Linking(chosen, candidates, tuple(unmatched), "chosen")
    if len(by_amount) == 1:
        return Linking(by_amount[0], candidates, tuple(unmatched), "amount")
    if len(orders) == 1 and not unmatched:
        return Linking(orders[0], candidates, (), "only_order")
    return Linking(None, tuple(by_amount) or candidates, tuple(unmatched), None)


def _quotes(mention: Mention, order: Order) -> bool:
    """Whether the quoted amount is exactly the order's total or one line's paid amount."""
    minor = mention.minor_units_in(order.currency)
    paid = {order.total} | {int(line.get("paid", 0)) for line in order.lines}
    return minor is not None and minor in paid


def _unique(orders: Iterable[Order]) -> list[Order]:
    seen: dict[object, Order] = {}
    for order in orders:
        seen.setdefault(order.id, order)
    return list(seen.values())
