"""What the adapter refuses outright, and what it never shows."""

from __future__ import annotations

import httpx
import pytest
from shopify_adapter_support import request

from integrations.provider import ActionKind, InvalidRequest, ProviderRejected
from integrations.shopify.adapter import ShopifyAdapter


@pytest.mark.parametrize("kind", [ActionKind.SUBSCRIPTION_CANCEL, ActionKind.SUBSCRIPTION_CHANGE])
def test_subscription_actions_are_refused(
    adapter: ShopifyAdapter, customer: str, kind: ActionKind
) -> None:
    action = request(kind, customer, cancel_at_period_end=True)

    with pytest.raises(ProviderRejected, match="Shopify subscriptions are not supported"):
        adapter.submit(action)
    with pytest.raises(ProviderRejected, match="Shopify subscriptions are not supported"):
        adapter.facts(kind, customer)
    assert adapter.find(action) is None


def test_a_stored_kind_string_is_dispatched_as_its_kind(
    adapter: ShopifyAdapter, order: str
) -> None:
    answer = adapter.submit(request("refund", order, 1000))  # type: ignore[arg-type]

    assert answer.raw["amount"] == 1000


def test_targets_of_the_wrong_shape_are_refused_before_any_request(
    adapter: ShopifyAdapter, order: str, customer: str
) -> None:
    with pytest.raises(InvalidRequest, match="order gid"):
        adapter.facts(ActionKind.REFUND, customer)
    with pytest.raises(InvalidRequest, match="customer gid"):
        adapter.submit(request(ActionKind.CUSTOMER_CREDIT, order, 100))
    with pytest.raises(InvalidRequest, match="quantity"):
        adapter.submit(
            request(
                ActionKind.REFUND, order, 100, line_items=[{"line_id": "gid://shopify/LineItem/1"}]
            )
        )


def test_a_currency_without_a_known_minor_unit_is_refused_before_any_request(
    adapter: ShopifyAdapter, order: str, customer: str
) -> None:
    """Shopify takes decimals: an amount in a currency whose exponent is unknown would be
    written off by a factor of ten or more, so it never leaves."""
    with pytest.raises(InvalidRequest, match="ISO 4217 currency, not 'zzz'"):
        adapter.submit(request(ActionKind.REFUND, order, 100, "zzz"))
    with pytest.raises(InvalidRequest, match="ISO 4217 currency, not None"):
        adapter.submit(request(ActionKind.CUSTOMER_CREDIT, customer, 100, None))


def test_the_access_token_never_shows(http_client: httpx.Client) -> None:
    token = "shpat_0123456789abcdef0123456789abcdef"
    adapter = ShopifyAdapter("linen-and-loom.myshopify.com", token, http_client=http_client)

    assert token not in repr(adapter) and token not in str(adapter)
    assert repr(adapter) == "ShopifyAdapter(shop='linen-and-loom.myshopify.com')"
