"""The scan's tests: shops connected to the Stripe and Shopify sandboxes, their histories
seeded at real past times (the sandboxes run on the wall clock, as the scan's window is
reckoned from Caseward's), and what the scan kept and what the sandboxes received.

The module name is unique on purpose: test folders have no ``__init__.py``, so helper
modules are imported by bare name.
"""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "money_path"))
from money_path_harness import Staff

from app.clock import utcnow
from app.crypto import secret_box
from app.db import Database
from app.history_audit.models import HistoryRecord, HistoryScan
from app.history_audit.readers import history_readers
from app.history_audit.scan import ScanContext
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.shopify.sandbox import ShopifySandbox
from integrations.stripe.sandbox import AccountKeys, StripeSandbox

OWNER, VIEWER, APPROVER = "owner-1", "viewer-1", "approver-1"
DAY = timedelta(days=1)
WEBHOOK_SECRET = "whsec_history_scan_tests_0123456789"
# Read access to what the audit reads at Stripe, and nothing else.
STRIPE_READ_ONLY = {
    "refunds": "read",
    "charges": "read",
    "customers": "read",
    "coupons": "read",
    "promotion_codes": "read",
    "subscriptions": "read",
    "events": "read",
}


@dataclass
class StripeShop:
    shop_id: uuid.UUID
    domain: str
    account: AccountKeys
    owner: Staff
    viewer: Staff
    approver: Staff

    @property
    def key(self) -> str:
        return self.account.restricted_keys[0].key

    def connect(self) -> Any:
        """Connect the read-only key through the staff API, as an owner does."""
        return self.owner.put(
            "/api/shop/connections/stripe",
            {"api_key": self.key, "livemode": False, "webhook_secret": WEBHOOK_SECRET},
        )


def stripe_shop(
    app: Flask,
    session: Session,
    sandbox: StripeSandbox,
    name: str,
    permissions: dict[str, str] = STRIPE_READ_ONLY,
) -> StripeShop:
    """A shop with an owner, an approver and a viewer, and a Stripe account of its own
    (not yet connected) whose restricted key holds ``permissions``."""
    shop = Shop(domain=f"{name}-{uuid.uuid4().hex[:6]}.myshopify.com", name=name)
    session.add(shop)
    session.flush()
    for user, role in ((OWNER, StaffRole.OWNER), (VIEWER, StaffRole.VIEWER)):
        session.add(StaffMember(shop_id=shop.id, user_id=user, role=role))
    session.add(
        StaffMember(shop_id=shop.id, user_id=APPROVER, role=StaffRole.APPROVER, approval_limits={})
    )
    session.commit()
    account = sandbox.create_account(restricted_keys=[{"permissions": permissions}])
    client = app.test_client()
    return StripeShop(
        shop.id,
        shop.domain,
        account,
        Staff(client, app, shop.domain, OWNER),
        Staff(client, app, shop.domain, VIEWER),
        Staff(client, app, shop.domain, APPROVER),
    )


@dataclass(frozen=True)
class Seeded:
    """A seeded history: the ids the scan must keep, and those it must not."""

    inside: frozenset[str]
    outside: frozenset[str]


def stripe_history(sandbox: StripeSandbox, account: str, *, refunds: int = 120) -> Seeded:
    """Refunds (``refunds`` of them, past one page of 100), credits, discounts,
    cancellations and changes inside the last 90 days, a refunded payment refunded twice
    more (a duplicate), and one record of each kind that Stripe reaches just outside."""
    now = time.time()
    day = DAY.total_seconds()
    inside: list[dict[str, Any]] = [
        {"kind": "refund", "created": int(now - (1 + n % 80) * day - n), "amount": 500 + n}
        for n in range(refunds)
    ]
    inside += [
        {"kind": "refund", "created": int(now - 10 * day), "amount": 2500, "payment": "twice"},
        {"kind": "refund", "created": int(now - 9 * day), "amount": 2500, "payment": "twice"},
        {"kind": "customer_credit", "created": int(now - 30 * day), "amount": 1500},
        {"kind": "customer_credit", "created": int(now - 3 * day), "amount": 800},
        {"kind": "discount", "created": int(now - 20 * day), "percent_off": 10},
        {"kind": "discount", "created": int(now - 12 * day), "percent_off": 80},
        {
            "kind": "discount",
            "created": int(now - 5 * day),
            "amount_off": 1000,
            "promotion_code": False,
        },
        {"kind": "subscription_cancel", "created": int(now - 40 * day)},
        {"kind": "subscription_change", "created": int(now - 6 * day), "new_amount": 2000},
    ]
    outside = [
        {"kind": "refund", "created": int(now - 120 * day), "amount": 700},
        {"kind": "customer_credit", "created": int(now - 100 * day), "amount": 900},
        {"kind": "discount", "created": int(now - 95 * day), "percent_off": 15},
        {"kind": "subscription_cancel", "created": int(now - 91 * day)},
    ]
    answer = sandbox.seed_history(account, [*inside, *outside])
    ids = [str(record["id"]) for record in answer["records"]]
    return Seeded(frozenset(ids[: len(inside)]), frozenset(ids[len(inside) :]))


