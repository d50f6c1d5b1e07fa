"""Operator sign-in sessions, kept server-side in the app's Redis.

A session is opened with a staff token and remembers the shop, the person and that
token's id, never the token. The browser holds only a random session id; Redis holds
the session under the id's SHA-256, so reading Redis does not yield a usable cookie.
Each request re-checks the token (revoking it ends the session) and the person's
membership; signing out deletes the session at once. Sessions also expire on their own.

Redis rather than a table: sessions are short-lived, hot and disposable, and Redis
expires them by itself; the app already depends on it for the queue.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from redis import Redis

SESSION_LIFETIME = timedelta(hours=12)
_KEY = "caseward:operator-session:"


@dataclass(frozen=True)
class OperatorSession:
    shop_id: uuid.UUID
    user_id: str
    token_id: uuid.UUID


def open_session(redis: Redis, opened: OperatorSession) -> str:
    """Store the session and return its id, for the cookie only."""
    session_id = secrets.token_urlsafe(32)
    value = {
        "shop_id": str(opened.shop_id),
        "user_id": opened.user_id,
        "token_id": str(opened.token_id),
    }
    redis.set(_key(session_id), json.dumps(value), ex=SESSION_LIFETIME)
    return session_id


def read_session(redis: Redis, session_id: str) -> OperatorSession | None:
    if not session_id:
        return None
    raw = redis.get(_key(session_id))
    if raw is None:
        return None
    value = json.loads(raw)
    return OperatorSession(
        uuid.UUID(value["shop_id"]), value["user_id"], uuid.UUID(value["token_id"])
    )


def end_session(redis: Redis, session_id: str) -> None:
    if session_id:
        redis.delete(_key(session_id))


def _key(session_id: str) -> str:
    return _KEY + hashlib.sha256(session_id.encode()).hexdigest()
