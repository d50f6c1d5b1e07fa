"""Connecting a shop to its own HTTPS endpoint: the ``merchant`` provider.

Connecting is one call with the endpoint's base URL, owners only. The URL must be https;
plain http only for this machine (localhost, 127.0.0.1, ::1) outside production. In
production the endpoint must be public: its host a DNS name (not an IP literal) whose
every address is a global one, so that Caseward's signed requests cannot be pointed at
its own network (:mod:`integrations.merchant_endpoint.addresses`, where the adapter
checks again on every new connection). Nothing is asked of the endpoint then: it
cannot verify Caseward's requests before it holds the secret. The first connect makes
the signing secret and shows it this once; saving again (a new URL) keeps it.

Rotating makes a new secret, shown once, and keeps the current one signing beside it for
the grace period (24 h unless the owner says less; 0 stops the old secret at once, as
after a leak), so the merchant switches its receiver at its own pace. The secrets live
in the connection's encrypted secret (:meth:`SigningSecrets.to_json`); ``key_hint`` shows
the current one masked. Every save and rotation is audited, with the URL, the masked
secret and until when the old one signs, never a secret.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

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
from app.validation import integer, text
from app.words import said
from integrations.merchant_endpoint.adapter import NAME as MERCHANT
from integrations.merchant_endpoint.addresses import THIS_MACHINE, addresses_of, is_public
from integrations.merchant_endpoint.signing import DEFAULT_GRACE, SigningSecrets, new_secret

__all__ = [
    "MAX_GRACE_SECONDS",
    "MAX_URL_LENGTH",
    "MERCHANT",
    "MerchantConnected",
    "endpoint_url",
    "merchant_connection",
    "rotate_merchant_secret",
    "save_merchant_connection",
    "signing_secrets",
]

MAX_URL_LENGTH = 255
# A rotation's old secret signs for at most a week: long enough for any deployment.
MAX_GRACE_SECONDS = 7 * 86400
# A DNS name or an IP address (IPv6 as urlsplit gives it, without its brackets).
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|[0-9a-f:.]{2,45}")


@dataclass(frozen=True)
class MerchantConnected:
    connection: Connection
    # The signing secret, when this call made a new one: shown to the owner once.
    new_secret: str | None
    # Until when the previous secret still signs (after a rotation with a grace period).
    previous_until: datetime | None


def endpoint_url(
    value: object,
    *,
    production: bool,
    resolve: Callable[[str, int], Sequence[str]] = addresses_of,
) -> str:
    """The endpoint's base URL as it is stored: https, no credentials, query or fragment,
    no trailing slash; http only for this machine, and never in production, where the
    host must be a DNS name that ``resolve`` finds only public addresses for."""
    raw = str(text(value, "endpoint_url", max_length=MAX_URL_LENGTH, required=True)).strip()
    refused = said(
        "endpoint_url is your endpoint's https address, such as "
        "https://shop.example.com/caseward, with no query, fragment or credentials"
    )
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018  (reading it checks it: a port that is no number raises)
    except ValueError:
        raise InvalidInput(refused, field="endpoint_url") from None
    host = (parts.hostname or "").lower()
    scheme = parts.scheme.lower()
    if (
        scheme not in ("https", "http")
        or not host
        or parts.username is not None
        or parts.password is not None
        or not _HOST.fullmatch(host)
        or any(character.isspace() or character in "?#" for character in raw)
    ):
        raise InvalidInput(refused, field="endpoint_url")
    if production and host in THIS_MACHINE:
        raise InvalidInput(
            said("in production endpoint_url cannot be this machine"), field="endpoint_url"
        )
    if scheme == "http" and (production or host not in THIS_MACHINE):
        raise InvalidInput(
            said(
                "endpoint_url must be https: Caseward sends signed money requests and "
                "reads the answers, which only TLS protects"
            ),
            field="endpoint_url",
        )
    if production:
        _require_public(host, parts.port or 443, resolve)
    return raw.rstrip("/")


def _require_public(host: str, port: int, resolve: Callable[[str, int], Sequence[str]]) -> None:
    """The host is a DNS name and every address it has now is public.

    This is the check that matters to the owner: it refuses while they are there to fix
    it, with a 400 naming the field, and nothing is stored. What it cannot see is DNS
    that changes afterwards (the name pointed at an internal address later); for that
    the adapter checks the address of every connection it opens, before sending a byte
    (:func:`integrations.merchant_endpoint.addresses.peer_guard`)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        raise InvalidInput(
            said(
                "endpoint_url must name its host by a DNS name, such as shop.example.com, "
                "not by an IP address"
            ),
            field="endpoint_url",
        )
    try:
        addresses = resolve(host, port)
    except OSError:
        addresses = []
    if not addresses:
        raise InvalidInput(
            said("endpoint_url's host %(host)s has no address in DNS", host=host),
            field="endpoint_url",
        )
    private = [address for address in addresses if not is_public(address)]
    if private:
        raise InvalidInput(
            said(
                "endpoint_url's host %(host)s has the address %(address)s, which is not "
                "public (loopback, private, link-local or reserved); Caseward calls only "
                "endpoints on the public internet",
                host=host,
                address=private[0],
            ),
            field="endpoint_url",
        )


