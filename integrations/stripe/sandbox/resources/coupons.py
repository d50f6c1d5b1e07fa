"""Coupons and promotion codes (the discount actions Caseward can propose).

Promotion codes use the current API shape: ``promotion[type]=coupon`` and
``promotion[coupon]=<id>`` on create, ``promotion: {type, coupon}`` on the object. The
old top-level ``coupon`` parameter is refused as unknown, as Stripe does since 2025.

A coupon past its ``redeem_by`` (or out of redemptions) shows ``valid: false``; its
promotion codes then show ``active: false`` and no new one can be made for it
(``coupon_expired``).
"""

from __future__ import annotations

import re
from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, Ctx, list_query, page, render, renderer
from ..errors import StripeApiError, invalid, no_such, validation
from ..forms import Params, apply_metadata, new_metadata
from ..ids import new_code
from ..money import check_currency
from ..routing import route

JSON = dict[str, Any]

_CODE = re.compile(r"^[A-Za-z0-9-]+$")


def _coupon(ctx: Ctx, coupon_id: str, *, param: str = "id", status: int = 404) -> JSON:
    obj = ctx.space.get("coupons", coupon_id)
    if obj is None:
        raise no_such("coupon", coupon_id, param=param, status=status)
    return obj


def coupon_valid(ctx: Ctx, coupon: JSON) -> bool:
    """A coupon can be redeemed until its ``redeem_by`` and its ``max_redemptions``."""
    redeem_by = coupon.get("redeem_by")
    if redeem_by is not None and ctx.now() > int(redeem_by):
        return False
    limit = coupon.get("max_redemptions")
    return limit is None or int(coupon["times_redeemed"]) < int(limit)


@renderer("coupon")
def _render_coupon(ctx: Ctx, out: JSON) -> None:
    out["valid"] = coupon_valid(ctx, out)


def _active(ctx: Ctx, code: JSON) -> bool:
    """A promotion code is active only while switched on, unexpired, and its coupon valid."""
    coupon = ctx.space.get("coupons", str(code["promotion"]["coupon"]))
    expires_at = code.get("expires_at")
    return bool(
        code["active"]
        and coupon is not None
        and coupon_valid(ctx, coupon)
        and (expires_at is None or ctx.now() <= int(expires_at))
    )


@renderer("promotion_code")
def _render_promotion_code(ctx: Ctx, out: JSON) -> None:
    out["active"] = _active(ctx, out)


