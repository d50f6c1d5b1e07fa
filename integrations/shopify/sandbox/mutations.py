"""The mutations the sandbox serves: ``refundCreate``, ``storeCreditAccountCredit``,
``discountCodeBasicCreate``.

Each resolver follows the same sequence: check the token's scope; if the request's
idempotency claim holds a saved outcome, answer that again and change nothing; else
validate the whole input and either answer ``userErrors`` (HTTP 200, nothing changed) or
make the change under the store lock; save the outcome on the claim (ids and user
errors, so a replay answers with the same objects); queue the webhooks the change
raises, which the request delivers only after it has committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLResolveInfo

from . import payloads, refunds
from .context import Call
from .money import AmountError, to_minor
from .state import Discount, StoreCreditAccount, StoreCreditTransaction, parse_gid, parse_iso
from .views import DiscountNodeView, OrderView, RefundView, StoreCreditTransactionView

JSON = dict[str, Any]

MAX_CODE_LENGTH = 255


def _start(info: GraphQLResolveInfo, scope: str) -> tuple[Call, JSON | None]:
    """The request's call, after the scope check, and a saved outcome to replay."""
    call: Call = info.context
    call.require_scope(info.field_name, scope)
    claim = call.claims.get(str(info.path.key))
    return call, (claim.replay if claim is not None else None)


def _save(info: GraphQLResolveInfo, outcome: JSON) -> None:
    call: Call = info.context
    claim = call.claims.get(str(info.path.key))
    if claim is not None:
        claim.outcome = outcome


# -- refundCreate ----------------------------------------------------------------------


def refund_create(_root: object, info: GraphQLResolveInfo, input: Mapping[str, Any]) -> JSON:
    """``refundCreate(input: RefundInput!)``."""
    call, replay = _start(info, "write_orders")
    if replay is not None:
        return _refund_payload(call, replay)
    with call.store.lock:
        outcome = refunds.create(call.store, call.shop, input, call.now)
        saved = {
            "order": outcome.order.id if outcome.order is not None else None,
            "refund": outcome.refund.id if outcome.refund is not None else None,
            "userErrors": outcome.user_errors,
        }
        if outcome.refund is not None and outcome.order is not None:
            call.webhooks.append(("refunds/create", payloads.refund(outcome.order, outcome.refund)))
            call.webhooks.append(("orders/updated", payloads.order(call.shop, outcome.order)))
    _save(info, saved)
    return _refund_payload(call, saved)


def _refund_payload(call: Call, saved: JSON) -> JSON:
    order = call.shop.orders.get(saved["order"] or 0)
    refund = next((r for r in order.refunds if r.id == saved["refund"]), None) if order else None
    return {
        "order": OrderView(call, order) if order is not None else None,
        "refund": RefundView(call, order, refund) if order and refund else None,
        "userErrors": saved["userErrors"],
    }


# -- storeCreditAccountCredit ----------------------------------------------------------


def _credit_error(path: list[str], code: str, message: str) -> JSON:
    return {"field": path, "message": message, "code": code}


def store_credit_account_credit(
    _root: object, info: GraphQLResolveInfo, id: str, creditInput: Mapping[str, Any]
) -> JSON:
    """``storeCreditAccountCredit(id:, creditInput:)``; ``id`` is an account or a
    customer (whose account in that currency is created when missing)."""
    call, replay = _start(info, "write_store_credit_account_transactions")
    if replay is None:
        with call.store.lock:
            replay = _credit(call, id, creditInput)
        _save(info, replay)
    account = call.shop.credit_accounts.get(replay["account"] or 0)
    transaction = (
        next((t for t in account.transactions if t.id == replay["transaction"]), None)
        if account is not None
        else None
    )
    return {
        "storeCreditAccountTransaction": (
            StoreCreditTransactionView(call, account, transaction)
            if account is not None and transaction is not None
            else None
        ),
        "userErrors": replay["userErrors"],
    }


