"""Shop settings that decide what may happen: roles, policy versions, the two switches."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import QueryableAttribute, Session, aliased

from app import audit
from app.actors import Actor, ActorKind
from app.errors import Forbidden, InvalidInput, NotFound
from app.guard import PolicyError, PolicyRules, ShopSwitches
from app.shops.models import Shop, ShopPolicy, StaffMember, StaffRole
from app.words import Code, Sentence, said


def get_shop(session: Session, shop_id: uuid.UUID, *, for_update: bool = False) -> Shop:
    query = select(Shop).where(Shop.id == shop_id)
    if for_update:
        query = query.with_for_update()
    shop = session.scalars(query).one_or_none()
    if shop is None:
        raise NotFound(said("shop not found"))
    return shop


def shop_switches(shop: Shop) -> ShopSwitches:
    return ShopSwitches(writes_enabled=shop.writes_enabled, kill_switch=shop.kill_switch)


def current_policy(session: Session, shop_id: uuid.UUID) -> PolicyRules:
    """The newest policy version; a shop that never saved one gets the defaults as version 0."""
    row = session.scalars(
        select(ShopPolicy)
        .where(ShopPolicy.shop_id == shop_id)
        .order_by(ShopPolicy.version.desc())
        .limit(1)
    ).one_or_none()
    return policy_rules(row)


def policy_rules(row: ShopPolicy | None) -> PolicyRules:
    """The rules of a stored policy version; the defaults (version 0) without one."""
    if row is None:
        return PolicyRules()
    return PolicyRules.from_dict({**row.rules, "version": row.version})


def is_newest_policy(shop_id: QueryableAttribute[uuid.UUID]) -> ColumnElement[bool]:
    """Joins the newest policy version of the shop ``shop_id`` names, for queries that read
    the policy in the same round trip as the rows it governs (an outer join: a shop that
    never saved a policy has none)."""
    newer = aliased(ShopPolicy)
    return and_(
        ShopPolicy.shop_id == shop_id,
        ShopPolicy.version
        == select(func.max(newer.version)).where(newer.shop_id == shop_id).scalar_subquery(),
    )


def save_policy(
    session: Session, *, shop: Shop, actor: Actor, rules: dict[str, Any], now: datetime
) -> PolicyRules:
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("change the shop's policy"))
    previous = current_policy(session, shop.id)
    try:
        policy = PolicyRules.from_dict({**rules, "version": previous.version + 1})
    except PolicyError as exc:
        raise InvalidInput(exc.sentence, field=f"rules.{exc.field}") from exc
    stored = policy.to_dict()
    session.add(
        ShopPolicy(
            shop_id=shop.id,
            version=policy.version,
            rules=stored,
            created_by=actor.ref,
            created_at=now,
        )
    )
    audit.record(
        session,
        shop_id=shop.id,
        kind="policy.changed",
        actor=actor,
        data={"version": policy.version, "rules": stored},
        now=now,
    )
    return policy


def staff_member(session: Session, shop_id: uuid.UUID, user_id: str) -> StaffMember | None:
    """The person's membership. Asked again in the same session (authentication, then the
    role check of what the request does), the row found before comes from the session's
    identity map, as current as the transaction's own view of it: no second read while
    the transaction lasts, a read by id after a commit expires it. A row since removed is
    looked up again by the person, who may have been added back."""
    known: dict[tuple[uuid.UUID, str], uuid.UUID] = session.info.setdefault(_MEMBER_IDS, {})
    member_id = known.get((shop_id, user_id))
    member = None if member_id is None else session.get(StaffMember, member_id)
    if member is not None and member not in session.deleted:
        return member
    member = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop_id, StaffMember.user_id == user_id)
    ).one_or_none()
    _remember(session, shop_id, user_id, member)
    return member


def who_may_approve(session: Session, shop_id: uuid.UUID) -> list[StaffMember]:
    """The shop's approvers and owners, who may decide a proposal (each within their
    limits), owners first."""
    return sorted(
        session.scalars(
            select(StaffMember).where(
                StaffMember.shop_id == shop_id, StaffMember.role.in_(StaffRole.CAN_APPROVE)
            )
        ),
        key=lambda member: (member.role != StaffRole.OWNER, member.user_id),
    )


def shop_and_member(
    session: Session, shop_id: uuid.UUID, user_id: str
) -> tuple[Shop | None, StaffMember | None]:
    """The shop and the person's membership in it, in one round trip (every staff request
    reads both), or none when the request's credential was read with them
    (:func:`known_with_credential`); the membership is then known to :func:`staff_member`
    as if it had read it."""
    known: dict[tuple[uuid.UUID, str], tuple[Shop, StaffMember]]
    known = session.info.get(_READ_WITH_CREDENTIAL, {})
    if (shop_id, user_id) in known and known[shop_id, user_id][1] not in session.deleted:
        return known[shop_id, user_id]
    row = session.execute(
        select(Shop, StaffMember)
        .outerjoin(
            StaffMember, and_(StaffMember.shop_id == Shop.id, StaffMember.user_id == user_id)
        )
        .where(Shop.id == shop_id)
    ).first()
    if row is None:
        return None, None
    shop, member = row
    _remember(session, shop_id, user_id, member)
    return shop, member


def known_with_credential(
    session: Session, shop: Shop, user_id: str, member: StaffMember | None
) -> None:
    """A credential's read brought its shop and the person's membership with it (outer
    joins on the credential's row): kept with the session, :func:`shop_and_member` and
    :func:`staff_member` read neither again. Someone without a role is read again."""
    if member is None:
        return
    _remember(session, shop.id, user_id, member)
    # Held here: the session's identity map keeps only what something references.
    session.info.setdefault(_READ_WITH_CREDENTIAL, {})[(shop.id, user_id)] = (shop, member)


def _remember(
    session: Session, shop_id: uuid.UUID, user_id: str, member: StaffMember | None
) -> None:
    """Note the membership's id, so :func:`staff_member` finds it in the identity map."""
    if member is not None:
        session.info.setdefault(_MEMBER_IDS, {})[(shop_id, user_id)] = member.id


_MEMBER_IDS = "caseward.staff_member_ids"
_READ_WITH_CREDENTIAL = "caseward.read_with_credential"


def require_role(
    session: Session,
    shop_id: uuid.UUID,
    actor: Actor,
    roles: tuple[str, ...],
    doing: Sentence,
) -> StaffMember:
    """Deny by default: an actor without a role in this shop may do nothing. ``doing``
    completes "may not ...": a sentence such as ``said("manage staff")``."""
    member = staff_member(session, shop_id, actor.id) if actor.kind is ActorKind.STAFF else None
    refused = role_refused(actor.ref, None if member is None else member.role, roles, doing)
    if refused is not None:
        raise refused
    assert member is not None  # someone without a role was refused above
    return member


def role_refused(
    actor_ref: str, role: str | None, roles: tuple[str, ...], doing: Sentence
) -> Forbidden | None:
    """Why ``actor_ref``, whose role in the shop is ``role`` (None: they have none, as
    anyone but staff), may not do ``doing``; None when ``role`` is one of ``roles``."""
    if role is None:
        return Forbidden(
            said(
                "%(actor)s has no role in this shop and may not %(doing)s",
                actor=actor_ref,
                doing=doing,
            ),
            code="no_role",
        )
    if role not in roles:
        return Forbidden(
            said(
                "%(actor)s is a %(role)s and may not %(doing)s",
                actor=actor_ref,
                role=Code("role", role),
                doing=doing,
            ),
            code="role_not_allowed",
        )
    return None


def set_writes_enabled(
    session: Session, *, shop: Shop, actor: Actor, enabled: bool, now: datetime
) -> None:
    """Protection mode: only a signed-in owner turns provider writes on (or off again)."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("change protection mode"))
    shop.writes_enabled = enabled
    shop.writes_enabled_by = actor.ref if enabled else None
    shop.writes_enabled_at = now if enabled else None
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.writes_enabled" if enabled else "shop.writes_disabled",
        actor=actor,
        now=now,
    )


def set_kill_switch(
    session: Session, *, shop: Shop, actor: Actor, engaged: bool, now: datetime
) -> None:
    """Any approver may stop everything; only an owner may start it again."""
    roles = StaffRole.CAN_APPROVE if engaged else StaffRole.OWNER_ONLY
    require_role(session, shop.id, actor, roles, said("change the kill switch"))
    shop.kill_switch = engaged
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.kill_switch_engaged" if engaged else "shop.kill_switch_released",
        actor=actor,
        now=now,
    )
