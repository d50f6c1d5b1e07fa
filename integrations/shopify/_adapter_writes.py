"""Writes for the Shopify adapter, and how each is recognised afterwards.

One mutation per action, each carrying our action id where Shopify keeps it:

* refund: ``refundCreate`` under ``@idempotent(key:)`` (the action's key), with
  ``caseward_action_id=<id>`` as the last line of its ``note``. Found again by reading
  the order and matching the note. Before sending, the order is read: a refund already
  carrying our id is reported instead of sent, so even a resend after Shopify forgot the
  key (24 hours) cannot refund twice.
* discount: ``discountCodeBasicCreate`` with a code derived from the action id and our
  marker in its title. Found again by that code; a resend is refused by Shopify as
  ``TAKEN`` (codes are unique per shop), and when the taken code is ours, the existing
  discount is the answer.
* store credit: ``storeCreditAccountCredit`` has no idempotency key and keeps no text of
  ours, so an unclear outcome can only be settled by look-up, and the look-up can only
  match on what the credit is: a credit to this customer of exactly this amount and
  currency, made within :data:`CREDIT_LOOKUP_WINDOW`. The guard's duplicate check refuses
  a second same-amount credit to a customer within its window (72 hours unless a shop
  shortens it below this window), so before our send there was none; a match is taken to
  be ours. The window outlasts the executor's resend horizon (by default it never resends
  a key older than 23 hours). What remains possible is someone crediting the same amount
  by hand between our unclear send and the look-up: then a credit that never landed is
  reported as made (under-paying, never paying twice); the answer's ``raw`` says it was
  matched this way.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from integrations.currency import exponent_or_none
from integrations.provider import (
    ActionKind,
    ActionRequest,
    InvalidRequest,
    ProviderAnswer,
    ProviderRejected,
    ProviderStatus,
)
from integrations.shopify.documents import (
    CUSTOMER_STORE_CREDIT,
    DISCOUNT_BY_CODE,
    DISCOUNT_CODE_BASIC_CREATE,
    REFUND_CREATE,
    SHOP,
    STORE_CREDIT_ACCOUNT_CREDIT,
    CodeDiscount,
    OrderForRefund,
    Refund,
    StoreCreditTransaction,
    Transaction,
    discount_code_variables,
    read_customer_store_credit,
    read_discount_by_code,
    read_discount_code_basic_create,
    read_refund_create,
    read_shop,
    read_store_credit_credit,
    refund_create_variables,
    store_credit_variables,
)
from integrations.shopify.errors import ShopifyUserErrors
from integrations.shopify.graphql import AdminClient, data_or_user_errors
from integrations.shopify.money import Amount, to_decimal_string

from ._adapter_facts import (
    CREDIT_TRANSACTIONS,
    action_id_in,
    customer_target,
    marker,
    order_target,
    payments,
    read_order,
    refund_status,
    refunded_from,
    require_whole,
)

CREDIT_LOOKUP_WINDOW = timedelta(hours=24)
# Shopify's notes and titles are free text; a reason is cut to keep ours readable.
REASON_MAX = 500
LINE_ITEM_GID_PREFIX = "gid://shopify/LineItem/"
UNSUPPORTED_SUBSCRIPTIONS = "Shopify subscriptions are not supported"


class Writer:
    """Submits one action to a shop and looks for its effect afterwards."""

    def __init__(self, client: AdminClient, now: Callable[[], datetime]) -> None:
        self._client = client
        self._now = now

    # ------------------------------------------------------------ submit

    def submit(
        self, request: ActionRequest, *, order_read: OrderForRefund | None = None
    ) -> ProviderAnswer:
        """``order_read``: the refund's order as this job already read it, if it did."""
        if request.kind is ActionKind.REFUND:
            return self._refund(request, order_read)
        if request.kind is ActionKind.CUSTOMER_CREDIT:
            return self._credit(request)
        if request.kind is ActionKind.DISCOUNT:
            return self._discount(request)
        raise ProviderRejected(UNSUPPORTED_SUBSCRIPTIONS, code="unsupported")

    def _refund(self, request: ActionRequest, order_read: OrderForRefund | None) -> ProviderAnswer:
        amount = Amount(_amount(request), _currency(request))
        lines = _line_items(request.params)
        shipping = _shipping(request.params, amount)
        order = order_read or read_order(self._client, order_target(request.target))
        if order is None:
            raise ProviderRejected(f"Shopify has no order {request.target}", code="not_found")
        landed = ours(order, request.action_id)
        if landed is not None:
            return refund_answer(order, landed, replayed=True)
        require_whole(order)
        if amount.currency != order.currency:
            raise ProviderRejected(
                f"the refund is in {amount.currency.upper()} but Shopify order {order.name} "
                f"is in {order.currency.upper()}",
                code="currency_mismatch",
            )
        parent = _parent(order, amount.amount)
        if parent is None or parent.gateway is None:
            raise ProviderRejected(
                f"Shopify order {order.name} has no settled payment to refund", code="not_paid"
            )
        variables = refund_create_variables(
            key=request.idempotency_key,
            order_id=order.id,
            parent_transaction_id=parent.id,
            gateway=parent.gateway,
            amount=amount,
            line_items=lines,
            note=_note(request),
            notify=_notify(request.params),
        )
        if shipping is not None:
            variables["input"]["shipping"] = {
                "amount": to_decimal_string(shipping.amount, shipping.currency)
            }
        payload = self._mutate(
            REFUND_CREATE, variables, "RefundCreate", "refundCreate", f"refund on {order.name}"
        )
        # Shopify does not say whether it replayed a key, so neither can we.
        return refund_answer(order, read_refund_create(payload), replayed=False)

    def _credit(self, request: ActionRequest) -> ProviderAnswer:
        """No idempotency key exists for store credit: after an unclear outcome only a
        look-up (:meth:`find`) can tell whether it was made, so the executor always looks
        before it sends again."""
        target = customer_target(request.target)
        amount = Amount(_amount(request), _currency(request))
        variables = store_credit_variables(
            customer_id=target, amount=amount, notify=_notify(request.params)
        )
        payload = self._mutate(
            STORE_CREDIT_ACCOUNT_CREDIT,
            variables,
            "StoreCreditAccountCredit",
            "storeCreditAccountCredit",
            f"store credit for {target}",
        )
        return credit_answer(target, read_store_credit_credit(payload), matches=None)

    def _discount(self, request: ActionRequest) -> ProviderAnswer:
        target = customer_target(request.target)
        percent, amount = _discount_value(request)
        if amount is not None:
            # An amount off is in the shop's currency whatever we say: check it is ours.
            shop = read_shop(self._client.execute(SHOP, operation_name="Shop").data)
            if amount.currency != shop.currency:
                raise ProviderRejected(
                    f"the discount is in {amount.currency.upper()} but the shop sells in "
                    f"{shop.currency.upper()}",
                    code="currency_mismatch",
                )
        what = _described(percent, amount)
        code = discount_code(request.action_id)
        variables = discount_code_variables(
            code=code,
            title=f"Caseward {what} {marker(request.action_id)}",
            customer_id=target,
            starts_at=self._now(),
            percentage=percent / 100 if percent is not None else None,
            amount=amount,
        )
        answer = self._client.execute(
            DISCOUNT_CODE_BASIC_CREATE, variables, operation_name="DiscountCodeBasicCreate"
        )
        try:
            payload = data_or_user_errors(answer, "discountCodeBasicCreate")
        except ShopifyUserErrors as refused:
            if _code_taken(refused):
                existing = self._our_discount(code, request.action_id)
                if existing is not None:
                    return discount_answer(existing, replayed=True)
            raise _rejected(f"discount code for {target}", refused) from refused
        return discount_answer(read_discount_code_basic_create(payload), replayed=False)

    def _mutate(
        self,
        document: str,
        variables: Mapping[str, Any],
        operation: str,
        mutation: str,
        what: str,
    ) -> Mapping[str, Any]:
        answer = self._client.execute(document, variables, operation_name=operation)
        try:
            return data_or_user_errors(answer, mutation)
        except ShopifyUserErrors as refused:
            raise _rejected(what, refused) from refused

    # ------------------------------------------------------------ find

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The action's effect as Shopify shows it now, or ``None``; never writes."""
        if request.kind is ActionKind.REFUND:
            order = read_order(self._client, order_target(request.target))
            if order is None:
                return None
            landed = ours(order, request.action_id)
            if landed is not None:
                return refund_answer(order, landed, replayed=False)
            # Absence is only proven by a whole read: a cut list may hide our refund.
            require_whole(order)
            return None
        if request.kind is ActionKind.CUSTOMER_CREDIT:
            return self._find_credit(request)
        if request.kind is ActionKind.DISCOUNT:
            existing = self._our_discount(discount_code(request.action_id), request.action_id)
            return None if existing is None else discount_answer(existing, replayed=False)
        return None  # nothing is ever sent for a subscription kind

    def _find_credit(self, request: ActionRequest) -> ProviderAnswer | None:
        target = customer_target(request.target)
        wanted = Amount(_amount(request), _currency(request))
        answer = self._client.execute(
            CUSTOMER_STORE_CREDIT,
            {"id": target, "transactions": CREDIT_TRANSACTIONS},
            operation_name="CustomerStoreCredit",
        )
        found = read_customer_store_credit(answer.data)
        if found is None:
            return None
        since = self._now() - CREDIT_LOOKUP_WINDOW
        matches = [
            credit
            for account in found.accounts
            for credit in account.credits
            if credit.amount == wanted and credit.created_at >= since
        ]
        if not matches:
            return None
        earliest = min(matches, key=lambda credit: credit.created_at)
        return credit_answer(target, earliest, matches=len(matches))

    def _our_discount(self, code: str, action_id: str) -> CodeDiscount | None:
        answer = self._client.execute(
            DISCOUNT_BY_CODE, {"code": code}, operation_name="DiscountByCode"
        )
        discount = read_discount_by_code(answer.data)
        if discount is None or action_id_in(discount.title) != action_id:
            return None
        return discount


