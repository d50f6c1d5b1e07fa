"""What every check reads, and the wording shared by their reasons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.guard.policy import PolicyRules
from app.guard.proposal import InFlightAction, PastAction, ProposedAction
from app.money import Money
from integrations.provider import ActionKind, OrderFacts, ProviderStatus

MONEY_KINDS = frozenset({ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT})
# Credits and discounts target the customer itself.
CUSTOMER_TARGET_KINDS = frozenset({ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT})

KIND_NOUN = {
    ActionKind.REFUND: "refund",
    ActionKind.CUSTOMER_CREDIT: "customer credit",
    ActionKind.DISCOUNT: "discount",
    ActionKind.SUBSCRIPTION_CANCEL: "subscription cancellation",
    ActionKind.SUBSCRIPTION_CHANGE: "subscription change",
}
_NO_MONEY_MOVED = frozenset({ProviderStatus.FAILED, ProviderStatus.CANCELED})


@dataclass(frozen=True)
class Context:
    """One evaluation's inputs. ``in_flight`` already leaves out the proposal's own action."""

    proposal: ProposedAction
    policy: PolicyRules
    in_flight: tuple[InFlightAction, ...]
    history: tuple[PastAction, ...]
    order: OrderFacts | None
    now: datetime

    @property
    def noun(self) -> str:
        return KIND_NOUN[self.proposal.kind]

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


def fmt(amount: int, currency: str) -> str:
    return Money(amount, currency).format()


def plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def describe_period(period: timedelta) -> str:
    """'72 hours', '30 days', '90 minutes': the largest whole unit, days from four on."""
    seconds = int(period.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and (unit != "day" or seconds > 3 * 86400):
            return plural(seconds // size, unit)
    return plural(seconds, "second")


def day(moment: datetime) -> str:
    return moment.date().isoformat()
