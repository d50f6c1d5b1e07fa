"""The linen shop of the seed story, for the offline demo and the end-to-end tests.

Two linen aprons at $48, one $96 card payment, and a logged-in customer writing
that one apron arrived torn. A proposer has drafted a $48 refund of that one
apron; an approver reviews the exact digest and approves; a worker executes it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import requests
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit, create_app
from app.approvals.drafts import parse_draft
from app.approvals.service import create_proposal
from app.cases.models import Case, Customer, Order
from app.cases.service import open_case
from app.clock import utcnow
from app.connections.service import connect_stripe
from app.crypto import SecretBox, secret_box
from app.db import make_engine, make_session_factory
from app.execution.providers import connection_adapters
from app.migrations import upgrade
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import set_writes_enabled
from app.web.auth import staff_token
from integrations.stripe import seeding
from integrations.stripe.sandbox import DEMO_RESTRICTED_KEY, DEMO_SECRET_KEY

SHOP_DOMAIN = "linen-and-loom.myshopify.com"
OWNER, APPROVER, PROPOSER = "olivia.owner", "sam.approver", "pat.proposer"
APRON_LINE = "apron-natural"


@dataclass(frozen=True)
class LinenShop:
    shop_id: uuid.UUID
    case_id: uuid.UUID
    proposal_id: uuid.UUID
    connection_id: uuid.UUID
    customer_id: str
    payment_intent_id: str


def seed_linen_shop(
    session: Session,
    *,
    settings: Settings,
    box: SecretBox,
    secret_key: str,
    restricted_key: str,
    webhook_base_url: str | None,
    shop_domain: str = SHOP_DOMAIN,
    now: datetime | None = None,
) -> LinenShop:
    """Create the shop, its staff, its Stripe connection, the paid order and the case."""
    now = now or utcnow()
    stripe = seeding.client(secret_key, settings.stripe_api_base)
    shop = Shop(domain=shop_domain, name="Linen & Loom", created_at=now)
    session.add(shop)
    session.flush()
    for user_id, role, limit in (
        (OWNER, StaffRole.OWNER, 100_000),
        (APPROVER, StaffRole.APPROVER, 10_000),
        (PROPOSER, StaffRole.PROPOSER, 0),
    ):
        session.add(
            StaffMember(
                shop_id=shop.id,
                user_id=user_id,
                email=f"{user_id}@{shop_domain}",
                role=role,
                approval_limits={"usd": limit} if limit else {},
            )
        )
    session.flush()
    connection = connect_stripe(
        session,
        shop=shop,
        actor=OWNER,
        api_key=restricted_key,
        livemode=False,
        webhook_secret=None,
        box=box,
        now=now,
    )
    if webhook_base_url:
        secret = seeding.webhook_endpoint(
            stripe, f"{webhook_base_url}/webhooks/stripe/{connection.id}"
        )
        connection.encrypted_webhook_secret = box.encrypt(secret)
    set_writes_enabled(session, shop=shop, actor=OWNER, enabled=True, now=now)

    checkout = seeding.paid_checkout(
        stripe, email="maya@example.com", name="Maya Lin", amount=9600, currency="usd"
    )
    customer = Customer(
        shop_id=shop.id,
        email="maya@example.com",
        name="Maya Lin",
        stripe_customer_id=checkout.customer_id,
    )
    session.add(customer)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=customer.id,
            name="#1001",
            currency="usd",
            total=9600,
            payment_provider="stripe",
            payment_id=checkout.payment_intent_id,
            lines=[
                {"id": APRON_LINE, "title": "Linen apron, natural", "quantity": 2, "paid": 9600}
            ],
            fulfilled_at=now - timedelta(days=6),
            delivered_at=now - timedelta(days=3),
            created_at=now - timedelta(days=8),
        )
    )
    case = open_case(
        session,
        shop=shop,
        actor=PROPOSER,
        customer_id=customer.id,
        subject="One apron arrived torn (order #1001)",
        request_text=(
            "Hi! One of the two linen aprons from order #1001 arrived with a torn seam. "
            "Could I get a refund for that one? The other is lovely."
        ),
        identity_level="strong",
        now=now,
    )
    adapter = connection_adapters(settings, box)(session, shop.id, "stripe")
    result = create_proposal(
        session,
        shop=shop,
        case=case,
        actor=PROPOSER,
        draft=parse_draft(
            {
                "kind": "refund",
                "target": checkout.payment_intent_id,
                "amount": 4800,
                "currency": "usd",
                "line_items": [{"line_id": APRON_LINE, "amount": 4800}],
                "params": {"reason": "requested_by_customer"},
                "reason": "One of two aprons arrived damaged; refund that apron.",
            }
        ),
        adapter=adapter,
        settings=settings,
        now=now,
    )
    audit.record(
        session,
        shop_id=shop.id,
        kind="demo.seeded",
        actor=OWNER,
        case_id=case.id,
        data={"order": "#1001"},
        now=now,
    )
    session.flush()
    return LinenShop(
        shop.id,
        case.id,
        result.proposal.id,
        connection.id,
        checkout.customer_id,
        checkout.payment_intent_id,
    )


def main() -> None:
    """The demo process: wait for the stack, seed once, print where to click, stay up."""
    settings = Settings.from_env()
    web = os.environ.get("CASEWARD_PUBLIC_URL", "http://127.0.0.1:5000")
    _wait_for(f"{web}/health")
    _wait_for(settings.stripe_api_base + "/v1/charges", accept_status=401)
    upgrade(settings.database_url)
    session_factory = make_session_factory(make_engine(settings.database_url))
    with session_factory() as session:
        shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one_or_none()
        if shop is None:
            seeded = seed_linen_shop(
                session,
                settings=settings,
                box=secret_box(settings),
                secret_key=DEMO_SECRET_KEY,
                restricted_key=DEMO_RESTRICTED_KEY,
                webhook_base_url=web,
            )
            session.commit()
            case_id: uuid.UUID | None = seeded.case_id
        else:
            case_id = session.scalars(
                select(Case.id).where(Case.shop_id == shop.id).order_by(Case.created_at)
            ).first()
    with create_app(settings).app_context():
        token = staff_token().issue(SHOP_DOMAIN, APPROVER, ttl_seconds=12 * 3600)
    print(
        "\nCaseward demo is ready.\n"
        f"  1. Open {web}/operator/login and paste this staff token for sam.approver\n"
        "     (who may approve up to $100.00):\n"
        f"     {token}\n"
        "  2. Open the case 'One apron arrived torn (order #1001)':\n"
        f"     {web}/operator/cases/{case_id}\n"
        "  3. Read the checks, then press 'Approve $48.00'.\n"
        "  4. Reload: the action goes queued -> succeeded, with the Stripe refund id,\n"
        "     and the audit trail shows every step.\n",
        flush=True,
    )
    signal.sigwait({signal.SIGINT, signal.SIGTERM})


def _wait_for(url: str, accept_status: int = 200, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code == accept_status:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    sys.exit(f"{url} did not come up within {timeout:.0f} s")


if __name__ == "__main__":
    main()
