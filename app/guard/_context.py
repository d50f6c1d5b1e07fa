"""What every check reads, and the wording shared by their reasons.

Reasons are catalogue sentences (:func:`app.words.said`): the words of the sentence are
Caseward's and get translated, the ids, names and codes in it are passed as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.guard.policy import PolicyRules
from app.guard.proposal import CapSpending, InFlightAction, PastAction, ProposedAction
from app.words import Code, Sentence, said, said_n
from integrations.provider import ActionKind, OrderFacts, ProviderStatus

# Credits and discounts target the customer itself.
CUSTOMER_TARGET_KINDS = frozenset({ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT})

# What a kind is called as a kind ("refunds"); one of them is its stored code in words.
KIND_NOUNS = {
    ActionKind.REFUND: said("refunds"),
    ActionKind.CUSTOMER_CREDIT: said("customer credits"),
    ActionKind.DISCOUNT: said("discounts"),
    ActionKind.SUBSCRIPTION_CANCEL: said("subscription cancellations"),
    ActionKind.SUBSCRIPTION_CHANGE: said("subscription changes"),
}
_NO_MONEY_MOVED = ProviderStatus.MOVED_NOTHING


@dataclass(frozen=True)
class Context:
    """One evaluation's inputs. ``in_flight`` already leaves out the proposal's own action."""

    proposal: ProposedAction
    policy: PolicyRules
    in_flight: tuple[InFlightAction, ...]
    history: tuple[PastAction, ...]
    order: OrderFacts | None
    now: datetime
    spending: CapSpending | None = None

    @property
    def noun(self) -> Code:
        return Code("kind", self.proposal.kind.value)

    @property
    def nouns(self) -> Sentence:
        return KIND_NOUNS[self.proposal.kind]

    @property
    def provider_label(self) -> str:
        return self.proposal.provider.capitalize()

    def since(self, period: timedelta) -> datetime:
        return self.now - period


def moved_money(status: ProviderStatus) -> bool:
    """Failed and canceled writes gave nothing; every other status may have (or will)."""
    return status not in _NO_MONEY_MOVED


def customer_of(kind: ActionKind, target: str, customer_ref: str | None) -> str | None:
    if customer_ref is not None:
        return customer_ref
    return target if kind in CUSTOMER_TARGET_KINDS else None


_PERIOD_UNITS: dict[str, Callable[[int], Sentence]] = {
    "day": lambda count: said_n("%(count)s day", "%(count)s days", count),
    "hour": lambda count: said_n("%(count)s hour", "%(count)s hours", count),
    "minute": lambda count: said_n("%(count)s minute", "%(count)s minutes", count),
    "second": lambda count: said_n("%(count)s second", "%(count)s seconds", count),
}


def describe_period(period: timedelta) -> Sentence:
    """'72 hours', '30 days', '90 minutes': the largest whole unit, days from four on."""
    seconds = int(period.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and (unit != "day" or seconds > 3 * 86400):
            return _PERIOD_UNITS[unit](seconds // size)
    return _PERIOD_UNITS["second"](seconds)


def day(moment: datetime) -> str:
    return moment.date().isoformat()
