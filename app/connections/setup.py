"""Where a newly installed shop stands: the steps before any money can move.

A shop installs read-only. Before any money can move an owner connects Stripe with a
restricted key, reads the policy the checks will apply, and turns writes on. The setup
page shows these steps in that order; the admin opens on it until none remain.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.connections.models import Connection
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
