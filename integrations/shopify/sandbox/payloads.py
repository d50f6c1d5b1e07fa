"""Webhook bodies in Shopify's REST shapes (what ``refunds/create`` and friends carry).

Webhooks predate GraphQL and still speak the REST Admin API's JSON: integer ids beside
``admin_graphql_api_id``, snake_case keys, decimal strings at the currency's full
precision (``"48.00"``) with ``*_set`` twins in shop and presentment money, and times
with the shop's offset (the sandbox's shops are on UTC). These builders take the state
at the moment of the event, so a later redelivery carries the same bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .money import rest_amount
from .state import Customer, Order, Refund, Shop, Transaction, gid

JSON = dict[str, Any]


def rest_time(ts: float) -> str:
    """``2023-11-14T22:13:20+00:00``: REST payload times."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def _set(minor: int, currency: str) -> JSON:
    money = {"amount": rest_amount(minor, currency), "currency_code": currency}
    return {"shop_money": money, "presentment_money": dict(money)}


def customer(record: Customer | None) -> JSON | None:
    if record is None:
        return None
    return {
        "id": record.id,
        "email": record.email,
        "first_name": record.first_name,
        "last_name": record.last_name,
        "phone": record.phone,
        "state": record.state.lower(),
        "created_at": rest_time(record.created_at),
        "updated_at": rest_time(record.updated_at),
        "admin_graphql_api_id": gid("Customer", record.id),
    }


def transaction(order: Order, record: Transaction) -> JSON:
    return {
        "id": record.id,
        "order_id": order.id,
        "kind": record.kind.lower(),
        "gateway": record.gateway,
        "status": record.status.lower(),
        "message": None,
        "created_at": rest_time(record.created_at),
        "processed_at": rest_time(record.created_at),
        "test": record.test,
        "authorization": record.payment_id,
        "parent_id": record.parent_id,
        "amount": rest_amount(record.amount, order.currency),
        "currency": order.currency,
        "payment_id": record.payment_id,
        "receipt": dict(record.receipt),
        "error_code": None,
        "source_name": "web",
        "admin_graphql_api_id": gid("OrderTransaction", record.id),
    }


def refund(order: Order, record: Refund) -> JSON:
    """``refunds/create``."""
    currency = order.currency
    lines = []
    for refund_line in record.lines:
        line = order.line(refund_line.line_item_id)
        assert line is not None
        lines.append(
            {
                "id": refund_line.id,
                "line_item_id": line.id,
                "quantity": refund_line.quantity,
                "restock_type": refund_line.restock_type.lower(),
                "location_id": None,
                "subtotal": rest_amount(refund_line.subtotal, currency),
                "subtotal_set": _set(refund_line.subtotal, currency),
                "total_tax": rest_amount(0, currency),
                "total_tax_set": _set(0, currency),
                "line_item": _line(order, line.id),
            }
        )
    wanted = set(record.transaction_ids)
    return {
        "id": record.id,
        "order_id": order.id,
        "created_at": rest_time(record.created_at),
        "processed_at": rest_time(record.processed_at),
        "note": record.note,
        "restock": any(line["restock_type"] != "no_restock" for line in lines),
        "user_id": None,
        "refund_line_items": lines,
        "transactions": [transaction(order, t) for t in order.transactions if t.id in wanted],
        "order_adjustments": [],
        "duties": [],
        "refund_shipping_lines": [],
        "admin_graphql_api_id": gid("Refund", record.id),
    }


def _line(order: Order, line_id: int) -> JSON:
    line = order.line(line_id)
    assert line is not None
    return {
        "id": line.id,
        "title": line.title,
        "name": line.title,
        "quantity": line.quantity,
        "current_quantity": order.refundable_quantity(line),
        "price": rest_amount(line.price, order.currency),
        "price_set": _set(line.price, order.currency),
        "sku": line.sku,
        "variant_title": line.variant_title,
        "requires_shipping": line.requires_shipping,
        "gift_card": False,
        "taxable": True,
        "admin_graphql_api_id": gid("LineItem", line.id),
    }


_FINANCIAL = {
    "PENDING": "pending",
    "AUTHORIZED": "authorized",
    "PARTIALLY_PAID": "partially_paid",
    "PAID": "paid",
    "PARTIALLY_REFUNDED": "partially_refunded",
    "REFUNDED": "refunded",
}


