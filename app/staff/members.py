"""Who is staff of a shop, in which role, approving up to which amounts.

Only an owner changes staff through the API; the console (``flask staff ...``) is run by
whoever operates the installation and may change anything. Every change is audited in
its transaction. A shop always keeps one owner: the last one can be neither removed nor
demoted. Removing a member revokes their tokens in the same transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.errors import Conflict, InvalidInput, NotFound
from app.money import Money
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import require_role, staff_member
from app.staff.tokens import revoke_member_tokens
from app.validation import currency_code, text
from app.words import Sentence, said

ROLES = (StaffRole.VIEWER, StaffRole.PROPOSER, StaffRole.APPROVER, StaffRole.OWNER)


def list_members(
    session: Session, *, shop: Shop, actor: Actor, console: bool = False
) -> list[StaffMember]:
    _require_owner(session, shop, actor, console)
    return list(
        session.scalars(
            select(StaffMember).where(StaffMember.shop_id == shop.id).order_by(StaffMember.user_id)
        )
    )


def add_member(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    user_id: str,
    role: str,
    email: str | None,
    approval_limits: Mapping[str, object],
    now: datetime,
    console: bool = False,
) -> StaffMember:
    _require_owner(session, shop, actor, console)
    user_id = _user_id(user_id)
    role = _role(role)
    limits = parse_limits(approval_limits)
    if staff_member(session, shop.id, user_id) is not None:
        raise Conflict(
            said(
                "%(user)s is already staff of this shop; change their role or limits instead",
                user=user_id,
            ),
            code="already_staff",
        )
    member = StaffMember(
        shop_id=shop.id,
        user_id=user_id,
        email=email,
        role=role,
        approval_limits=limits,
        created_at=now,
    )
    session.add(member)
    session.flush()
    _record(session, shop, actor, "staff.added", member, now)
    return member


def update_member(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    user_id: str,
    now: datetime,
    role: str | None = None,
    approval_limits: Mapping[str, object] | None = None,
    console: bool = False,
) -> StaffMember:
    """Change a member's role and/or limits; a change takes effect on their next request."""
    _require_owner(session, shop, actor, console)
    member = _locked_member(session, shop.id, user_id)
    if role is not None:
        role = _role(role)
        if member.role == StaffRole.OWNER and role != StaffRole.OWNER:
            _keep_an_owner(session, shop.id, said("demote %(user)s", user=user_id))
        member.role = role
    if approval_limits is not None:
        member.approval_limits = parse_limits(approval_limits)
    _record(session, shop, actor, "staff.changed", member, now)
    return member


def remove_member(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    user_id: str,
    now: datetime,
    console: bool = False,
) -> int:
    """Remove a member and revoke their tokens; returns how many tokens were revoked."""
    _require_owner(session, shop, actor, console)
    member = _locked_member(session, shop.id, user_id)
    if member.role == StaffRole.OWNER:
        _keep_an_owner(session, shop.id, said("remove %(user)s", user=user_id))
    revoked = revoke_member_tokens(session, shop_id=shop.id, user_id=user_id, actor=actor, now=now)
    _record(session, shop, actor, "staff.removed", member, now, {"tokens_revoked": revoked})
    session.delete(member)
    session.flush()
    return revoked


def parse_limits(limits: Mapping[str, object]) -> dict[str, int]:
    """Currency -> highest approvable amount in minor units; codes are ISO 4217."""
    if not isinstance(limits, Mapping):
        raise InvalidInput(said("approval_limits must be an object"), field="approval_limits")
    parsed: dict[str, int] = {}
    for code, amount in limits.items():
        currency = currency_code(str(code), f"approval_limits.{code}")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise InvalidInput(
                said(
                    "an approval limit is a whole, non-negative number of minor units "
                    "(4800 is %(example)s)",
                    example=Money(4800, "usd"),
                ),
                field=f"approval_limits.{code}",
            )
        parsed[currency] = amount
    return parsed


def _require_owner(session: Session, shop: Shop, actor: Actor, console: bool) -> None:
    if not console:
        require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("manage staff"))


def _locked_member(session: Session, shop_id: uuid.UUID, user_id: str) -> StaffMember:
    user_id = _user_id(user_id)  # a path segment: refuse what no member's id can hold
    member = session.scalars(
        select(StaffMember)
        .where(StaffMember.shop_id == shop_id, StaffMember.user_id == user_id)
        .with_for_update()
    ).one_or_none()
    if member is None:
        raise NotFound(said("%(user)s is not staff of this shop", user=user_id), field="user_id")
    return member


def _keep_an_owner(session: Session, shop_id: uuid.UUID, doing: Sentence) -> None:
    # Lock every owner row: two owners demoting each other at once must not both succeed.
    owners = session.scalars(
        select(StaffMember.id)
        .where(StaffMember.shop_id == shop_id, StaffMember.role == StaffRole.OWNER)
        .with_for_update()
    ).all()
    if len(owners) <= 1:
        raise Conflict(
            said(
                "cannot %(doing)s: a shop must keep at least one owner; make someone else an "
                "owner first",
                doing=doing,
            ),
            code="last_owner",
        )


def _user_id(user_id: str) -> str:
    cleaned = text(user_id, "user_id", max_length=255, required=True)
    assert cleaned is not None
    return cleaned.strip()


def _role(role: str) -> str:
    if role not in ROLES:
        raise InvalidInput(
            said("role must be one of %(roles)s", roles=", ".join(ROLES)), field="role"
        )
    return role


def _record(
    session: Session,
    shop: Shop,
    actor: Actor,
    kind: str,
    member: StaffMember,
    now: datetime,
    extra: Mapping[str, object] | None = None,
) -> None:
    audit.record(
        session,
        shop_id=shop.id,
        kind=kind,
        actor=actor,
        data={
            "user_id": member.user_id,
            "role": member.role,
            "approval_limits": dict(member.approval_limits or {}),
            **(extra or {}),
        },
        now=now,
    )
