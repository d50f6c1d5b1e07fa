"""Shopify's webhooks: verify, keep once per shop and event id, answer within the deadline.

Shopify delivers at least once, retries a failed delivery for hours, and wants an answer
within five seconds. For every delivery:

1. Verify the HMAC of the raw body with the app secret (old secret accepted during a
   rotation), in constant time: anything else is 401, and nothing is stored or queued.
2. Keep it once: the unique (shop, provider, event id) decides; a repeat answers 200 and
   changes nothing. Shopify's ``X-Shopify-Event-Id`` names the event across its
   deliveries (the webhook id changes on every retry). A repeat of an order's change
   queues its refresh again (step 4), which the first delivery may have lost.
3. Act on the few topics that must not wait, in the same transaction:
   ``app/uninstalled`` forgets the tokens and stops the shop (a delivery triggered before
   the shop's current install is stale and ignored, so a late uninstall never undoes a
   reinstall); ``app/scopes_update`` records the granted scopes.
4. After the commit, queue what takes longer: the privacy topics (``customers/redact``,
   ``shop/redact``, ``customers/data_request``) are answered by
   :func:`app.privacy.jobs.answer_privacy_request` on the background queue (the sweep
   queues one this never did); an order of one of our customers that changed
   (``orders/updated``, ``refunds/create``) refreshes our copy of their orders
   (:mod:`app.cases.store_orders`). Money checks never wait for that copy: they read the
   order from Shopify.
5. Answer 200.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.cases.jobs import enqueue_order_refresh
from app.cases.store_orders import customers_of_order_change
from app.clock import utcnow
from app.db import request_session
from app.errors import NotFound, Unauthenticated
from app.execution.models import keep_provider_event
from app.jobs.connection import RedisExtension
from app.privacy.jobs import PRIVACY_REQUEST
from app.privacy.models import PRIVACY_TOPICS
from app.shopify.install import SHOPIFY, record_uninstall
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop
from app.web.shopify_admin import shopify_auth
from app.words import said
from integrations.shopify.auth import Refusal, VerifiedWebhook

bp = Blueprint("shopify_webhooks", __name__, url_prefix="/webhooks/shopify")


@bp.post("")
def receive() -> tuple[Response, int]:
    auth = shopify_auth(current_app)
    if auth is None:
        raise NotFound(said("Shopify is not configured for this Caseward"))
    verification = auth.verify_webhook(
        request.method, request.url, dict(request.headers), request.get_data(cache=False)
    )
    if isinstance(verification, Refusal):
        raise Unauthenticated(said("the webhook's signature does not verify"))
    session = request_session()
    shop = session.scalars(select(Shop).where(Shop.domain == verification.shop)).one_or_none()
    if shop is None:
        # Signed by Shopify for a shop that never installed Caseward: nothing to act on.
        return jsonify({"received": True, "known_shop": False}), 200
    now = utcnow()
    event_id = verification.event_id or verification.webhook_id
    kept = keep_provider_event(
        session,
        shop_id=shop.id,
        provider="shopify",
        event_id=event_id,
        event_type=verification.topic,
        object_id=_object_id(verification.payload),
        payload=dict(verification.payload),
        created=verification.triggered_at or now,
        received_at=now,
    )
    customers = customers_of_order_change(
        session, shop.id, verification.topic, verification.payload
    )
    if not kept:
        session.rollback()
        # Shopify sends an event again when it had no answer: the first delivery may have
        # been kept and its refresh lost with the process. A refresh already waiting for
        # the customer is not queued twice.
        _queue_order_refreshes(customers)
        return jsonify({"received": True, "duplicate": True}), 200
    acted = _act(session, shop, verification, now)
    session.commit()
    if verification.topic in PRIVACY_TOPICS:
        PRIVACY_REQUEST.enqueue(RedisExtension.background_queue(current_app), shop.id, event_id)
        acted = "queued"
    if _queue_order_refreshes(customers):
        acted = "orders_refresh_queued"
    return jsonify({"received": True, "acted": acted}), 200


def _queue_order_refreshes(customers: list[uuid.UUID]) -> bool:
    """After the commit: refresh each customer's copy of their orders; True if any."""
    for customer_id in customers:
        enqueue_order_refresh(RedisExtension.background_queue(current_app), customer_id)
    return bool(customers)


def _act(session: Session, shop: Shop, hook: VerifiedWebhook, now: datetime) -> str | None:
    """Step 3; returns what was done, for the answer and the tests."""
    if hook.topic == "app/uninstalled":
        install = session.get(ShopifyInstall, shop.id)
        if install is not None and _triggered_before(hook, install.installed_at):
            _ignore_stale(session, shop, hook, now)
            return "stale"
        return "uninstalled" if record_uninstall(session, domain=shop.domain, now=now) else None
    if hook.topic == "app/scopes_update":
        install = session.get(ShopifyInstall, shop.id)
        granted = hook.payload.get("current")
        if install is None or not isinstance(granted, list):
            return None
        install.scopes = ",".join(str(scope) for scope in granted)
        audit.record(
            session,
            shop_id=shop.id,
            kind="shop.scopes_changed",
            actor=SHOPIFY,
            data={"scopes": install.scopes},
            now=now,
        )
        return "scopes_updated"
    return None


def _triggered_before(hook: VerifiedWebhook, moment: datetime) -> bool:
    return hook.triggered_at is not None and hook.triggered_at < moment


def _ignore_stale(session: Session, shop: Shop, hook: VerifiedWebhook, now: datetime) -> None:
    audit.record(
        session,
        shop_id=shop.id,
        kind="webhook.stale_ignored",
        actor=SHOPIFY,
        data={
            "topic": hook.topic,
            "event_id": hook.event_id,
            "triggered_at": hook.triggered_at.isoformat() if hook.triggered_at else None,
        },
        now=now,
    )


def _object_id(payload: Any) -> str | None:
    value = payload.get("admin_graphql_api_id") or payload.get("id")
    return str(value) if value is not None else None
