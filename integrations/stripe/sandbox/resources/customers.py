"""Customers and their credit balance (customer balance transactions).

A "store credit" in Stripe is a customer balance transaction with a negative amount; the
customer's ``balance`` moves with it and is tied to one currency, set by the first
transaction. Deleted customers still answer a retrieve (``deleted: true``) but refuse
everything else, which the product's "customer exists and is not deleted" check relies on.
Deleting a customer cancels its subscriptions immediately, as Stripe does.
"""

from __future__ import annotations

from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, UNDATED_LIST_PARAMS, Ctx, diff, list_query, page, render
from ..errors import invalid, no_such
from ..forms import Params, apply_metadata, new_metadata
from ..money import check_currency
from ..routing import route
from .subscriptions import cancel_for_deleted_customer

JSON = dict[str, Any]

_FIELDS = ("email", "name", "description", "phone")


def _live_customer(ctx: Ctx, customer_id: str, *, param: str = "id", status: int = 404) -> JSON:
    return ctx.require("customers", customer_id, "customer", param=param, status=status)


@route("POST", "/v1/customers", "customers", "customer")
def create_customer(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/customers``."""
    params.allow({*_FIELDS, "metadata", "preferred_locales"})
    email, name, description, phone = (params.string(field) or None for field in _FIELDS)
    metadata = params.metadata()
    locales = [str(x) for x in params.array("preferred_locales") or []]
    obj = shapes.customer(
        created=ctx.now(),
        livemode=ctx.livemode,
        email=email,
        name=name,
        description=description,
        phone=phone,
        metadata=new_metadata(metadata),
    )
    obj["preferred_locales"] = locales
    ctx.space.put("customers", obj)
    ctx.emit("customer.created", obj)
    return render(ctx, obj)


@route("GET", "/v1/customers/{id}", "customers", "customer")
def retrieve_customer(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/customers/{id}``: deleted customers come back as ``deleted: true``."""
    params.allow(())
    obj = ctx.space.get("customers", id)
    if obj is None:
        raise no_such("customer", id)
    if ctx.space.priv(id).get("deleted"):
        return shapes.deleted("customer", id)
    return render(ctx, obj)


@route("POST", "/v1/customers/{id}", "customers", "customer")
def update_customer(ctx: Ctx, params: Params, id: str) -> JSON:
    """``POST /v1/customers/{id}``: email, name, description, phone, metadata."""
    params.allow({*_FIELDS, "metadata", "preferred_locales"})
    updates = {name: params.string(name) for name in _FIELDS if params.has(name)}
    metadata = params.metadata()
    obj = _live_customer(ctx, id)
    before = render(ctx, obj)
    for name, value in updates.items():
        obj[name] = value or None
    obj["metadata"] = apply_metadata(obj["metadata"], metadata)
    if params.has("preferred_locales"):
        obj["preferred_locales"] = [str(x) for x in params.array("preferred_locales") or []]
    ctx.emit_changes("customer.updated", obj, before)
    return render(ctx, obj)


@route("DELETE", "/v1/customers/{id}", "customers", "customer")
def delete_customer(ctx: Ctx, params: Params, id: str) -> JSON:
    """``DELETE /v1/customers/{id}``: final; the id keeps answering as deleted, and its
    subscriptions are canceled at once."""
    params.allow(())
    obj = _live_customer(ctx, id)
    cancel_for_deleted_customer(ctx, id)
    ctx.space.priv(id)["deleted"] = True
    ctx.emit("customer.deleted", obj)
    return shapes.deleted("customer", id)


@route("GET", "/v1/customers", "customers", "list:customer")
def list_customers(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/customers`` (filter: ``email``), newest first."""
    params.allow({*LIST_PARAMS, "email"})
    query = list_query(params)
    email = params.string("email")
    items = [
        c
        for c in ctx.space.newest_first("customers")
        if not ctx.space.private.get(c["id"], {}).get("deleted")
        and (email is None or c["email"] == email)
    ]
    return page(ctx, query, items, "/v1/customers", collection="customers", kind="customer")


# -- balance transactions ---------------------------------------------------------------------


@route(
    "POST", "/v1/customers/{id}/balance_transactions", "customers", "customer_balance_transaction"
)
def create_balance_transaction(ctx: Ctx, params: Params, id: str) -> JSON:
    """Credit (negative) or debit (positive) a customer's balance in one currency."""
    params.allow({"amount", "currency", "description", "metadata"})
    amount = params.integer("amount", required=True)
    currency = check_currency(params.string("currency", required=True) or "")
    description = params.string("description") or None
    metadata = params.metadata()
    assert amount is not None
    customer = _live_customer(ctx, id)
    if customer["currency"] is None:
        customer["currency"] = currency
    elif customer["currency"] != currency:
        raise invalid(
            "You cannot combine currencies on a single customer. This customer has had a "
            f"subscription, coupon, or invoice item with currency {customer['currency']}",
            param="currency",
        )
    before = render(ctx, customer)
    customer["balance"] = int(customer["balance"]) + amount
    txn = shapes.customer_balance_transaction(
        created=ctx.now(),
        livemode=ctx.livemode,
        customer_id=id,
        amount=amount,
        currency=currency,
        ending_balance=customer["balance"],
        description=description,
        metadata=new_metadata(metadata),
    )
    ctx.space.put("customer_balance_transactions", txn)
    ctx.emit("customer.updated", customer, diff(before, customer))
    return render(ctx, txn)


def _txn(ctx: Ctx, customer_id: str, txn_id: str) -> JSON:
    txn = ctx.space.get("customer_balance_transactions", txn_id)
    if txn is None or txn["customer"] != customer_id:
        raise no_such("customer balance transaction", txn_id)
    return txn


@route(
    "GET",
    "/v1/customers/{id}/balance_transactions/{txn}",
    "customers",
    "customer_balance_transaction",
)
def retrieve_balance_transaction(ctx: Ctx, params: Params, id: str, txn: str) -> JSON:
    """One balance transaction of one customer."""
    params.allow(())
    ctx.require("customers", id, "customer")
    return render(ctx, _txn(ctx, id, txn))


@route(
    "POST",
    "/v1/customers/{id}/balance_transactions/{txn}",
    "customers",
    "customer_balance_transaction",
)
def update_balance_transaction(ctx: Ctx, params: Params, id: str, txn: str) -> JSON:
    """Only ``description`` and ``metadata`` can change; the amount is history."""
    params.allow({"description", "metadata"})
    description = params.string("description") if params.has("description") else None
    metadata = params.metadata()
    ctx.require("customers", id, "customer")
    obj = _txn(ctx, id, txn)
    if params.has("description"):
        obj["description"] = description or None
    obj["metadata"] = apply_metadata(obj["metadata"], metadata)
    return render(ctx, obj)


@route(
    "GET",
    "/v1/customers/{id}/balance_transactions",
    "customers",
    "list:customer_balance_transaction",
)
def list_balance_transactions(ctx: Ctx, params: Params, id: str) -> JSON:
    """A customer's balance history, newest first."""
    params.allow(UNDATED_LIST_PARAMS)
    query = list_query(params)
    ctx.require("customers", id, "customer")
    items = [
        t for t in ctx.space.newest_first("customer_balance_transactions") if t["customer"] == id
    ]
    return page(
        ctx,
        query,
        items,
        f"/v1/customers/{id}/balance_transactions",
        collection="customer_balance_transactions",
        kind="customer balance transaction",
    )