def save_merchant_connection(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    url: object,
    box: SecretBox,
    production: bool,
    now: datetime,
) -> MerchantConnected:
    """Keep the shop's endpoint URL; the first time, make the signing secret."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    base = endpoint_url(url, production=production)
    connection = merchant_connection(session, shop.id)
    made = None
    if connection is None:
        made = new_secret()
        connection = Connection(
            id=uuid.uuid4(),
            shop_id=shop.id,
            provider=MERCHANT,
            encrypted_secret=box.encrypt(SigningSecrets(current=made).to_json()),
            key_hint=mask_secret(made),
        )
        session.add(connection)
    connection.endpoint_url = base
    # An http endpoint (this machine, outside production) is a test one.
    connection.livemode = base.startswith("https://")
    record_saved(
        session, connection, actor=actor, now=now, endpoint_url=base, secret_made=made is not None
    )
    secrets = signing_secrets(connection, box)
    return MerchantConnected(connection, made, secrets.previous_until)


def rotate_merchant_secret(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    grace_seconds: object,
    box: SecretBox,
    now: datetime,
) -> MerchantConnected:
    """A new signing secret; the current one keeps signing beside it for ``grace_seconds``
    (None: 24 hours), and one older than that stops now."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    grace = (
        DEFAULT_GRACE
        if grace_seconds is None
        else timedelta(
            seconds=integer(grace_seconds, "grace_seconds", minimum=0, maximum=MAX_GRACE_SECONDS)
        )
    )
    connection = merchant_connection(session, shop.id)
    if connection is None:
        raise InvalidInput(said("connect your endpoint first"), field="merchant")
    made = new_secret()
    secrets = signing_secrets(connection, box).rotated(made, now, grace)
    connection.encrypted_secret = box.encrypt(secrets.to_json())
    connection.key_hint = mask_secret(made)
    audit.record(
        session,
        shop_id=shop.id,
        kind="connection.secret_rotated",
        actor=actor,
        data={
            "provider": MERCHANT,
            "key": connection.key_hint,
            "previous_until": (
                secrets.previous_until.isoformat() if secrets.previous_until else None
            ),
        },
        now=now,
    )
    return MerchantConnected(connection, made, secrets.previous_until)


def merchant_connection(session: Session, shop_id: uuid.UUID) -> Connection | None:
    return session.scalars(
        select(Connection).where(Connection.shop_id == shop_id, Connection.provider == MERCHANT)
    ).one_or_none()


def signing_secrets(connection: Connection, box: SecretBox) -> SigningSecrets:
    """The secrets the connection signs with, decrypted."""
    return SigningSecrets.from_json(box.decrypt(connection.encrypted_secret))
