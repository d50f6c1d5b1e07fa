"""The linen shop of the seed story, as Shopify would hold it, for the offline demo.

It mirrors the app's own demo data: the shop ``linen-and-loom.myshopify.com`` (owner,
approver and proposer on staff, and a fourth member to whom the app gives no role), the
customer Maya Lin, and order #1001: two linen aprons at $48, paid $96, shipped with UPS
six days ago (a tracking number and link) and delivered three days ago. When the demo's
Stripe payment intent is known it is the payment's reference (a Stripe-paid order);
otherwise the order is paid through Shopify Payments.
"""

from __future__ import annotations

from dataclasses import dataclass

from .sandbox import ShopifySandbox

DEMO_SHOP = "linen-and-loom"
OWNER_USER_ID, APPROVER_USER_ID, PROPOSER_USER_ID, VIEWER_USER_ID = 1001, 1002, 1003, 1004
DAY = 24 * 3600.0
# A tracking number in UPS's form; the sandbox tracks nothing.
DEMO_TRACKING_NUMBER = "1Z999AA10123456784"


@dataclass(frozen=True)
class DemoShop:
    domain: str
    customer_id: str
    order_id: str


def seed_demo_shop(sandbox: ShopifySandbox, *, payment_reference: str | None = None) -> DemoShop:
    """Create the linen shop, its staff, Maya Lin and her order #1001."""
    shop = sandbox.create_shop(
        DEMO_SHOP, currency="USD", owner_user_id=OWNER_USER_ID, shop_name="Linen & Loom"
    )
    for user_id, first, last in (
        (OWNER_USER_ID, "Olivia", "Owner"),
        (APPROVER_USER_ID, "Sam", "Approver"),
        (PROPOSER_USER_ID, "Pat", "Proposer"),
        (VIEWER_USER_ID, "Vic", "Viewer"),
    ):
        sandbox.add_staff(
            shop.domain,
            user_id=user_id,
            first_name=first,
            last_name=last,
            account_owner=user_id == OWNER_USER_ID,
        )
    customer = sandbox.seed_customer(
        shop.domain, email="maya@example.com", first_name="Maya", last_name="Lin"
    )
    now = sandbox.now()
    order = sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Linen apron, natural", "quantity": 2, "price": 4800}],
        gateway="stripe" if payment_reference else "shopify_payments",
        payment_reference=payment_reference,
        created_at=now - 8 * DAY,
        fulfilled_at=now - 6 * DAY,
        delivered_at=now - 3 * DAY,
        carrier="UPS",
        tracking_number=DEMO_TRACKING_NUMBER,
        tracking_url=f"https://www.ups.com/track?tracknum={DEMO_TRACKING_NUMBER}",
        estimated_delivery_at=now - 3 * DAY,
    )
    return DemoShop(shop.domain, customer, order)
