"""Where a newly installed shop stands, and its policy in words a merchant can check.

A shop installs read-only. Before any money can move an owner connects Stripe with a
restricted key, reads the policy the checks will apply, and turns writes on. The setup
page shows these steps in that order; the admin opens on it until none remain.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.connections.models import Connection
from app.guard.policy import PolicyRules
from app.money import Money
from app.shops.models import Shop


@dataclass(frozen=True)
class SetupSteps:
    stripe_key_hint: str | None
    stripe_livemode: bool | None
    writes_enabled: bool

    @property
    def remaining(self) -> list[str]:
        steps = []
        if self.stripe_key_hint is None:
            steps.append("connect_stripe")
        if not self.writes_enabled:
            steps.append("enable_writes")
        return steps


def setup_steps(session: Session, shop: Shop) -> SetupSteps:
    stripe = session.scalars(
        select(Connection).where(Connection.shop_id == shop.id, Connection.provider == "stripe")
    ).one_or_none()
    return SetupSteps(
        stripe_key_hint=stripe.key_hint if stripe else None,
        stripe_livemode=stripe.livemode if stripe else None,
        writes_enabled=shop.writes_enabled,
    )


def policy_in_words(policy: PolicyRules) -> list[str]:
    """One sentence per rule, amounts in their currency, as the setup page shows them."""
    lines = [
        "Allowed actions: "
        + ", ".join(kind.replace("_", " ") for kind in sorted(policy.enabled_kinds))
        + ".",
        f"A second refund, credit or discount for the same payment or customer within "
        f"{_period(policy.duplicate_window)} is blocked as a likely duplicate.",
        f"Discounts may take at most {policy.max_percent_off}% off.",
    ]
    if policy.auto_approve_ceiling:
        ceilings = ", ".join(_money(a, c) for c, a in sorted(policy.auto_approve_ceiling.items()))
        lines.append(f"The policy itself approves actions up to {ceilings}.")
    else:
        lines.append("Every action needs a person's approval; the policy approves nothing itself.")
    for currency, amount in sorted(policy.two_person_threshold.items()):
        lines.append(
            f"From {_money(amount, currency)}, two people other than the proposer approve."
        )
    if policy.refund_window_days is not None:
        lines.append(
            f"Refunds only within {policy.refund_window_days} days of delivery or fulfilment."
        )
    for name, cap in (("customer", policy.per_customer_cap), ("shop", policy.per_shop_cap)):
        if cap is not None:
            lines.append(f"At most {cap.limit.format()} per {name} in any {_period(cap.period)}.")
    for kind, level in sorted(policy.min_identity.items()):
        lines.append(f"A {kind.replace('_', ' ')} needs a customer identified at least as {level}.")
    return lines


def _money(amount: int, currency: str) -> str:
    return Money(amount, currency).format()


def _period(span: timedelta) -> str:
    hours = int(span.total_seconds() // 3600)
    if hours and hours % 24 == 0:
        return f"{hours // 24} days" if hours != 24 else "a day"
    if hours:
        return f"{hours} hours" if hours != 1 else "an hour"
    return f"{int(span.total_seconds())} seconds"
