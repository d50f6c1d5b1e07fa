"""Who is calling: staff authentication, pluggable.

An authenticator turns a request into a :class:`StaffIdentity` or declines. The
app tries each configured authenticator in turn. Shipped here: Caseward's own
signed staff token (HMAC-SHA256 with the app secret, checked in constant time),
used by the operator page and tests; Shopify session tokens plug in the same way.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from flask import Request, current_app, g, request
from sqlalchemy import select

from app.db import request_session
from app.errors import Unauthenticated
from app.shops.models import Shop

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class StaffIdentity:
    shop_domain: str
    user_id: str


class Authenticator(Protocol):
    def authenticate(self, request: Request) -> StaffIdentity | None: ...


class SignedStaffToken:
    """``<base64url(json claims)>.<base64url(hmac)>`` with claims shop, sub, exp."""

    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(b"caseward-staff-token:" + secret.encode()).digest()

    def issue(self, shop_domain: str, user_id: str, ttl_seconds: int = 3600) -> str:
        claims = {"shop": shop_domain, "sub": user_id, "exp": int(time.time()) + ttl_seconds}
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"{body}.{_b64(self._sign(body))}"

    def authenticate(self, request: Request) -> StaffIdentity | None:
        # Header only: a cookie would make the API open to cross-site requests.
        token = _bearer(request)
        return self.verify(token) if token else None

    def verify(self, token: str) -> StaffIdentity | None:
        body = self._signed_body(token)
        return _identity(body) if body is not None else None

    def _signed_body(self, token: str) -> str | None:
        """The token's body if its signature is ours (compared in constant time)."""
        if token.count(".") != 1:
            return None
        body, signature = token.split(".")
        try:
            given = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
        except ValueError:
            return None
        return body if hmac.compare_digest(given, self._sign(body)) else None

    def _sign(self, body: str) -> bytes:
        return hmac.new(self._key, body.encode(), hashlib.sha256).digest()


def _identity(body: str) -> StaffIdentity | None:
    """Well-formed, unexpired claims, or nothing."""
    try:
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    if not isinstance(claims, dict):
        return None
    shop, user, expires = claims.get("shop"), claims.get("sub"), claims.get("exp")
    if not (isinstance(shop, str) and isinstance(user, str) and isinstance(expires, int)):
        return None
    return StaffIdentity(shop, user) if expires >= time.time() else None


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _bearer(request: Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.startswith("Bearer ") else None


def staff_token() -> SignedStaffToken:
    token: SignedStaffToken = current_app.extensions["caseward.staff_token"]
    return token


def authenticators() -> list[Authenticator]:
    return cast(list[Authenticator], current_app.extensions["caseward.authenticators"])


def shop_of(identity: StaffIdentity) -> Shop:
    """The installed shop the identity speaks for; everything after is scoped to it."""
    shop = (
        request_session()
        .scalars(select(Shop).where(Shop.domain == identity.shop_domain))
        .one_or_none()
    )
    if shop is None:
        raise Unauthenticated("the token's shop is not installed")
    return shop


def require_staff(view: F) -> F:
    """Authenticate, then pin the request to the caller's shop: every query uses ``g.shop``."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        identity = next(
            (who for auth in authenticators() if (who := auth.authenticate(request))), None
        )
        if identity is None:
            raise Unauthenticated("a valid staff token is required")
        g.shop, g.actor = shop_of(identity), identity.user_id
        return view(*args, **kwargs)

    return cast(F, wrapper)
