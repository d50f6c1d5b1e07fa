"""Store credit and discount codes end to end: the write, its look-up, and a resend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from shopify_adapter_support import discounts_at_shopify, mutations_received, request

from integrations.provider import (
    ActionKind,
    CustomerFacts,
    OutcomeUnknown,
    ProviderRejected,
    ProviderStatus,
)
from integrations.shopify.adapter import CREDIT_LOOKUP_WINDOW, ShopifyAdapter, discount_code
from integrations.shopify.sandbox import Fault, SandboxShop, ShopifySandbox


def test_store_credit_is_made_and_found(adapter: ShopifyAdapter, customer: str) -> None:
    action = request(ActionKind.CUSTOMER_CREDIT, customer, 1500)

    answer = adapter.submit(action)
    found = adapter.find(action)
    facts = adapter.facts(ActionKind.CUSTOMER_CREDIT, customer)

    assert answer.status is ProviderStatus.SUCCEEDED and answer.raw["amount"] == 1500
    assert found is not None and found.reference == answer.reference
    assert found.raw["matched_by"] == "amount, currency and time"
    assert isinstance(facts, CustomerFacts)
    assert (facts.balance, facts.balance_currency) == (-1500, "usd")
    assert [(c.id, c.amount, c.currency) for c in facts.credits] == [
        (answer.reference, -1500, "usd")
    ]


def test_a_lost_credit_answer_is_settled_by_look_up(
    sandbox: ShopifySandbox, adapter: ShopifyAdapter, customer: str
) -> None:
    action = request(ActionKind.CUSTOMER_CREDIT, customer, 2500)
    sandbox.arm_fault(Fault(kind="drop_after_commit", operation="storeCreditAccountCredit"))

    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    found = adapter.find(action)

    assert found is not None and found.status is ProviderStatus.SUCCEEDED
    assert found.raw["amount"] == 2500


def test_a_credit_look_up_finds_nothing_unsent_or_too_old(
    sandbox: ShopifySandbox,
    shop: SandboxShop,
    make_adapter: Callable[..., ShopifyAdapter],
    adapter: ShopifyAdapter,
    customer: str,
) -> None:
    adapter.submit(request(ActionKind.CUSTOMER_CREDIT, customer, 1500))
    past_the_window = CREDIT_LOOKUP_WINDOW + timedelta(minutes=1)
    later = make_adapter(
        shop, now=lambda: datetime.fromtimestamp(sandbox.now(), UTC) + past_the_window
    )

    assert adapter.find(request(ActionKind.CUSTOMER_CREDIT, customer, 1600)) is None
    assert adapter.find(request(ActionKind.CUSTOMER_CREDIT, customer, 1500)) is not None
    assert later.find(request(ActionKind.CUSTOMER_CREDIT, customer, 1500)) is None


def test_shopify_refuses_a_credit_in_another_currency(
    adapter: ShopifyAdapter, customer: str
) -> None:
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.CUSTOMER_CREDIT, customer, 1500, "eur"))

    assert "The currency provided is not supported." in str(refused.value)
    assert "creditInput.creditAmount.currencyCode" in str(refused.value)


def test_a_percent_discount_code_is_made_found_and_never_made_twice(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    action = request(ActionKind.DISCOUNT, customer, 2000, percent_off=10, duration="once")

    answer = adapter.submit(action)
    found = adapter.find(action)
    again = adapter.submit(action)

    code = discount_code(action.action_id)
    assert answer.status is ProviderStatus.SUCCEEDED
    assert (answer.raw["code"], answer.raw["percentage"]) == (code, 0.1)
    assert found is not None and found.reference == answer.reference
    assert (again.reference, again.replayed) == (answer.reference, True)
    assert discounts_at_shopify(sandbox, shop.domain) == [code]
    assert len(mutations_received(sandbox, shop.domain, "DiscountCodeBasicCreate")) == 2


def test_an_amount_off_discount_in_the_shop_currency(
    adapter: ShopifyAdapter, customer: str
) -> None:
    answer = adapter.submit(request(ActionKind.DISCOUNT, customer, 1500, amount_off=1500))

    assert (answer.raw["amount"], answer.raw["currency"]) == (1500, "usd")
    assert "15.00 USD off" in str(answer.raw["title"])


def test_discounts_that_cannot_mean_what_was_approved_are_refused_before_sending(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    with pytest.raises(ProviderRejected, match="in EUR but the shop sells in USD"):
        adapter.submit(request(ActionKind.DISCOUNT, customer, 1500, "eur"))
    with pytest.raises(ProviderRejected, match="duration 'forever' is not supported"):
        adapter.submit(
            request(ActionKind.DISCOUNT, customer, 1500, percent_off=5, duration="forever")
        )

    assert mutations_received(sandbox, shop.domain, "DiscountCodeBasicCreate") == []


def test_find_shows_nothing_for_a_discount_never_sent(
    adapter: ShopifyAdapter, customer: str
) -> None:
    assert adapter.find(request(ActionKind.DISCOUNT, customer, 1500, percent_off=5)) is None
