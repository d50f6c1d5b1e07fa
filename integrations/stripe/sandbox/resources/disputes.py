"""Disputes: opened by ``pm_card_createDispute`` payments, closed by the merchant or a control.

A disputed charge refuses refunds (``charge_disputed``), which is one of Caseward's
built-in checks; closing a dispute emits ``charge.dispute.closed``.
"""

from __future__ import annotations

from typing import Any

from ..context import LIST_PARAMS, Ctx, diff, list_query, page, render
from ..errors import invalid
from ..forms import Params
from ..routing import route

JSON = dict[str, Any]

CLOSED = ("won", "lost", "warning_closed")


def close(ctx: Ctx, dispute: JSON, status: str) -> JSON:
    """Settle a dispute as ``won``, ``lost`` or ``warning_closed``."""
    if status not in CLOSED:
        raise ValueError(f"a dispute closes as one of {CLOSED}")
    before = render(ctx, dispute)
    dispute["status"] = status
    dispute["is_charge_refundable"] = status != "lost"
    ctx.emit("charge.dispute.closed", dispute, diff(before, dispute))
    return dispute


@route("GET", "/v1/disputes/{id}", "disputes", "dispute")
def retrieve_dispute(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/disputes/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("disputes", id, "dispute"))


@route("POST", "/v1/disputes/{id}", "disputes", "dispute")
def update_dispute(ctx: Ctx, params: Params, id: str) -> JSON:
    """Metadata only (evidence submission is out of scope for the sandbox)."""
    dispute = ctx.require("disputes", id, "dispute")
    ctx.update_metadata(params, dispute, "charge.dispute.updated")
    return render(ctx, dispute)


@route("POST", "/v1/disputes/{id}/close", "disputes", "dispute")
def close_dispute(ctx: Ctx, params: Params, id: str) -> JSON:
    """Accept the dispute: Stripe records it as lost."""
    params.allow(())
    dispute = ctx.require("disputes", id, "dispute")
    if dispute["status"] in CLOSED:
        raise invalid(f"This dispute is already closed (status {dispute['status']}).")
    return render(ctx, close(ctx, dispute, "lost"))


@route("GET", "/v1/disputes", "disputes", "list:dispute")
def list_disputes(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/disputes`` (filters: ``charge``, ``payment_intent``)."""
    params.allow({*LIST_PARAMS, "charge", "payment_intent"})
    query = list_query(params)
    charge_id = params.string("charge")
    pi_id = params.string("payment_intent")
    items = [
        d
        for d in ctx.space.newest_first("disputes")
        if (charge_id is None or d["charge"] == charge_id)
        and (pi_id is None or d["payment_intent"] == pi_id)
    ]
    return page(ctx, query, items, "/v1/disputes", collection="disputes", kind="dispute")
