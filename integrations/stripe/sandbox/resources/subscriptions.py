"""Subscriptions, with just enough products and prices to create them.

Caseward cancels subscriptions (now, or at period end) and changes them (quantity, price).
Canceling is immediate and final: a canceled subscription refuses changes with Stripe's
"A canceled subscription can only update its cancellation_details and metadata.", and a
second cancel finds no such subscription (404 ``resource_missing``). Deleting a customer
cancels its subscriptions. Billing periods live on the items (Stripe's 2025 shape); the
sandbox rolls them forward, ends trials, and applies ``cancel_at_period_end`` as its clock
passes.
There are no invoices: payments for subscriptions are out of scope.
"""

from __future__ import annotations

from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, Ctx, diff, list_query, page, render
from ..errors import invalid, no_such, validation
from ..forms import Params, apply_metadata, new_metadata
from ..ids import new_id
from ..money import check_currency
from ..routing import route
from ..tasks import sweep

JSON = dict[str, Any]

STATUSES = (
    "active",
    "past_due",
    "unpaid",
    "canceled",
    "incomplete",
    "incomplete_expired",
    "trialing",
    "paused",
)
_CANCELED_MESSAGE = "A canceled subscription can only update its cancellation_details and metadata."


# -- products and prices ---------------------------------------------------------------------


