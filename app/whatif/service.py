"""The what-if as every door asks it: an owner's candidate policy over the last 90 days."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.actors import Actor
from app.errors import InvalidInput
from app.execution.ledger import lookback
from app.guard import PolicyError, PolicyRules
from app.shops.models import StaffRole
from app.shops.service import current_policy, require_role
from app.whatif.past import read_past
from app.whatif.read_only import read_only
from app.whatif.replay import WhatIf, replay
from app.words import said

WINDOW = timedelta(days=90)
# Changed actions listed in an answer; the counts and the money cover them all.
SHOWN = 100


def what_if(
    session: Session,
    *,
    shop_id: uuid.UUID,
    actor: Actor,
    rules: Mapping[str, Any],
    now: datetime,
    shown: int = SHOWN,
) -> WhatIf:
    """What ``rules`` (as a new policy version would be saved from them) would have done to
    the shop's last :data:`WINDOW`, beside the current policy. Owners only, as saving a
    policy is; :class:`InvalidInput` naming the rule (``rules.<name>``) that cannot be read.
    Reads through a session that cannot write (:func:`read_only`)."""
    require_role(
        session, shop_id, actor, StaffRole.OWNER_ONLY, said("try a policy on the shop's past")
    )
    since = now - WINDOW
    with read_only(session.get_bind()) as reading:
        current = current_policy(reading, shop_id)
        candidate = candidate_policy(rules, current)
        reach = since - max(lookback(current), lookback(candidate))
        past = read_past(reading, shop_id, since=since, now=now, reach=reach)
    return replay(past, current=current, candidate=candidate, since=since, until=now, shown=shown)


def candidate_policy(rules: Mapping[str, Any], current: PolicyRules) -> PolicyRules:
    """``rules`` as the next version after ``current``, read as saving would read them."""
    try:
        return PolicyRules.from_dict({**rules, "version": current.version + 1})
    except PolicyError as exc:
        raise InvalidInput(exc.sentence, field=f"rules.{exc.field}") from exc
