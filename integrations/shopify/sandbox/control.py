"""``/_sandbox/...``: JSON control endpoints for the Shopify sandbox running as a process.

They mirror :class:`~.sandbox.ShopifySandbox`'s methods: the shared kit's
:func:`~integrations.sandbox_kit.control_router` gives the token check, JSON, errors and
the routes every sandbox has (clock, faults, holds, latency, requests, webhook switches);
this module adds the Shopify ones. The prefix
cannot collide with Shopify's ``/admin`` paths, and every call needs the control token,
so an access token alone can never steer the sandbox. Shops are named by their
``*.myshopify.com`` domain in the path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlRouter, control_router, fault_from_json

if TYPE_CHECKING:
    from .sandbox import ShopifySandbox

JSON = dict[str, Any]


def shopify_control_router(sandbox: ShopifySandbox) -> ControlRouter:
    """The control routes of ``sandbox``."""
    s = sandbox
    router = control_router(sandbox)
    add = router.add
    add(
        "POST",
        "/_sandbox/shops",
        lambda b, p: s.create_shop(
            str(b["name"]),
            currency=str(b.get("currency") or "USD"),
            owner_user_id=int(b.get("owner_user_id") or 1001),
            shop_name=b.get("shop_name"),
        ).to_json(),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/staff",
        lambda b, p: s.add_staff(
            p["shop"],
            user_id=int(b["user_id"]),
            account_owner=bool(b.get("account_owner")),
            first_name=b.get("first_name"),
            last_name=b.get("last_name"),
            email=b.get("email"),
        ),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/session_token",
        lambda b, p: {
            "token": s.session_token(
                p["shop"], user_id=int(b["user_id"]), exp_in=float(b.get("exp_in") or 60)
            )
        },
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/customers",
        lambda b, p: {
            "id": s.seed_customer(
                p["shop"],
                email=b.get("email"),
                first_name=b.get("first_name"),
                last_name=b.get("last_name"),
                phone=b.get("phone"),
            )
        },
    )
    add("POST", "/_sandbox/shops/{shop}/orders", lambda b, p: {"id": _seed_order(s, p["shop"], b)})
    add("POST", "/_sandbox/shops/{shop}/uninstall", lambda b, p: s.uninstall(p["shop"]).to_json())
    add("POST", "/_sandbox/shops/{shop}/install", lambda b, p: s.install(p["shop"]))
    add(
        "POST",
        "/_sandbox/shops/{shop}/scopes",
        lambda b, p: s.update_scopes(p["shop"], list(b["scopes"])).to_json(),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/customers/data_request",
        lambda b, p: s.request_customer_data(p["shop"], str(b["customer_id"])).to_json(),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/customers/redact",
        lambda b, p: s.redact_customer(p["shop"], str(b["customer_id"])).to_json(),
    )
    add("POST", "/_sandbox/shops/{shop}/redact", lambda b, p: s.redact_shop(p["shop"]).to_json())
    add(
        "POST",
        "/_sandbox/shops/{shop}/refund_status",
        lambda b, p: s.set_refund_status(
            p["shop"], str(b["status"]), settle_after=b.get("settle_after")
        ),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/cost_bucket",
        lambda b, p: s.set_available_cost(p["shop"], float(b["available"])),
    )
    add(
        "GET",
        "/_sandbox/shops/{shop}/cost_bucket",
        lambda b, p: s.cost_usage(p["shop"]),
    )
    add(
        "GET",
        "/_sandbox/shops/{shop}/requests",
        lambda b, p: [r.to_json() for r in s.received_requests(p["shop"])],
    )
    add(
        "GET",
        "/_sandbox/shops/{shop}/operations",
        lambda b, p: [o.to_json() for o in s.received_operations(p["shop"])],
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/history",
        lambda b, p: s.seed_history(p["shop"], b).to_json(),
    )
    add(
        "POST",
        "/_sandbox/shops/{shop}/storefront/embed",
        lambda b, p: s.storefront.configure_embed(p["shop"], **b).to_json(),
    )
    add("POST", "/_sandbox/app_proxy", lambda b, p: _set_app_proxy_url(s, b.get("url")))
    add("POST", "/_sandbox/faults", lambda b, p: s.arm_fault(fault_from_json(b)).to_json())
    add(
        "POST",
        "/_sandbox/webhooks/subscriptions",
        lambda b, p: s.subscribe(
            b.get("shop"), url=str(b["url"]), topics=list(b["topics"])
        ).to_json(),
    )
    add(
        "GET",
        "/_sandbox/webhooks/subscriptions",
        lambda b, p: [x.to_json() for x in s.webhooks.subscriptions()],
    )
    add("GET", "/_sandbox/webhooks/events", lambda b, p: [e.to_json() for e in s.webhook_events()])
    add(
        "POST",
        "/_sandbox/webhooks/deliver",
        lambda b, p: s.deliver_event(str(b["event"]), b.get("subscription")),
    )
    return router


def _set_app_proxy_url(sandbox: ShopifySandbox, url: object) -> JSON:
    sandbox.storefront.app_proxy_url = None if url is None else str(url)
    return {"url": sandbox.storefront.app_proxy_url}


def _seed_order(sandbox: ShopifySandbox, shop: str, body: JSON) -> str:
    return sandbox.seed_order(
        shop,
        customer_id=body.get("customer_id"),
        currency=str(body["currency"]),
        lines=list(body["lines"]),
        shipping=int(body.get("shipping") or 0),
        gateway=str(body.get("gateway") or "shopify_payments"),
        payment_reference=body.get("payment_reference"),
        fulfilled_at=body.get("fulfilled_at"),
        delivered_at=body.get("delivered_at"),
        created_at=body.get("created_at"),
        authorize_then_capture=bool(body.get("authorize_then_capture")),
        carrier=body.get("carrier"),
        tracking_number=body.get("tracking_number"),
        tracking_url=body.get("tracking_url"),
        estimated_delivery_at=body.get("estimated_delivery_at"),
    )
