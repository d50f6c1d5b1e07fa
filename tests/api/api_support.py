"""Helpers for the API tests: accounts at the sandbox and seeded shops.

Staff authenticate the way the money-path harness does (one place to change it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import stripe
from sqlalchemy.orm import Session

from app.crypto import secret_box
from app.demo import SHOP_DOMAIN, LinenShop, seed_linen_shop
from app.settings import Settings
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "money_path"))
from money_path_harness import Account, Staff

__all__ = ["OTHER_SHOP_DOMAIN", "Account", "Staff", "new_account", "seed"]

OTHER_SHOP_DOMAIN = "other-linen.myshopify.com"


def new_account(
    sandbox: StripeSandbox, settings: Settings, permissions: dict[str, str] | None = None
) -> Account:
    keys = sandbox.create_account(
        restricted_keys=[{"permissions": permissions or DEMO_PERMISSIONS}]
    )
    client = stripe.StripeClient(
        keys.secret_key, base_addresses={"api": settings.stripe_api_base}, max_network_retries=0
    )
    return Account(keys.id, keys.secret_key, keys.restricted_keys[0].key, client)


def seed(
    session: Session,
    settings: Settings,
    account: Account,
    *,
    domain: str = SHOP_DOMAIN,
    webhook_base_url: str | None = None,
) -> LinenShop:
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=account.secret_key,
        restricted_key=account.restricted_key,
        webhook_base_url=webhook_base_url,
        shop_domain=domain,
    )
    session.commit()
    return seeded
