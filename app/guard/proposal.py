"""What the guard is asked about: a proposed action, and our own actions around it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType

from app.guard.identity import IdentityLevel
from app.money import Money
from integrations.provider import ActionKind, ProviderStatus


def _freeze(value: object) -> object:
    """Lists become tuples and dicts read-only, so a proposal cannot change once checked."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    return value


@dataclass(frozen=True)
class LineItemRef:
    """Part of a refund attributed to one order line, in the refund's minor units."""

    line_id: str
    amount_minor: int
    # How many of the line's items go back, where the provider refunds by quantity.
    quantity: int | None = None


@dataclass(frozen=True)
class ClaimCoverage:
    """For a drafted proposal: the customer's claim as their own words bear it out, and
    what the proposal covers, each as (line id, items) pairs. A person's proposal has
    none: a person's judgement is theirs."""

    claimed: tuple[tuple[str, int], ...]
    proposed: tuple[tuple[str, int], ...]

    def beyond(self) -> list[tuple[str, int]]:
        """What the proposal covers past the claim: each line with the items too many."""
        claimed = dict(self.claimed)
        return [
            (line_id, quantity - claimed.get(line_id, 0))
            for line_id, quantity in self.proposed
            if quantity > claimed.get(line_id, 0)
        ]


@dataclass(frozen=True)
class ProposedAction:
    """One exact money action someone (Claude, staff, a macro) proposes.

    ``target`` is the payment intent id (refund), the customer id (credit,
    discount) or the subscription id (cancel, change). ``amount`` is required for
    refunds, credits and discounts (for a percent discount: the most it can take
    off) and absent for subscription actions.

    ``params`` by kind: every kind may carry ``reason``; discount ``percent_off``
    or ``amount_off`` (equal to ``amount`` in minor units), ``duration``
    (``once``/``repeating``/``forever``) and, when repeating, ``duration_in_months``;
    subscription cancel ``at_period_end`` (bool, required); subscription change
    ``items`` (the complete set wanted afterwards, as ``(price_id, quantity)``
    pairs) and/or ``cancel_at_period_end`` (bool).

    ``case_customer`` is the case's customer as the provider knows them (the Stripe
    customer id linked to the case's customer): the only customer money may reach.
    ``customer_ref`` is a customer the proposal itself names; it may narrow (name the
    same customer) but never widen what the case allows.

    ``money_ref`` names the money a refund gives back whichever provider is asked: the
    Stripe payment behind a Shopify order paid through Stripe, else the target. Our
    refunds of the same money through either provider count against the same ceiling.

    ``claim``, for a drafter's proposal only, sets the customer's claim beside what the
    proposal covers (``within_claim``).

    ``proposal_id`` is the id the action carries once queued: the value of
    ``ACTION_ID_METADATA_KEY`` in the provider's metadata. The worker sets it so the
    action is not counted as in flight against itself, and so a write of it that
    already landed at the provider blocks a second send.
    """

    kind: ActionKind
    target: str
    amount: Money | None
    identity_level: IdentityLevel
    proposed_by: str
    provider: str = "stripe"
    customer_ref: str | None = None
    case_customer: str | None = None
    line_items: tuple[LineItemRef, ...] = ()
    params: Mapping[str, object] = field(default_factory=dict, hash=False)
    proposal_id: str | None = None
    money_ref: str | None = None
    claim: ClaimCoverage | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _freeze(self.params))
        object.__setattr__(self, "line_items", tuple(self.line_items))


class InFlightStatus(StrEnum):
    """Our own actions that may still move money: counted against what is left."""

    APPROVED = "approved"
    QUEUED = "queued"
    SUBMITTED = "submitted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class InFlightAction:
    """One of our actions that is approved but not yet settled at the provider."""

    action_id: str
    kind: ActionKind
    target: str
    customer_ref: str | None
    amount: Money | None
    status: InFlightStatus
    line_items: tuple[LineItemRef, ...] = ()
    provider: str = "stripe"
    money_ref: str | None = None


@dataclass(frozen=True)
class PastAction:
    """One of our executed actions, with the provider's status, for caps and duplicates.

    ``status`` failed or canceled means no money moved, so it counts for nothing.
    """

    action_id: str
    kind: ActionKind
    target: str
    customer_ref: str | None
    amount: Money
    status: ProviderStatus
    created_at: datetime
    line_items: tuple[LineItemRef, ...] = ()
    provider: str = "stripe"
    money_ref: str | None = None


@dataclass(frozen=True)
class CapSpend:
    """Our own money counted against one cap, in the cap's currency: ``done`` is what our
    actions the provider reported (money moved) took over the cap's period, ``in_flight``
    what our actions on their way will take, however old. The proposal's own action is
    never in it."""

    done: int
    in_flight: int


@dataclass(frozen=True)
class CapSpending:
    """What the caller added up for each cap (by a query, rather than handing over every
    action): the case's customer's for the per-customer cap, the shop's for the per-shop
    cap. A cap left ``None`` is added up from ``in_flight`` and ``history``."""

    customer: CapSpend | None = None
    shop: CapSpend | None = None


@dataclass(frozen=True)
class CustomerRecord:
    """What Caseward's own records say of the case's customer, for the abuse signals
    (:mod:`app.guard._signals`), as the caller read them; windows are the signals' 90 days.

    ``shop_actions``: the shop's actions of any customer the provider reported within the
    window (how much of the shop's past Caseward has seen). ``orders``, ``first_order_at``
    and ``spend`` (currency -> minor units): the customer's orders on record. ``claims`` and
    ``refunded`` (currency -> minor units): our refunds and credits to them within the
    window that moved money or are on their way, the proposal's own action left out.
    ``sharing_email``: the other customers refunded or credited within the window under the
    same email address (Caseward's customer ids). ``says_not_received``: the case's request
    says an order never arrived.
    """

    shop_actions: int = 0
    orders: int = 0
    first_order_at: datetime | None = None
    spend: Mapping[str, int] = field(default_factory=dict, hash=False)
    claims: int = 0
    refunded: Mapping[str, int] = field(default_factory=dict, hash=False)
    sharing_email: tuple[str, ...] = ()
    says_not_received: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "spend", MappingProxyType(dict(self.spend)))
        object.__setattr__(self, "refunded", MappingProxyType(dict(self.refunded)))
        object.__setattr__(self, "sharing_email", tuple(self.sharing_email))
