"""What a drafter is told about a case: the facts Caseward holds, and the customer's words.

A :class:`CaseBrief` is built by :func:`app.drafting.service.brief_for` from the
database, cut for the customer's identity: an unverified customer's brief carries no
order, so no drafter can reveal one. Customer text is kept apart from the facts
(``messages``), and both drafters treat it as data. The amounts are integers in minor
units; :meth:`OrderBrief.as_fact` gives the words a drafter may quote.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from babel import Locale, UnknownLocaleError

from app.conversations.replies import ActionBrief
from app.money import Money


@dataclass(frozen=True)
class LineBrief:
    id: str
    title: str
    quantity: int
    paid: int  # minor units, the whole line


@dataclass(frozen=True)
class ShipmentBrief:
    status: str  # "in_transit", "delivered", "unfulfilled", ...
    carrier: str | None = None
    tracking_number: str | None = None
    tracking_url: str | None = None
    estimated_delivery: str | None = None  # an ISO date


@dataclass(frozen=True)
class OrderBrief:
    name: str
    currency: str
    total: int
    placed_on: str  # ISO date
    lines: tuple[LineBrief, ...]
    delivered: bool
    shipment: ShipmentBrief | None = None

    def money(self, minor: int) -> Money:
        return Money(minor, self.currency)

    def as_fact(self) -> str:
        items = "; ".join(
            f"{line.id}: {line.quantity} x {line.title}, paid {self.money(line.paid)}"
            for line in self.lines
        )
        state = "delivered" if self.delivered else "not delivered yet"
        return f"{self.name} of {self.placed_on}, total {self.money(self.total)}, {state}; {items}"


@dataclass(frozen=True)
class MessageBrief:
    author: str  # "customer", "staff", "caseward"
    text: str


@dataclass(frozen=True)
class CaseBrief:
    shop_name: str
    verified: bool
    identity_level: str
    # What the shop allows a drafter to suggest, and its rules in words.
    kinds_allowed: tuple[str, ...]
    policy_lines: tuple[str, ...]
    messages: tuple[MessageBrief, ...]
    orders: tuple[OrderBrief, ...] = ()
    # The order the conversation is about, when one was picked exactly; else None.
    picked_order: str | None = None
    # What the customer quoted that matches none of their orders.
    unmatched: tuple[str, ...] = ()
    actions: tuple[ActionBrief, ...] = ()
    # A proposal already waits for a person (or is approved): no second one.
    proposal_open: bool = False
    wants_person: bool = False
    options: tuple[str, ...] = field(default=())
    # The storefront's locale the customer writes from (a Babel identifier: "fr_CA").
    locale: str = "en"

    @property
    def customer_texts(self) -> list[str]:
        return [message.text for message in self.messages if message.author == "customer"]

    @property
    def language(self) -> str:
        """The customer's language in English words, for the model ("French (fr_CA)")."""
        try:
            return f"{Locale.parse(self.locale).english_name} ({self.locale})"
        except (UnknownLocaleError, ValueError):
            return "English (en)"

    def picked(self) -> OrderBrief | None:
        """The order the conversation is about, when one was picked exactly."""
        return next((o for o in self.orders if o.name == self.picked_order), None)