def order(shop: Shop, record: Order) -> JSON:
    """``orders/updated``."""
    currency = record.currency
    fulfilled = any(f.status == "SUCCESS" for f in record.fulfillments)
    return {
        "id": record.id,
        "admin_graphql_api_id": gid("Order", record.id),
        "name": record.name,
        "order_number": record.number,
        "number": record.number - 1000,
        "email": record.email,
        "contact_email": record.email,
        "created_at": rest_time(record.created_at),
        "updated_at": rest_time(record.updated_at),
        "processed_at": rest_time(record.created_at),
        "cancelled_at": rest_time(record.cancelled_at) if record.cancelled_at else None,
        "currency": currency,
        "presentment_currency": currency,
        "financial_status": _FINANCIAL.get(record.financial_status, "pending"),
        "fulfillment_status": "fulfilled" if fulfilled else None,
        "test": record.test,
        "subtotal_price": rest_amount(record.subtotal, currency),
        "subtotal_price_set": _set(record.subtotal, currency),
        "total_price": rest_amount(record.total, currency),
        "total_price_set": _set(record.total, currency),
        "total_shipping_price_set": _set(record.shipping, currency),
        "total_tax": rest_amount(0, currency),
        "total_discounts": rest_amount(0, currency),
        "current_total_price": rest_amount(
            record.total - record.refunded_lines_value - record.refunded_shipping, currency
        ),
        "payment_gateway_names": list(
            dict.fromkeys(t.gateway for t in record.transactions if t.kind != "REFUND")
        ),
        "customer": customer(shop.customers.get(record.customer_id or 0)),
        "line_items": [_line(record, line.id) for line in record.lines],
        "refunds": [refund(record, r) for r in record.refunds],
        "fulfillments": [
            {
                "id": f.id,
                "order_id": record.id,
                "name": f.name,
                "status": f.status.lower(),
                "shipment_status": (
                    None if f.display_status == "FULFILLED" else f.display_status.lower()
                ),
                "tracking_company": f.carrier,
                "tracking_number": f.tracking_number,
                "tracking_numbers": [f.tracking_number] if f.tracking_number else [],
                "tracking_url": f.tracking_url,
                "tracking_urls": [f.tracking_url] if f.tracking_url else [],
                "created_at": rest_time(f.created_at),
                "updated_at": rest_time(f.delivered_at or f.created_at),
                "admin_graphql_api_id": gid("Fulfillment", f.id),
            }
            for f in record.fulfillments
        ],
    }


def shop_payload(shop: Shop) -> JSON:
    """``app/uninstalled``: the shop."""
    return {
        "id": shop.id,
        "name": shop.name,
        "email": shop.email,
        "domain": shop.domain,
        "myshopify_domain": shop.domain,
        "currency": shop.currency,
        "iana_timezone": shop.timezone,
        "plan_name": "basic",
        "created_at": rest_time(shop.created_at),
        "updated_at": rest_time(shop.created_at),
    }


def scopes_update(shop: Shop, previous: list[str], current: list[str], now: float) -> JSON:
    """``app/scopes_update``."""
    return {
        "id": shop.id,
        "admin_graphql_api_id": gid("AppInstallation", shop.id),
        "previous": previous,
        "current": current,
        "updated_at": rest_time(now),
    }


def customers_data_request(
    shop: Shop, record: Customer, orders: list[int], request_id: int
) -> JSON:
    """``customers/data_request`` (mandatory compliance topic)."""
    return {
        "shop_id": shop.id,
        "shop_domain": shop.domain,
        "orders_requested": orders,
        "customer": {"id": record.id, "email": record.email, "phone": record.phone},
        "data_request": {"id": request_id},
    }


def customers_redact(shop: Shop, record: Customer, orders: list[int]) -> JSON:
    """``customers/redact`` (mandatory compliance topic)."""
    return {
        "shop_id": shop.id,
        "shop_domain": shop.domain,
        "customer": {"id": record.id, "email": record.email, "phone": record.phone},
        "orders_to_redact": orders,
    }


def shop_redact(shop: Shop) -> JSON:
    """``shop/redact`` (mandatory compliance topic)."""
    return {"shop_id": shop.id, "shop_domain": shop.domain}
