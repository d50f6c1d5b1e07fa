"""An action in words: the sentence an approver reads next to the digest they approve.

It must say everything the digest binds (provider, kind, target, customer, amount,
currency, line items, parameters), so that changing any one of them changes what the
person reads; it must never name an order the shop has not got on file; and amounts
follow the currency's ISO 4217 digits in the reader's locale.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from app.approvals.in_words import describe_action
from integrations.provider import ActionKind

SHOP = uuid.UUID("7d7c1b8e-4a55-4f1e-9c33-0e0e2b8d6a11")
TIMES = "\u00d7"  # the multiplication sign quantities are written with


@dataclass(frozen=True)
class Item:
    """A proposal (or its action) as far as the words go."""

    shop_id: uuid.UUID = SHOP
    provider: str = "stripe"
    kind: str = "refund"
    target: str = "pi_3Apron"
    customer_ref: str | None = "cus_Maya"
    amount: int | None = 4800
    currency: str | None = "usd"
    line_items: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OrderOnFile:
    name: str = "#1001"
    lines: Sequence[Mapping[str, Any]] = (
        {"id": "apron-natural", "title": "Linen apron", "quantity": 1, "paid": 3000},
        {"id": "throw-oat", "title": "Oat throw", "quantity": 1, "paid": 1800},
    )


ORDER = OrderOnFile()


def test_a_refund_names_the_amount_the_order_the_payment_and_where_the_money_goes() -> None:
    assert describe_action(Item(), order=ORDER) == (
        "Refund $48.00 of order #1001, Stripe payment pi_3Apron of customer cus_Maya, "
        "to the original payment method."
    )


def test_a_refund_whose_payment_no_order_on_file_uses_says_so_and_names_none() -> None:
    words = describe_action(Item(customer_ref=None), order=None)

    assert words == (
        "Refund $48.00 of Stripe payment pi_3Apron (no order on file matches it), "
        "to the original payment method."
    )
    assert "#" not in words


def test_line_items_are_named_by_the_orders_titles_and_an_unknown_line_by_its_id() -> None:
    item = Item(
        line_items=[
            {"line_id": "apron-natural", "amount": 3000},
            {"line_id": "napkins-4", "amount": 1800},
        ],
        params={"reason": "requested_by_customer"},
    )

    words = describe_action(item, order=ORDER)

    assert "for $30.00 of “Linen apron”" in words
    assert "$18.00 of line napkins-4 (not on the order on file)" in words
    assert words.endswith("(reason: requested_by_customer).")


def test_a_shopify_refund_says_quantities_shipping_and_whether_shopify_tells_the_customer() -> None:
    item = Item(
        provider="shopify",
        target="gid://shopify/Order/1001",
        amount=3500,
        line_items=[{"line_id": "apron-natural", "amount": 3000, "quantity": 1}],
        params={"shipping": 500, "notify": True},
    )

    words = describe_action(item, order=ORDER)

    assert "Shopify order gid://shopify/Order/1001" in words
    assert f"1 {TIMES} “Linen apron” ($30.00)" in words
    assert "including $5.00 of shipping" in words
    assert "and Shopify notifies the customer" in words


@pytest.mark.parametrize(
    ("amount", "currency", "locale", "shown"),
    [
        (2400, "jpy", "en_US", "¥2,400"),
        (1250, "kwd", "en_US", "KWD1.250"),
        (4800, "usd", "fr", "48,00\u00a0$US"),
        (2400, "jpy", "fr", "2\u202f400\u00a0JPY"),
    ],
)
def test_amounts_have_their_currencys_digits_in_the_readers_locale(
    amount: int, currency: str, locale: str, shown: str
) -> None:
    words = describe_action(Item(amount=amount, currency=currency), order=ORDER, locale=locale)

    assert f"Refund {shown} of order #1001" in words


def test_a_credit_and_discounts_name_the_customer_and_their_terms() -> None:
    credit = Item(kind="customer_credit", target="cus_Maya", amount=1000)
    percent = Item(
        kind="discount",
        target="cus_Maya",
        amount=2000,
        params={"percent_off": 20, "duration": "repeating", "duration_in_months": 1},
    )
    fixed = Item(kind="discount", target="cus_Maya", amount=500, params={"duration": "forever"})

    assert describe_action(credit) == (
        "Add $10.00 of credit to the balance of Stripe customer cus_Maya."
    )
    assert describe_action(percent) == (
        "Give Stripe customer cus_Maya 20% off, at most $20.00, for 1 month."
    )
    assert describe_action(fixed) == (
        "Give Stripe customer cus_Maya $5.00 off, on every invoice, with no end."
    )


def test_a_subscription_cancel_says_now_or_at_period_end_and_a_change_lists_every_item() -> None:
    now = Item(
        kind="subscription_cancel", target="sub_1", customer_ref=None, amount=None, currency=None
    )
    later = replace(now, params={"at_period_end": True})
    change = replace(
        now,
        kind="subscription_change",
        params={"items": [["price_linen", 2], ["price_oat", 1]], "proration_behavior": "none"},
    )

    assert describe_action(now) == "Cancel Stripe subscription sub_1 now, immediately and for good."
    assert describe_action(replace(later, customer_ref="cus_Maya")) == (
        "Cancel Stripe subscription sub_1 of customer cus_Maya at the end of its current period."
    )
    assert describe_action(change) == (
        f"Change Stripe subscription sub_1 to exactly: price_linen {TIMES} 2, "
        f"price_oat {TIMES} 1, "
        "without proration."
    )


# Each changes one field the digest binds, and nothing else.
CHANGES: dict[str, Callable[[Item], Item]] = {
    "provider": lambda i: replace(i, provider="shopify"),
    "kind": lambda i: replace(i, kind="customer_credit"),
    "target": lambda i: replace(i, target="pi_3Other"),
    "customer": lambda i: replace(i, customer_ref="cus_Someone"),
    "amount": lambda i: replace(i, amount=4700),
    "currency": lambda i: replace(i, currency="eur"),
    "line item": lambda i: replace(i, line_items=[{"line_id": "throw-oat", "amount": 1800}]),
    "parameters": lambda i: replace(i, params={"reason": "duplicate"}),
}


@pytest.mark.parametrize("changed", sorted(CHANGES))
def test_every_field_the_digest_binds_changes_the_words(changed: str) -> None:
    item = Item(line_items=[{"line_id": "apron-natural", "amount": 3000}])

    assert describe_action(CHANGES[changed](item), order=ORDER) != describe_action(
        item, order=ORDER
    )


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_of_action_has_its_own_words(kind: ActionKind) -> None:
    words = describe_action(Item(kind=kind.value, params={"at_period_end": False}), order=ORDER)

    assert not words.startswith(kind.value)  # the fallback for a kind without words


FRENCH = {
    "Refund %(amount)s of order %(order)s, %(target)s of customer %(customer)s, "
    "to the original payment method": "Rembourser %(amount)s de la commande %(order)s, "
    "%(target)s du client %(customer)s, sur le moyen de paiement d'origine",
    "Stripe payment %(id)s": "paiement Stripe %(id)s",
}


class French:
    """Translations of the one sentence this test reads."""

    def gettext(self, message: str) -> str:
        return FRENCH.get(message, message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return singular if n == 1 else plural


def test_the_words_come_from_the_readers_catalogue() -> None:
    words = describe_action(Item(), order=ORDER, locale="fr", translations=French())

    assert words == (
        "Rembourser 48,00\u00a0$US de la commande #1001, paiement Stripe pi_3Apron du client "
        "cus_Maya, sur le moyen de paiement d'origine."
    )
