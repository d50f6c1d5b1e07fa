"""Who is calling: staff authentication, pluggable, re-read on every request.

An authenticator turns a request into a :class:`StaffIdentity` (shop, user, and the
credential used) or declines; one that sees a credential it refuses raises
:class:`app.staff.tokens.TokenRefused`. Shipped here: Caseward's stored staff tokens as
a bearer header (never a cookie, so the API cannot be driven cross-site); Shopify
session tokens plug in the same way.

The identity says nothing about permissions: :func:`require_staff` reads the person's
``staff_members`` row on every request, so removing or demoting someone takes effect on
their next request, reads included. Refused credentials count against the caller and
the token's shop (:mod:`app.web.security`).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from flask import Request, current_app, g, request

from app.actors import Actor, Surface, staff
from app.clock import utcnow
from app.db import request_session
from app.errors import Forbidden, SessionTokenRefused, Unauthenticated
from app.shops.models import Shop, StaffMember
from app.shops.service import shop_and_member
from app.staff.tokens import TOKEN_PREFIX, TokenRefused, authenticate_token
from app.web.security import count_refused_token, refuse_if_over_token_limit
from app.words import said

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class StaffIdentity:
    shop_id: uuid.UUID
    user_id: str
    # The stored token the request presented; sessions and revocation hang on it.
    token_id: uuid.UUID | None
    surface: Surface = Surface.STAFF_API

    @property
    def actor(self) -> Actor:
        return staff(self.user_id, self.surface)


class Authenticator(Protocol):
    def authenticate(self, request: Request) -> StaffIdentity | None: ...


class StoredStaffTokens:
    """``Authorization: Bearer cwst_...`` checked against the hashes in ``staff_tokens``."""

    def authenticate(self, request: Request) -> StaffIdentity | None:
        secret = bearer_token(request)
        if secret is None or not secret.startswith(TOKEN_PREFIX):
            return None  # not ours: a Shopify session token, or nothing
        session = request_session()
        row = authenticate_token(session, secret, now=utcnow())
        if session.is_modified(row):
            session.commit()  # last use, before the request's own work begins
        return StaffIdentity(row.shop_id, row.user_id, row.id)


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.startswith("Bearer ") else None


def authenticators() -> list[Authenticator]:
    return cast(list[Authenticator], current_app.extensions["caseward.authenticators"])


def staff_of_shop(identity: StaffIdentity) -> tuple[Shop, StaffMember]:
    """The shop and the person's current membership; no row means no access at all."""
    shop, member = shop_and_member(request_session(), identity.shop_id, identity.user_id)
    if shop is None:
        raise Unauthenticated(said("the token's shop is not installed"))
    if member is None:
        raise Forbidden(
            said("%(user)s has no role in this shop", user=identity.user_id), code="no_role"
        )
    return shop, member


def require_staff(view: F) -> F:
    """Authenticate, read the caller's role, and pin the request to their shop:
    every query uses ``g.shop``; ``g.member`` is the role and limits as of now."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        refuse_if_over_token_limit()
        try:
            identity = next(
                (who for auth in authenticators() if (who := auth.authenticate(request))), None
            )
        except TokenRefused as refused:
            # Counted in Redis, not the database: the rollback below must not undo it.
            # Past the shop's limit this answers 429 instead.
            count_refused_token(shop_id=refused.shop_id)
            # Whose shop it was and who held it, so the refusal goes on that shop's record.
            g.refused_shop_id = refused.shop_id
            if refused.user_id is not None:
                g.actor = staff(refused.user_id, Surface.STAFF_API)
            raise
        except SessionTokenRefused:
            # A forged or stale Shopify session token names no shop we can trust.
            count_refused_token(shop_id=None)
            raise
        if identity is None:
            raise Unauthenticated(said("a valid staff token is required"))
        g.refused_shop_id, g.actor = identity.shop_id, identity.actor
        g.shop, g.member = staff_of_shop(identity)
        g.token_id = identity.token_id
        return view(*args, **kwargs)

    return cast(F, wrapper)
