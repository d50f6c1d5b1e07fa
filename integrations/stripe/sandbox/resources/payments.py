"""PaymentIntents, the charges they create, and Stripe's test payment methods.

Tests and the demo pay with Stripe's test tokens, each with the behaviour Stripe
documents: ``pm_card_visa`` succeeds; ``pm_card_refundFail`` (4000 0000 0000 5126)
succeeds but its refunds fail asynchronously with ``expired_or_canceled_card``;
``pm_card_createDispute`` (4000 0000 0000 0259) succeeds and is disputed as fraudulent
shortly after; ``pm_card_chargeDeclined`` (4000 0000 0000 0002) is declined with 402
``card_declined``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, Ctx, diff, list_query, page, render, renderer
from ..errors import StripeApiError, invalid, no_such
from ..forms import Params, apply_metadata, new_metadata
from ..ids import new_id
from ..money import check_currency, format_amount, minimum_charge
from ..routing import route
from ..tasks import task

JSON = dict[str, Any]

# token -> card facts and sandbox behaviour
TEST_CARDS: dict[str, JSON] = {
    "pm_card_visa": {"brand": "visa", "last4": "4242", "funding": "credit"},
    "pm_card_visa_debit": {"brand": "visa", "last4": "5556", "funding": "debit"},
    "pm_card_mastercard": {"brand": "mastercard", "last4": "4444", "funding": "credit"},
    "pm_card_amex": {"brand": "amex", "last4": "8431", "funding": "credit"},
    "pm_card_refundFail": {
        "brand": "visa",
        "last4": "5126",
        "funding": "credit",
        "behavior": "refund_fail",
    },
    "pm_card_createDispute": {
        "brand": "visa",
        "last4": "0259",
        "funding": "credit",
        "behavior": "dispute",
    },
    "pm_card_chargeDeclined": {
        "brand": "visa",
        "last4": "0002",
        "funding": "credit",
        "decline": ("card_declined", "generic_decline", "Your card was declined."),
    },
    "pm_card_chargeDeclinedInsufficientFunds": {
        "brand": "visa",
        "last4": "9995",
        "funding": "credit",
        "decline": ("card_declined", "insufficient_funds", "Your card has insufficient funds."),
    },
    "pm_card_chargeDeclinedExpiredCard": {
        "brand": "visa",
        "last4": "0069",
        "funding": "credit",
        "decline": ("expired_card", "expired_card", "Your card has expired."),
    },
}

_CONFIRMABLE = ("requires_confirmation", "requires_payment_method", "requires_action")
_CANCELABLE = (
    "requires_payment_method",
    "requires_capture",
    "requires_confirmation",
    "requires_action",
    "processing",
)


def _card(token: str, year: int) -> JSON:
    spec = dict(TEST_CARDS[token])
    spec["exp_year"] = year + 3
    spec["fingerprint"] = hashlib.sha256(spec["last4"].encode()).hexdigest()[:16]
    return spec


def _payment_method(ctx: Ctx, value: str, customer_id: str | None) -> JSON:
    """Resolve a ``payment_method`` parameter: a test token mints a new PaymentMethod."""
    if value in TEST_CARDS:
        year = 1970 + ctx.now() // 31_557_600
        card = _card(value, year)
        pm = shapes.payment_method(
            created=ctx.now(), livemode=ctx.livemode, customer_id=customer_id, card=card
        )
        ctx.space.put("payment_methods", pm)
        ctx.space.priv(pm["id"]).update({"token": value, "card": card})
        return pm
    pm_obj = ctx.space.get("payment_methods", value)
    if pm_obj is None:
        raise no_such("PaymentMethod", value, param="payment_method", status=400)
    return pm_obj


def _unexpected_state(pi: JSON, action: str, allowed: tuple[str, ...], verb: str) -> StripeApiError:
    return invalid(
        f"You cannot {action} this PaymentIntent because it has a status of {pi['status']}. "
        f"Only a PaymentIntent with one of the following statuses may be {verb}: "
        + ", ".join(allowed)
        + ".",
        code="payment_intent_unexpected_state",
    )


def _outcome(*, declined: tuple[str, str, str] | None) -> JSON:
    if declined:
        return {
            "advice_code": "try_again_later",
            "network_advice_code": None,
            "network_decline_code": None,
            "network_status": "declined_by_network",
            "reason": declined[1],
            "risk_level": "normal",
            "risk_score": 32,
            "seller_message": "The bank did not return any further details with this decline.",
            "type": "issuer_declined",
        }
    return {
        "advice_code": None,
        "network_advice_code": None,
        "network_decline_code": None,
        "network_status": "approved_by_network",
        "reason": None,
        "risk_level": "normal",
        "risk_score": 12,
        "seller_message": "Payment complete.",
        "type": "authorized",
    }


def _confirm(ctx: Ctx, pi: JSON, pm: JSON | None) -> None:
    """Run the payment: create the charge, move the intent, maybe fail with 402."""
    if pm is None:
        raise invalid(
            "You cannot confirm this PaymentIntent because it's missing a payment method. You "
            "can either update the PaymentIntent with a payment method and then confirm it "
            "again, or confirm it again directly with a payment method or ConfirmationToken.",
            code="payment_intent_unexpected_state",
        )
    info = ctx.space.priv(pm["id"])
    token = str(info.get("token", "pm_card_visa"))
    card = info.get("card") or _card("pm_card_visa", 2030)
    declined = TEST_CARDS.get(token, {}).get("decline")
    manual = pi["capture_method"] == "manual"
    ch = shapes.charge(
        created=ctx.now(),
        livemode=ctx.livemode,
        pi=pi,
        pm=pm,
        card=card,
        outcome=_outcome(declined=declined),
        succeeded=declined is None,
        captured=not manual,
        failure_code=declined[0] if declined else None,
        failure_message=declined[2] if declined else None,
    )
    ctx.space.put("charges", ch)
    ctx.space.priv(ch["id"]).update({"behavior": TEST_CARDS.get(token, {}).get("behavior")})
    pi["latest_charge"] = ch["id"]
    if declined:
        code, decline_code, message = declined
        pi["status"] = "requires_payment_method"
        pi["payment_method"] = None
        error = {
            "charge": ch["id"],
            "code": code,
            "decline_code": decline_code,
            "doc_url": f"https://stripe.com/docs/error-codes/{code.replace('_', '-')}",
            "message": message,
            "payment_method": render(ctx, pm),
            "type": "card_error",
        }
        pi["last_payment_error"] = error
        ctx.emit("charge.failed", ch)
        ctx.emit("payment_intent.payment_failed", pi)
        raise StripeApiError(
            402,
            message,
            type="card_error",
            code=code,
            extra={
                "charge": ch["id"],
                "decline_code": decline_code,
                "payment_intent": render(ctx, pi),
                "payment_method": render(ctx, pm),
                "request_log_url": f"https://dashboard.stripe.com/test/logs/{ctx.request_id}",
            },
            should_retry=False,
        )
    pi["payment_method"] = pm["id"]
    pi["last_payment_error"] = None
    ctx.emit("charge.succeeded", ch)
    if manual:
        pi["status"] = "requires_capture"
        pi["amount_capturable"] = pi["amount"]
        ctx.emit("payment_intent.amount_capturable_updated", pi)
    else:
        pi["status"] = "succeeded"
        pi["amount_received"] = pi["amount"]
        ctx.emit("payment_intent.succeeded", pi)
    if TEST_CARDS.get(token, {}).get("behavior") == "dispute":
        ctx.space.schedule(ctx.now_float() + ctx.config.dispute_delay, "create_dispute", ch["id"])


_PI_CREATE = {
    "amount",
    "currency",
    "customer",
    "payment_method",
    "confirm",
    "capture_method",
    "metadata",
    "description",
    "receipt_email",
    "payment_method_types",
    "statement_descriptor",
    "statement_descriptor_suffix",
    "off_session",
    "return_url",
    "setup_future_usage",
    "transfer_group",
    "error_on_requires_action",
}


@route("POST", "/v1/payment_intents", "payment_intents", "payment_intent")
def create_payment_intent(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/payment_intents`` (with ``confirm=true`` it also pays)."""
    params.allow(_PI_CREATE)
    amount = params.integer("amount", required=True, minimum=1)
    currency = check_currency(params.string("currency", required=True) or "")
    customer_id = params.string("customer") or None
    pm_value = params.string("payment_method") or None
    confirm = params.boolean("confirm", default=False)
    capture_method = params.enum(
        "capture_method", ("automatic", "automatic_async", "manual"), default="automatic_async"
    )
    metadata = params.metadata()
    description = params.string("description") or None
    receipt_email = params.string("receipt_email") or None
    types = [str(t) for t in params.array("payment_method_types") or ["card"]]
    params.boolean("off_session")
    params.boolean("error_on_requires_action")
    assert amount is not None and capture_method is not None
    if customer_id is not None:
        ctx.require("customers", customer_id, "customer", param="customer", status=400)
    if amount < minimum_charge(currency):
        raise invalid(
            "Amount must be at least "
            f"{format_amount(minimum_charge(currency), currency)} {currency}",
            param="amount",
            code="amount_too_small",
        )
    pi = shapes.payment_intent(
        created=ctx.now(),
        livemode=ctx.livemode,
        amount=amount,
        currency=currency,
        customer_id=customer_id,
        capture_method=capture_method,
        description=description,
        metadata=new_metadata(metadata),
        receipt_email=receipt_email,
        payment_method_types=types,
    )
    ctx.space.put("payment_intents", pi)
    pm = _payment_method(ctx, pm_value, customer_id) if pm_value else None
    if pm is not None:
        pi["payment_method"] = pm["id"]
        pi["status"] = "requires_confirmation"
    ctx.emit("payment_intent.created", pi)
    if confirm:
        _confirm(ctx, pi, pm)
    return render(ctx, pi)


