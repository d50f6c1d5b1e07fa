"""Refunds: the one write Caseward must perform exactly once.

Rules followed (Stripe's):

* A refund targets a charge, directly or through its PaymentIntent; ``amount`` defaults to
  what is left. Refunds that are pending, requires_action or succeeded count against the
  charge; failed and canceled ones give the amount back.
* Over-refunding is ``amount_too_large`` ("Refund amount ($X) is greater than unrefunded
  amount on charge ($Y)"); a fully refunded charge is ``charge_already_refunded``; a
  disputed charge is ``charge_disputed``.
* An uncaptured payment cannot be partially refunded; refunding it in full releases the
  authorization and cancels the PaymentIntent. Capturing less than was authorized
  refunds the rest at once: that refund is in ``amount_refunded`` but does not reduce
  what can still be refunded of the captured amount.
* Card refunds succeed, except that ``pm_card_refundFail`` refunds turn ``failed`` later
  (``expired_or_canceled_card``); with the account's balance set insufficient they stay
  ``pending`` (``insufficient_funds``) until it is restored.
* Only ``requires_action`` refunds can be canceled.
"""

from __future__ import annotations

from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, UNDATED_LIST_PARAMS, Ctx, diff, list_query, page, render
from ..errors import invalid, validation
from ..forms import Params, new_metadata
from ..ids import new_id
from ..money import format_amount
from ..routing import route
from ..tasks import sweep, task
from .payments import RELEASES_AUTHORIZATION, release_authorization

JSON = dict[str, Any]

REASONS = ("duplicate", "fraudulent", "requested_by_customer")
COUNTING = ("pending", "requires_action", "succeeded")
REFUND_MODES = ("pending_processing", "charge_pending", "requires_action")


def _releases(ctx: Ctx, refund: JSON) -> bool:
    return bool(ctx.space.private.get(str(refund["id"]), {}).get(RELEASES_AUTHORIZATION))


def counted_refunds(ctx: Ctx, charge_id: str) -> int:
    """Sum of the refunds that hold money against a charge's captured amount (the refund
    that released the uncaptured rest of a partial capture is not one of them)."""
    return sum(
        int(r["amount"])
        for r in ctx.space.newest_first("refunds")
        if r["charge"] == charge_id and r["status"] in COUNTING and not _releases(ctx, r)
    )


def _sync_charge(ctx: Ctx, ch: JSON) -> JSON:
    """Recompute ``amount_refunded``/``refunded`` from the refunds; returns the old view.

    ``amount_refunded`` covers the released rest of a partial capture too, so a charge is
    ``refunded`` once it reaches the authorized ``amount``."""
    before = render(ctx, ch)
    if ch["captured"]:
        released = int(ch["amount"]) - int(ch["amount_captured"])
        counted = counted_refunds(ctx, ch["id"])
        ch["amount_refunded"] = released + counted
        ch["refunded"] = counted >= ch["amount_captured"] > 0
    return before


def _target_charge(ctx: Ctx, charge_id: str | None, pi_id: str | None) -> JSON:
    if pi_id:
        pi = ctx.require(
            "payment_intents", pi_id, "payment_intent", param="payment_intent", status=400
        )
        latest = ctx.space.get("charges", pi["latest_charge"]) if pi["latest_charge"] else None
        if latest is None or latest["status"] != "succeeded" or pi["status"] == "canceled":
            raise invalid(
                f"This PaymentIntent ({pi_id}) does not have a successful charge to refund.",
                param="payment_intent",
            )
        if charge_id and charge_id != latest["id"]:
            raise invalid(
                f"The charge {charge_id} does not belong to the PaymentIntent {pi_id}.",
                param="charge",
            )
        return latest
    assert charge_id is not None
    ch = ctx.require("charges", charge_id, "charge", param="charge", status=400)
    if ch["status"] != "succeeded":
        raise invalid(
            f"This PaymentIntent ({ch['payment_intent']}) does not have a successful charge "
            "to refund.",
            param="charge",
        )
    return ch


_CREATE = {
    "amount",
    "charge",
    "payment_intent",
    "reason",
    "metadata",
    "currency",
    "instructions_email",
    "refund_application_fee",
    "reverse_transfer",
}