def _credit(call: Call, target: str, credit_input: Mapping[str, Any]) -> JSON:
    shop = call.shop
    money = credit_input["creditAmount"]
    currency = money["currencyCode"]
    amount_path = ["creditInput", "creditAmount", "amount"]
    currency_path = ["creditInput", "creditAmount", "currencyCode"]
    failed: JSON = {"account": None, "transaction": None}

    account: StoreCreditAccount | None = None
    customer_id = parse_gid(target, "Customer")
    account_id = parse_gid(target, "StoreCreditAccount")
    if customer_id is not None:
        if customer_id not in shop.customers:
            return failed | {
                "userErrors": [_credit_error(["id"], "OWNER_NOT_FOUND", "Owner does not exist.")]
            }
        account = next(
            (
                a
                for a in shop.credit_accounts.values()
                if a.customer_id == customer_id and a.currency == currency
            ),
            None,
        )
    else:
        account = shop.credit_accounts.get(account_id) if account_id is not None else None
        if account is None:
            return failed | {
                "userErrors": [
                    _credit_error(
                        ["id"], "ACCOUNT_NOT_FOUND", "Store credit account does not exist."
                    )
                ]
            }
    errors: list[JSON] = []
    if currency != shop.currency:
        errors.append(
            _credit_error(
                currency_path, "UNSUPPORTED_CURRENCY", "The currency provided is not supported."
            )
        )
    elif account is not None and account.currency != currency:
        errors.append(
            _credit_error(
                currency_path,
                "MISMATCHING_CURRENCY",
                "The currency provided does not match the currency of the store credit account.",
            )
        )
    try:
        amount = to_minor(money["amount"], currency)
    except AmountError as exc:
        errors.append(_credit_error(amount_path, "NEGATIVE_OR_ZERO_AMOUNT", str(exc)))
        amount = 0
    if amount <= 0 and not any(e["field"] == amount_path for e in errors):
        errors.append(
            _credit_error(
                amount_path,
                "NEGATIVE_OR_ZERO_AMOUNT",
                "A positive amount must be used to credit a store credit account.",
            )
        )
    expires = credit_input.get("expiresAt")
    expires_at = parse_iso(expires) if expires else None
    if expires_at is not None and expires_at <= call.now:
        errors.append(
            _credit_error(
                ["creditInput", "expiresAt"],
                "EXPIRES_AT_IN_PAST",
                "The expiry date must be in the future.",
            )
        )
    if errors:
        return failed | {"userErrors": errors}
    if account is None:
        assert customer_id is not None
        account = StoreCreditAccount(call.store.next_id(), customer_id, currency)
        shop.credit_accounts[account.id] = account
    transaction = StoreCreditTransaction(
        id=call.store.next_id(),
        amount=amount,
        balance_after=account.balance + amount,
        created_at=call.now,
        expires_at=expires_at,
    )
    account.transactions.append(transaction)
    return {"account": account.id, "transaction": transaction.id, "userErrors": []}


# -- discountCodeBasicCreate -----------------------------------------------------------


def _discount_error(path: list[str], code: str, message: str) -> JSON:
    return {
        "field": ["basicCodeDiscount", *path],
        "message": message,
        "code": code,
        "extraInfo": None,
    }


def discount_code_basic_create(
    _root: object, info: GraphQLResolveInfo, basicCodeDiscount: Mapping[str, Any]
) -> JSON:
    """``discountCodeBasicCreate(basicCodeDiscount:)``: an amount or percentage off every
    item, for every buyer or listed customers."""
    call, replay = _start(info, "write_discounts")
    if replay is None:
        with call.store.lock:
            replay = _discount(call, basicCodeDiscount)
        _save(info, replay)
    discount = call.shop.discounts.get(replay["discount"] or 0)
    return {
        "codeDiscountNode": DiscountNodeView(call, discount) if discount is not None else None,
        "userErrors": replay["userErrors"],
    }


def _discount(call: Call, given: Mapping[str, Any]) -> JSON:
    """Check every field of ``DiscountCodeBasicInput``; create the discount if all hold."""
    shop = call.shop
    errors: list[JSON] = []
    title = (given.get("title") or "").strip()
    code = (given.get("code") or "").strip()
    _check_names(shop.discounts.values(), title, code, errors)
    starts = given.get("startsAt")
    if not starts:
        errors.append(_discount_error(["startsAt"], "BLANK", "Starts at can't be blank"))
    starts_at = parse_iso(starts) if starts else call.now
    ends = given.get("endsAt")
    ends_at = parse_iso(ends) if ends else None
    if ends_at is not None and ends_at <= starts_at:
        errors.append(
            _discount_error(
                ["endsAt"], "END_DATE_BEFORE_START_DATE", "Ends at needs to be after starts_at"
            )
        )
    usage_limit = given.get("usageLimit")
    if usage_limit is not None and usage_limit <= 0:
        errors.append(
            _discount_error(
                ["usageLimit"], "VALUE_OUTSIDE_RANGE", "Usage limit must be greater than 0"
            )
        )
    value = _value(given.get("customerGets") or {}, shop.currency, errors)
    customer_ids = _buyers(given.get("context") or {}, shop.customers, errors)
    minimum = _minimum(given.get("minimumRequirement") or {}, shop.currency, errors)
    if errors:
        return {"discount": None, "userErrors": errors}
    combines = given.get("combinesWith") or {}
    discount = Discount(
        id=call.store.next_id(),
        code_id=call.store.next_id(),
        title=title,
        code=code,
        starts_at=starts_at,
        ends_at=ends_at,
        created_at=call.now,
        percentage=value.percentage,
        amount=value.amount,
        applies_on_each_item=value.on_each_item,
        customer_ids=customer_ids,
        combines_with={k: bool(v) for k, v in combines.items() if v is not None},
        minimum_quantity=minimum[0],
        minimum_subtotal=minimum[1],
        usage_limit=usage_limit,
        applies_once_per_customer=bool(given.get("appliesOncePerCustomer")),
        tags=list(given.get("tags") or ()),
    )
    shop.discounts[discount.id] = discount
    return {"discount": discount.id, "userErrors": []}


