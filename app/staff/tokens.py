"""Staff API tokens: issued once, kept only as a hash, expiring, revocable at once.

A token is ``cwst_`` followed by 32 random bytes (URL-safe base64). The database keeps
its SHA-256 and its first characters; the token itself is shown to the person once
and never stored or audited. A token proves who is calling and for which shop; what
that person may do is read from their ``staff_members`` row on every request, so a
token outlives no removal or demotion.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, bindparam, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor, ActorKind
from app.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import known_with_credential, require_role, staff_member
from app.staff.models import StaffToken
from app.words import Sentence, said

TOKEN_PREFIX = "cwst_"  # noqa: S105  (a marker that makes leaked tokens recognisable)
# Enough of the token for a person to recognise it in a list, far too little to use it.
SHOWN_PREFIX_LENGTH = 12
DEFAULT_LIFETIME = timedelta(days=30)
MAX_LIFETIME = timedelta(days=365)
# Recording every use would turn every read into a write on a hot row; a minute is as
# precise as "when was this token last used?" needs to be.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class IssuedToken:
    """A new token: ``secret`` is shown once and then exists only with its holder."""

    row: StaffToken
    secret: str


class TokenRefused(Unauthenticated):
    """The token is unknown, expired or revoked. ``shop_id`` names its shop when known,
    so failures can be counted against the shop as well as the caller."""

    def __init__(
        self, message: Sentence, shop_id: uuid.UUID | None = None, user_id: str | None = None
    ) -> None:
        super().__init__(message, code="invalid_token")
        self.shop_id = shop_id
        self.user_id = user_id


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def lifetime_from_days(days: int | None) -> timedelta:
    """The lifetime asked for, default 30 days, at most a year; anything else is refused."""
    if days is None:
        return DEFAULT_LIFETIME
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise InvalidInput(
            said("expires_in_days must be a whole number of days, at least 1"),
            field="expires_in_days",
        )
    if timedelta(days=days) > MAX_LIFETIME:
        raise InvalidInput(
            said(
                "a staff token lives at most %(max)s days; asked for %(days)s",
                max=str(MAX_LIFETIME.days),
                days=str(days),
            ),
            field="expires_in_days",
        )
    return timedelta(days=days)


def issue_token(
    session: Session,
    *,
    shop: Shop,
    user_id: str,
    issued_by: Actor,
    lifetime: timedelta,
    now: datetime,
    label: str | None = None,
    console: bool = False,
) -> IssuedToken:
    """A new token for a staff member of ``shop``: for oneself, or by an owner (or the
    console) for anyone on the staff."""
    if lifetime > MAX_LIFETIME or lifetime <= timedelta(0):
        raise InvalidInput(
            said(
                "a staff token lives between 1 second and %(max)s days",
                max=str(MAX_LIFETIME.days),
            ),
            field="expires_in_days",
        )
    if not console and user_id != issued_by.ref:
        require_role(
            session, shop.id, issued_by, StaffRole.OWNER_ONLY, said("issue others' tokens")
        )
    if staff_member(session, shop.id, user_id) is None:
        raise NotFound(
            said("%(user)s is not staff of %(shop)s", user=user_id, shop=shop.domain),
            field="user_id",
        )
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = StaffToken(
        shop_id=shop.id,
        user_id=user_id,
        token_hash=token_hash(secret),
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        label=label,
        created_by=issued_by.ref,
        created_at=now,
        expires_at=now + lifetime,
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="staff.token_issued",
        actor=issued_by,
        data={
            "token_id": str(row.id),
            "prefix": row.prefix,
            "user_id": user_id,
            "expires_at": row.expires_at.isoformat(),
        },
        now=now,
    )
    return IssuedToken(row, secret)


def authenticate_token(session: Session, secret: str, *, now: datetime) -> StaffToken:
    """The live token row for ``secret``; :class:`TokenRefused` for anything else."""
    if not secret.startswith(TOKEN_PREFIX):
        raise TokenRefused(said("a valid staff token is required"))
    digest = token_hash(secret)
    found = session.execute(_TOKEN_WITH_SHOP_AND_MEMBER, {"token_hash": digest}).first()
    row, member, shop = found if found is not None else (None, None, None)
    # The lookup is by hash, so the database never compares the secret itself; the
    # comparison here is constant-time all the same.
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        raise TokenRefused(said("a valid staff token is required"))
    if row.revoked_at is not None:
        raise TokenRefused(said("this staff token has been revoked"), row.shop_id, row.user_id)
    if row.expires_at <= now:
        raise TokenRefused(said("this staff token has expired"), row.shop_id, row.user_id)
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        row.last_used_at = now
    if shop is not None:
        known_with_credential(session, shop, row.user_id, member)
    return row


# Built once, at import, as every staff API request runs it: the token with its shop and
# the person's membership, which the request reads next (``shop_and_member``), in one round
# trip.
_TOKEN_WITH_SHOP_AND_MEMBER = (
    select(StaffToken, StaffMember, Shop)
    .outerjoin(Shop, Shop.id == StaffToken.shop_id)
    .outerjoin(
        StaffMember,
        and_(StaffMember.shop_id == StaffToken.shop_id, StaffMember.user_id == StaffToken.user_id),
    )
    .where(StaffToken.token_hash == bindparam("token_hash"))
)


def live_token(session: Session, token_id: uuid.UUID, *, now: datetime) -> StaffToken | None:
    """The token by id if it is neither revoked nor expired (operator sessions hang on it)."""
    row = session.get(StaffToken, token_id)
    if row is None or row.revoked_at is not None or row.expires_at <= now:
        return None
    return row


def list_tokens(
    session: Session, shop_id: uuid.UUID, actor: Actor, *, console: bool = False
) -> list[StaffToken]:
    """The shop's tokens as ``actor`` may see them: their own, or all if an owner."""
    query = select(StaffToken).where(StaffToken.shop_id == shop_id)
    if not console and not _is_owner(session, shop_id, actor):
        query = query.where(StaffToken.user_id == actor.ref)
    return list(session.scalars(query.order_by(StaffToken.created_at.desc())))