@route("POST", "/v1/refunds", "refunds", "refund")
def create_refund(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/refunds``."""
    params.allow(_CREATE)
    charge_id = params.string("charge") or None
    pi_id = params.string("payment_intent") or None
    amount = params.integer("amount", minimum=1)
    reason = params.enum("reason", REASONS)
    metadata = params.metadata()
    currency = (params.string("currency") or "").lower() or None
    instructions_email = params.string("instructions_email") or None
    params.boolean("refund_application_fee")
    params.boolean("reverse_transfer")
    if not charge_id and not pi_id:
        raise validation(
            "One of the following params should be provided for this request: "
            "payment_intent or charge.",
            code="parameter_missing",
        )

    ch = _target_charge(ctx, charge_id, pi_id)
    if currency and currency != ch["currency"]:
        raise invalid(
            f"The currency of the refund ({currency}) must match the currency of the charge "
            f"({ch['currency']}).",
            param="currency",
        )
    dispute = next((d for d in ctx.space.newest_first("disputes") if d["charge"] == ch["id"]), None)
    if ch["disputed"] and (dispute is None or not dispute["is_charge_refundable"]):
        raise invalid(
            f"Charge {ch['id']} has been charged back; cannot issue a refund.",
            code="charge_disputed",
        )
    if not ch["captured"]:
        return _refund_uncaptured(ctx, ch, amount, reason, metadata)

    remaining = int(ch["amount_captured"]) - counted_refunds(ctx, ch["id"])
    if remaining <= 0:
        raise invalid(
            f"Charge {ch['id']} has already been refunded.", code="charge_already_refunded"
        )
    amount = remaining if amount is None else amount
    if amount > remaining:
        raise invalid(
            f"Refund amount ({format_amount(amount, ch['currency'])}) is greater than unrefunded "
            f"amount on charge ({format_amount(remaining, ch['currency'])})",
            param="amount",
            code="amount_too_large",
        )

    status, extra = _initial_state(ctx, ch, instructions_email)
    re = shapes.refund(
        created=ctx.now(),
        charge_obj=ch,
        amount=amount,
        reason=reason,
        metadata=new_metadata(metadata),
        status=status,
    )
    re.update(extra)
    if instructions_email:
        re["instructions_email"] = instructions_email
    ctx.space.put("refunds", re)
    _after_create(ctx, re)
    before = _sync_charge(ctx, ch)
    ctx.emit("refund.created", re)
    ctx.emit("charge.refunded", ch, diff(before, render(ctx, ch)))
    return render(ctx, re)


def _initial_state(ctx: Ctx, ch: JSON, instructions_email: str | None) -> tuple[str, JSON]:
    """Where a new card refund starts, given test card and account switches."""
    settings = ctx.space.settings
    mode = settings.get("refund_mode")
    now = ctx.now_float()
    settle_after = float(settings.get("refund_settle_after") or 0.0)
    if mode == "requires_action":
        expires = ctx.now() + int(ctx.config.requires_action_expiry)
        return "requires_action", {
            "next_action": {
                "display_details": {
                    "email_sent": {
                        "email_sent_at": ctx.now(),
                        "email_sent_to": instructions_email or "customer@example.com",
                    },
                    "expires_at": expires,
                },
                "type": "display_details",
            },
            "_settle": None,
        }
    if mode in ("pending_processing", "charge_pending"):
        reason = "processing" if mode == "pending_processing" else "charge_pending"
        return "pending", {"pending_reason": reason, "_settle": now + settle_after}
    if not settings.get("balance_sufficient", True):
        return "pending", {"pending_reason": "insufficient_funds", "_settle": None}
    if ctx.space.priv(ch["id"]).get("behavior") == "refund_fail":
        return "succeeded", {"_fail_at": now + ctx.config.refund_failure_delay}
    return "succeeded", {}


def _after_create(ctx: Ctx, re: JSON) -> None:
    """Move scheduling hints from the object into the space's task list."""
    settle = re.pop("_settle", None)
    fail_at = re.pop("_fail_at", None)
    if settle is not None:
        ctx.space.schedule(float(settle), "settle_refund", re["id"])
    if fail_at is not None:
        ctx.space.schedule(
            float(fail_at), "fail_refund", re["id"], reason="expired_or_canceled_card"
        )


def _refund_uncaptured(
    ctx: Ctx,
    ch: JSON,
    amount: int | None,
    reason: str | None,
    metadata: dict[str, str | None] | None,
) -> JSON:
    """A refund of an authorization: only in full, and it cancels the PaymentIntent."""
    if amount is not None and amount != ch["amount"]:
        raise invalid(
            "You cannot partially refund an uncaptured charge. Instead, capture the charge for "
            "an amount less than the original amount",
            param="amount",
        )
    if ch["refunded"]:
        raise invalid(
            f"Charge {ch['id']} has already been refunded.", code="charge_already_refunded"
        )
    re = shapes.refund(
        created=ctx.now(),
        charge_obj=ch,
        amount=int(ch["amount"]),
        reason=reason,
        metadata=new_metadata(metadata),
        status="succeeded",
    )
    re["balance_transaction"] = None
    ctx.space.put("refunds", re)
    ctx.emit("refund.created", re)
    pi = ctx.space.get("payment_intents", ch["payment_intent"])
    if pi is not None:
        release_authorization(ctx, pi, None)
    return render(ctx, re)


@route("GET", "/v1/refunds/{id}", "refunds", "refund")
def retrieve_refund(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/refunds/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("refunds", id, "refund"))


@route("POST", "/v1/refunds/{id}", "refunds", "refund")
def update_refund(ctx: Ctx, params: Params, id: str) -> JSON:
    """Only metadata can change on a refund."""
    re = ctx.require("refunds", id, "refund")
    ctx.update_metadata(params, re, "refund.updated")
    return render(ctx, re)


@route("POST", "/v1/refunds/{id}/cancel", "refunds", "refund")
def cancel_refund(ctx: Ctx, params: Params, id: str) -> JSON:
    """Cancel a ``requires_action`` refund; any other status is refused."""
    params.allow(())
    re = ctx.require("refunds", id, "refund")
    if re["status"] != "requires_action":
        raise invalid(
            f"You cannot cancel this refund because it has a status of {re['status']}. Only a "
            "refund with a status of requires_action may be canceled.",
        )
    before = render(ctx, re)
    re["status"] = "canceled"
    re["failure_reason"] = "merchant_request"
    re["failure_balance_transaction"] = new_id("txn")
    re.pop("next_action", None)
    ch = ctx.require("charges", re["charge"], "charge")
    _sync_charge(ctx, ch)
    ctx.emit("refund.updated", re, diff(before, re))
    return render(ctx, re)


@route("GET", "/v1/refunds", "refunds", "list:refund")
def list_refunds(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/refunds`` (filters: ``charge``, ``payment_intent``), newest first."""
    params.allow({*LIST_PARAMS, "charge", "payment_intent"})
    query = list_query(params)
    charge_id = params.string("charge")
    pi_id = params.string("payment_intent")
    items = [
        r
        for r in ctx.space.newest_first("refunds")
        if (charge_id is None or r["charge"] == charge_id)
        and (pi_id is None or r["payment_intent"] == pi_id)
    ]
    return page(ctx, query, items, "/v1/refunds", collection="refunds", kind="refund")


@route("GET", "/v1/charges/{id}/refunds", "refunds", "list:refund")
def list_charge_refunds(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/charges/{id}/refunds``."""
    params.allow(UNDATED_LIST_PARAMS)
    query = list_query(params)
    ctx.require("charges", id, "charge")
    items = [r for r in ctx.space.newest_first("refunds") if r["charge"] == id]
    return page(ctx, query, items, f"/v1/charges/{id}/refunds", collection="refunds", kind="refund")


# -- later transitions -----------------------------------------------------------------------


@task("fail_refund")
def _fail_refund(ctx: Ctx, item: JSON) -> None:
    """The asynchronous failure of a refund that first reported ``succeeded``."""
    re = ctx.space.get("refunds", str(item["id"]))
    if re is None or re["status"] not in ("succeeded", "pending"):
        return
    before = render(ctx, re)
    re["status"] = "failed"
    re["failure_reason"] = str(item.get("reason") or "expired_or_canceled_card")
    re["failure_balance_transaction"] = new_id("txn")
    re.pop("pending_reason", None)
    ch = ctx.require("charges", re["charge"], "charge")
    charge_before = _sync_charge(ctx, ch)
    ctx.emit("refund.updated", re, diff(before, re))
    ctx.emit("refund.failed", re)
    ctx.emit_changes("charge.updated", ch, charge_before)


def settle(ctx: Ctx, re: JSON) -> None:
    """A pending refund goes through."""
    if re["status"] != "pending":
        return
    before = render(ctx, re)
    re["status"] = "succeeded"
    re.pop("pending_reason", None)
    ctx.emit("refund.updated", re, diff(before, re))
    ch = ctx.space.get("charges", re["charge"])
    if ch is not None and ctx.space.priv(ch["id"]).get("behavior") == "refund_fail":
        ctx.space.schedule(
            ctx.now_float() + ctx.config.refund_failure_delay,
            "fail_refund",
            re["id"],
            reason="expired_or_canceled_card",
        )


@task("settle_refund")
def _settle_refund(ctx: Ctx, item: JSON) -> None:
    re = ctx.space.get("refunds", str(item["id"]))
    if re is not None:
        settle(ctx, re)


@sweep
def _settle_when_funded(ctx: Ctx) -> None:
    """Refunds waiting for funds go through once the balance is sufficient again."""
    if not ctx.space.settings.get("balance_sufficient", True):
        return
    for re in reversed(ctx.space.newest_first("refunds")):
        if re["status"] == "pending" and re.get("pending_reason") == "insufficient_funds":
            settle(ctx, re)