# ---------------------------------------------------------------- answers


def ours(order: OrderForRefund, action_id: str) -> Refund | None:
    """The order's refund whose note carries our action id."""
    return next((r for r in order.refunds if action_id_in(r.note) == action_id), None)


def refund_answer(order: OrderForRefund, refund: Refund, *, replayed: bool) -> ProviderAnswer:
    """SUCCESS is succeeded, PENDING pending, FAILURE or ERROR failed (see
    :func:`~integrations.shopify._adapter_facts.refund_status`)."""
    status, amount, failure = refund_status(refund)
    return ProviderAnswer(
        reference=refund.id,
        status=status,
        raw={
            "order_id": order.id,
            "order_name": order.name,
            "refund_id": refund.id,
            "note": refund.note,
            "amount": amount,
            "currency": order.currency,
            "created_at": refund.created_at.isoformat() if refund.created_at else None,
            "transactions": [
                {
                    "id": t.id,
                    "kind": t.kind,
                    "status": t.status,
                    "gateway": t.gateway,
                    "parent_id": t.parent_id,
                    "amount": t.amount.amount,
                }
                for t in refund.transactions
            ],
        },
        replayed=replayed,
        failure_reason=failure,
    )


def credit_answer(
    customer_id: str, credit: StoreCreditTransaction, *, matches: int | None
) -> ProviderAnswer:
    """Store credit is applied when made: it has no other status. ``matches`` is set when
    the credit was recognised by amount and time rather than from Shopify's answer."""
    raw: dict[str, object] = {
        "customer_id": customer_id,
        "transaction_id": credit.id,
        "amount": credit.amount.amount,
        "currency": credit.amount.currency,
        "balance_after": credit.balance_after.amount,
        "created_at": credit.created_at.isoformat(),
        "matched_by": "answer" if matches is None else "amount, currency and time",
    }
    if matches is not None:
        raw["matching_credits"] = matches
    return ProviderAnswer(
        reference=credit.id or "",
        status=ProviderStatus.SUCCEEDED,
        raw=raw,
        replayed=False,
    )


