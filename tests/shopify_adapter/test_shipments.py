"""Where a customer's order is: the shipments the adapter reads from Shopify's fulfillments."""

from __future__ import annotations

from datetime import UTC, datetime

from integrations.provider import Shipment
from integrations.shopify.adapter import ShopifyAdapter
from integrations.shopify.sandbox import SandboxShop, ShopifySandbox

DAY = 86400.0
TRACKING = "1Z999AA10123456784"
TRACKING_URL = f"https://www.ups.com/track?tracknum={TRACKING}"


def whole_seconds_from_now(sandbox: ShopifySandbox, days: float) -> float:
    """Shopify's ``DateTime`` carries whole seconds."""
    return float(int(sandbox.now() + days * DAY))


def moment(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def test_an_order_in_transit_says_who_carries_it_and_when_it_should_arrive(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    shipped = whole_seconds_from_now(sandbox, -2)
    expected = whole_seconds_from_now(sandbox, 3)
    sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 1, "price": 4800}],
        fulfilled_at=shipped,
        carrier="UPS",
        tracking_number=TRACKING,
        tracking_url=TRACKING_URL,
        estimated_delivery_at=expected,
    )

    (order,) = adapter.customer_orders(customer)

    assert order.shipments == (
        Shipment(
            status="in_transit",
            carrier="UPS",
            tracking_number=TRACKING,
            tracking_url=TRACKING_URL,
            estimated_delivery=moment(expected),
            delivered_at=None,
            shipped_at=moment(shipped),
        ),
    )
    assert order.delivered_at is None


def test_a_delivered_order_says_so_with_its_tracking(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    shipped = whole_seconds_from_now(sandbox, -4)
    arrived = whole_seconds_from_now(sandbox, -1)
    sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 1, "price": 4800}],
        fulfilled_at=shipped,
        delivered_at=arrived,
        carrier="Canada Post",
        tracking_number="7023210039414604",
    )

    (order,) = adapter.customer_orders(customer)

    (shipment,) = order.shipments
    assert (shipment.status, shipment.carrier, shipment.tracking_number) == (
        "delivered",
        "Canada Post",
        "7023210039414604",
    )
    assert (shipment.tracking_url, shipment.estimated_delivery) == (None, None)
    assert shipment.delivered_at == order.delivered_at == moment(arrived)


def test_a_fulfilled_order_without_tracking_is_one_shipment_with_no_carrier(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 1, "price": 4800}],
        fulfilled_at=sandbox.now() - DAY,
    )

    (order,) = adapter.customer_orders(customer)

    (shipment,) = order.shipments
    assert (shipment.status, shipment.carrier, shipment.tracking_number) == (
        "fulfilled",
        None,
        None,
    )


def test_an_order_not_shipped_has_no_shipments(
    adapter: ShopifyAdapter, order: str, customer: str
) -> None:
    (facts,) = adapter.customer_orders(customer)

    assert facts.id == order
    assert facts.shipments == ()
    assert facts.fulfilled_at is None
