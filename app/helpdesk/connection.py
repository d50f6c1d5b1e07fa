"""A shop's Gorgias account: its API credentials and the secret Gorgias sends back to us.

Gorgias signs nothing it sends. The shop's HTTP integration in Gorgias carries a header
with a secret Caseward generated for that shop (:data:`SECRET_HEADER`), and the endpoint
compares it in constant time before reading anything (:func:`secret_matches`). The API
user and key (which post replies and notes) and that secret are kept encrypted, in the
shop's ``connections`` row for ``gorgias``; the secret is shown once, when it is made.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.connections.models import Connection
from app.connections.service import record_saved
from app.crypto import SecretBox, mask_secret
from app.errors import InvalidInput
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role
from app.validation import text
from app.words import said

GORGIAS = "gorgias"
SECRET_HEADER = "X-Caseward-Secret"  # noqa: S105  (a header's name, not a secret)
_DOMAIN = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


@dataclass(frozen=True)
class GorgiasAccount:
    """Where and as whom Caseward calls Gorgias' API."""

    domain: str  # "linen-and-loom.gorgias.com"
    username: str  # the API user's email
    api_key: str


@dataclass(frozen=True)
class GorgiasConnected:
    connection: Connection
    # The integration secret, when this save made a new one: shown to the owner once.
    new_secret: str | None


def gorgias_domain(value: object) -> str:
    """``linen-and-loom``, ``linen-and-loom.gorgias.com`` or its https URL, as the domain."""
    name = str(text(value, "domain", max_length=120, required=True)).strip().lower()
    name = name.removeprefix("https://").removesuffix("/").removesuffix(".gorgias.com")
    if not _DOMAIN.fullmatch(name):
        raise InvalidInput(
            said("domain is your Gorgias account's name, as in NAME.gorgias.com"), field="domain"
        )
    return f"{name}.gorgias.com"


def save_gorgias_connection(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    domain: object,
    username: object,
    api_key: object,
    box: SecretBox,
    check: Callable[[GorgiasAccount], None],
    now: datetime,
) -> GorgiasConnected:
    """Keep the shop's Gorgias account once ``check`` (a read through its API) passed,
    and make the integration secret the first time."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    account = GorgiasAccount(
        domain=gorgias_domain(domain),
        username=str(text(username, "username", max_length=320, required=True)).strip(),
        api_key=str(text(api_key, "api_key", max_length=255, required=True)).strip(),
    )
    # The outside call comes before any write: if Gorgias refuses, nothing is stored.
    check(account)
    connection = gorgias_connection(session, shop.id)
    new_secret = None
    if connection is None:
        connection = Connection(id=uuid.uuid4(), shop_id=shop.id, provider=GORGIAS)
        session.add(connection)
    if connection.encrypted_webhook_secret is None:
        new_secret = secrets.token_urlsafe(32)
        connection.encrypted_webhook_secret = box.encrypt(new_secret)
    connection.account_id = account.domain
    connection.livemode = True
    connection.encrypted_secret = box.encrypt(
        json.dumps({"username": account.username, "api_key": account.api_key})
    )
    connection.key_hint = mask_secret(account.api_key)
    record_saved(session, connection, actor=actor, now=now, account=account.domain)
    return GorgiasConnected(connection, new_secret)


def rotate_secret(
    session: Session, *, shop: Shop, actor: Actor, box: SecretBox, now: datetime
) -> str:
    """A new integration secret; the old one stops working at once."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    connection = gorgias_connection(session, shop.id)
    if connection is None:
        raise InvalidInput(said("connect Gorgias first"), field="gorgias")
    secret = secrets.token_urlsafe(32)
    connection.encrypted_webhook_secret = box.encrypt(secret)
    audit.record(
        session,
        shop_id=shop.id,
        kind="connection.secret_rotated",
        actor=actor,
        data={"provider": GORGIAS},
        now=now,
    )
    return secret


def set_prepare_on_arrival(
    session: Session, *, shop: Shop, actor: Actor, enabled: bool, now: datetime
) -> Connection:
    """Whether each ticket's case is drafted into an internal note as the customer's
    message arrives (else only when an agent applies the "prepare case" macro)."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    connection = gorgias_connection(session, shop.id)
    if connection is None:
        raise InvalidInput(said("connect Gorgias first"), field="gorgias")
    connection.prepare_on_arrival = enabled
    audit.record(
        session,
        shop_id=shop.id,
        kind="connection.prepare_on_arrival_on" if enabled else "connection.prepare_on_arrival_off",
        actor=actor,
        data={"provider": GORGIAS},
        now=now,
    )
    return connection


def gorgias_account(connection: Connection, box: SecretBox) -> GorgiasAccount:
    stored = json.loads(box.decrypt(connection.encrypted_secret))
    return GorgiasAccount(str(connection.account_id), stored["username"], stored["api_key"])


def secret_matches(connection: Connection, box: SecretBox, given: str | None) -> bool:
    """Whether ``given`` is the shop's integration secret, compared in constant time."""
    if not given or connection.encrypted_webhook_secret is None:
        return False
    expected = box.decrypt(connection.encrypted_webhook_secret)
    return hmac.compare_digest(expected.encode(), given.encode())


def gorgias_connection(session: Session, shop_id: uuid.UUID) -> Connection | None:
    return session.scalars(
        select(Connection).where(Connection.shop_id == shop_id, Connection.provider == GORGIAS)
    ).one_or_none()