def discount_answer(discount: CodeDiscount, *, replayed: bool) -> ProviderAnswer:
    """A code that expired no longer grants anything; any other exists and stands."""
    status = ProviderStatus.CANCELED if discount.status == "EXPIRED" else ProviderStatus.SUCCEEDED
    return ProviderAnswer(
        reference=discount.id,
        status=status,
        raw={
            "discount_id": discount.id,
            "code": discount.code,
            "title": discount.title,
            "status": discount.status,
            "percentage": discount.percentage,
            "amount": discount.amount.amount if discount.amount else None,
            "currency": discount.amount.currency if discount.amount else None,
        },
        replayed=replayed,
    )


def discount_code(action_id: str) -> str:
    """The action's discount code: ``CW-`` and 12 characters of a hash of its id.

    Deterministic, so a look-up needs nothing but the action; base32 has no 0, 1, 8 or
    9, so a customer cannot mistake O for 0 or I for 1 when typing it.
    """
    digest = hashlib.sha256(marker(action_id).encode("utf-8")).digest()
    return "CW-" + base64.b32encode(digest).decode("ascii")[:12]


def _rejected(what: str, refused: ShopifyUserErrors) -> ProviderRejected:
    """Shopify's ``userErrors`` as the contract's refusal, each message with its field."""
    details = "; ".join(
        error.message + (f" (field {'.'.join(error.field)})" if error.field else "")
        for error in refused.errors
    )
    return ProviderRejected(f"Shopify refused the {what}: {details}", code=refused.code)