def _check_names(existing: Iterable[Discount], title: str, code: str, errors: list[JSON]) -> None:
    if not title:
        errors.append(_discount_error(["title"], "BLANK", "Title can't be blank"))
    if not code:
        errors.append(_discount_error(["code"], "BLANK", "Code can't be blank"))
    elif len(code) > MAX_CODE_LENGTH:
        errors.append(
            _discount_error(
                ["code"], "TOO_LONG", f"Code is too long (maximum is {MAX_CODE_LENGTH})"
            )
        )
    elif any(d.code.lower() == code.lower() for d in existing):
        errors.append(
            _discount_error(["code"], "TAKEN", "Code must be unique. Please try a different code.")
        )


@dataclass
class _Value:
    percentage: float | None = None
    amount: int | None = None
    on_each_item: bool = False


def _value(gets: Mapping[str, Any], currency: str, errors: list[JSON]) -> _Value:
    """``customerGets``: a percentage in (0, 1] or a positive amount, on all items."""
    value = gets.get("value") or {}
    path = ["customerGets", "value"]
    if not (gets.get("items") or {}).get("all"):
        errors.append(
            _discount_error(
                ["customerGets", "items"], "INVALID", "Items must be given as all: true"
            )
        )
    if value.get("percentage") is not None and value.get("discountAmount") is not None:
        errors.append(
            _discount_error(
                path, "TOO_MANY_ARGUMENTS", "Only one of percentage or discountAmount can be given"
            )
        )
        return _Value()
    if value.get("percentage") is not None:
        percentage = float(value["percentage"])
        if not 0 < percentage <= 1:
            errors.append(
                _discount_error(
                    [*path, "percentage"],
                    "VALUE_OUTSIDE_RANGE",
                    "Value must be between 0.0 and 1.0",
                )
            )
        return _Value(percentage=percentage)
    if value.get("discountAmount") is not None:
        given = value["discountAmount"]
        amount_path = [*path, "discountAmount", "amount"]
        try:
            amount = to_minor(given.get("amount"), currency)
        except AmountError as exc:
            errors.append(_discount_error(amount_path, "INVALID", str(exc)))
            return _Value()
        if amount <= 0:
            errors.append(
                _discount_error(amount_path, "VALUE_OUTSIDE_RANGE", "Value must be greater than 0")
            )
        return _Value(amount=amount, on_each_item=bool(given.get("appliesOnEachItem")))
    errors.append(
        _discount_error(
            path, "MISSING_ARGUMENT", "One of percentage or discountAmount must be given"
        )
    )
    return _Value()


def _buyers(
    context: Mapping[str, Any], customers: Mapping[int, object], errors: list[JSON]
) -> list[int] | None:
    """``context``: every buyer (``None``), or the listed customers, who must exist."""
    if context.get("all") is not None and context.get("customers") is not None:
        errors.append(
            _discount_error(
                ["context"], "TOO_MANY_ARGUMENTS", "Only one of all or customers can be given"
            )
        )
        return None
    if context.get("customers") is None:
        return None
    chosen: list[int] = []
    for index, raw in enumerate(context["customers"].get("add") or ()):
        number = parse_gid(raw, "Customer")
        if number is None or number not in customers:
            errors.append(
                _discount_error(
                    ["context", "customers", "add", str(index)],
                    "INVALID",
                    "Customer does not exist",
                )
            )
        else:
            chosen.append(number)
    return chosen


def _minimum(
    minimum: Mapping[str, Any], currency: str, errors: list[JSON]
) -> tuple[int | None, int | None]:
    """``minimumRequirement``: a quantity or a subtotal, not both."""
    quantity, subtotal = minimum.get("quantity"), minimum.get("subtotal")
    if quantity and subtotal:
        errors.append(
            _discount_error(
                ["minimumRequirement"],
                "TOO_MANY_ARGUMENTS",
                "Only one of quantity or subtotal can be given",
            )
        )
        return None, None
    if quantity:
        return quantity.get("greaterThanOrEqualToQuantity"), None
    if subtotal:
        try:
            return None, to_minor(subtotal.get("greaterThanOrEqualToSubtotal"), currency)
        except AmountError as exc:
            path = ["minimumRequirement", "subtotal", "greaterThanOrEqualToSubtotal"]
            errors.append(_discount_error(path, "INVALID", str(exc)))
    return None, None