@route("POST", "/v1/coupons", "coupons", "coupon")
def create_coupon(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/coupons``: percent_off, or amount_off with currency."""
    params.allow(
        {
            "id",
            "percent_off",
            "amount_off",
            "currency",
            "duration",
            "duration_in_months",
            "max_redemptions",
            "redeem_by",
            "name",
            "metadata",
        }
    )
    coupon_id = params.string("id") or None
    percent_off = params.decimal("percent_off")
    amount_off = params.integer("amount_off", minimum=1)
    currency_text = params.string("currency") or None
    duration = params.enum("duration", ("forever", "once", "repeating"), default="once")
    months = params.integer("duration_in_months", minimum=1)
    max_redemptions = params.integer("max_redemptions", minimum=1)
    redeem_by = params.integer("redeem_by")
    name = params.string("name", max_length=40) or None
    metadata = params.metadata()
    if (percent_off is None) == (amount_off is None):
        raise validation(
            "You must pass exactly one of percent_off or amount_off.", param="percent_off"
        )
    if percent_off is not None and not 0 < percent_off <= 100:
        raise validation(
            "Invalid percent_off: must be greater than 0 and at most 100", param="percent_off"
        )
    currency = check_currency(currency_text) if currency_text else None
    if amount_off is not None and currency is None:
        raise validation(
            "You must pass currency when passing amount_off",
            param="currency",
            code="parameter_missing",
        )
    if duration == "repeating" and months is None:
        raise validation(
            "You must pass duration_in_months when duration is repeating",
            param="duration_in_months",
            code="parameter_missing",
        )
    if duration != "repeating" and months is not None:
        raise validation(
            "You may only pass duration_in_months when duration is repeating",
            param="duration_in_months",
        )
    if coupon_id is not None and ctx.space.get("coupons", coupon_id) is not None:
        raise StripeApiError(
            400, "Coupon already exists.", code="resource_already_exists", param="id"
        )
    assert duration is not None
    obj = shapes.coupon(
        coupon_id=coupon_id or new_code(8),
        created=ctx.now(),
        livemode=ctx.livemode,
        percent_off=percent_off,
        amount_off=amount_off,
        currency=currency,
        duration=duration,
        duration_in_months=months,
        max_redemptions=max_redemptions,
        redeem_by=redeem_by,
        name=name,
        metadata=new_metadata(metadata),
    )
    ctx.space.put("coupons", obj)
    ctx.emit("coupon.created", obj)
    return render(ctx, obj)


@route("GET", "/v1/coupons/{id}", "coupons", "coupon")
def retrieve_coupon(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/coupons/{id}``."""
    params.allow(())
    return render(ctx, _coupon(ctx, id))


@route("POST", "/v1/coupons/{id}", "coupons", "coupon")
def update_coupon(ctx: Ctx, params: Params, id: str) -> JSON:
    """Only ``name`` and ``metadata`` can change on a coupon."""
    params.allow({"name", "metadata"})
    metadata = params.metadata()
    obj = _coupon(ctx, id)
    before = render(ctx, obj)
    if params.has("name"):
        obj["name"] = params.string("name", max_length=40) or None
    obj["metadata"] = apply_metadata(obj["metadata"], metadata)
    ctx.emit_changes("coupon.updated", obj, before)
    return render(ctx, obj)


@route("DELETE", "/v1/coupons/{id}", "coupons", "coupon")
def delete_coupon(ctx: Ctx, params: Params, id: str) -> JSON:
    """Deleting a coupon stops new redemptions; it then 404s."""
    params.allow(())
    obj = _coupon(ctx, id)
    ctx.space.remove("coupons", id)
    ctx.emit("coupon.deleted", obj)
    return shapes.deleted("coupon", id)


@route("GET", "/v1/coupons", "coupons", "list:coupon")
def list_coupons(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/coupons``, newest first."""
    params.allow(LIST_PARAMS)
    query = list_query(params)
    return page(
        ctx,
        query,
        ctx.space.newest_first("coupons"),
        "/v1/coupons",
        collection="coupons",
        kind="coupon",
    )


# -- promotion codes -------------------------------------------------------------------------


def _restrictions(params: Params) -> JSON:
    child = params.child("restrictions")
    result: JSON = {
        "first_time_transaction": False,
        "minimum_amount": None,
        "minimum_amount_currency": None,
    }
    if child is None:
        return result
    child.allow({"first_time_transaction", "minimum_amount", "minimum_amount_currency"})
    result["first_time_transaction"] = bool(child.boolean("first_time_transaction", default=False))
    result["minimum_amount"] = child.integer("minimum_amount", minimum=0)
    currency = child.string("minimum_amount_currency") or None
    result["minimum_amount_currency"] = (
        check_currency(currency, param=child.label("minimum_amount_currency")) if currency else None
    )
    return result


@route("POST", "/v1/promotion_codes", "promotion_codes", "promotion_code")
def create_promotion_code(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/promotion_codes`` with ``promotion[type]=coupon&promotion[coupon]=...``."""
    params.allow(
        {
            "promotion",
            "code",
            "customer",
            "active",
            "expires_at",
            "max_redemptions",
            "metadata",
            "restrictions",
        }
    )
    promotion = params.child("promotion", required=True)
    assert promotion is not None
    promotion.allow({"type", "coupon"})
    promotion.enum("type", ("coupon",), required=True)
    coupon_id = promotion.string("coupon", required=True) or ""
    code = params.string("code") or None
    if code is not None and not _CODE.match(code):
        raise validation("Invalid code: only letters, digits and dashes are allowed.", param="code")
    customer_id = params.string("customer") or None
    active = params.boolean("active", default=True)
    expires_at = params.integer("expires_at")
    max_redemptions = params.integer("max_redemptions", minimum=1)
    metadata = params.metadata()
    restrictions = _restrictions(params)
    coupon = _coupon(ctx, coupon_id, param="promotion[coupon]", status=400)
    if not coupon_valid(ctx, coupon):
        raise invalid(
            f"Coupon expired: {coupon_id}", param="promotion[coupon]", code="coupon_expired"
        )
    redeem_by = coupon.get("redeem_by")
    if expires_at is not None and redeem_by is not None and expires_at > int(redeem_by):
        # Stripe's rule: a code cannot outlive the coupon it redeems.
        raise invalid(
            "The promotion code's expires_at cannot be after its coupon's redeem_by.",
            param="expires_at",
        )
    if customer_id is not None:
        ctx.require("customers", customer_id, "customer", param="customer", status=400)
    if (
        coupon["max_redemptions"] is not None
        and max_redemptions is not None
        and (max_redemptions > coupon["max_redemptions"])
    ):
        raise invalid(
            "The promotion code's max_redemptions cannot be greater than the coupon's "
            "max_redemptions.",
            param="max_redemptions",
        )
    code = code or new_code(8)
    clash = any(
        p["code"].lower() == code.lower() and _active(ctx, p) and p["customer"] == customer_id
        for p in ctx.space.newest_first("promotion_codes")
    )
    if clash:
        raise invalid(
            f"A promotion code with code '{code}' already exists and is active.",
            param="code",
            code="resource_already_exists",
        )
    obj = shapes.promotion_code(
        created=ctx.now(),
        livemode=ctx.livemode,
        code=code,
        coupon_id=coupon_id,
        customer_id=customer_id,
        active=bool(active),
        expires_at=expires_at,
        max_redemptions=max_redemptions,
        metadata=new_metadata(metadata),
        restrictions=restrictions,
    )
    ctx.space.put("promotion_codes", obj)
    ctx.emit("promotion_code.created", obj)
    return render(ctx, obj)


@route("GET", "/v1/promotion_codes/{id}", "promotion_codes", "promotion_code")
def retrieve_promotion_code(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/promotion_codes/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("promotion_codes", id, "promotion code"))


@route("POST", "/v1/promotion_codes/{id}", "promotion_codes", "promotion_code")
def update_promotion_code(ctx: Ctx, params: Params, id: str) -> JSON:
    """Switch a code on or off, or change its metadata."""
    params.allow({"active", "metadata", "restrictions"})
    active = params.boolean("active")
    metadata = params.metadata()
    obj = ctx.require("promotion_codes", id, "promotion code")
    before = render(ctx, obj)
    if active is not None:
        obj["active"] = active
    obj["metadata"] = apply_metadata(obj["metadata"], metadata)
    ctx.emit_changes("promotion_code.updated", obj, before)
    return render(ctx, obj)


@route("GET", "/v1/promotion_codes", "promotion_codes", "list:promotion_code")
def list_promotion_codes(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/promotion_codes`` (filters: active, code, coupon, customer)."""
    params.allow({*LIST_PARAMS, "active", "code", "coupon", "customer"})
    query = list_query(params)
    active = params.boolean("active")
    code = params.string("code")
    coupon_id = params.string("coupon")
    customer_id = params.string("customer")
    items = [
        p
        for p in ctx.space.newest_first("promotion_codes")
        if (active is None or _active(ctx, p) == active)
        and (code is None or p["code"].lower() == code.lower())
        and (coupon_id is None or p["promotion"]["coupon"] == coupon_id)
        and (customer_id is None or p["customer"] == customer_id)
    ]
    return page(
        ctx,
        query,
        items,
        "/v1/promotion_codes",
        collection="promotion_codes",
        kind="promotion code",
    )