def _code_taken(refused: ShopifyUserErrors) -> bool:
    return any(
        error.code == "TAKEN" and error.field is not None and error.field[-1:] == ("code",)
        for error in refused.errors
    )


# ---------------------------------------------------------------- request checks


def _amount(request: ActionRequest) -> int:
    """A positive amount in minor units: money is never implied (no "refund everything")."""
    amount = request.amount
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise InvalidRequest(f"a {request.kind} needs a positive amount, not {amount!r}")
    return amount


def _currency(request: ActionRequest) -> str:
    """A currency whose minor unit is known: Shopify takes decimals, and every amount
    of the request is written with this currency's exponent."""
    currency = (request.currency or "").lower()
    if exponent_or_none(currency) is None:
        raise InvalidRequest(
            f"a {request.kind} needs an ISO 4217 currency, not {request.currency!r}"
        )
    return currency


def _notify(params: Mapping[str, object]) -> bool:
    """Shopify tells the customer only when the action says so."""
    return params.get("notify") is True


def _note(request: ActionRequest) -> str:
    """The refund's note: the reason, if any, then our marker on a line of its own."""
    reason = request.params.get("reason")
    text = reason.strip()[:REASON_MAX] if isinstance(reason, str) else ""
    return f"{text or 'Refund through Caseward'}\n{marker(request.action_id)}"


def _line_items(params: Mapping[str, object]) -> list[tuple[str, int]]:
    """``params["line_items"]``: ``{"line_id": <LineItem gid>, "quantity": n}`` each."""
    raw = params.get("line_items")
    if raw is None:
        return []
    if not isinstance(raw, list | tuple) or not raw:
        raise InvalidRequest("line_items must be a non-empty list")
    lines: list[tuple[str, int]] = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise InvalidRequest(
                f"a line item is a mapping with line_id and quantity, not {item!r}"
            )
        line_id, quantity = item.get("line_id"), item.get("quantity")
        if not isinstance(line_id, str) or not line_id.startswith(LINE_ITEM_GID_PREFIX):
            raise InvalidRequest(f"line_id must be a Shopify LineItem gid, not {line_id!r}")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 1:
            raise InvalidRequest(
                f"a Shopify line-item refund names a quantity of at least 1 for {line_id}, "
                f"not {quantity!r}"
            )
        lines.append((line_id, quantity))
    return lines


def _shipping(params: Mapping[str, object], refund: Amount) -> Amount | None:
    """Shipping is refunded only for an explicit amount, part of the refund's total."""
    shipping = params.get("shipping")
    if shipping is None or shipping is False:
        return None
    if not isinstance(shipping, int) or isinstance(shipping, bool) or shipping <= 0:
        raise InvalidRequest(f"shipping is an amount in minor units, not {shipping!r}")
    if shipping > refund.amount:
        raise InvalidRequest(f"shipping {shipping} is more than the refund's {refund.amount}")
    return Amount(shipping, refund.currency)


def _parent(order: OrderForRefund, amount: int) -> Transaction | None:
    """The payment to refund against: the first that still holds the whole amount, else
    the one holding the most, so that Shopify's own bound refuses with its own words."""
    room = [
        (payment, payment.amount.amount - refunded_from(order, payment))
        for payment in payments(order)
        if payment.gateway
    ]
    enough = [payment for payment, left in room if left >= amount]
    if enough:
        return enough[0]
    return max(room, key=lambda pair: pair[1])[0] if room else None


def _discount_value(request: ActionRequest) -> tuple[int | None, Amount | None]:
    """A percent (``params["percent_off"]``, 1-100) or an amount off (``amount``).

    Shopify codes made here are single-use, so the only duration that means what it
    says is ``once``; anything longer is refused before sending."""
    duration = request.params.get("duration", "once")
    if duration != "once":
        raise ProviderRejected(
            f"a Shopify discount code is used once; duration {duration!r} is not supported",
            code="unsupported",
        )
    percent = request.params.get("percent_off")
    if percent is not None:
        if not isinstance(percent, int) or isinstance(percent, bool) or not 1 <= percent <= 100:
            raise InvalidRequest(f"percent_off is a whole number from 1 to 100, not {percent!r}")
        return percent, None
    amount = Amount(_amount(request), _currency(request))
    amount_off = request.params.get("amount_off")
    if amount_off is not None and amount_off != amount.amount:
        raise InvalidRequest(f"amount_off {amount_off!r} differs from the amount {amount.amount}")
    return None, amount


def _described(percent: int | None, amount: Amount | None) -> str:
    if amount is not None:
        return f"{to_decimal_string(amount.amount, amount.currency)} {amount.currency.upper()} off"
    return f"{percent}% off"
