"""A shopper logged in to the storefront is answered with their Shopify orders from their
first message, without anyone opening the case: the draft that answers them reads their
orders from Shopify first (the Shopify sandbox, the app installed by a real token
exchange), and a shopper who logs in during the conversation has their question answered
again, with them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest
from flask import Flask
from flask.testing import FlaskClient
from rq.job import JobStatus
from shopify_support import serving_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, CLIENT_ID, Shopper

from app.actors import Surface, staff
from app.audit import AuditEvent
from app.cases.models import Case, Order
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.crypto import secret_box
from app.db import Database
from app.drafting.drafters import drafter_for
from app.drafting.jobs import draft_for_message
from app.jobs.connection import RedisExtension
from app.settings import Settings
from app.shopify.install import record_install
from integrations.shopify.auth import AdminVerified, ShopifyAuth
from integrations.shopify.sandbox import ShopifySandbox
from integrations.shopify.sandbox.state import parse_gid

OWNER = 1001
TRACKING = "1Z999AA10123456784"
WHERE = "Hi, where is my order?"


@dataclass(frozen=True)
class Store:
    domain: str
    customer: str  # the logged-in customer's number, as Shopify's proxy names them
    order: str  # the order's gid


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return replace(settings, shopify_api_base=shopify.url)


@pytest.fixture
def store(shopify: ShopifySandbox, settings: Settings, session: Session) -> Store:
    """The app installed in a store where Maya, whom Caseward has never seen, has one order
    on its way with UPS."""
    shop = shopify.create_shop("linen-login", owner_user_id=OWNER)
    customer = shopify.seed_customer(
        shop.domain, email="maya@example.com", first_name="Maya", last_name="Lin"
    )
    shipped = time.time() - 86400
    order = shopify.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Linen apron, natural", "quantity": 2, "price": 4800}],
        fulfilled_at=shipped,
        carrier="UPS",
        tracking_number=TRACKING,
    )
    auth = ShopifyAuth(CLIENT_ID, APP_SECRET, api_base=shopify.url)
    try:
        verified = auth.verify_admin_request(
            "GET",
            "https://caseward.example.com/app",
            {
                "Authorization": "Bearer "
                + shopify.session_token(shop.domain, user_id=OWNER, issued_at=time.time())
            },
            b"",
            patch_id_token_path="/app/patch-id-token",
        )
        assert isinstance(verified, AdminVerified), verified
        token = auth.exchange_offline_token(verified)
    finally:
        auth.close()
    record_install(
        session,
        domain=shop.domain,
        token=token,
        currency="usd",
        installer=staff(str(OWNER), Surface.SHOPIFY_ADMIN),
        installer_is_account_owner=True,
        installer_email=None,
        box=secret_box(settings),
        now=utcnow(),
    )
    session.commit()
    return Store(shop.domain, str(parse_gid(customer, "Customer")), order)


def _draft_queued(app: Flask, settings: Settings) -> str:
    """Run the drafting job the chat queued, as a worker runs it; its outcome."""
    background = RedisExtension.background_queue(app)
    [job] = [j for j in background.jobs if j.func_name == "app.drafting.jobs.draft_after_message"]
    background.remove(job)
    job.set_status(JobStatus.STARTED)
    outcome, _ = draft_for_message(
        Database.state(app).session_factory,
        connection_adapters(settings, secret_box(settings)),
        settings,
        drafter_for(settings),
        uuid.UUID(job.args[0]),
        now=utcnow(),
    )
    job.set_status(JobStatus.FINISHED)
    return outcome


def _replies(shopper: Shopper) -> list[str]:
    return [m["text"] for m in shopper.state()["messages"] if m["from"] == "shop"]


def test_a_logged_in_shoppers_first_message_is_answered_with_their_shopify_order(
    app: Flask, client: FlaskClient, store: Store, settings: Settings, session: Session
) -> None:
    shopper = Shopper(client, store.domain, logged_in_customer_id=store.customer)

    asked = shopper.say(WHERE)
    outcome = _draft_queued(app, settings)

    assert asked["identity"]["how"] == "logged_in"
    assert outcome.startswith("drafted")
    [reply] = _replies(shopper)
    assert "UPS" in reply and TRACKING in reply
    # The case holds the order, read from Shopify without anyone opening it.
    case = session.scalars(select(Case)).one()
    held = session.scalars(select(Order).where(Order.customer_id == case.customer_id)).all()
    assert [order.shopify_order_id for order in held] == [store.order]
    refreshed = session.scalars(
        select(AuditEvent).where(AuditEvent.kind == "customer.orders_refreshed")
    ).one()
    assert refreshed.data["customer_id"] == str(case.customer_id)


def test_a_shopper_who_logs_in_during_the_chat_has_their_question_answered_with_their_order(
    app: Flask, client: FlaskClient, store: Store, settings: Settings
) -> None:
    shopper = Shopper(client, store.domain)
    shopper.say(WHERE)
    _draft_queued(app, settings)
    [asked_to_verify] = _replies(shopper)
    assert TRACKING not in asked_to_verify

    # The same browser (its conversation's token), now logged in to the storefront.
    shopper.logged_in_customer_id = store.customer
    assert shopper.state()["identity"]["how"] == "logged_in"
    outcome = _draft_queued(app, settings)

    assert outcome.startswith("drafted")
    replies = _replies(shopper)
    assert len(replies) == 2 and "UPS" in replies[-1] and TRACKING in replies[-1]
