"""The app as a Shopify app in tests: its client id and secret, shops installed in it,
session tokens and webhook deliveries as Shopify makes them."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jwt
from flask import Flask
from flask.testing import FlaskClient
from shopify_support import deliver_webhook, webhook_signature
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.crypto import SecretBox, secret_box
from app.db import Database
from app.jobs.connection import RedisExtension
from app.privacy.jobs import answer_stored_request
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop

CLIENT_ID = "caseward-test-client-id"
APP_SECRET = "shpss_test-app-secret-0123456789abcdef"
ENCRYPTION_KEY = SecretBox.generate_key()


@dataclass(frozen=True)
class Installed:
    shop: Shop
    installed_at: datetime


def install_shop(
    session: Session, settings: Settings, name: str, *, installed_at: datetime | None = None
) -> Installed:
    """A shop with a live install, as token exchange would have left it."""
    moment = installed_at or utcnow()
    shop = Shop(domain=f"{name}.myshopify.com", name=name, created_at=moment)
    session.add(shop)
    session.flush()
    session.add(
        ShopifyInstall(
            shop_id=shop.id,
            encrypted_access_token=secret_box(settings).encrypt(f"shpat_{uuid.uuid4().hex}"),
            scopes="read_orders,write_orders",
            installed_at=moment,
        )
    )
    session.commit()
    return Installed(shop, moment)


def shopify_signature(body: bytes, secret: str = APP_SECRET) -> str:
    return webhook_signature(body, secret)


def deliver(
    client: FlaskClient,
    shop: str,
    topic: str,
    payload: dict[str, Any],
    *,
    event_id: str | None = None,
    triggered_at: datetime | None = None,
    secret: str = APP_SECRET,
    body: bytes | None = None,
    signature: str | None = None,
) -> Any:
    """A webhook delivery signed with this app's secret (see ``deliver_webhook``)."""
    return deliver_webhook(
        client,
        shop,
        topic,
        payload,
        secret=secret,
        event_id=event_id,
        triggered_at=triggered_at,
        body=body,
        signature=signature,
    )


def an_hour_before(moment: datetime) -> datetime:
    return moment - timedelta(hours=1)


def session_token(
    shop: str,
    user_id: str,
    *,
    secret: str = APP_SECRET,
    aud: str = CLIENT_ID,
    iss_shop: str | None = None,
    issued_ago: float = 0.0,
) -> str:
    """A session token as the Shopify admin makes one: HS256 with the app secret, a
    minute of life, ``iss`` and ``dest`` naming the shop, ``sub`` the staff member."""
    issued = int(time.time() - issued_ago)
    claims = {
        "iss": f"https://{iss_shop or shop}/admin",
        "dest": f"https://{shop}",
        "aud": aud,
        "sub": user_id,
        "exp": issued + 60,
        "nbf": issued,
        "iat": issued,
        "jti": str(uuid.uuid4()),
        "sid": uuid.uuid4().hex,
    }
    return jwt.encode(claims, secret, algorithm="HS256")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# What a privacy webhook queues: the job the worker runs for it.
PRIVACY_JOB = "app.privacy.jobs.answer_privacy_request"


def take_queued_privacy_request(app: Flask) -> tuple[uuid.UUID, str]:
    """The privacy webhook a delivery queued, its job taken out of Redis (a test runs it
    itself, or plays Redis having lost it): the job's arguments, the shop's id and
    Shopify's event id."""
    queue = RedisExtension.background_queue(app)
    [job] = [job for job in queue.jobs if job.func_name == PRIVACY_JOB]
    job.delete()
    shop_id, event_id = job.args
    return uuid.UUID(shop_id), event_id


def answer_queued_privacy_request(app: Flask, settings: Settings) -> str:
    """Run the queued privacy job the way the worker would, and return what it did."""
    shop_id, event_id = take_queued_privacy_request(app)
    return answer_stored_request(
        Database.state(app).session_factory, secret_box(settings), shop_id, event_id, now=utcnow()
    )