@route("POST", "/v1/products", "products", "product")
def create_product(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/products`` (name and metadata)."""
    params.allow({"name", "metadata", "id", "description"})
    name = params.string("name", required=True) or ""
    metadata = params.metadata()
    obj = shapes.product(
        created=ctx.now(), livemode=ctx.livemode, name=name, metadata=new_metadata(metadata)
    )
    if params.has("id"):
        obj["id"] = params.string("id") or obj["id"]
    obj["description"] = params.string("description") or None
    ctx.space.put("products", obj)
    ctx.emit("product.created", obj)
    return render(ctx, obj)


@route("GET", "/v1/products/{id}", "products", "product")
def retrieve_product(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/products/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("products", id, "product"))


def _price_from(ctx: Ctx, params: Params, *, inline: bool) -> JSON:
    """Build a price from ``POST /v1/prices`` params or an item's ``price_data``."""
    names = {"currency", "product", "unit_amount", "recurring", "metadata", "nickname"}
    params.allow(names if not inline else names - {"metadata", "nickname"})
    currency = check_currency(
        params.string("currency", required=True) or "", param=params.label("currency")
    )
    product_id = params.string("product", required=True) or ""
    unit_amount = params.integer("unit_amount", required=True, minimum=0)
    recurring = params.child("recurring", required=inline)
    interval = None
    interval_count = 1
    if recurring is not None:
        recurring.allow({"interval", "interval_count"})
        interval = recurring.enum("interval", ("day", "week", "month", "year"), required=True)
        interval_count = recurring.integer("interval_count", minimum=1) or 1
    metadata = params.metadata() if not inline else None
    nickname = params.string("nickname") if not inline else None
    assert unit_amount is not None
    ctx.require("products", product_id, "product", param=params.label("product"), status=400)
    obj = shapes.price(
        created=ctx.now(),
        livemode=ctx.livemode,
        product_id=product_id,
        currency=currency,
        unit_amount=unit_amount,
        interval=interval,
        interval_count=interval_count,
        metadata=new_metadata(metadata),
        nickname=nickname or None,
    )
    if inline:
        obj["active"] = False
    ctx.space.put("prices", obj)
    return obj


@route("POST", "/v1/prices", "prices", "price")
def create_price(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/prices`` (per-unit, one-time or recurring)."""
    obj = _price_from(ctx, params, inline=False)
    ctx.emit("price.created", obj)
    return render(ctx, obj)


@route("GET", "/v1/prices/{id}", "prices", "price")
def retrieve_price(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/prices/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("prices", id, "price"))


@route("GET", "/v1/prices", "prices", "list:price")
def list_prices(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/prices`` (filter: ``product``)."""
    params.allow({*LIST_PARAMS, "product", "active"})
    query = list_query(params)
    product_id = params.string("product")
    active = params.boolean("active")
    items = [
        p
        for p in ctx.space.newest_first("prices")
        if (product_id is None or p["product"] == product_id)
        and (active is None or p["active"] == active)
    ]
    return page(ctx, query, items, "/v1/prices", collection="prices", kind="price")


# -- subscriptions ---------------------------------------------------------------------------


def _item_price(ctx: Ctx, item: Params) -> JSON:
    price_id = item.string("price") or None
    data = item.child("price_data")
    if (price_id is None) == (data is None):
        raise validation(
            f"You must specify exactly one of {item.label('price')} or {item.label('price_data')}.",
            param=item.label("price"),
        )
    if data is not None:
        return _price_from(ctx, data, inline=True)
    assert price_id is not None
    price = ctx.require("prices", price_id, "price", param=item.label("price"), status=400)
    if price["recurring"] is None:
        raise invalid(
            f"The price specified is set to `type=one_time` but this field only accepts prices "
            f"with `type=recurring`: {price_id}",
            param=item.label("price"),
        )
    return price


def _period(price: JSON, start: int) -> tuple[int, int]:
    recurring = price["recurring"]
    return start, shapes.add_interval(
        start, recurring["interval"], int(recurring["interval_count"])
    )


def _sub(ctx: Ctx, sub_id: str) -> JSON:
    return ctx.require("subscriptions", sub_id, "subscription")


_CREATE = {
    "customer",
    "items",
    "metadata",
    "cancel_at_period_end",
    "trial_period_days",
    "trial_end",
    "description",
    "default_payment_method",
    "collection_method",
    "payment_behavior",
    "proration_behavior",
}


@route("POST", "/v1/subscriptions", "subscriptions", "subscription")
def create_subscription(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/subscriptions`` with ``customer`` and ``items[n][price|price_data]``."""
    params.allow(_CREATE)
    customer_id = params.string("customer", required=True) or ""
    item_params = params.children("items")
    if not item_params:
        raise validation("Missing required param: items.", param="items", code="parameter_missing")
    for item in item_params:
        item.allow({"price", "price_data", "quantity", "metadata"})
        item.integer("quantity", minimum=0)
    metadata = params.metadata()
    cancel_at_period_end = bool(params.boolean("cancel_at_period_end", default=False))
    trial_days = params.integer("trial_period_days", minimum=0)
    trial_end = params.integer("trial_end")
    description = params.string("description") or None
    params.enum("collection_method", ("charge_automatically", "send_invoice"))
    params.enum(
        "payment_behavior",
        ("allow_incomplete", "default_incomplete", "error_if_incomplete", "pending_if_incomplete"),
    )
    ctx.require("customers", customer_id, "customer", param="customer", status=400)
    now = ctx.now()
    trial: tuple[int, int] | None = None
    if trial_days:
        trial = (now, now + trial_days * 86400)
    elif trial_end and trial_end > now:
        trial = (now, trial_end)
    sub_id = new_id("sub")
    items = []
    currencies = set()
    for item in item_params:
        price = _item_price(ctx, item)
        currencies.add(price["currency"])
        period = (now, trial[1]) if trial else _period(price, now)
        quantity = item.integer("quantity")
        line = shapes.subscription_item(
            created=now,
            subscription_id=sub_id,
            price_obj=render(ctx, price),
            quantity=1 if quantity is None else quantity,
            period=period,
        )
        line["metadata"] = new_metadata(item.metadata())
        items.append(line)
    if len(currencies) > 1:
        raise invalid("All prices on a subscription must have the same currency.", param="items")
    obj = shapes.subscription(
        subscription_id=sub_id,
        created=now,
        livemode=ctx.livemode,
        customer_id=customer_id,
        currency=currencies.pop(),
        items=items,
        status="trialing" if trial else "active",
        trial=trial,
        cancel_at_period_end=cancel_at_period_end,
        description=description,
        metadata=new_metadata(metadata),
    )
    if cancel_at_period_end:
        obj["cancel_at"] = _period_end(obj)
    ctx.space.put("subscriptions", obj)
    ctx.emit("customer.subscription.created", obj)
    return render(ctx, obj)


def _period_end(sub: JSON) -> int:
    return min(int(i["current_period_end"]) for i in sub["items"]["data"])


@route("GET", "/v1/subscriptions/{id}", "subscriptions", "subscription")
def retrieve_subscription(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/subscriptions/{id}`` (canceled ones included)."""
    params.allow(())
    return render(ctx, _sub(ctx, id))


@route("POST", "/v1/subscriptions/{id}", "subscriptions", "subscription")
def update_subscription(ctx: Ctx, params: Params, id: str) -> JSON:
    """Change ``cancel_at_period_end``, items (quantity/price) or metadata."""
    params.allow(
        {
            "cancel_at_period_end",
            "items",
            "metadata",
            "description",
            "proration_behavior",
            "cancellation_details",
        }
    )
    cancel_flag = params.boolean("cancel_at_period_end")
    item_params = params.children("items")
    for item in item_params:
        item.allow({"id", "price", "price_data", "quantity", "deleted", "metadata"})
        item.integer("quantity", minimum=0)
        item.boolean("deleted")
    metadata = params.metadata()
    params.enum("proration_behavior", ("always_invoice", "create_prorations", "none"))
    details = params.child("cancellation_details")
    if details is not None:
        details.allow({"comment", "feedback"})
    sub = _sub(ctx, id)
    only_notes = not item_params and cancel_flag is None and not params.has("description")
    if sub["status"] == "canceled" and not only_notes:
        raise invalid(_CANCELED_MESSAGE)
    before = render(ctx, sub)
    if cancel_flag is not None:
        sub["cancel_at_period_end"] = cancel_flag
        sub["cancel_at"] = _period_end(sub) if cancel_flag else None
        if cancel_flag:
            sub["cancellation_details"]["reason"] = "cancellation_requested"
        else:
            sub["cancellation_details"] = {"comment": None, "feedback": None, "reason": None}
    if details is not None:
        sub["cancellation_details"]["comment"] = details.string("comment") or None
        sub["cancellation_details"]["feedback"] = details.string("feedback") or None
    if params.has("description"):
        sub["description"] = params.string("description") or None
    for item in item_params:
        _apply_item_change(ctx, sub, item)
    sub["metadata"] = apply_metadata(sub["metadata"], metadata)
    ctx.emit_changes("customer.subscription.updated", sub, before)
    return render(ctx, sub)


def _apply_item_change(ctx: Ctx, sub: JSON, item: Params) -> None:
    lines: list[JSON] = sub["items"]["data"]
    item_id = item.string("id") or None
    line = None
    if item_id is not None:
        line = next((x for x in lines if x["id"] == item_id), None)
        if line is None:
            raise no_such("subscription_item", item_id, param=item.label("id"), status=400)
    if item.boolean("deleted"):
        if line is None:
            raise validation("You must pass an item id to delete an item.", param=item.label("id"))
        lines.remove(line)
        if not lines:
            raise invalid("A subscription must have at least one active plan.", param="items")
        return
    has_price = item.has("price") or item.has("price_data")
    if line is None:
        price = _item_price(ctx, item)
        if price["currency"] != sub["currency"]:
            raise invalid(
                "All prices on a subscription must have the same currency.", param="items"
            )
        start = int(lines[0]["current_period_start"]) if lines else ctx.now()
        end = int(lines[0]["current_period_end"]) if lines else _period(price, start)[1]
        quantity = item.integer("quantity")
        new_line = shapes.subscription_item(
            created=ctx.now(),
            subscription_id=sub["id"],
            price_obj=render(ctx, price),
            quantity=1 if quantity is None else quantity,
            period=(start, end),
        )
        lines.append(new_line)
        return
    if has_price:
        price = _item_price(ctx, item)
        if price["currency"] != sub["currency"]:
            raise invalid(
                "All prices on a subscription must have the same currency.", param="items"
            )
        line["price"] = render(ctx, price)
        line["plan"] = shapes.plan_from_price(line["price"])
    quantity = item.integer("quantity")
    if quantity is not None:
        line["quantity"] = quantity
    line["metadata"] = apply_metadata(line["metadata"], item.metadata())


@route("DELETE", "/v1/subscriptions/{id}", "subscriptions", "subscription")
def cancel_subscription(ctx: Ctx, params: Params, id: str) -> JSON:
    """Cancel now: immediate and final."""
    params.allow({"cancellation_details", "invoice_now", "prorate"})
    details = params.child("cancellation_details")
    if details is not None:
        details.allow({"comment", "feedback"})
    params.boolean("invoice_now")
    params.boolean("prorate")
    sub = _sub(ctx, id)
    if sub["status"] == "canceled":
        # Stripe treats a canceled subscription as gone for DELETE (other calls still see it).
        raise no_such("subscription", id)
    _end(ctx, sub, reason="cancellation_requested", details=details)
    return render(ctx, sub)


def cancel_for_deleted_customer(ctx: Ctx, customer_id: str) -> None:
    """Deleting a customer cancels its subscriptions at once, each with its own event."""
    for sub in reversed(ctx.space.newest_first("subscriptions")):
        if sub["customer"] == customer_id and sub["status"] != "canceled":
            _end(ctx, sub, reason="cancellation_requested")


def _end(ctx: Ctx, sub: JSON, *, reason: str, details: Params | None = None) -> None:
    before = render(ctx, sub)
    now = ctx.now()
    sub["status"] = "canceled"
    sub["canceled_at"] = sub["canceled_at"] or now
    sub["ended_at"] = now
    sub["cancel_at_period_end"] = False
    sub["cancellation_details"] = {
        "comment": details.string("comment") if details else sub["cancellation_details"]["comment"],
        "feedback": details.string("feedback")
        if details
        else sub["cancellation_details"]["feedback"],
        "reason": reason,
    }
    ctx.emit("customer.subscription.deleted", sub, diff(before, render(ctx, sub)))


@route("GET", "/v1/subscriptions", "subscriptions", "list:subscription")
def list_subscriptions(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/subscriptions``: not canceled by default; ``status=all`` or a status."""
    params.allow({*LIST_PARAMS, "customer", "status", "price"})
    query = list_query(params)
    customer_id = params.string("customer")
    status = params.enum("status", (*STATUSES, "ended", "all"))
    price_id = params.string("price")

    def wanted(sub: JSON) -> bool:
        if customer_id is not None and sub["customer"] != customer_id:
            return False
        if price_id is not None and all(i["price"]["id"] != price_id for i in sub["items"]["data"]):
            return False
        if status is None:
            return bool(sub["status"] != "canceled")
        if status == "all":
            return True
        if status == "ended":
            return sub["status"] in ("canceled", "incomplete_expired")
        return bool(sub["status"] == status)

    items = [s for s in ctx.space.newest_first("subscriptions") if wanted(s)]
    return page(
        ctx, query, items, "/v1/subscriptions", collection="subscriptions", kind="subscription"
    )


@sweep
def _advance_subscriptions(ctx: Ctx) -> None:
    """Trials end, periods roll over, and period-end cancellations happen on the clock."""
    now = ctx.now()
    for sub in ctx.space.newest_first("subscriptions"):
        if sub["status"] == "canceled":
            continue
        period_end = _period_end(sub)
        if period_end > now:
            continue
        if sub["cancel_at_period_end"]:
            _end(ctx, sub, reason="cancellation_requested")
            continue
        before = render(ctx, sub)
        while period_end <= now:
            for line in sub["items"]["data"]:
                start = int(line["current_period_end"])
                line["current_period_start"], line["current_period_end"] = _period(
                    line["price"], start
                )
            period_end = _period_end(sub)
        if sub["status"] == "trialing":
            sub["status"] = "active"
        ctx.emit("customer.subscription.updated", sub, diff(before, render(ctx, sub)))