def revoke_token(
    session: Session,
    *,
    shop_id: uuid.UUID,
    token_id: uuid.UUID,
    actor: Actor,
    now: datetime,
    console: bool = False,
) -> StaffToken:
    """Revoke a token of this shop: one's own, or any if an owner (or the console)."""
    row = session.get(StaffToken, token_id)
    if row is None or row.shop_id != shop_id:
        raise NotFound(said("token not found"), field="token_id")
    if not console and row.user_id != actor.ref and not _is_owner(session, shop_id, actor):
        raise Forbidden(
            said("%(actor)s may revoke only their own tokens", actor=actor.ref),
            code="not_your_token",
        )
    if row.revoked_at is None:
        _revoke(session, row, actor=actor, now=now, why="revoked")
    return row


def revoke_member_tokens(
    session: Session, *, shop_id: uuid.UUID, user_id: str, actor: Actor, now: datetime
) -> int:
    """Revoke every live token of a member (when they are removed); returns how many."""
    rows = session.scalars(
        select(StaffToken).where(
            StaffToken.shop_id == shop_id,
            StaffToken.user_id == user_id,
            StaffToken.revoked_at.is_(None),
        )
    ).all()
    for row in rows:
        _revoke(session, row, actor=actor, now=now, why="member removed")
    return len(rows)


def _is_owner(session: Session, shop_id: uuid.UUID, actor: Actor) -> bool:
    if actor.kind is not ActorKind.STAFF:
        return False
    member = staff_member(session, shop_id, actor.id)
    return member is not None and member.role in StaffRole.OWNER_ONLY


def _revoke(session: Session, row: StaffToken, *, actor: Actor, now: datetime, why: str) -> None:
    row.revoked_at, row.revoked_by = now, actor.ref
    audit.record(
        session,
        shop_id=row.shop_id,
        kind="staff.token_revoked",
        actor=actor,
        data={"token_id": str(row.id), "prefix": row.prefix, "user_id": row.user_id, "why": why},
        now=now,
    )
