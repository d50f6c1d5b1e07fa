"""``shopify.app.toml``: what Shopify installs must match what the app serves."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from flask import Flask

from integrations.shopify.graphql import API_VERSION

CONFIG = Path(__file__).resolve().parents[2] / "shopify.app.toml"


def _config() -> dict[str, Any]:
    return tomllib.loads(CONFIG.read_text())


def test_managed_installation_of_an_embedded_app() -> None:
    config = _config()

    assert config["embedded"] is True
    assert config["access_scopes"]["use_legacy_install_flow"] is False
    assert config["auth"]["redirect_urls"] == []  # token exchange, no OAuth redirect


def test_every_subscribed_topic_lands_on_the_webhook_route_in_the_pinned_version(
    app: Flask,
) -> None:
    webhooks = _config()["webhooks"]
    subscriptions = webhooks["subscriptions"]
    topics = {t for s in subscriptions for t in s.get("topics", [])}
    compliance = {t for s in subscriptions for t in s.get("compliance_topics", [])}
    routes = {rule.rule for rule in app.url_map.iter_rules() if "POST" in (rule.methods or ())}

    assert webhooks["api_version"] == API_VERSION
    assert {"app/uninstalled", "app/scopes_update", "orders/updated", "refunds/create"} <= topics
    assert compliance == {"customers/data_request", "customers/redact", "shop/redact"}
    assert {s["uri"] for s in subscriptions} <= routes


def test_the_scopes_cover_reading_orders_and_the_writes_approved_actions_need() -> None:
    scopes = set(_config()["access_scopes"]["scopes"].split(","))

    assert {"read_customers", "read_orders", "write_orders"} <= scopes
    assert {"write_store_credit_account_transactions", "write_discounts"} <= scopes
    assert not any(scope.startswith(("write_products", "write_customers")) for scope in scopes)