def shopify_history(sandbox: ShopifySandbox, domain: str, *, refunds: int = 60) -> Seeded:
    """Orders refunded inside the last 90 days (an order refunded twice among them), store
    credits and discount codes inside it, and one of each just outside."""
    now = time.time()
    day = DAY.total_seconds()
    orders: list[dict[str, Any]] = [
        {
            "ref": f"order-{n}",
            "customer": "maya" if n % 2 else "ravi",
            "created_at": now - (2 + n % 80) * day - 3600,
            "total": 9600,
            "refunds": [
                {"ref": f"in-refund-{n}", "created_at": now - (1 + n % 80) * day, "amount": 1200}
            ],
        }
        for n in range(refunds)
    ]
    orders += [
        {
            "ref": "twice",
            "customer": "maya",
            "created_at": now - 20 * day,
            "total": 5000,
            "refunds": [
                {"ref": "in-twice-1", "created_at": now - 15 * day, "amount": 2000},
                {"ref": "in-twice-2", "created_at": now - 15 * day + 600, "amount": 2000},
            ],
        },
        {
            "ref": "old",
            "customer": "ravi",
            "created_at": now - 130 * day,
            "total": 4000,
            "refunds": [{"ref": "out-refund", "created_at": now - 120 * day, "amount": 1000}],
        },
    ]
    history = {
        "customers": [
            {"ref": "maya", "email": "maya@example.com", "first_name": "Maya"},
            {"ref": "ravi", "email": "ravi@example.com", "first_name": "Ravi"},
        ],
        "orders": orders,
        "store_credits": [
            {"ref": "in-credit-1", "customer": "maya", "amount": 500, "created_at": now - 8 * day},
            {"ref": "in-credit-2", "customer": "ravi", "amount": 700, "created_at": now - 2 * day},
            {
                "ref": "out-credit",
                "customer": "ravi",
                "amount": 300,
                "created_at": now - 100 * day,
            },
        ],
        "discounts": [
            {"ref": "in-code-1", "code": "SORRY10", "created_at": now - 4 * day, "percentage": 0.1},
            {"ref": "in-code-2", "code": "OOPS", "created_at": now - 14 * day, "amount": 2500},
            {
                "ref": "out-code",
                "code": "OLD15",
                "created_at": now - 110 * day,
                "percentage": 0.15,
            },
        ],
    }
    refs = sandbox.seed_history(domain, history).refs
    inside = {gid for ref, gid in refs.items() if ref.startswith("in-")}
    outside = {gid for ref, gid in refs.items() if ref.startswith("out-")}
    return Seeded(frozenset(inside), frozenset(outside))


def scan_context(app: Flask, settings: Settings) -> ScanContext:
    """What a worker's scan job runs with, in this process."""
    return ScanContext(
        session_factory=Database.state(app).session_factory,
        readers=history_readers(settings, secret_box(settings)),
        clock=utcnow,
    )


def kept_ids(session: Session, scan_id: uuid.UUID) -> list[str]:
    """Every record the scan kept, with repeats if any were kept twice."""
    return list(
        session.scalars(select(HistoryRecord.record_id).where(HistoryRecord.scan_id == scan_id))
    )


def the_scan(session: Session, scan_id: uuid.UUID) -> HistoryScan:
    session.expire_all()
    scan = session.get(HistoryScan, scan_id)
    assert scan is not None
    return scan


def scans_of(session: Session, shop_id: uuid.UUID) -> list[HistoryScan]:
    session.expire_all()
    return list(
        session.scalars(
            select(HistoryScan)
            .where(HistoryScan.shop_id == shop_id)
            .order_by(HistoryScan.created_at)
        )
    )


def newest(scans: list[HistoryScan], provider: str) -> HistoryScan:
    return [scan for scan in scans if scan.provider == provider][-1]


class SteppedClock:
    """A monotonic clock that moves only when the scan waits, so a test measures the
    scan's pacing instead of sitting through it (Shopify's worst-case pace is a query
    every ten seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