def paid_at(
    ctx: Ctx, *, created: int, amount: int, currency: str, customer_id: str | None
) -> tuple[JSON, JSON]:
    """A captured ``pm_card_visa`` payment (its intent and charge) as if made at ``created``,
    without events: history written straight into an account (``StripeSandbox.seed_history``)."""
    card = _card("pm_card_visa", 1970 + created // 31_557_600)
    pm = shapes.payment_method(
        created=created, livemode=ctx.livemode, customer_id=customer_id, card=card
    )
    pi = shapes.payment_intent(
        created=created,
        livemode=ctx.livemode,
        amount=amount,
        currency=currency,
        customer_id=customer_id,
        capture_method="automatic_async",
        description=None,
        metadata={},
        receipt_email=None,
        payment_method_types=["card"],
    )
    ch = shapes.charge(
        created=created,
        livemode=ctx.livemode,
        pi=pi,
        pm=pm,
        card=card,
        outcome=_outcome(declined=None),
        succeeded=True,
        captured=True,
    )
    pi.update(
        status="succeeded", amount_received=amount, payment_method=pm["id"], latest_charge=ch["id"]
    )
    ctx.space.put("payment_methods", pm)
    ctx.space.priv(pm["id"]).update({"token": "pm_card_visa", "card": card})
    ctx.space.put("payment_intents", pi)
    ctx.space.put("charges", ch)
    return pi, ch


@route("POST", "/v1/payment_intents/{id}/confirm", "payment_intents", "payment_intent")
def confirm_payment_intent(ctx: Ctx, params: Params, id: str) -> JSON:
    """``POST /v1/payment_intents/{id}/confirm``."""
    params.allow({"payment_method", "receipt_email", "return_url", "off_session", "capture_method"})
    pm_value = params.string("payment_method") or None
    receipt_email = params.string("receipt_email") or None
    capture_method = params.enum("capture_method", ("automatic", "automatic_async", "manual"))
    params.boolean("off_session")
    pi = ctx.require("payment_intents", id, "payment_intent")
    if pi["status"] not in _CONFIRMABLE:
        raise _unexpected_state(pi, "confirm", _CONFIRMABLE, "confirmed")
    if capture_method:
        pi["capture_method"] = capture_method
    if receipt_email:
        pi["receipt_email"] = receipt_email
    if pm_value:
        pm: JSON | None = _payment_method(ctx, pm_value, pi["customer"])
    elif pi["payment_method"]:
        pm = ctx.space.get("payment_methods", pi["payment_method"])
    else:
        pm = None
    _confirm(ctx, pi, pm)
    return render(ctx, pi)


@route("POST", "/v1/payment_intents/{id}/capture", "payment_intents", "payment_intent")
def capture_payment_intent(ctx: Ctx, params: Params, id: str) -> JSON:
    """Capture an authorized payment, all of it or ``amount_to_capture``."""
    params.allow({"amount_to_capture", "metadata", "final_capture"})
    amount = params.integer("amount_to_capture", minimum=1)
    metadata = params.metadata()
    params.boolean("final_capture")
    pi = ctx.require("payment_intents", id, "payment_intent")
    if pi["status"] != "requires_capture":
        raise _unexpected_state(pi, "capture", ("requires_capture",), "captured")
    capturable = int(pi["amount_capturable"])
    amount = capturable if amount is None else amount
    if amount > capturable:
        raise invalid(
            f"The amount_to_capture ({format_amount(amount, pi['currency'])}) is greater than "
            f"the amount capturable ({format_amount(capturable, pi['currency'])}).",
            param="amount_to_capture",
            code="amount_too_large",
        )
    ch = ctx.require("charges", pi["latest_charge"], "charge")
    before = render(ctx, ch)
    ch["captured"] = True
    ch["amount_captured"] = amount
    ch["balance_transaction"] = ch["balance_transaction"] or new_id("txn")
    released = _release_uncaptured(ctx, ch, int(ch["amount"]) - amount)
    pi["status"] = "succeeded"
    pi["amount_received"] = amount
    pi["amount_capturable"] = 0
    pi["metadata"] = apply_metadata(pi["metadata"], metadata)
    ctx.emit("charge.captured", ch, diff(before, render(ctx, ch)))
    if released is not None:
        ctx.emit("refund.created", released)
    ctx.emit("payment_intent.succeeded", pi)
    return render(ctx, pi)


# Private mark of the refund a partial capture makes for the part it did not capture.
RELEASES_AUTHORIZATION = "releases_authorization"


def _release_uncaptured(ctx: Ctx, ch: JSON, uncaptured: int) -> JSON | None:
    """Stripe refunds what a partial capture leaves: a succeeded refund of the rest, counted
    in the charge's ``amount_refunded``. No money moved, so it has no balance transaction,
    and it does not reduce what can still be refunded of the captured amount."""
    if uncaptured <= 0:
        return None
    re = shapes.refund(
        created=ctx.now(),
        charge_obj=ch,
        amount=uncaptured,
        reason=None,
        metadata={},
        status="succeeded",
    )
    re["balance_transaction"] = None
    ctx.space.put("refunds", re)
    ctx.space.priv(re["id"])[RELEASES_AUTHORIZATION] = True
    ch["amount_refunded"] = uncaptured
    return re


@route("POST", "/v1/payment_intents/{id}/cancel", "payment_intents", "payment_intent")
def cancel_payment_intent(ctx: Ctx, params: Params, id: str) -> JSON:
    """Cancel an unpaid or uncaptured intent (releasing any authorization)."""
    params.allow({"cancellation_reason"})
    reason = params.enum(
        "cancellation_reason", ("duplicate", "fraudulent", "requested_by_customer", "abandoned")
    )
    pi = ctx.require("payment_intents", id, "payment_intent")
    if pi["status"] not in _CANCELABLE:
        raise _unexpected_state(pi, "cancel", _CANCELABLE, "canceled")
    release_authorization(ctx, pi, reason)
    return render(ctx, pi)


def release_authorization(ctx: Ctx, pi: JSON, reason: str | None) -> None:
    """Cancel ``pi``; an uncaptured charge counts as refunded in full (hold released)."""
    if pi["status"] == "requires_capture" and pi["latest_charge"]:
        ch = ctx.require("charges", pi["latest_charge"], "charge")
        before = render(ctx, ch)
        ch["amount_refunded"] = ch["amount"]
        ch["refunded"] = True
        ctx.emit("charge.refunded", ch, diff(before, ch))
    pi["status"] = "canceled"
    pi["canceled_at"] = ctx.now()
    pi["cancellation_reason"] = reason
    pi["amount_capturable"] = 0
    ctx.emit("payment_intent.canceled", pi)


@route("POST", "/v1/payment_intents/{id}", "payment_intents", "payment_intent")
def update_payment_intent(ctx: Ctx, params: Params, id: str) -> JSON:
    """Change metadata, description or receipt email (no event, as on Stripe)."""
    params.allow({"metadata", "description", "receipt_email"})
    metadata = params.metadata()
    pi = ctx.require("payment_intents", id, "payment_intent")
    if params.has("description"):
        pi["description"] = params.string("description") or None
    if params.has("receipt_email"):
        pi["receipt_email"] = params.string("receipt_email") or None
    pi["metadata"] = apply_metadata(pi["metadata"], metadata)
    return render(ctx, pi)


@route("GET", "/v1/payment_intents/{id}", "payment_intents", "payment_intent")
def retrieve_payment_intent(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/payment_intents/{id}``."""
    params.allow({"client_secret"})
    return render(ctx, ctx.require("payment_intents", id, "payment_intent"))


@route("GET", "/v1/payment_intents", "payment_intents", "list:payment_intent")
def list_payment_intents(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/payment_intents`` (filter: ``customer``)."""
    params.allow({*LIST_PARAMS, "customer"})
    query = list_query(params)
    customer_id = params.string("customer")
    items = [
        p
        for p in ctx.space.newest_first("payment_intents")
        if customer_id is None or p["customer"] == customer_id
    ]
    return page(
        ctx,
        query,
        items,
        "/v1/payment_intents",
        collection="payment_intents",
        kind="payment_intent",
    )


@route("GET", "/v1/payment_methods/{id}", "payment_methods", "payment_method")
def retrieve_payment_method(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/payment_methods/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("payment_methods", id, "PaymentMethod"))


# -- charges -------------------------------------------------------------------------------


@renderer("charge")
def _render_charge(ctx: Ctx, out: JSON) -> None:
    ids = ctx.space.grouped("refunds", "charge").get(out["id"], [])
    refunds = [ctx.space.coll("refunds")[refund_id] for refund_id in reversed(ids)]
    out["refunds"] = {
        "object": "list",
        "data": [render(ctx, r) for r in refunds[:10]],
        "has_more": len(refunds) > 10,
        "url": f"/v1/charges/{out['id']}/refunds",
    }


@route("GET", "/v1/charges/{id}", "charges", "charge")
def retrieve_charge(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/charges/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("charges", id, "charge"))


@route("POST", "/v1/charges/{id}", "charges", "charge")
def update_charge(ctx: Ctx, params: Params, id: str) -> JSON:
    """Change a charge's metadata or description (emits ``charge.updated``)."""
    params.allow({"metadata", "description", "receipt_email"})
    metadata = params.metadata()
    ch = ctx.require("charges", id, "charge")
    before = render(ctx, ch)
    if params.has("description"):
        ch["description"] = params.string("description") or None
    if params.has("receipt_email"):
        ch["receipt_email"] = params.string("receipt_email") or None
    ch["metadata"] = apply_metadata(ch["metadata"], metadata)
    ctx.emit_changes("charge.updated", ch, before)
    return render(ctx, ch)


@route("GET", "/v1/charges", "charges", "list:charge")
def list_charges(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/charges`` (filters: ``customer``, ``payment_intent``)."""
    params.allow({*LIST_PARAMS, "customer", "payment_intent", "transfer_group"})
    query = list_query(params)
    customer_id = params.string("customer")
    pi_id = params.string("payment_intent")
    items = [
        c
        for c in ctx.space.newest_first("charges")
        if (customer_id is None or c["customer"] == customer_id)
        and (pi_id is None or c["payment_intent"] == pi_id)
    ]
    return page(ctx, query, items, "/v1/charges", collection="charges", kind="charge")


@task("create_dispute")
def _create_dispute(ctx: Ctx, item: JSON) -> None:
    """The chargeback ``pm_card_createDispute`` promises, a little after the payment."""
    ch = ctx.space.get("charges", str(item["id"]))
    if ch is None or ch["disputed"]:
        return
    dp = shapes.dispute(
        created=ctx.now(),
        livemode=ctx.livemode,
        charge_obj=render(ctx, ch),
        reason="fraudulent",
        due_by=ctx.now() + 7 * 86400,
    )
    ctx.space.put("disputes", dp)
    ch["disputed"] = True
    ctx.emit("charge.dispute.created", dp)
